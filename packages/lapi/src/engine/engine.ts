/**
 * The network engine: the data plane of a process's network traffic, run by whichever thread holds
 * the process's network lock (docs/transports.md, "Who polls"): a task waiting in LAPI runs it
 * itself, so a message costs no wake of another thread; the agent runs it for tasks that are busy
 * in their own code or asleep. Every thread has its own NetEngine over the same shared memory:
 *
 *   - **out**: the packets the process's tasks put into their rings toward the network become
 *     frames on the frame path (transport/contract.ts), then go to the network in one write per peer;
 *   - **in**: frames from the network are performed on the target task's memory — Put, Get (its
 *     reply goes back at once), Rmw, counter bumps, acknowledgements: one-sided, the target's thread
 *     takes no part — or put into the target task's network ring (active messages, and the
 *     T_NET_DONE made for a task whose Get or Rmw needs its own thread to finish);
 *   - **acknowledgements** of the messages of other processes' tasks that landed here.
 *
 * Control messages (barrier, task states, abort) are the agent's: a task that meets one leaves it
 * in place and rings the agent. Malformed or misaddressed packets are dropped and counted (for
 * their target task when there is one), never performed.
 *
 * NetEngine puts the engine's parts together into what the threads call. Each part is functions of
 * the thread's EngineState (state.ts): the network lock between the threads (lock.ts, over the
 * words of layout/engine.ts), the way out (egress.ts), the way in (ingress.ts), the target side of
 * Put, Get and Rmw (target.ts), the local tasks' doorbells and counters (tasks.ts), and a task's
 * sleep (sleep.ts).
 */
import { performance } from 'node:perf_hooks'
import { NS_DIRTY, type JobSpec } from '../layout/job-spec.js'
import { OWNER_TASKS, ENG_BLOCKED, ENG_LOCK, ENG_LOCK_WAITER, ENG_OWNER, ENG_PARKED, ENG_TXPEND } from '../layout/engine.js'
import type { FramePath } from '../transport/contract.js'
import {
  READ_GAP_MS,
  ackRound,
  acks,
  acksOwed,
  flushOut,
  kick,
  pendingOut,
  putChunk,
  putDirect,
  putDirectReady,
  release,
  releaseSends,
  sendClock,
  sendOut,
} from './egress.js'
import { controlQueued, onFrame, takeControl } from './ingress.js'
import { askForConnections, clearTxpend, countPoll, roomFreed, tryLock } from './lock.js'
import { beforeSleep, sleepBegin, sleepEnd, sleepStill } from './sleep.js'
import { EngineState, ST_ACKS, ST_PACKETS_IN, ST_PACKETS_OUT, TM_READ } from './state.js'
import { answerParked } from './target.js'
import { BELL_ACK, bell, payBells } from './tasks.js'

export class NetEngine {
  private readonly s: EngineState
  readonly path: FramePath
  /** What the frame path hands each frame to (ingress.ts). */
  private readonly frame: (peer: number, kind: number, dst: number, u8: Uint8Array, off: number, len: number) => boolean

  /**
   * `holder`: this thread's lock id (task id + 1, or AGENT_ID); `onControl`: the agent's handler of
   * control messages, null in a task; `asks`: whether a task asks for the connections when it polls
   * (EngineState.asks).
   */
  constructor(spec: Omit<JobSpec, 'taskId'>, rank: number, holder: number, onControl: ((peer: number, body: Uint8Array) => void) | null, asks = true) {
    const s = new EngineState(spec, rank, holder, onControl, asks)
    this.s = s
    this.path = s.path
    this.frame = (peer: number, kind: number, dst: number, u8: Uint8Array, off: number, len: number): boolean => onFrame(s, peer, kind, dst, u8, off, len)
  }

  /** Engine statistics (packets out and in, acknowledgements sent). */
  stats(): { packetsOut: number; packetsIn: number; acksSent: number } {
    const st = this.s.st
    return { packetsOut: st[ST_PACKETS_OUT]!, packetsIn: st[ST_PACKETS_IN]!, acksSent: st[ST_ACKS]! }
  }

  // ───────────────────────────── what threads call ─────────────────────────────

  /**
   * A task's step in LAPI (its dispatcher round, a wait): sends what waits, takes in what came,
   * and asks the agent for the connections while it reads them. A task that `waiting` gives the
   * agent its CPU for a moment to hand them over (on a machine whose CPUs the spinning tasks fill,
   * the agent would otherwise wait for a time slice). Returns the frames handed in.
   */
  poll(waiting = false): number {
    // (OWNER, TXPEND and LOCK_WAITER are read plainly here: each is a hint that the lock's
    // compare-and-swap, or the next poll, makes good; Atomics.load is a call into a builtin in
    // Node 20, several times the cost of a plain read, and a poll is made per request)
    const s = this.s
    const w = s.w
    const owner = w[ENG_OWNER]!
    if (owner !== OWNER_TASKS && s.asks) {
      // (one request at a time: the agent clears WANT when it hands the connections over)
      askForConnections(s, owner, waiting)
    } else if (!waiting && owner === OWNER_TASKS && w[ENG_TXPEND] === 0 && sendClock(s) - s.times[TM_READ]! < READ_GAP_MS) {
      // (a poll on the side of a send, within the read gap: the send framed and wrote, or held,
      // what it had; nothing else is due)
      countPoll(s)
      return 0
    }
    // (the agent waits for the lock, for a round that may complete a barrier or take a control
    // message in: this poll leaves it to it)
    if (w[ENG_LOCK_WAITER] !== 0 || !tryLock(s)) return 0
    clearTxpend(s)
    // (OWNER changes under the lock only)
    const n = this.work(w[ENG_OWNER] === OWNER_TASKS, waiting)
    release(s)
    countPoll(s)
    return n
  }

  /** After a packet went into a ring toward the network: send it now if nobody else is at it (egress.ts). */
  kick(): void {
    kick(this.s)
  }

  /** Kicks wait until `releaseSends` (a batch of handlers' answers goes in one write); nested. */
  holdSends(): void {
    this.s.holds++
  }

  /** Ends a `holdSends`: the last one sends what the held kicks left, at once. */
  releaseSends(): void {
    releaseSends(this.s)
  }

  /**
   * A chunk of a large Put of task `src`, written straight from `data` (egress.ts, `putDirect`);
   * false when that cannot be now: the caller sends the chunk as ring packets instead.
   */
  putDirect(
    src: number,
    tgt: number,
    flags: number,
    tgtAddr: number,
    offset: number,
    msgLen: number,
    tgtCntr: number,
    cmplCntr: number,
    data: Uint8Array,
    off: number,
    len: number,
  ): boolean {
    return putDirect(this.s, src, tgt, flags, tgtAddr, offset, msgLen, tgtCntr, cmplCntr, data, off, len)
  }

  /** The payload bytes of a direct chunk toward task `tgt` (`putDirect`): what fills the path's units best, up to NET_PUT_DIRECT_MAX. */
  putChunk(tgt: number): number {
    return putChunk(this.s, tgt)
  }

  /**
   * Whether a direct chunk of `len` payload bytes toward task `tgt` could go now (`putDirect`'s
   * wait): nothing of this process waits to be written, and the send queue toward it has room.
   * A plain look, without the lock.
   */
  putDirectReady(tgt: number, len: number): boolean {
    return putDirectReady(this.s, tgt, len)
  }

  /**
   * The agent's round: `first` (what its event loop read, its control messages), then the engine's
   * work, reading the connections itself only when `first` says so (its event loop reads them; a
   * bulk stream is drained faster by a read straight into the receive buffer); false when the
   * lock was taken (what waits to be sent is then sent by the holder: TXPEND).
   */
  agentRound(first: () => boolean): boolean {
    const s = this.s
    if (!tryLock(s)) {
      Atomics.store(s.w, ENG_TXPEND, 1)
      return false
    }
    Atomics.store(s.w, ENG_TXPEND, 0)
    s.owing = true
    const freed = s.path.freed
    try {
      const read = first()
      this.work(read, true)
      // (room toward a peer came: a task asleep while a large Put waits for it wakes; one asleep in
      // a counter wait does not)
      if (s.path.freed !== freed) for (const t of s.tasks) bell(s, t, BELL_ACK)
    } finally {
      try {
        release(s)
      } finally {
        payBells(s)
      }
    }
    return true
  }

  /** A task that may have read the connections is about to sleep: the agent reads them meanwhile (sleep.ts). */
  beforeSleep(): void {
    beforeSleep(this.s)
  }

  /**
   * A waiting task is about to sleep: whether it may sleep in the kernel on the connections
   * (`sleep`, then `sleepEnd`) rather than on its doorbell (sleep.ts, `sleepBegin`). The caller
   * re-checks its condition after a true answer.
   */
  sleepBegin(): boolean {
    return sleepBegin(this.s)
  }

  /** After `sleepBegin` and the caller's re-check of its condition: whether the sleep may still go ahead. */
  sleepStill(): boolean {
    return sleepStill(this.s)
  }

  /** Sleeps in the kernel until a peer sends or `ms` pass (after `sleepBegin`): SLEEP_READY, SLEEP_TIMEOUT or SLEEP_FAILED (FramePath.sleep). */
  sleep(ms: number): number {
    return this.path.sleep(ms)
  }

  /** The sleep that `sleepBegin` allowed is over. */
  sleepEnd(): void {
    sleepEnd(this.s)
  }

  /** A task took packets from its network ring: frames that waited for the room may go on (the agent's, when it reads). */
  roomFreed(): void {
    roomFreed(this.s)
  }

  /** Runs `f` under the lock (the agent, for what must not overlap a poll); false when it was taken. */
  locked(f: () => void): boolean {
    const s = this.s
    if (!tryLock(s)) return false
    try {
      f()
    } finally {
      release(s)
    }
    return true
  }

  /**
   * One round under the lock: out, in, acknowledgements, out again. Acknowledgements go with other
   * frames (a task's next send carries them: `kick`), or once they have waited ACK_ROUNDS rounds
   * of a task, or in an agent's round that `acksDue` asks for: one whose Puts woke their target
   * task leaves them a moment to ride on that task's answer (sent at once, each would wake the
   * other process's agent too).
   */
  private work(reading: boolean, urgent: boolean): number {
    const s = this.s
    sendOut(s)
    if (s.w[ENG_PARKED] !== 0) answerParked(s)
    // (set only under the lock: this thread's look is exact)
    if (s.w[ENG_BLOCKED] !== 0) Atomics.store(s.w, ENG_BLOCKED, 0)
    // (a poll made by a send reads at most once per READ_GAP_MS: a read per request would be a
    // system call per request, mostly finding nothing; a wait or an explicit poll always reads)
    if (reading && !urgent) {
      const t = performance.now()
      if (t - s.times[TM_READ]! < READ_GAP_MS) reading = false
      else s.times[TM_READ] = t
    }
    const n = s.path.poll(reading, this.frame)
    s.framesIn += n
    acks(s, s.path.queued() > 0 || (s.onControl !== null ? s.acksDue : ackRound(s)))
    flushOut(s, urgent)
    return n
  }

  /**
   * Grows whenever this thread's engine work moved something (bytes written or read, frames
   * handed in): a wait whose spin budget ran out while it did is not idle, and keeps spinning.
   */
  get moved(): number {
    return this.s.framesIn + this.path.moved
  }

  /**
   * The agent's round sends the acknowledgements that wait, whatever else it has to send (set by
   * the agent ACK_DELAY_MS after a round left some, and by a Put whose target nobody woke: no
   * answer is coming to carry them).
   */
  get acksDue(): boolean {
    return this.s.acksDue
  }
  set acksDue(v: boolean) {
    this.s.acksDue = v
  }

  /** Whether acknowledgements wait to be sent (a task's landed messages not yet acknowledged). */
  get acksOwed(): boolean {
    return acksOwed(this.s)
  }

  /**
   * Whether every task of the process has taken in what its network ring held (under the lock:
   * the rings' positions are then this thread's), so that no message of another process waits to
   * be counted landed and acknowledged.
   */
  get ringsTaken(): boolean {
    for (const t of this.s.tasks) if (t.netIn.pending() !== 0) return false
    return true
  }

  /**
   * What waits in the rings of this process's tasks, in words, for the report of a job that
   * failed: per task the packets in its ring toward the network and in its network ring, and
   * whether acknowledgements are owed; then this engine's counts. Under the lock when it is free.
   */
  ringState(): string {
    const s = this.s
    let rings = ''
    const look = (): void => {
      rings = s.tasks
        .map(
          (t) =>
            `task ${t.id}: ${t.out.available()} packets toward the network, ${t.netIn.pending()} in its network ring` +
            `${Atomics.load(t.state, NS_DIRTY) !== 0 ? ', acknowledgements owed' : ''}`,
        )
        .join('; ')
    }
    // (asked from within this thread's own round, it holds the lock already)
    let ok = true
    if (Atomics.load(s.w, ENG_LOCK) === s.me) look()
    else ok = this.locked(look)
    const st = s.st
    return (
      `${ok ? rings : 'the rings not read (the lock is taken)'}; ${Atomics.load(s.w, ENG_TXPEND) !== 0 ? 'TXPEND set; ' : ''}` +
      `packets out ${st[ST_PACKETS_OUT]!}, in ${st[ST_PACKETS_IN]!}, acknowledgements sent ${st[ST_ACKS]!}`
    )
  }

  /** Whether anything waits for the network: packets in a ring toward it, or bytes not written. */
  get pendingOut(): boolean {
    return pendingOut(this.s)
  }

  /** Whether control messages tasks queued wait for the agent (under the lock). */
  get controlQueued(): boolean {
    return controlQueued(this.s)
  }

  /** The agent takes the control messages tasks queued (under the lock), oldest first. */
  takeControl(f: (peer: number, body: Uint8Array) => void): void {
    takeControl(this.s, f)
  }
}
