/**
 * The end of an active message at its target (`completeOne`): its id is marked done, LANDED moves
 * for the origin's fence (with the slot's release when the message completed in its own packet's
 * drain), then the completion handler runs inline (LAPI_SEND_REPLY) or is queued for the next
 * top-level dispatcher round, and after it the counters move (`finish`: the target counter, then
 * the origin's completion counter). The queue is a growable ring of parallel arrays: no
 * allocation in steady state. Also where the dispatcher is (the ring it drains) and how deeply
 * dispatcher rounds that run completion handlers nest.
 */
import { ErrClass } from '../base/constants.js'
import { ringDoorbell } from '../layout/control.js'
import type { RemoteSource } from '../net/remote-ends.js'
import type { RingReader } from '../transport/ring.js'
import type { ContextState } from '../core/state.js'
import type { Counters } from '../sync/counters.js'
import type { UserCode } from '../sync/user-code.js'
import type { compl_hndlr_t } from '../base/types.js'
import type { SourceState } from './received.js'

/** Nesting depth of dispatcher rounds that may still run queued completion handlers. */
export const MAX_NESTED_COMPLETIONS = 8

export class Completions {
  private readonly c: ContextState
  private readonly counters: Counters
  private readonly user: UserCode
  private readonly ctl: Int32Array
  private readonly inbox: Array<RingReader | RemoteSource>
  private cq: Array<compl_hndlr_t | null> = new Array<compl_hndlr_t | null>(64).fill(null)
  private cqInfo: unknown[] = new Array<unknown>(64).fill(null)
  private cqNum: Int32Array = new Int32Array(64 * 3)
  /** The queue's ends: handlers were queued while `cqHead !== cqTail`. */
  cqHead = 0
  cqTail = 0
  /** Depth of nested dispatcher rounds (a completion handler that waits runs one). */
  depth = 0
  /** The task whose ring the dispatcher is draining (its sender's doorbell is rung after it, or when its held TAIL goes out), or -1. */
  draining = -1
  /** 1 when the packet being drained completed its message inline (LANDED moves with the slot's release). */
  landedHere = 0
  /** Messages that completed here (all data in place). */
  recvCompleted = 0

  constructor(s: ContextState, inbox: Array<RingReader | RemoteSource>, counters: Counters, user: UserCode) {
    this.c = s
    this.ctl = s.ctl
    this.inbox = inbox
    this.counters = counters
    this.user = user
  }

  /**
   * A message is complete: mark its id done, tell the origin its data landed (for its fence), then
   * run the completion handler inline (LAPI_SEND_REPLY, when the dispatcher is not nested in a
   * blocked send) or queue it; the counters follow the handler.
   */
  completeOne(s: SourceState, src: number, id: number, compl: compl_hndlr_t | null, uinfo: unknown, inline: boolean, tgtCntr: number, cmplCntr: number): void {
    s.done.add(id)
    this.recvCompleted++
    // The origin's fence may wait for this. A message completing in its own packet's drain counts
    // as landed with that slot's release; otherwise (and before a completion handler, which may
    // fence) LANDED moves now. Drain rings the doorbell after the ring it is on (or publishTails,
    // when it held that ring's TAIL back).
    if (compl === null && src === this.draining) {
      this.landedHere++
      this.finish(src, tgtCntr, cmplCntr)
      return
    }
    // (a source in another process is told by the acknowledgement, which goes with the engine's
    // next frames whatever rings now)
    if (this.inbox[src]!.markLanded(1) && src !== this.draining) ringDoorbell(this.ctl, src)
    if (compl === null) {
      this.finish(src, tgtCntr, cmplCntr)
      return
    }
    if (inline && this.c.sendBlocked === 0 && this.depth < MAX_NESTED_COMPLETIONS) {
      this.depth++
      try {
        this.user.runComplHandler(compl, uinfo, src, ErrClass.AM_ERR)
      } finally {
        this.depth--
      }
      this.finish(src, tgtCntr, cmplCntr)
    } else {
      this.enqueue(compl, uinfo, src, tgtCntr, cmplCntr)
    }
  }

  /** After the completion handler: the target counter, then the origin's completion counter. */
  private finish(src: number, tgtCntr: number, cmplCntr: number): void {
    const k = this.counters
    if (tgtCntr !== 0) k.bumpLocal(tgtCntr)
    if (cmplCntr !== 0) k.bump(src, cmplCntr)
  }

  /** Queues a completion handler and the counters to bump after it. */
  private enqueue(fn: compl_hndlr_t, info: unknown, src: number, tgtCntr: number, cmplCntr: number): void {
    let cap = this.cq.length
    if (this.cqTail - this.cqHead === cap) {
      // full: grow to twice the size, keeping the order
      const n = cap * 2
      const cq = new Array<compl_hndlr_t | null>(n).fill(null)
      const ci = new Array<unknown>(n).fill(null)
      const cn = new Int32Array(n * 3)
      for (let i = 0; i < cap; i++) {
        const from = (this.cqHead + i) & (cap - 1)
        cq[i] = this.cq[from]!
        ci[i] = this.cqInfo[from]
        cn[3 * i] = this.cqNum[3 * from]!
        cn[3 * i + 1] = this.cqNum[3 * from + 1]!
        cn[3 * i + 2] = this.cqNum[3 * from + 2]!
      }
      this.cq = cq
      this.cqInfo = ci
      this.cqNum = cn
      this.cqTail = cap
      this.cqHead = 0
      cap = n
    }
    const at = this.cqTail & (cap - 1)
    this.cq[at] = fn
    this.cqInfo[at] = info
    this.cqNum[3 * at] = src
    this.cqNum[3 * at + 1] = tgtCntr
    this.cqNum[3 * at + 2] = cmplCntr
    this.cqTail++
  }

  /** Runs the queued completion handlers (and those queued meanwhile); returns how many ran. */
  runCompletions(): number {
    let n = 0
    this.depth++
    try {
      while (this.cqHead !== this.cqTail) {
        const at = this.cqHead & (this.cq.length - 1)
        this.cqHead++
        const fn = this.cq[at]!
        const info = this.cqInfo[at]
        const src = this.cqNum[3 * at]!
        const tgt = this.cqNum[3 * at + 1]!
        const cmpl = this.cqNum[3 * at + 2]!
        this.cq[at] = null
        this.cqInfo[at] = null
        this.user.runComplHandler(fn, info, src, ErrClass.AM_ERR)
        this.finish(src, tgt, cmpl)
        n++
      }
    } finally {
      this.depth--
    }
    return n
  }
}
