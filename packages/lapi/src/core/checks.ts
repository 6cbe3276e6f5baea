/**
 * The argument checks of a context's calls, shared by its parts: targets, local and remote
 * buffers, counters, read-modify-write operands and vectors. Each answers 0 or the LAPI code that
 * IBM's LAPI returns for what is wrong; the contiguous transfers have a one-pass check
 * (`checkContig`) that every correct call passes in integer arithmetic only.
 */
import { LAPI_MAX_MSG_SZ, RmwOp, VecType } from '../base/constants.js'
import { counterOk } from '../base/args.js'
import { LapiStatus as S } from '../base/status.js'
import type { Addr, lapi_vec_t, LocalBuf } from '../base/types.js'
import type { ContextState } from './state.js'

export class Checks {
  private readonly segmentSize: number
  private readonly numTasks: number
  private readonly purged: Uint8Array

  constructor(s: ContextState) {
    this.segmentSize = s.segmentSize
    this.numTasks = s.numTasks
    this.purged = s.purged
  }

  /** A target task: a task id, not purged. */
  checkTarget(tgt: number): number {
    if (!isTask(tgt, this.numTasks)) return S.ERR_TGT
    if (this.purged[tgt] !== 0) return S.ERR_TGT_PURGED
    return 0
  }

  /** [addr, addr+len) must lie inside a (target) segment; addr 0 only with len 0. */
  private checkRemote(addr: Addr, len: number): number {
    if (typeof addr !== 'number' || !Number.isInteger(addr)) return S.ERR_TGT_ADDR_NULL
    if (addr === 0) return len === 0 ? 0 : S.ERR_TGT_ADDR_NULL
    if (addr < 0 || addr + len > this.segmentSize) return S.ERR_TGT_EXTENT
    return 0
  }

  /** A local buffer: an Addr range inside the own segment, or a Uint8Array of at least `len` bytes. */
  checkLocal(buf: LocalBuf | undefined, len: number): number {
    if (buf === null || buf === undefined || buf === 0) return len === 0 ? 0 : S.ERR_ORG_ADDR_NULL
    if (typeof buf === 'number') {
      if (!Number.isInteger(buf)) return S.ERR_ORG_ADDR_NULL
      if (buf < 0 || buf + len > this.segmentSize) return S.ERR_ORG_EXTENT
      return 0
    }
    if (!(buf instanceof Uint8Array)) return S.ERR_ORG_ADDR_NULL
    return buf.length >= len ? 0 : S.ERR_ORG_EXTENT
  }

  /**
   * The checks of a contiguous transfer in one pass. The first test is what every correct call
   * passes, in integer arithmetic only; anything else goes to `classifyContig` for the exact code.
   */
  checkContig(tgt: number, len: number, tgtAddr: Addr, org: LocalBuf, c1: Addr, c2: Addr, c3: Addr): number {
    const seg = this.segmentSize
    if (
      tgt >>> 0 === tgt &&
      tgt < this.numTasks &&
      this.purged[tgt] === 0 &&
      len >>> 0 === len &&
      tgtAddr >>> 0 === tgtAddr &&
      tgtAddr + len <= seg &&
      (tgtAddr !== 0 || len === 0) &&
      counterOk(c1, seg) &&
      counterOk(c2, seg) &&
      counterOk(c3, seg)
    ) {
      if (typeof org === 'number') {
        if (org >>> 0 === org && org + len <= seg && (org !== 0 || len === 0)) return 0
      } else if (org instanceof Uint8Array && org.length >= len) return 0
    }
    return this.classifyContig(tgt, len, tgtAddr, org, c1, c2, c3)
  }

  /**
   * The code of a contiguous transfer whose fast check threw (`e`: a BigInt argument fails its
   * integer arithmetic), found by the checks that look at types first; `e` rethrown when the
   * arguments are fine after all (it came from elsewhere).
   */
  refused(e: unknown, tgt: number, len: number, tgtAddr: Addr, org: LocalBuf, c1: Addr, c2: Addr, c3: Addr): number {
    const rc = this.classifyContig(tgt, len, tgtAddr, org, c1, c2, c3)
    if (rc === 0) throw e
    return rc
  }

  /** The exact code for a contiguous transfer that failed the fast check (0 if it is fine after all). */
  private classifyContig(tgt: number, len: number, tgtAddr: Addr, org: LocalBuf, c1: Addr, c2: Addr, c3: Addr): number {
    let rc = this.checkTarget(tgt)
    if (rc !== 0) return rc
    if (!isLen(len)) return S.ERR_DATA_LEN
    rc = this.checkRemote(tgtAddr, len)
    if (rc !== 0) return rc
    rc = this.checkLocal(org, len)
    if (rc !== 0) return rc
    if (!this.isCounterOpt(c1) || !this.isCounterOpt(c2) || !this.isCounterOpt(c3)) return S.ERR_CNTR_NULL
    return 0
  }

  /** The operation, target and target word of a read-modify-write on a word of `width` bytes. */
  checkRmw(op: number, tgt: number, tgtVar: Addr, width: number): number {
    if (op !== RmwOp.FETCH_AND_ADD && op !== RmwOp.FETCH_AND_OR && op !== RmwOp.SWAP && op !== RmwOp.COMPARE_AND_SWAP) return S.ERR_RMW_OP
    const rc = this.checkTarget(tgt)
    if (rc !== 0) return rc
    if (typeof tgtVar !== 'number' || !Number.isInteger(tgtVar) || tgtVar === 0) return S.ERR_TGT_VAR_NULL
    if (tgtVar < 0 || tgtVar % width !== 0 || tgtVar + width > this.segmentSize) return S.ERR_TGT_EXTENT
    return 0
  }

  /** A counter address: 4-byte aligned and inside a segment (all segments have one size). */
  isCounter(c: Addr): boolean {
    return typeof c === 'number' && Number.isInteger(c) && c > 0 && (c & 3) === 0 && c + 4 <= this.segmentSize
  }

  /** A counter address or none (0, null, undefined). */
  isCounterOpt(c: Addr | undefined | null): boolean {
    return c === 0 || c === undefined || c === null || this.isCounter(c)
  }

  /** Checks one vector (`org`: the origin side, whose pieces may be Uint8Arrays); 0 or the code. */
  checkOneVec(v: lapi_vec_t | null | undefined, org: boolean): number {
    if (v === null || v === undefined || typeof v !== 'object') return org ? S.ERR_ORG_VEC_NULL : S.ERR_TGT_VEC_NULL
    const t = v.vec_type
    if (t !== VecType.LAPI_GEN_IOVECTOR && t !== VecType.LAPI_GEN_STRIDED_XFER && t !== VecType.LAPI_GEN_GENERIC)
      return org ? S.ERR_ORG_VEC_TYPE : S.ERR_TGT_VEC_TYPE
    return checkVec(v, org, this.segmentSize)
  }

  /** Checks an origin/target vector pair (both described in the origin's memory). */
  checkVecPair(tgtVec: lapi_vec_t | null, orgVec: lapi_vec_t | null): number {
    if (orgVec === null || orgVec === undefined || typeof orgVec !== 'object') return S.ERR_ORG_VEC_NULL
    if (tgtVec === null || tgtVec === undefined || typeof tgtVec !== 'object') return S.ERR_TGT_VEC_NULL
    const ot = orgVec.vec_type
    const tt = tgtVec.vec_type
    if (ot !== VecType.LAPI_GEN_IOVECTOR && ot !== VecType.LAPI_GEN_STRIDED_XFER && ot !== VecType.LAPI_GEN_GENERIC) return S.ERR_ORG_VEC_TYPE
    if (tt !== VecType.LAPI_GEN_IOVECTOR && tt !== VecType.LAPI_GEN_STRIDED_XFER && tt !== VecType.LAPI_GEN_GENERIC) return S.ERR_TGT_VEC_TYPE
    if (ot !== tt) return S.ERR_VEC_TYPE_DIFF
    let rc = checkVec(orgVec, true, this.segmentSize)
    if (rc !== 0) return rc
    rc = checkVec(tgtVec, false, this.segmentSize)
    if (rc !== 0) return rc
    if (ot === VecType.LAPI_GEN_GENERIC) return 0
    if (orgVec.num_vecs !== tgtVec.num_vecs) return S.ERR_VEC_NUM_DIFF
    if (ot === VecType.LAPI_GEN_STRIDED_XFER) {
      return orgVec.info[1] === tgtVec.info[1] ? 0 : S.ERR_VEC_LEN_DIFF
    }
    for (let i = 0; i < orgVec.num_vecs; i++) if (orgVec.len![i] !== tgtVec.len![i]) return S.ERR_VEC_LEN_DIFF
    return 0
  }
}

/** A task id of a job of `n` tasks. */
export function isTask(t: number, n: number): boolean {
  return typeof t === 'number' && Number.isInteger(t) && t >= 0 && t < n
}

function isLen(len: number): boolean {
  return typeof len === 'number' && Number.isInteger(len) && len >= 0 && len <= LAPI_MAX_MSG_SZ
}

/** Checks one vector: origin side (`org`) may hold Uint8Arrays; addresses must lie in a segment. */
function checkVec(v: lapi_vec_t, org: boolean, segSize: number): number {
  const E_TYPE = org ? S.ERR_ORG_VEC_TYPE : S.ERR_TGT_VEC_TYPE
  const E_ADDR = org ? S.ERR_ORG_VEC_ADDR : S.ERR_TGT_VEC_ADDR
  const E_LEN = org ? S.ERR_ORG_VEC_LEN : S.ERR_TGT_VEC_LEN
  const E_EXT = org ? S.ERR_ORG_EXTENT : S.ERR_TGT_EXTENT
  const n = v.num_vecs
  if (!Number.isInteger(n) || n < 0 || !Array.isArray(v.info)) return E_TYPE
  if (v.vec_type === VecType.LAPI_GEN_STRIDED_XFER) {
    if (v.info.length < 3) return E_TYPE
    const base = v.info[0]
    const block = v.info[1]
    const stride = v.info[2]
    if (base === null || base === undefined || base === 0) return n === 0 ? 0 : org ? S.ERR_STRIDE_ORG_VEC_ADDR_NULL : S.ERR_STRIDE_TGT_VEC_ADDR_NULL
    if (typeof base !== 'number' || !Number.isInteger(base) || base < 0) return E_ADDR
    if (typeof block !== 'number' || !Number.isInteger(block) || block < 0 || block > LAPI_MAX_MSG_SZ) return E_LEN
    if (typeof stride !== 'number' || !Number.isInteger(stride) || stride < block) return org ? S.ERR_ORG_STRIDE : S.ERR_TGT_STRIDE
    if (n > 0 && base + (n - 1) * stride + block > segSize) return E_EXT
    return 0
  }
  if (!Array.isArray(v.len) || v.len.length < n || v.info.length < n) return E_LEN
  for (let i = 0; i < n; i++) {
    const len = v.len[i]!
    if (typeof len !== 'number' || !Number.isInteger(len) || len < 0 || len > LAPI_MAX_MSG_SZ) return E_LEN
    const a = v.info[i]
    if (a === null || a === undefined || a === 0) {
      if (len > 0) return E_ADDR
      continue
    }
    if (typeof a === 'number') {
      if (!Number.isInteger(a) || a < 0) return E_ADDR
      if (a + len > segSize) return E_EXT
    } else if (org && a instanceof Uint8Array) {
      if (a.length < len) return E_EXT
    } else return E_ADDR
  }
  return 0
}
