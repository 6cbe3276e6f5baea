/**
 * Interrupt mode (LAPI_Senv INTERRUPT_SET, LAPI's notification thread): while the task's code is
 * idle in the event loop, a waitAsync on the doorbell wakes this loop whenever something arrives,
 * and it runs the dispatcher, so handlers run without any LAPI call being made. It holds no ref on
 * the event loop: a task whose code is done still exits. It ends when interrupt mode is switched
 * off or at LAPI_Term.
 */
import { CTL_ABORT, WaitCall } from '../layout/control.js'
import type { Rings } from '../core/rings.js'
import type { ContextState } from '../core/state.js'
import type { Progress } from '../core/types.js'
import { SLEEP_SLICE_MS, type Idler } from './idle.js'

export class Interrupts {
  private readonly s: ContextState
  private readonly rings: Rings
  private readonly idler: Idler
  private readonly dispatcher: Progress
  private armed = false
  /** 1 once LAPI_Term ran: the loop ends. */
  private ended = 0

  constructor(s: ContextState, rings: Rings, idler: Idler, dispatcher: Progress) {
    this.s = s
    this.rings = rings
    this.idler = idler
    this.dispatcher = dispatcher
  }

  /** Ends the loop for good (LAPI_Term). */
  stop(): void {
    this.ended = 1
  }

  /** Starts the loop unless it runs already. */
  start(): void {
    if (this.armed) return
    this.armed = true
    void this.loop()
  }

  private async loop(): Promise<void> {
    const s = this.s
    const ctl = s.ctl
    try {
      while (s.interrupt === 1 && !this.ended) {
        this.rings.flushTails()
        Atomics.store(ctl, s.myWaitCall, WaitCall.EVENT_LOOP)
        const seen = Atomics.load(ctl, s.myDoorbell)
        this.idler.enterAsyncSleep()
        try {
          if (!this.dispatcher.inboxPending() && !this.dispatcher.busy) {
            const w = Atomics.waitAsync(ctl, s.myDoorbell, seen, SLEEP_SLICE_MS)
            if (w.async) await w.value
          } else {
            await new Promise<void>((resolve) => setImmediate(resolve))
          }
        } finally {
          this.idler.leaveAsyncSleep()
        }
        if (s.interrupt !== 1 || this.ended || Atomics.load(ctl, CTL_ABORT) !== 0) break
        this.dispatcher.progress()
      }
    } catch (e) {
      s.log.error({ err: e }, 'interrupt-mode dispatcher stopped')
    } finally {
      this.armed = false
    }
  }
}
