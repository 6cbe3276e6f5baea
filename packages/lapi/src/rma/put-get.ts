/**
 * LAPI_Put and LAPI_Get (docs/architecture.md, "One-sided operations"). Between tasks of one
 * process the calling thread performs them itself on the target's segment (`Uint8Array.set`, or
 * word loops for a few words); no code of the target runs. Each counter bumped at another task is
 * followed by a ring of that task's doorbell. A task of another process goes through
 * net/remote-ops.ts.
 *
 * Counter order of a Put (table 2.12 of the LAPI reference): the data lands, then the target
 * counter, then the origin counter (origin buffer reusable) and the completion counter (target
 * done). A Get: the data arrives, the target counter (target buffer free), then the origin counter.
 */
import { ErrClass } from '../base/constants.js'
import { counterOk } from '../base/args.js'
import { WORD_COPY, copyBuf, copyShared, copyWords } from '../base/copy.js'
import { ringCounter } from '../layout/control.js'
import { LapiStatus as S } from '../base/status.js'
import type { Checks } from '../core/checks.js'
import type { Rings } from '../core/rings.js'
import type { ContextState } from '../core/state.js'
import type { SegmentViews } from '../core/types.js'
import type { RemoteOps } from '../net/remote-ops.js'
import type { Counters } from '../sync/counters.js'
import type { UserCode } from '../sync/user-code.js'
import { RmaPart } from './part.js'
import type { Addr, compl_hndlr_t, LocalBuf, scompl_hndlr_t } from '../base/types.js'

export class PutGet extends RmaPart {
  private readonly taskId: number
  private readonly numTasks: number
  private readonly segmentSize: number
  private readonly ctl: Int32Array
  private readonly seg: SegmentViews
  private readonly mySeg32: Int32Array
  private readonly purged: Uint8Array
  private readonly local: Uint8Array

  constructor(s: ContextState, rings: Rings, checks: Checks, counters: Counters, user: UserCode, remote: RemoteOps) {
    super(s, rings, checks, counters, user, remote)
    this.taskId = s.taskId
    this.numTasks = s.numTasks
    this.segmentSize = s.segmentSize
    this.ctl = s.ctl
    this.seg = s.seg
    this.mySeg32 = s.mySeg32
    this.purged = s.purged
    this.local = s.local
  }

  /**
   * LAPI_Put. The common case of a fine-grained PGAS put is checked and done here, in a function
   * small enough to be inlined into the caller: a few aligned words from the own segment to
   * another task's, with a target counter at most. Everything else goes to `putAny`.
   */
  put(tgt: number, len: number, tgtAddr: Addr, org: LocalBuf, tgtCntr: Addr, orgCntr: Addr, cmplCntr: Addr): number {
    const size = this.segmentSize
    if (
      typeof org === 'number' &&
      ((tgtAddr | org | len) & 3) === 0 &&
      len <= WORD_COPY &&
      tgt >>> 0 === tgt &&
      tgt < this.numTasks &&
      tgt !== this.taskId &&
      this.purged[tgt] === 0 &&
      this.local[tgt] === 1 &&
      tgtAddr >>> 0 === tgtAddr &&
      org >>> 0 === org &&
      len >>> 0 === len &&
      tgtAddr + len <= size &&
      org + len <= size &&
      tgtAddr !== 0 &&
      org !== 0 &&
      (orgCntr | cmplCntr) === 0 &&
      counterOk(tgtCntr, size) &&
      !this.s.inHeaderHandler
    ) {
      const d32 = this.seg.i32[tgt]!
      copyWords(d32, tgtAddr, this.mySeg32, org, len)
      if (tgtCntr !== 0) {
        const w = tgtCntr >>> 2
        ringCounter(this.ctl, tgt, w, Atomics.add(d32, w, 1) + 1)
      }
      // (a step in LAPI: slots the dispatcher gave back go out now, after the Put itself)
      this.rings.flushTails()
      return S.SUCCESS
    }
    return this.putAny(tgt, len, tgtAddr, org, tgtCntr, orgCntr, cmplCntr, null, null)
  }

  /** LAPI_Put in general (and the PUT member of LAPI_Xfer, with its send-completion handler). */
  putAny(
    tgt: number,
    len: number,
    tgtAddr: Addr,
    org: LocalBuf,
    tgtCntr: Addr,
    orgCntr: Addr,
    cmplCntr: Addr,
    shdlr: scompl_hndlr_t | null,
    sinfo: unknown,
  ): number {
    this.rings.flushTails()
    const rc = this.checks.checkContig(tgt, len, tgtAddr, org, tgtCntr, orgCntr, cmplCntr)
    if (rc !== 0 || this.s.inHeaderHandler) return rc !== 0 ? rc : S.ERR_POLLING_NET
    if (this.local[tgt] === 0) return this.remote.put(tgt, len, tgtAddr, org, tgtCntr, orgCntr, cmplCntr, shdlr, sinfo)
    if (len > 0) {
      const seg = this.seg
      if (typeof org === 'number') copyShared(seg.u8[tgt]!, seg.i32[tgt]!, tgtAddr, seg.u8[this.taskId]!, this.mySeg32, org, len)
      else copyBuf(seg.u8[tgt]!, tgtAddr, org!, 0, len, tgt === this.taskId)
    }
    const k = this.counters
    if (tgtCntr !== 0) k.bump(tgt, tgtCntr)
    if (orgCntr !== 0) k.bumpLocal(orgCntr)
    if (shdlr !== null) this.user.runSendHandler(shdlr, sinfo, tgt, ErrClass.PUT_ERR)
    if (cmplCntr !== 0) k.bumpLocal(cmplCntr)
    return S.SUCCESS
  }

  /** LAPI_Get (and the GET member of LAPI_Xfer when `chndlr` is given). */
  get(
    tgt: number,
    len: number,
    tgtAddr: Addr,
    org: LocalBuf,
    tgtCntr: Addr,
    orgCntr: Addr,
    chndlr: compl_hndlr_t | null = null,
    cinfo: unknown = null,
  ): number {
    this.rings.flushTails()
    const rc = this.checks.checkContig(tgt, len, tgtAddr, org, tgtCntr, orgCntr, 0)
    if (rc !== 0 || this.s.inHeaderHandler) return rc !== 0 ? rc : S.ERR_POLLING_NET
    if (this.local[tgt] === 0) return this.remote.get(tgt, len, tgtAddr, org, tgtCntr, orgCntr, chndlr, cinfo)
    if (len > 0) {
      const seg = this.seg
      if (typeof org === 'number') copyShared(seg.u8[this.taskId]!, this.mySeg32, org, seg.u8[tgt]!, seg.i32[tgt]!, tgtAddr, len)
      else copyBuf(org!, 0, seg.u8[tgt]!, tgtAddr, len, tgt === this.taskId)
    }
    const k = this.counters
    if (tgtCntr !== 0) k.bump(tgt, tgtCntr)
    if (chndlr !== null) this.user.runComplHandler(chndlr, cinfo, tgt, ErrClass.GET_ERR)
    if (orgCntr !== 0) k.bumpLocal(orgCntr)
    return S.SUCCESS
  }
}
