/**
 * LAPI_Rmw and LAPI_Rmw64: atomic fetch-and-add, fetch-and-or, swap and compare-and-swap on a
 * 32- or 64-bit word of a task's segment. On a task of this process the calling thread performs
 * it with `Atomics` (rmw.ts); on one of another process the target's agent does
 * (net/remote-ops.ts), and the old value comes back as an answer.
 */
import { ErrClass, RmwOp } from '../base/constants.js'
import { rmw32, rmw64 } from '../base/rmw.js'
import { LapiStatus as S } from '../base/status.js'
import { RmaPart } from './part.js'
import type { Addr, Ref, scompl_hndlr_t } from '../base/types.js'

export class ReadModifyWrite extends RmaPart {
  /**
   * LAPI_Rmw on a 32-bit word: `inVal[0]` is the operand (COMPARE_AND_SWAP: `inVal[0]` compare,
   * `inVal[1]` new value). `prev` gets the old value, or TRUE/FALSE for COMPARE_AND_SWAP.
   */
  rmw(
    op: number,
    tgt: number,
    tgtVar: Addr,
    inVal: ArrayLike<number> | null | undefined,
    prev: Ref<number> | null | undefined,
    orgCntr: Addr,
    shdlr: scompl_hndlr_t | null = null,
    sinfo: unknown = null,
  ): number {
    const s = this.s
    if (s.inHeaderHandler) return S.ERR_POLLING_NET
    this.rings.flushTails()
    let rc = this.checks.checkRmw(op, tgt, tgtVar, 4)
    if (rc !== 0) return rc
    if (inVal === null || inVal === undefined || typeof inVal !== 'object') return S.ERR_IN_VAL_NULL
    const need = op === RmwOp.COMPARE_AND_SWAP ? 2 : 1
    if (inVal.length < need) return S.ERR_IN_VAL_NULL
    for (let i = 0; i < need; i++) if (typeof inVal[i] !== 'number' || !Number.isFinite(inVal[i])) return S.ERR_IN_VAL_NULL
    if (!this.checks.isCounterOpt(orgCntr)) return S.ERR_CNTR_NULL
    if (s.local[tgt] === 0) {
      rc = this.remote.rmw32(op, tgt, tgtVar, inVal[0]! | 0, need === 2 ? inVal[1]! | 0 : 0, prev ?? null, orgCntr, shdlr, sinfo)
      return rc === 0 ? this.rmwAnswer(orgCntr, prev) : rc
    }
    rc = 0
    const a = s.seg.i32[tgt]!
    const idx = tgtVar >>> 2
    const old = rmw32(a, idx, op, inVal[0]! | 0, need === 2 ? inVal[1]! | 0 : 0)
    if (prev !== null && prev !== undefined) prev.value = old
    if (shdlr !== null) this.user.runSendHandler(shdlr, sinfo, tgt, ErrClass.RMW_ERR)
    this.counters.bumpLocal(orgCntr)
    return S.SUCCESS
  }

  /**
   * An Rmw sent to a task of another process with `prev` and no origin counter: its caller has no
   * way to learn when `prev` is valid, so the call waits for the answer (as the same call on a
   * co-located task, which completes inside it). With an origin counter it returns at once.
   */
  private rmwAnswer(orgCntr: Addr, prev: Ref<number> | Ref<bigint> | null | undefined): number {
    if (orgCntr !== 0 || prev === null || prev === undefined) return S.SUCCESS
    return this.remote.waitAnswer(this.remote.lastId)
  }

  /**
   * After an Rmw to task `tgt` returned 0: waits (making progress) until its old value is there,
   * which for a task of another process means its answer is back (an Rmw on a task of this
   * process completed inside the call). 0, or the wait's LAPI code.
   */
  awaitAnswer(tgt: number): number {
    if (this.s.local[tgt] !== 0) return S.SUCCESS
    const r = this.remote
    return r.waitAnswer(r.lastId)
  }

  /** LAPI_Rmw64 on a 64-bit word (`tgtVar` 8-byte aligned); operands are bigints. */
  rmw64(
    op: number,
    tgt: number,
    tgtVar: Addr,
    inVal: ArrayLike<bigint> | null | undefined,
    prev: Ref<bigint> | null | undefined,
    orgCntr: Addr,
    shdlr: scompl_hndlr_t | null = null,
    sinfo: unknown = null,
  ): number {
    const s = this.s
    if (s.inHeaderHandler) return S.ERR_POLLING_NET
    this.rings.flushTails()
    const rc = this.checks.checkRmw(op, tgt, tgtVar, 8)
    if (rc !== 0) return rc
    if (inVal === null || inVal === undefined || typeof inVal !== 'object') return S.ERR_IN_VAL_NULL
    const need = op === RmwOp.COMPARE_AND_SWAP ? 2 : 1
    if (inVal.length < need) return S.ERR_IN_VAL_NULL
    for (let i = 0; i < need; i++) if (typeof inVal[i] !== 'bigint') return S.ERR_IN_VAL_NULL
    if (!this.checks.isCounterOpt(orgCntr)) return S.ERR_CNTR_NULL
    if (s.local[tgt] === 0) {
      const r = this.remote.rmw64(
        op,
        tgt,
        tgtVar,
        BigInt.asIntN(64, inVal[0]!),
        need === 2 ? BigInt.asIntN(64, inVal[1]!) : 0n,
        prev ?? null,
        orgCntr,
        shdlr,
        sinfo,
      )
      return r === 0 ? this.rmwAnswer(orgCntr, prev) : r
    }
    const a = s.seg.i64[tgt]!
    const idx = tgtVar >>> 3
    const v0 = BigInt.asIntN(64, inVal[0]!)
    const old = rmw64(a, idx, op, v0, need === 2 ? BigInt.asIntN(64, inVal[1]!) : 0n)
    if (prev !== null && prev !== undefined) prev.value = old
    if (shdlr !== null) this.user.runSendHandler(shdlr, sinfo, tgt, ErrClass.RMW_ERR)
    this.counters.bumpLocal(orgCntr)
    return S.SUCCESS
  }
}
