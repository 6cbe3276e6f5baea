/**
 * One step of a blocking wait whose condition is not met (docs/architecture.md, "Progress, waiting
 * and doorbells"): spin while the spin budget lasts, then sleep on the task's doorbell, after
 * recording in the control block what the wait waits for; the budget adapts to how long wake-ups
 * take (`adaptSpin`). Also the promise form (a waitAsync on the doorbell, the event loop stays
 * free), the accounting of such sleeps, and the check that ends a wait when the job is aborted.
 */
import { performance } from 'node:perf_hooks'
import type { NetEngine } from '../engine/engine.js'
import { CTL_ABORT, CTL_ABORT_TASK, CTL_BAR_GEN, WAIT_BARRIER, WAIT_COND, WAIT_COUNTER, WAIT_RING, WaitCall } from '../layout/control.js'
import { JobAbortedError } from '../base/errors.js'
import { SLEEP_FAILED, SLEEP_READY } from '../transport/contract.js'
import type { Rings } from '../core/rings.js'
import type { ContextState } from '../core/state.js'
import type { Progress } from '../core/types.js'

/** Longest single Atomics.wait, ms: a sleeper re-checks the abort flag at least this often. */
export const SLEEP_SLICE_MS = 500
/**
 * Longest single sleep in the kernel on the connections, ms: what reaches a task only through its
 * doorbell while it sleeps there (an abort the launcher sent) waits at most this long.
 */
export const FD_SLEEP_MS = 50
/** `mustSleep`'s kind for a nap: only the inbox and queued work keep it awake. */
const NAP = -1
/** Rounds of a wait loop between two looks at the clock. */
export const SPIN_BATCH = 64

/** The watch line's record of a poll (Idler.pollBegin). */
const POLL_WATCH = (WaitCall.POLL + 1) | (WAIT_COND << 16)

export class Idler {
  private readonly s: ContextState
  private readonly rings: Rings
  /**
   * The dispatcher, whose work keeps a waiting task awake; built after this part (`attach`). The
   * field exists, as null, from the start, so that attaching it changes no object's shape.
   */
  private dispatcher: Progress | null = null
  private readonly ctl: Int32Array
  private readonly mySeg32: Int32Array
  private readonly myDoorbell: number
  private readonly mySleeping: number
  private readonly myWaitWord: number
  private readonly myWaitVal: number
  private readonly myWaitCall: number
  private readonly myWatch: number
  private readonly net: NetEngine | null
  /** The network engine's `moved` when the current spin period began. */
  private netMoved = 0

  /** The spin budget of the next wait, ms: `spinUs` to begin with, adapted by `adaptSpin`. */
  spinMs: number
  /**
   * Rounds a wait runs between two calls of `idle`: SPIN_BATCH, or 1 where waits do not spin (a
   * crowded host), so that they go to sleep after one look rather than after a batch of rounds.
   */
  readonly spinBatch: number
  /** The configured budget (`spinUs`) and the most it may grow to (`spinMaxUs`; equal: no adaptation), ms. */
  private readonly spinBaseMs: number
  private readonly spinMaxMs: number
  /** Times a blocking wait slept, and times the budget grew (DispatcherStats). */
  sleeps = 0
  spinGrown = 0
  /** Sleeps (of waits and naps) spent in the kernel on the connections rather than on the doorbell. */
  connectionSleeps = 0
  /** Waits that slept although the budget had grown, since it last grew from `spinUs` (0 or 1). */
  private spinMissed = 0
  /** The condition of the running waitUntil (WAIT_COND), null otherwise. */
  waitCond: (() => boolean) | null = null
  private abortSeen = false

  constructor(s: ContextState, rings: Rings) {
    this.s = s
    this.rings = rings
    this.ctl = s.ctl
    this.mySeg32 = s.mySeg32
    this.myDoorbell = s.myDoorbell
    this.mySleeping = s.mySleeping
    this.myWaitWord = s.myWaitWord
    this.myWaitVal = s.myWaitVal
    this.myWaitCall = s.myWaitCall
    this.myWatch = s.myWatch
    this.net = s.net
    // (adaptive spinning only where every task of the job, all in this process, can have a CPU:
    // with more tasks than CPUs a longer spin only keeps the awaited task off the CPU it needs)
    const spec = s.spec
    const cfg = spec.config
    // (with more tasks than CPUs a spin only keeps the awaited task, the agent and the other
    // processes off the CPU they need: waits sleep at once, and whoever makes the change wakes them)
    this.spinBaseMs = s.crowded ? 0 : cfg.spinUs / 1000
    this.spinBatch = this.spinBaseMs > 0 ? SPIN_BATCH : 1
    this.spinMs = this.spinBaseMs
    this.spinMaxMs = cfg.spinUs > 0 && !s.crowded ? Math.max(cfg.spinUs, cfg.spinMaxUs) / 1000 : this.spinBaseMs
  }

  /** Gives the waits the dispatcher whose work keeps them awake. */
  attach(dispatcher: Progress): void {
    this.dispatcher = dispatcher
  }

  /** Throws JobAbortedError once the job is being torn down because another task failed. */
  checkAbort(): void {
    if (Atomics.load(this.ctl, CTL_ABORT) !== 0) {
      const cause = Atomics.load(this.ctl, CTL_ABORT_TASK)
      if (!this.abortSeen) {
        this.abortSeen = true
        this.s.log.debug({ cause }, 'the job is aborted: this task stops')
        this.onAbortSeen?.(cause)
      }
      throw new JobAbortedError(cause)
    }
  }

  /** Called once, when this task first sees the job's abort (caused by task `cause`, or -1). */
  onAbortSeen: ((cause: number) => void) | null = null

  /**
   * One step of a blocking wait whose condition is not met: spin while the spin budget lasts, then
   * sleep on the doorbell. The condition is re-checked after SLEEPING is set (see ringDoorbell):
   * WAIT_COUNTER `i32[idx] < val`; WAIT_BARRIER barrier generation still `val`; WAIT_RING my ring
   * in task `val`'s inbox still full; WAIT_FENCE active messages of mine still outstanding.
   * A task never sleeps while packets wait in its inbox or work is queued. `call` (a WaitCall)
   * names the blocking call the wait belongs to, recorded for the agent's report when it sleeps.
   * Returns the new start of the spin period.
   */
  idle(spinStart: number, kind: number, call: number, i32: Int32Array | null, idx: number, val: number): number {
    this.checkAbort()
    this.watch(kind, call, i32, idx, val)
    const now = performance.now()
    const net = this.net
    if (spinStart === 0) {
      if (net !== null) this.netMoved = net.moved
      return now
    }
    if (now - spinStart < this.spinMs) return spinStart
    // (a wait whose network moved meanwhile — frames in, bytes out — is not idle: it spins on,
    // and keeps reading itself rather than leaving a stream to the agent's event loop)
    if (net !== null && this.spinBaseMs > 0) {
      const m = net.moved
      if (m !== this.netMoved) {
        this.netMoved = m
        return now
      }
    }
    const d = this.dispatcher!
    if (d.holding) d.flushChaos(true)
    this.rings.flushTails()
    const ctl = this.ctl
    this.recordWait(kind, call, i32, idx, val)
    const seen = Atomics.load(ctl, this.myDoorbell)
    Atomics.add(ctl, this.mySleeping, 1)
    let woke = 'none'
    if (this.mustSleep(kind, i32, idx, val)) {
      this.sleeps++
      woke = this.sleep(seen, SLEEP_SLICE_MS, kind, i32, idx, val)
    }
    Atomics.sub(ctl, this.mySleeping, 1)
    const after = performance.now()
    if (woke === 'ok') this.adaptSpin(after - now)
    else if (woke === 'timed-out') this.spinMs = this.spinBaseMs
    return after
  }

  /**
   * Records in this task's watch line that it is in blocking call `call` (a WaitCall) waiting for
   * `kind`: at every step of a wait, so that a wait nested in one (a handler's) leaves the outer
   * one named when it ends. The line is this task's alone and read only by reports (lapirun
   * --timeout, SIGUSR1): these stores move no other thread's cache line.
   */
  private watch(kind: number, call: number, i32: Int32Array | null, idx: number, val: number): void {
    const ctl = this.ctl
    const w = this.myWatch
    ctl[w + 1] = kind === WAIT_COUNTER && i32 === this.mySeg32 ? idx : 0
    ctl[w + 2] = val
    Atomics.store(ctl, w, (call + 1) | (kind << 16))
  }

  /**
   * A poll (LAPI_Probe, LAPI_Msgpoll, a program's or a layer's progress call) begins: the watch
   * line names it until `pollEnd`, so that a task polling in a loop is reported as polling.
   */
  pollBegin(): void {
    this.ctl[this.myWatch] = POLL_WATCH
  }

  pollEnd(): void {
    this.ctl[this.myWatch] = 0
  }

  /** A blocking wait that went through `idle` (`spinStart` ≠ 0) is over: its watch line says so. */
  waitDone(spinStart: number): void {
    if (spinStart !== 0) Atomics.store(this.ctl, this.myWatch, 0)
  }

  /**
   * A poll that found nothing on a crowded host (more tasks than CPUs): coming back at once would
   * only keep the other tasks, the agent and the other processes off the CPU they need to bring
   * something, so it sleeps for at most `ms` (`sleep`) — any packet or counter update for this
   * task ends the nap at once.
   */
  nap(ms: number): void {
    this.checkAbort()
    const ctl = this.ctl
    this.recordWait(WAIT_COND, WaitCall.POLL, null, 0, 0)
    const seen = Atomics.load(ctl, this.myDoorbell)
    Atomics.add(ctl, this.mySleeping, 1)
    if (this.mustSleep(NAP, null, 0, 0)) this.sleep(seen, ms, NAP, null, 0, 0)
    Atomics.sub(ctl, this.mySleeping, 1)
  }

  /**
   * The sleep of `idle` and `nap` (the task announced itself in SLEEPING and found it must sleep):
   * until the doorbell moves from `seen` or `ms` pass. In the kernel on the connections where the
   * network engine allows it (NetEngine.sleepBegin: a message that comes wakes this task itself,
   * not the agent first), re-checking the condition once that sleep is set up; else on the
   * doorbell, the connections left to the agent. Returns as Atomics.wait does.
   */
  private sleep(seen: number, ms: number, kind: number, i32: Int32Array | null, idx: number, val: number): string {
    const net = this.net
    if (net === null) return Atomics.wait(this.ctl, this.myDoorbell, seen, ms)
    if (net.sleepBegin()) {
      let r = SLEEP_FAILED
      try {
        // (what came while the sleep was set up ends the wait here: as a doorbell that moved)
        if (!this.mustSleep(kind, i32, idx, val)) return 'not-equal'
        // (that look took in what came meanwhile: what it gave the agent wakes this task through its doorbell)
        if (net.sleepStill()) r = net.sleep(Math.min(ms, FD_SLEEP_MS))
      } finally {
        net.sleepEnd()
      }
      if (r !== SLEEP_FAILED) {
        this.connectionSleeps++
        return r === SLEEP_READY ? 'ok' : 'timed-out'
      }
    }
    // (while this task sleeps on its doorbell nobody may be reading the network for it: the agent does)
    net.beforeSleep()
    return Atomics.wait(this.ctl, this.myDoorbell, seen, ms)
  }

  /**
   * Records in the control block what the wait about to sleep waits for (WAIT_WORD and WAIT_VAL,
   * which also tell a counter's notifier whether to wake it) and in which blocking call (WAIT_CALL).
   */
  private recordWait(kind: number, call: number, i32: Int32Array | null, idx: number, val: number): void {
    const ctl = this.ctl
    Atomics.store(ctl, this.myWaitWord, kind === WAIT_COUNTER && i32 === this.mySeg32 ? idx : 0)
    Atomics.store(ctl, this.myWaitVal, val)
    Atomics.store(ctl, this.myWaitCall, call | (kind << 16))
  }

  /**
   * A doorbell ended a sleep after `sleptMs`: had the wait spun that much longer it would not have
   * slept. Two tasks answering each other fall into a lasting slow state otherwise when waking a
   * thread takes longer than the spin budget (a VM's halted vCPU, a busy host): each waits out its
   * budget while the other is being woken, so each sleeps and every message costs a wake-up. So
   * after such a sleep the next waits spin `spinUs` + 2 × sleptMs (when that is at most
   * `spinMaxUs`), which ends the chain. One sample of a wake-up can be short (the doorbell came
   * just after the wait fell asleep) and the next wake-up longer, so the first wait that sleeps
   * although the budget had grown grows it again, to `spinUs` + 2 × (the budget + sleptMs): twice
   * the whole wait. A second one shows that spinning longer does not help (the awaited thread may
   * need this very CPU, as when another process takes the other one): the budget goes back to
   * `spinUs`, as it does after a sleep longer than that bound or a whole sleep slice without a
   * doorbell (nobody was about to answer).
   */
  private adaptSpin(sleptMs: number): void {
    const base = this.spinBaseMs
    if (this.spinMs === base) {
      const want = base + 2 * sleptMs
      if (want <= this.spinMaxMs) {
        this.spinMs = want
        this.spinGrown++
        this.spinMissed = 0
      }
      return
    }
    const want = base + 2 * (this.spinMs + sleptMs)
    if (this.spinMissed === 0 && want <= this.spinMaxMs) {
      this.spinMs = want
      this.spinGrown++
      this.spinMissed = 1
    } else {
      this.spinMs = base
    }
  }

  /**
   * The asynchronous twin of `idle` (promise waits, the event loop stays free): no spinning, an
   * `Atomics.waitAsync` on the doorbell. Async sleepers count 2 in SLEEPING and are always woken.
   */
  async idleAsync(kind: number, call: number, i32: Int32Array | null, idx: number, val: number): Promise<void> {
    this.checkAbort()
    const d = this.dispatcher!
    if (d.holding) d.flushChaos(true)
    this.rings.flushTails()
    const ctl = this.ctl
    this.recordWait(kind, call, i32, idx, val)
    const seen = Atomics.load(ctl, this.myDoorbell)
    this.enterAsyncSleep()
    try {
      if (this.mustSleep(kind, i32, idx, val)) {
        // (as a blocking sleep does: what waits goes out, and the agent reads the connections)
        if (this.net !== null) this.net.beforeSleep()
        await this.sleepAsync(seen)
      }
    } finally {
      this.leaveAsyncSleep()
    }
  }

  /**
   * Sleeps without blocking the thread until the doorbell moves from `seen` (or a slice passes).
   * A pending Atomics.waitAsync does not keep Node's event loop alive, so a timer does.
   */
  private async sleepAsync(seen: number): Promise<void> {
    const w = Atomics.waitAsync(this.ctl, this.myDoorbell, seen, SLEEP_SLICE_MS)
    if (!w.async) return
    const keepAlive = setTimeout(noop, SLEEP_SLICE_MS + 50)
    try {
      await w.value
    } finally {
      clearTimeout(keepAlive)
    }
  }

  /** A promise wait of this thread announces itself: 2 in SLEEPING (always woken), and the local count. */
  enterAsyncSleep(): void {
    this.s.asyncSleepers++
    Atomics.add(this.ctl, this.mySleeping, 2)
  }

  leaveAsyncSleep(): void {
    Atomics.sub(this.ctl, this.mySleeping, 2)
    this.s.asyncSleepers--
  }

  /** Whether a waiter may sleep (called after it announced itself in SLEEPING): see `idle`. */
  private mustSleep(kind: number, i32: Int32Array | null, idx: number, val: number): boolean {
    const d = this.dispatcher!
    if (d.inboxPending() || d.busy) return false
    switch (kind) {
      case NAP:
        return true
      case WAIT_COUNTER:
        return Atomics.load(i32!, idx) < val
      case WAIT_BARRIER:
        return Atomics.load(this.ctl, CTL_BAR_GEN) === val
      case WAIT_RING: {
        const o = this.rings.outbox[val]!
        return o.pending() >= o.slots
      }
      case WAIT_COND:
        return !this.waitCond!()
      default:
        return this.rings.outstanding() > 0
    }
  }
}

function noop(): void {}
