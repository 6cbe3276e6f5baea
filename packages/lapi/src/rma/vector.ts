/**
 * LAPI_Putv and LAPI_Getv: the vector forms of Put and Get (IOVECTOR, STRIDED_XFER, GENERIC), the
 * origin and target vectors both described in the origin's memory. Between tasks of one process
 * the calling thread copies piece by piece between the segments; a task of another process goes
 * through net/remote-ops.ts. Counters as Put and Get (rma/put-get.ts).
 */
import { ErrClass, VecType } from '../base/constants.js'
import { copy } from '../base/copy.js'
import { LapiStatus as S } from '../base/status.js'
import { RmaPart } from './part.js'
import type { Addr, compl_hndlr_t, lapi_vec_t, scompl_hndlr_t } from '../base/types.js'

export class VectorTransfers extends RmaPart {
  /** What Putv and Getv check first (a step in LAPI): 0, or the code to return. */
  private begin(tgt: number, tgtVec: lapi_vec_t | null, orgVec: lapi_vec_t | null): number {
    if (this.s.inHeaderHandler) return S.ERR_POLLING_NET
    this.rings.flushTails()
    const rc = this.checks.checkTarget(tgt)
    return rc !== 0 ? rc : this.checks.checkVecPair(tgtVec, orgVec)
  }

  /** LAPI_Putv: gathers the origin vector and scatters into the target vector (addresses in `tgt`). */
  putv(
    tgt: number,
    tgtVec: lapi_vec_t | null,
    orgVec: lapi_vec_t | null,
    tgtCntr: Addr,
    orgCntr: Addr,
    cmplCntr: Addr,
    shdlr: scompl_hndlr_t | null = null,
    sinfo: unknown = null,
  ): number {
    const s = this.s
    const k = this.checks
    const rc = this.begin(tgt, tgtVec, orgVec)
    if (rc !== 0) return rc
    if (!k.isCounterOpt(tgtCntr) || !k.isCounterOpt(orgCntr) || !k.isCounterOpt(cmplCntr)) return S.ERR_CNTR_NULL
    if (s.local[tgt] === 0) return this.remote.putv(tgt, tgtVec!, orgVec!, tgtCntr, orgCntr, cmplCntr, shdlr, sinfo)
    this.moveVec(orgVec!, s.taskId, tgtVec!, tgt)
    this.counters.bump(tgt, tgtCntr)
    this.counters.bumpLocal(orgCntr)
    if (shdlr !== null) this.user.runSendHandler(shdlr, sinfo, tgt, ErrClass.PUT_ERR)
    this.counters.bumpLocal(cmplCntr)
    return S.SUCCESS
  }

  /** LAPI_Getv: gathers the target vector (addresses in `tgt`) into the origin vector. */
  getv(
    tgt: number,
    tgtVec: lapi_vec_t | null,
    orgVec: lapi_vec_t | null,
    tgtCntr: Addr,
    orgCntr: Addr,
    chndlr: compl_hndlr_t | null = null,
    cinfo: unknown = null,
  ): number {
    const s = this.s
    const k = this.checks
    const rc = this.begin(tgt, tgtVec, orgVec)
    if (rc !== 0) return rc
    if (!k.isCounterOpt(tgtCntr) || !k.isCounterOpt(orgCntr)) return S.ERR_CNTR_NULL
    if (s.local[tgt] === 0) return this.remote.getv(tgt, tgtVec!, orgVec!, tgtCntr, orgCntr, chndlr, cinfo)
    this.moveVec(tgtVec!, tgt, orgVec!, s.taskId)
    this.counters.bump(tgt, tgtCntr)
    if (chndlr !== null) this.user.runComplHandler(chndlr, cinfo, tgt, ErrClass.GET_ERR)
    this.counters.bumpLocal(orgCntr)
    return S.SUCCESS
  }

  /**
   * Copies the bytes of vector `src` (addresses in task `st`) into vector `dst` (addresses in task
   * `dt`). The vectors were checked. GENERIC flows piece by piece and stops when either side is
   * exhausted (the LAPI_Amsendv rule: excess origin bytes are dropped).
   */
  private moveVec(src: lapi_vec_t, st: number, dst: lapi_vec_t, dt: number): void {
    const su8 = this.s.seg.u8[st]!
    const du8 = this.s.seg.u8[dt]!
    if (src.vec_type === VecType.LAPI_GEN_STRIDED_XFER) {
      const sb = src.info[0] as number
      const block = src.info[1] as number
      const ss = src.info[2] as number
      const db = dst.info[0] as number
      const ds = dst.info[2] as number
      for (let i = 0; i < src.num_vecs; i++) copy(du8, db + i * ds, su8, sb + i * ss, block)
      return
    }
    if (src.vec_type === VecType.LAPI_GEN_IOVECTOR) {
      for (let i = 0; i < src.num_vecs; i++) {
        const n = src.len![i]!
        if (n > 0) copyPiece(du8, dst.info[i]!, 0, su8, src.info[i]!, 0, n)
      }
      return
    }
    let si = 0
    let so = 0
    let di = 0
    let dOff = 0
    while (si < src.num_vecs && di < dst.num_vecs) {
      const sl = src.len![si]! - so
      const dl = dst.len![di]! - dOff
      if (sl === 0) {
        si++
        so = 0
        continue
      }
      if (dl === 0) {
        di++
        dOff = 0
        continue
      }
      const n = sl < dl ? sl : dl
      copyPiece(du8, dst.info[di]!, dOff, su8, src.info[si]!, so, n)
      so += n
      dOff += n
    }
  }
}

/** Copies `n` bytes between a piece (an Addr in a segment view, or a Uint8Array) and another. */
function copyPiece(du8: Uint8Array, d: Addr | Uint8Array, dOff: number, su8: Uint8Array, s: Addr | Uint8Array, sOff: number, n: number): void {
  if (typeof d === 'number') {
    if (typeof s === 'number') copy(du8, d + dOff, su8, s + sOff, n)
    else copy(du8, d + dOff, s, sOff, n)
  } else if (typeof s === 'number') copy(d, dOff, su8, s + sOff, n)
  else copy(d, dOff, s, sOff, n)
}
