/**
 * The blocking calls that run the dispatcher until something holds: `waitUntil` (a condition the
 * caller gives; am2's AM_WaitSema and flow control) in its blocking and promise forms, and
 * LAPI_Fence (every active message this task sent has landed at its target).
 */
import { WAIT_COND, WAIT_FENCE, WaitCall } from '../layout/control.js'
import { LapiStatus as S } from '../base/status.js'
import type { Rings } from '../core/rings.js'
import type { ContextState } from '../core/state.js'
import type { Progress } from '../core/types.js'
import type { Idler } from './idle.js'

export class Waits {
  private readonly s: ContextState
  private readonly rings: Rings
  private readonly idler: Idler
  private readonly dispatcher: Progress

  constructor(s: ContextState, rings: Rings, idler: Idler, dispatcher: Progress) {
    this.s = s
    this.rings = rings
    this.idler = idler
    this.dispatcher = dispatcher
  }

  /**
   * Blocks the thread, running the dispatcher, until `cond()` is true (checked after every round;
   * it must not send). Spins for the configured budget, then sleeps on the doorbell, which any
   * packet or counter update of this task rings. `cond` is kept for the sleep check, so pass a
   * long-lived function to wait without allocating. Returns 0, or LAPI_ERR_POLLING_NET inside a
   * header handler.
   */
  waitUntil(cond: () => boolean, call: number = WaitCall.WAIT_UNTIL): number {
    if (this.s.inHeaderHandler) return S.ERR_POLLING_NET
    this.rings.flushTails()
    let spinStart = 0
    const idler = this.idler
    const outer = idler.waitCond
    try {
      const d = this.dispatcher
      for (;;) {
        d.progress()
        if (cond()) return S.SUCCESS
        for (let k = 0, n = idler.spinBatch; k < n; k++) {
          if (d.inboxPending() || d.busy) d.progress()
          if (cond()) return S.SUCCESS
        }
        idler.waitCond = cond
        spinStart = idler.idle(spinStart, WAIT_COND, call, null, 0, 0)
      }
    } finally {
      idler.waitCond = outer
      idler.waitDone(spinStart)
    }
  }

  /** Like waitUntil, but the event loop keeps running (no spinning; an asynchronous doorbell wait). */
  async waitUntilAsync(cond: () => boolean, call: number = WaitCall.WAIT_UNTIL): Promise<number> {
    if (this.s.inHeaderHandler) return S.ERR_POLLING_NET
    const idler = this.idler
    for (;;) {
      this.dispatcher.progress()
      if (cond()) return S.SUCCESS
      const outer = idler.waitCond
      idler.waitCond = cond
      try {
        await idler.idleAsync(WAIT_COND, call, null, 0, 0)
      } finally {
        idler.waitCond = outer
      }
    }
  }

  /**
   * The fence of blocking call `call` (a WaitCall: LAPI_Fence or LAPI_Gfence): every operation this
   * task started before it is complete at its target. Put, Get and Rmw between co-located tasks
   * complete inside the call; active messages are outstanding until their data has landed at the
   * target (a data fence: completion handlers may still run).
   */
  fence(call: number): number {
    if (this.s.inHeaderHandler) return S.ERR_POLLING_NET
    this.rings.flushTails()
    let spinStart = 0
    const d = this.dispatcher
    d.progress()
    while (this.rings.outstanding() > 0) {
      d.progress()
      if (this.rings.outstanding() === 0) break
      spinStart = this.idler.idle(spinStart, WAIT_FENCE, call, null, 0, 0)
    }
    this.idler.waitDone(spinStart)
    return S.SUCCESS
  }
}
