/**
 * LAPI counters (docs/lapi.md, "Counters"): LAPI_Setcntr, LAPI_Getcntr and LAPI_Waitcntr (blocking
 * and promise forms), and the bumps every operation makes, here and at other tasks. A bump of
 * another task's counter is followed by a ring of that task's doorbell when it sleeps waiting for
 * exactly that; a bump of the counter the running Waitcntr waits on is handed straight to the
 * wait (`absorbed`), so that a message which completes the wait costs no atomic update of it.
 */
import { WAIT_COUNTER, WaitCall, ringCounter, ringDoorbell } from '../layout/control.js'
import { LapiError } from '../base/errors.js'
import { LapiStatus as S } from '../base/status.js'
import type { RemoteOps } from '../net/remote-ops.js'
import type { Checks } from '../core/checks.js'
import type { Rings } from '../core/rings.js'
import type { ContextState } from '../core/state.js'
import type { Progress } from '../core/types.js'
import type { Addr, Ref } from '../base/types.js'
import type { Idler } from './idle.js'

export class Counters {
  private readonly s: ContextState
  private readonly rings: Rings
  private readonly checks: Checks
  private readonly idler: Idler
  private readonly remote: RemoteOps
  /**
   * The dispatcher the waits run, built after this part (`attach`: it bumps counters). The field
   * exists, as null, from the start, so that attaching it changes no object's shape.
   */
  private dispatcher: Progress | null = null
  private readonly taskId: number
  private readonly ctl: Int32Array
  private readonly seg: Int32Array[]
  private readonly mySeg32: Int32Array
  private readonly local: Uint8Array
  private readonly segmentSize: number

  /**
   * The counter word (of the own segment) the innermost running Waitcntr waits on, or -1. While it
   * waits, the dispatcher hands bumps of that counter straight to it (`absorbed`) instead of adding
   * them in memory, and the wait subtracts only the difference when it ends: a message that
   * completes the wait then costs no atomic read-modify-write of the counter, on either side.
   * Only the wait's own dispatcher rounds hand bumps over: `absorbed` goes into memory before any
   * user code runs (a header handler: `flushAbsorbed`; a completion, send-completion or error
   * handler: `enterUser`, which also stops the hand-over while it runs) and before the sleep, so
   * no code of this task ever sees the difference.
   */
  private absorbWord = -1
  /** Bumps of `absorbWord` the running wait has taken and memory does not show yet. */
  private absorbed = 0
  /** Completion, send-completion and error handlers running (nested); bumps go to memory meanwhile. */
  userCode = 0

  constructor(s: ContextState, rings: Rings, checks: Checks, idler: Idler, remote: RemoteOps) {
    this.s = s
    this.rings = rings
    this.checks = checks
    this.idler = idler
    this.remote = remote
    this.taskId = s.taskId
    this.ctl = s.ctl
    this.seg = s.seg.i32
    this.mySeg32 = s.mySeg32
    this.local = s.local
    this.segmentSize = s.segmentSize
  }

  /** Gives the counters the dispatcher their waits run. */
  attach(dispatcher: Progress): void {
    this.dispatcher = dispatcher
  }

  /** LAPI_Setcntr. */
  setcntr(cntr: Addr, val: number): number {
    if (!this.checks.isCounter(cntr)) return S.ERR_CNTR_NULL
    if (!Number.isInteger(val)) return S.ERR_CNTR_VAL
    Atomics.store(this.seg[this.taskId]!, cntr >>> 2, val)
    return S.SUCCESS
  }

  /** LAPI_Getcntr (runs the dispatcher once first, as LAPI calls do in polling mode). */
  getcntr(cntr: Addr, val: Ref<number> | null | undefined): number {
    if (!this.checks.isCounter(cntr)) return S.ERR_CNTR_NULL
    if (val === null || val === undefined || typeof val !== 'object') return S.ERR_RET_PTR_NULL
    if (!this.s.inHeaderHandler) this.dispatcher!.progress()
    val.value = Atomics.load(this.mySeg32, cntr >>> 2)
    return S.SUCCESS
  }

  /**
   * LAPI_Waitcntr: blocks until the counter is ≥ `val`, then subtracts `val` and reports the value
   * left. Spins (running the dispatcher) for `spinUs`, then sleeps on the task's doorbell.
   */
  waitcntr(cntr: Addr, val: number, cur: Ref<number> | null | undefined): number {
    const rc = this.checkWait(cntr, val)
    if (rc !== 0) return rc
    const s = this.s
    if (s.inHeaderHandler) return S.ERR_POLLING_NET
    this.rings.flushTails()
    const i32 = this.mySeg32
    const idx = cntr >>> 2
    // bumps a waiting dispatcher handed straight to this wait (see waitSlow) count as in memory
    // (a plain read that shows the wait not over needs no atomic one: see `reached`)
    const got = i32[idx]! < val || Atomics.load(i32, idx) < val ? this.waitSlow(i32, idx, val) : 0
    const d = got - val
    if (d !== 0) {
      const left = Atomics.add(i32, idx, d) + d
      if (cur !== null && cur !== undefined) cur.value = left
      if (got !== 0 && s.asyncSleepers !== 0) ringDoorbell(this.ctl, this.taskId)
    } else if (cur !== null && cur !== undefined) {
      cur.value = Atomics.load(i32, idx)
    }
    return S.SUCCESS
  }

  /**
   * The waiting loop of waitcntr: look at the counter (`reached`), look at the inbox and run the
   * dispatcher only when a packet waits or work is queued; every
   * SPIN_BATCH rounds run the dispatcher anyway and look at the clock (performance.now is too dear
   * to call every round), and once the spin budget is spent sleep on the doorbell. Each round
   * keeps one atomic read, the inbox's: a spin of plain reads alone measured slower (the other
   * thread's hop took longer), as a loop of plain loads of a line another core writes keeps the
   * core busier; the call of an atomic read paces the loop. Returns the bumps it took (`absorbed`).
   */
  private waitSlow(i32: Int32Array, idx: number, val: number): number {
    let spinStart = 0
    const d = this.dispatcher!
    // (a wait nested in a handler runs while the outer's bumps are in memory: see enterUser)
    const outer = this.absorbWord
    this.absorbWord = idx
    try {
      for (;;) {
        for (let k = 0, n = this.idler.spinBatch; k < n; k++) {
          if (this.reached(i32, idx, val)) return this.absorbed
          if (d.inboxPending() || d.busy) d.progress()
        }
        d.progress()
        if (Atomics.load(i32, idx) + this.absorbed >= val) return this.absorbed
        // what this wait took so far goes to memory before it may sleep on the counter
        if (this.absorbed !== 0) this.flushAbsorbed()
        spinStart = this.idler.idle(spinStart, WAIT_COUNTER, WaitCall.WAITCNTR, i32, idx, val)
      }
    } catch (e) {
      this.flushAbsorbed()
      throw e
    } finally {
      this.absorbed = 0
      this.absorbWord = outer
      this.idler.waitDone(spinStart)
    }
  }

  /**
   * Whether the wait on counter word `idx` for `val` is over (the counter plus what the wait took).
   * A plain read first, as a hint: a look that finds the wait not over costs no atomic operation
   * (an atomic read is a call in Node 20, ~100 instructions), and a value read late only makes the
   * wait look again. When the hint shows the wait over, an atomic read confirms it, which also
   * orders the reads of the data the counted operations wrote; it is skipped when this wait's own
   * dispatcher rounds took enough (`absorbed`), as their packets were read after atomic reads of
   * their stamps. (Other tasks' counter updates add; only a Put or Rmw that another task aims at
   * the counter word itself, racing with the wait, could make that case differ.)
   */
  private reached(i32: Int32Array, idx: number, val: number): boolean {
    const a = this.absorbed
    return i32[idx]! + a >= val && (a >= val || Atomics.load(i32, idx) + a >= val)
  }

  /** Puts the held-back bumps into memory and counts a handler that may call LAPI as running (`userCode`). */
  enterUser(): void {
    this.flushAbsorbed()
    this.userCode++
  }

  /** Puts the bumps the running wait took into memory. */
  flushAbsorbed(): void {
    if (this.absorbed !== 0) {
      Atomics.add(this.mySeg32, this.absorbWord, this.absorbed)
      this.absorbed = 0
      if (this.s.asyncSleepers !== 0) ringDoorbell(this.ctl, this.taskId)
    }
  }

  /**
   * Waits asynchronously (Atomics.waitAsync on the doorbell, so the event loop stays free) until the
   * counter is ≥ `val`, subtracts `val` and resolves with the value left. Validates like waitcntr;
   * rejects with a LapiError instead of waiting when the arguments are bad.
   */
  async waitcntrAsync(cntr: Addr, val: number): Promise<number> {
    const rc = this.checkWait(cntr, val)
    if (rc !== 0) throw new LapiError(rc, 'Waitcntr')
    const i32 = this.mySeg32
    const idx = cntr >>> 2
    const d = this.dispatcher!
    for (;;) {
      d.progress()
      if (Atomics.load(i32, idx) >= val) return Atomics.sub(i32, idx, val) - val
      await this.idler.idleAsync(WAIT_COUNTER, WaitCall.WAITCNTR, i32, idx, val)
    }
  }

  /**
   * The arguments of a counter wait: a counter and an integer value; 0 or the LAPI code. The test
   * every correct call passes comes first; the rest is its own function (`classifyWait`), so that
   * the counter wait the callers inline stays within TurboFan's inlining budget.
   */
  private checkWait(cntr: Addr, val: number): number {
    if (cntr >>> 0 === cntr && cntr !== 0 && (cntr & 3) === 0 && cntr + 4 <= this.segmentSize && (val | 0) === val) return 0
    return this.classifyWait(cntr, val)
  }

  /** The code for counter-wait arguments that failed checkWait's first test (0 if they are fine after all). */
  private classifyWait(cntr: Addr, val: number): number {
    if (!this.checks.isCounter(cntr)) return S.ERR_CNTR_NULL
    if (typeof val !== 'number' || !Number.isInteger(val)) return S.ERR_CNTR_VAL
    return 0
  }

  /** Bumps counter `c` of task `t` and wakes t if it sleeps waiting for exactly this (no-op for c = 0). */
  bump(t: number, c: Addr): void {
    if (!c) return
    if (this.local[t] === 0) {
      this.remote.bump(t, c)
      return
    }
    const w = c >>> 2
    const v = Atomics.add(this.seg[t]!, w, 1) + 1
    ringCounter(this.ctl, t, w, v)
  }

  /** Bumps counter `c` of this task (no-op for c = 0), or hands the bump to the wait on it (`absorbWord`). */
  bumpLocal(c: Addr): void {
    if (!c) return
    const w = c >>> 2
    if (w === this.absorbWord && this.userCode === 0) {
      this.absorbed++
      return
    }
    Atomics.add(this.mySeg32, w, 1)
    // Only this thread bumps its own counters, so it cannot be asleep in Atomics.wait now: only
    // its promise waits (waitAsync) need the doorbell, and it knows itself whether any is pending.
    if (this.s.asyncSleepers !== 0) ringDoorbell(this.ctl, this.taskId)
  }
}
