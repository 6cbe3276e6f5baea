/**
 * Running the program's handlers (a layer of the runtime: runtime.ts): `invokeWith` calls a
 * message's handler with its token, payload and arguments, one call per arity (no spreading, no
 * array), and the state of the handlers running now, which the receive side, the poll and the
 * requests share: the innermost token whose handler runs, the nesting depth, and the bundle whose
 * reply handlers may run from inside LAPI's dispatcher, with how many did and the first error one
 * of those threw.
 */
import type { Bundle, Endpoint, Token } from './objects.js'
import { Flow } from './flow.js'
import { CAT_MASK, CAT_SHORT } from './wire.js'

/** The handler runs of this task. */
export class Invoker extends Flow {
  /** The innermost token whose handler runs (null: none). */
  protected running: Token | null = null
  protected nest = 0
  /**
   * The bundle whose handlers may run right now from inside the LAPI dispatcher (AMLAPI's second
   * optimization: a reply that arrives while AM_Poll, AM_WaitSema or a Request of this bundle runs
   * the dispatcher is handled from the header handler, skipping the task queue); null otherwise.
   */
  protected direct: Bundle | null = null
  /** Reply handlers run from the dispatcher since the last look (AM_Poll counts them). */
  protected directRuns = 0
  /** Whether a reply handler ran from the dispatcher since poll() last looked (wait conditions). */
  get ranDirect(): boolean {
    return this.directRuns > 0
  }
  /** An error a directly run reply handler threw, rethrown once the dispatcher returned. */
  protected directError: unknown = null

  /** Logs a handler's throw (which goes on out of the AM_Poll, AM_WaitSema or request that ran it). */
  protected handlerThrew(t: Token, e: unknown): void {
    this.log.error({ err: e, handler: t.handler, src: t.srcTask }, 'an AM-2 handler threw')
  }

  /** Runs the user handler of `t` (`buf`: the payload of a Medium or Long) with its arguments: one call per arity, no spreading. */
  protected invokeWith(t: Token, ep: Endpoint, buf: Uint8Array): void {
    const fn = ep.handlers[t.handler] as (...a: unknown[]) => void
    const a = t.args
    const n = t.nbytes
    if ((t.kind & CAT_MASK) === CAT_SHORT) {
      switch (t.nargs) {
        case 0:
          fn(t)
          break
        case 1:
          fn(t, a[0])
          break
        case 2:
          fn(t, a[0], a[1])
          break
        case 3:
          fn(t, a[0], a[1], a[2])
          break
        case 4:
          fn(t, a[0], a[1], a[2], a[3])
          break
        case 5:
          fn(t, a[0], a[1], a[2], a[3], a[4])
          break
        case 6:
          fn(t, a[0], a[1], a[2], a[3], a[4], a[5])
          break
        case 7:
          fn(t, a[0], a[1], a[2], a[3], a[4], a[5], a[6])
          break
        case 8:
          fn(t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7])
          break
        case 9:
          fn(t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8])
          break
        case 10:
          fn(t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9])
          break
        case 11:
          fn(t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10])
          break
        case 12:
          fn(t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11])
          break
        case 13:
          fn(t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12])
          break
        case 14:
          fn(t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13])
          break
        case 15:
          fn(t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14])
          break
        case 16:
          fn(t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15])
          break
      }
      return
    }
    switch (t.nargs) {
      case 0:
        fn(t, buf, n)
        break
      case 1:
        fn(t, buf, n, a[0])
        break
      case 2:
        fn(t, buf, n, a[0], a[1])
        break
      case 3:
        fn(t, buf, n, a[0], a[1], a[2])
        break
      case 4:
        fn(t, buf, n, a[0], a[1], a[2], a[3])
        break
      case 5:
        fn(t, buf, n, a[0], a[1], a[2], a[3], a[4])
        break
      case 6:
        fn(t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5])
        break
      case 7:
        fn(t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6])
        break
      case 8:
        fn(t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7])
        break
      case 9:
        fn(t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8])
        break
      case 10:
        fn(t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9])
        break
      case 11:
        fn(t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10])
        break
      case 12:
        fn(t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11])
        break
      case 13:
        fn(t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12])
        break
      case 14:
        fn(t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13])
        break
      case 15:
        fn(t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14])
        break
      case 16:
        fn(t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15])
        break
    }
  }
}
