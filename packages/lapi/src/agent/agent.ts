/**
 * The agent: the network's side of a process, in its main thread beside the task workers
 * (docs/transports.md, "The agent"). The data plane is the network engine's (engine/engine.ts),
 * which any thread runs under the process's network lock; the agent
 *
 *   - decides who reads the connections: its own event loop while no task polls (a task busy in
 *     its own code or asleep still gets its one-sided operations served), the polling tasks
 *     themselves while they do (handing them over when one asks, taking them back when none has
 *     polled for IDLE_TICKS milliseconds);
 *   - runs the engine for everything that must not wait for a task: bytes its event loop read,
 *     packets no task sent, answers still queued, messages that waited for room in a ring;
 *   - owns the control plane: it completes the barrier (and the all-gathers riding on it) with
 *     the other agents — each reports when its tasks have all arrived, rank 0 releases everyone —,
 *     carries task exits and the job's abort to the other processes, and notices a lost one.
 *
 * It waits on its doorbell (control block AGENT_BELL) with Atomics.waitAsync, so it sleeps in the
 * event loop until a task rings it or a connection has data.
 */
import type { Logger } from 'pino'
import {
  TASK_EXIT_GEN, TASK_STATE, TaskState, CTL_AGENT_BELL, CTL_AGENT_QUIET, CTL_AGENT_QUIET_BELL, CTL_AGENT_SLEEPING, CTL_BAR_GEN, CTL_BAR_LOCAL, abortJob, controlLayout, ringDoorbell, taskWord,
} from '../layout/control.js'
import { placement, type JobSpec } from '../layout/job-spec.js'
import { describeWatch, readTask } from './watch.js'
import { FRAME_CONTROL, type Transport } from '../transport/contract.js'
import { decodeBody, encodeMessage, field } from '../transport/messages.js'
import { PEER_BYE, PEER_EOF, PEER_ERROR, PEER_MALFORMED } from '../layout/stream.js'
import { peerFlags } from '../transport/stream-path.js'
import { AGENT_ID, NetEngine, OWNER_AGENT, OWNER_TASKS, W_BLOCKED, W_CTRL, W_FDSLEEP, W_GIVEBACK, W_LOCK, W_LOCK_WAITER, W_OWNER, W_PARKED, W_POLLS, W_WANT } from '../engine/engine.js'

/** Longest a process's goodbye waits for what it has queued to be written, ms. */
const FINISH_MS = 5000
/** Longest a lost peer's last frames may wait to be taken in before the loss is judged, ms. */
const LOSS_DRAIN_MS = 5000
/**
 * Shortest time from a loss being seen to its judgement, ms: what the peer sent just before may
 * still wait unread in the socket (a goodbye datagram, when a write of this process found the
 * peer's port closed, as one resumed after a stop does).
 */
const LOSS_LOOK_MS = 50
/** Milliseconds without a task's poll after which the agent reads the connections again. */
export const IDLE_TICKS = 2
/**
 * Longest gap between two looks of the watch, ms: it starts at 1 ms when the tasks take the
 * connections and doubles while they poll steadily (each look wakes
 * the agent, on a machine whose CPUs the polling tasks fill a time slice taken from one of them:
 * a look every millisecond made the round trip between two processes 17% longer on 2 vCPUs).
 */
const WATCH_MAX_MS = 4
/**
 * How long the agent, whose round found the lock taken by a task while its event loop reads the
 * connections, gives that task the CPU before it tries again, ms (see `retry`).
 */
const LOCK_WAIT_MS = 0.03
/** Longest sleep of the agent between two rounds, ms: acknowledgements nobody else sends go then. */
const ACK_CHECK_MS = 5
/**
 * … twice as long after each such sleep that ended with nothing owed and nothing the tasks have
 * yet to take in (or no bytes for QUIET_AFTER_MS), up to this, ms; bytes that come in bring it
 * back to ACK_CHECK_MS. An idle process's agent would otherwise wake 200 times a second, each wake
 * a round (3–4% of a CPU here), taken from the tasks that compute beside it.
 */
const ACK_CHECK_MAX_MS = 80
/**
 * No bytes for this long, ms, and the agent's sleeps grow even while a task's network ring shows
 * messages not taken in (a task that took them in and left LAPI may not have said so yet).
 */
const QUIET_AFTER_MS = 100
/**
 * How long acknowledgements the agent's rounds owe wait for a frame to ride on, ms: a task that
 * answers what it was given carries them; otherwise the agent sends them then.
 */
const ACK_DELAY_MS = 1
/** A path timer already set to fire at most this much later than asked stays (ms): no re-arming per round. */
const PATH_TIMER_SLACK_MS = 0.5
/** Bytes of a read by the event loop that filled its buffer (Node reads a stream 64 KiB at a time). */
const FULL_READ = 64 << 10

export interface AgentOptions {
  spec: Omit<JobSpec, 'taskId'>
  rank: number
  transport: Transport
  log: Logger
  /** The job is over for this process: a peer was lost or sent an abort (`task`: the lost or failed task, or -1). */
  onAbort: (task: number, reason: string) => void
}

export class Agent {
  private readonly o: AgentOptions
  private readonly spec: Omit<JobSpec, 'taskId'>
  private readonly ctl: Int32Array
  private readonly w: Int32Array
  private readonly n: number
  private readonly procs: number
  private readonly lo: number
  private readonly engine: NetEngine
  private readonly gatherF64: Uint8Array
  private readonly gatherI64: Uint8Array
  private running = false
  /** Chunks the event loop read, waiting for the lock: peer, bytes, length, … */
  private readonly inbound: Array<number | Uint8Array> = []
  /** Control messages waiting for the lock: peer, encoded message (with its length prefix), … */
  private readonly outControl: Array<number | Buffer> = []
  private roundQueued = false
  /** The barrier generation this process has reported complete (or -1). */
  private reportedBar = -1
  /** Rank 0: arrivals per generation. */
  private readonly arrivals = new Map<number, number>()
  private watch: NodeJS.Timeout | null = null
  /** The round that sends the acknowledgements owed (ACK_DELAY_MS after a round left some). */
  private ackTimer: NodeJS.Timeout | null = null
  private lastPolls = 0
  private idleTicks = 0
  private readonly gone: boolean[]
  /** Losses the transport reported, not judged yet (reason by peer). */
  private readonly reported: Array<string | undefined> = []
  /** When a loss of each peer was first seen (ms). */
  private readonly lossSeen: Array<number | undefined> = []
  private dropped = 0
  private wakes = 0
  private handovers = 0
  /** Bounded sleeps in a row that ended with nothing owed (each doubles the next one's bound). */
  private quietChecks = 0
  /** When the event loop last read bytes (ms). */
  private bytesAt = 0

  constructor (o: AgentOptions) {
    this.o = o
    const spec = o.spec
    this.spec = spec
    this.ctl = new Int32Array(spec.control)
    this.w = new Int32Array(spec.net!.stream.words)
    this.n = spec.numTasks
    this.procs = spec.processes
    this.lo = spec.firstTask
    this.engine = new NetEngine(spec, o.rank, AGENT_ID, (peer, m) => this.onControl(peer, m))
    const layout = controlLayout(this.n)
    this.gatherF64 = new Uint8Array(spec.control, layout.gatherF64, 16 * this.n)
    this.gatherI64 = new Uint8Array(spec.control, layout.gatherI64, 16 * this.n)
    this.gone = new Array<boolean>(this.procs).fill(false)
    Atomics.store(this.w, W_OWNER, OWNER_AGENT)
  }

  stats (): Record<string, number> {
    return { ...this.engine.stats(), dropped: this.dropped, wakes: this.wakes, handovers: this.handovers }
  }

  /** The transport's events: what the event loop read, and lost peers. */
  onBytes (peer: number, chunk: Uint8Array, len: number): void {
    const inb = this.inbound
    inb.push(peer, chunk, len)
    // (messages a task may take in and leave unacknowledged: the loop's sleep is bounded by
    // ACK_CHECK_MS again, from now on)
    this.bytesAt = performance.now()
    if (this.quietChecks !== 0) {
      this.quietChecks = 0
      this.wakeLoop()
    }
    // (a read that filled the event loop's buffer: more is waiting, a bulk stream. A datagram
    // (peer -1): the others waiting are read by a round of our own, straight into the frame path,
    // once the event loop is past its I/O — libuv reads datagrams in batches (recvmmsg) before it
    // hands them over one by one, and what a round read earlier would overtake the batch's rest)
    if (len >= FULL_READ) this.drain = true
    else if (peer < 0 && !this.drainNext) { this.drainNext = true; this.later() }
    this.round()
    // (what waits for the lock or for room is copied out of the transport's buffer, which the next
    // read reuses; a Buffer's slice would be a view of it)
    for (let k = 1; k < inb.length; k += 3) if (inb[k] === chunk) inb[k] = Uint8Array.prototype.slice.call(chunk, 0, len)
  }

  /** Whether the next round reads the connections itself after what the event loop read (see onBytes). */
  private drain = false
  /** Whether the round `later` runs next reads the datagrams waiting itself (see onBytes). */
  private drainNext = false

  /** Starts serving (after the transport is connected). */
  start (): void {
    if (this.running) return
    this.running = true
    void this.loop()
    this.timers()
  }

  /** Stops the loop (the transport is closed by its owner). */
  stop (): void {
    this.running = false
    this.stopWatch()
    if (this.ackTimer !== null) { clearTimeout(this.ackTimer); this.ackTimer = null }
    if (this.pathTimer !== null) { clearTimeout(this.pathTimer); this.pathTimer = null }
    this.wakeLoop()
  }

  /** Ends the loop's sleep at once, so that it takes its bound again (the doorbell rung unconditionally: this thread knows it may sleep). */
  private wakeLoop (): void {
    Atomics.add(this.ctl, CTL_AGENT_BELL, 1)
    Atomics.notify(this.ctl, CTL_AGENT_BELL)
  }

  /**
   * Sends what the tasks left toward the network and a goodbye to every peer, and waits (at most
   * FINISH_MS) until all of it is written: a normal close after it loses nothing.
   */
  async finish (): Promise<void> {
    const end = performance.now() + FINISH_MS
    let bye = false
    for (;;) {
      // (what this process owes its peers' fences goes before its goodbye)
      this.engine.acksDue = true
      this.round()
      if (!bye) this.engine.locked(() => { bye = this.engine.path.bye() })
      let left = 1
      let settled = false
      this.engine.locked(() => { left = this.engine.path.flush(); settled = this.engine.path.settle() })
      if ((bye && left === 0 && settled && !this.engine.pendingOut) || performance.now() > end) return
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
  }

  private async loop (): Promise<void> {
    const ctl = this.ctl
    while (this.running) {
      this.onBell()
      const seen = Atomics.load(ctl, CTL_AGENT_BELL)
      Atomics.store(ctl, CTL_AGENT_SLEEPING, 1)
      if (!this.running) break
      if (this.hasWork()) {
        // work that could not be done now (the lock was taken, a ring full): look again after the
        // event loop had its turn — never in a loop of its own, which would take a CPU from the
        // tasks (while they read the connections, a millisecond later)
        Atomics.store(ctl, CTL_AGENT_SLEEPING, 0)
        await new Promise<void>((resolve) => { if (Atomics.load(this.w, W_OWNER) === OWNER_TASKS) setTimeout(resolve, 1); else setImmediate(resolve) })
        continue
      }
      // (while this thread reads the connections, at most ACK_CHECK_MS, longer while such sleeps
      // find nothing owed: a task that took messages in and then left LAPI for its own code leaves
      // their acknowledgements to this thread, and nothing may ring it; while the tasks read them,
      // the watch's idle test covers that)
      const bounded = Atomics.load(this.w, W_OWNER) === OWNER_AGENT
      const r = Atomics.waitAsync(ctl, CTL_AGENT_BELL, seen, bounded ? Math.min(ACK_CHECK_MS * 2 ** this.quietChecks, ACK_CHECK_MAX_MS) : Infinity)
      let how = 'not-equal'
      if (r.async) {
        // (nothing to do for `seen`: a task may sleep where this thread's rings cannot reach it)
        Atomics.store(ctl, CTL_AGENT_QUIET_BELL, seen)
        Atomics.store(ctl, CTL_AGENT_QUIET, 1)
        // (a task about to sleep may be waiting for this)
        Atomics.notify(ctl, CTL_AGENT_QUIET)
        how = await r.value
        Atomics.store(ctl, CTL_AGENT_QUIET, 0)
      }
      if (bounded && how === 'timed-out' && this.nothingOwed()) {
        if (ACK_CHECK_MS * 2 ** this.quietChecks < ACK_CHECK_MAX_MS) this.quietChecks++
      } else {
        this.quietChecks = 0
      }
      Atomics.store(ctl, CTL_AGENT_SLEEPING, 0)
      this.wakes++
    }
  }

  /**
   * No acknowledgement is owed and none can come due soon: nothing read waits for the lock, and
   * every task took in what its network ring held, or no bytes came for QUIET_AFTER_MS.
   */
  private nothingOwed (): boolean {
    if (this.inbound.length !== 0 || this.engine.acksOwed) return false
    if (performance.now() - this.bytesAt >= QUIET_AFTER_MS) return true
    let taken = false
    return this.engine.locked(() => { taken = this.engine.ringsTaken }) && taken
  }

  private hasWork (): boolean {
    // (a round put off until a task let the lock go may release a barrier or ring a task: until it
    // ran, this thread is not quiet, and a task does not sleep where only this thread could wake it)
    if (this.roundQueued) return true
    const w = this.w
    if (Atomics.load(w, W_CTRL) !== 0 || Atomics.load(w, W_BLOCKED) !== 0 || Atomics.load(w, W_PARKED) !== 0) return true
    if (Atomics.load(w, W_WANT) !== 0 && Atomics.load(w, W_OWNER) === OWNER_AGENT) return true
    if (Atomics.load(w, W_GIVEBACK) !== 0) return true
    const bar = Atomics.load(this.ctl, CTL_BAR_LOCAL)
    if (bar !== 0 && bar !== this.reportedBar) return true
    return Atomics.load(w, W_OWNER) === OWNER_AGENT && this.engine.pendingOut
  }

  /** What the doorbell may mean: a task asks for the connections, a control message or a barrier waits, packets wait to go. */
  private onBell (): void {
    const w = this.w
    if (Atomics.load(w, W_GIVEBACK) !== 0) {
      Atomics.store(w, W_GIVEBACK, 0)
      if (Atomics.load(w, W_OWNER) === OWNER_TASKS) this.takeBack()
    }
    if (Atomics.load(w, W_WANT) !== 0 && Atomics.load(w, W_OWNER) === OWNER_AGENT) this.handOver()
    const bar = Atomics.load(this.ctl, CTL_BAR_LOCAL)
    if (bar !== 0 && bar !== this.reportedBar) { this.reportedBar = bar; this.arrive(bar) }
    this.round()
    this.checkPeers()
  }

  /**
   * One engine round by the agent: what its event loop read, its control messages, then the
   * engine's work (out, in, acknowledgements). Tried again (`retry`) when a task holds the lock.
   */
  private round (): void {
    // (a control message sent from within a round goes with it: see tryRound)
    if (this.inRound) return
    if (!this.tryRound()) this.retry()
  }

  /** Whether a round runs (control messages its work sends wait for its end). */
  private inRound = false

  /** `round` once, and again while its work left control messages to send: false when a task held the lock. */
  private tryRound (): boolean {
    this.inRound = true
    let done: boolean
    try {
      do done = this.roundOnce(); while (done && this.outControl.length > 0)
    } finally {
      this.inRound = false
    }
    return done
  }

  private roundOnce (): boolean {
    const done = this.engine.agentRound(() => {
      const path = this.engine.path
      // (the bytes the event loop read go in first: a read of our own comes after them)
      const read = this.ingestAll(path) && this.drain
      this.drain = false
      // (cleared only here, under the lock: until the messages are taken the agent is not quiet)
      Atomics.store(this.w, W_CTRL, 0)
      this.engine.takeControl((peer, body) => this.controlBody(peer, body))
      const oc = this.outControl
      for (let i = 0; i < oc.length; i += 2) {
        const b = oc[i + 1] as Buffer
        // (the frame path frames it itself: the body without encodeMessage's length prefix)
        path.queue(oc[i] as number, FRAME_CONTROL, 0, b, 4, b.length - 4)
      }
      oc.length = 0
      return read
    })
    this.timers()
    if (done) {
      if (this.ackTimer === null && this.running && this.engine.acksOwed) this.ackTimer = setTimeout(this.ackDue, ACK_DELAY_MS)
      // (what did not fit waits, its peer paused, for the room this round's work made)
      if (this.inbound.length > 0) this.later()
      if (Atomics.load(this.w, W_OWNER) === OWNER_AGENT && this.engine.path.queued() > 0) this.later(1)
    }
    return done
  }

  /**
   * Arms the frame path's timers (a datagram path's retransmissions, delayed acknowledgements,
   * keepalives and peer timeout): a round when they are due, which runs them (its poll does). A
   * timer that fires by then stays.
   */
  private timers (): void {
    const ms = this.engine.path.due()
    if (ms < 0 || !this.running) return
    const at = performance.now() + ms
    if (this.pathTimer !== null) {
      if (this.pathDueAt <= at + PATH_TIMER_SLACK_MS) return
      clearTimeout(this.pathTimer)
    }
    this.pathDueAt = at
    this.pathTimer = setTimeout(this.pathDue, ms < 1 ? 1 : ms)
  }

  private pathTimer: NodeJS.Timeout | null = null
  private pathDueAt = Infinity
  private readonly pathDue = (): void => {
    this.pathTimer = null
    this.pathDueAt = Infinity
    if (!this.running) return
    // (tasks that read the connections and poll run the timers themselves: a round here would take
    // a CPU from one of them and contend for the lock, and re-arming would wake this thread every
    // millisecond, each wake taking a CPU from a task that spins. The watch, which looks anyway
    // while they read, arms the timer again once they stop polling: `tick`.)
    if (Atomics.load(this.w, W_OWNER) === OWNER_TASKS) {
      const polls = Atomics.load(this.w, W_POLLS)
      if (polls !== this.pathPolls) { this.pathPolls = polls; return }
    }
    this.round()
    this.checkPeers()
  }

  /** The tasks' poll count when the path's timer last found them polling. */
  private pathPolls = -1

  /** ACK_DELAY_MS after a round that left acknowledgements owed: a round that sends them. */
  private readonly ackDue = (): void => {
    this.ackTimer = null
    this.engine.acksDue = true
    this.round()
  }

  /**
   * A round found the lock taken. The holder is a task: one that sends (while this event loop
   * reads) or one that polls (while the tasks read the connections). Either way this thread asks
   * for the lock (W_LOCK_WAITER: a task's poll leaves it alone meanwhile, and its holder wakes this
   * thread when it lets go), gives the holder the CPU for a moment (a wait on the lock word), and
   * tries again: a barrier's arrival or release, a control message, waits for this round. Failing
   * that, again on the next turn of the event loop — or, while the tasks read, in a millisecond:
   * a loop of tries would take a CPU from the tasks that spin on it (on a CPU shared with such a
   * task, it kept the task from finishing for a whole time slice: 2–4 ms round trips).
   */
  private retry (): void {
    const holder = Atomics.load(this.w, W_LOCK)
    Atomics.store(this.w, W_LOCK_WAITER, 1)
    try {
      if (holder !== 0) Atomics.wait(this.w, W_LOCK, holder, LOCK_WAIT_MS)
      if (this.tryRound()) return
    } finally {
      Atomics.store(this.w, W_LOCK_WAITER, 0)
    }
    this.later(Atomics.load(this.w, W_OWNER) === OWNER_TASKS ? 1 : 0)
  }

  /**
   * Hands the chunks the event loop read to the frame path, in order, until one does not fit (its
   * peer is paused until room is made). Under the lock. Returns whether all went in.
   */
  private ingestAll (path: NetEngine['path']): boolean {
    const inb = this.inbound
    let k = 0
    for (; k < inb.length; k += 3) {
      const peer = inb[k] as number
      if (!path.ingest(peer, inb[k + 1] as Uint8Array, inb[k + 2] as number)) {
        this.o.transport.pausePeer(peer)
        if (!this.paused) this.o.log.trace({ peer }, 'peer paused: its bytes wait for room')
        this.paused = true
        break
      }
    }
    if (k === inb.length) {
      inb.length = 0
      // (everything went in: the peers paused meanwhile are read again — wherever they were
      // paused, a hand-over's ingest included; one left paused would be read by nobody once
      // this event loop reads the connections again)
      if (this.paused) {
        this.paused = false
        for (let p = 0; p < this.procs; p++) this.o.transport.resumePeer(p)
      }
    } else if (k > 0) inb.splice(0, k)
    return inb.length === 0
  }

  /** Whether a peer may be paused (`ingestAll`). */
  private paused = false

  /** Runs a round again soon (`ms` 0: on the next turn of the event loop). */
  private later (ms = 0): void {
    if (this.roundQueued) return
    this.roundQueued = true
    const f = (): void => {
      this.roundQueued = false
      if (this.drainNext) { this.drainNext = false; this.drain = Atomics.load(this.w, W_OWNER) === OWNER_AGENT }
      if (this.running) this.onBell(); else if (this.inbound.length > 0) this.round()
    }
    if (ms === 0) setImmediate(f)
    else setTimeout(f, ms)
  }

  /** A polling task asked for the connections: stop reading them here and let the tasks. */
  private handOver (): void {
    const t = this.o.transport
    t.agentReads(false)
    // (what this event loop read before goes into the frame path first, so the order of the bytes holds)
    const ok = this.engine.locked(() => {
      const path = this.engine.path
      if (!this.ingestAll(path)) return
      Atomics.store(this.w, W_OWNER, OWNER_TASKS)
      Atomics.store(this.w, W_WANT, 0)
    })
    if (!ok || Atomics.load(this.w, W_OWNER) !== OWNER_TASKS) { this.o.log.trace({ ok }, 'handover postponed'); t.agentReads(true); this.later(); return }
    this.o.log.trace('connections handed to the tasks')
    this.handovers++
    // (a task may be giving this thread its CPU meanwhile: wake it)
    Atomics.notify(this.w, W_OWNER)
    this.lastPolls = Atomics.load(this.w, W_POLLS)
    this.idleTicks = 0
    this.watchFast()
  }

  /** The watch's gap (ms) and its timer. */
  private watchMs = 1

  /** The watch looks every millisecond from now on (the tasks just took the connections). */
  private watchFast (): void {
    this.watchMs = 1
    if (this.watch !== null) clearTimeout(this.watch)
    this.watch = setTimeout(this.watchDue, 1)
  }

  /** The watch stops (the connections are this thread's again, or the agent ends). */
  private stopWatch (): void {
    if (this.watch !== null) { clearTimeout(this.watch); this.watch = null }
  }

  private readonly watchDue = (): void => {
    this.watch = null
    if (!this.running) return
    this.tick()
    if (this.watch === null && Atomics.load(this.w, W_OWNER) === OWNER_TASKS) this.watch = setTimeout(this.watchDue, this.watchMs)
  }

  /**
   * While tasks read the connections: take them back when no task has polled for IDLE_TICKS looks
   * a millisecond apart. While they poll, the looks grow apart (up to WATCH_MAX_MS). A look that
   * finds no poll since the last writes what a task held back when it stopped (its last sends,
   * left to go with later ones): within two looks of its last poll.
   */
  private tick (): void {
    const polls = Atomics.load(this.w, W_POLLS)
    if (polls !== this.lastPolls) {
      this.lastPolls = polls
      this.idleTicks = 0
      this.checkPeers()
      // (the tasks poll: a wait or an explicit poll writes what its thread held back, and so does
      // a send 0.05 ms or more after the thread's last write, engine.ts `flushOut`)
      if (this.watchMs < WATCH_MAX_MS) this.watchMs *= 2
      return
    }
    this.watchMs = 1
    // (a task that sent and then stopped polling may have left its last sends to go with later ones;
    // and the path's timers are this thread's again until the tasks poll: `pathDue`)
    if (this.engine.pendingOut) this.round()
    else this.timers()
    if (++this.idleTicks < IDLE_TICKS) return
    this.takeBack()
  }

  /** Reads the connections in this event loop again (no task polls, none sleeps on them). */
  private takeBack (): void {
    let asleep = false
    const ok = this.engine.locked(() => {
      // (a task asleep in the kernel on the connections is waiting in LAPI: they stay its)
      asleep = Atomics.load(this.w, W_FDSLEEP) !== 0
      if (!asleep) Atomics.store(this.w, W_OWNER, OWNER_AGENT)
    })
    if (asleep) { this.idleTicks = 0; this.checkPeers(); return }
    if (!ok) { this.later(); return }
    this.o.log.trace('connections taken back')
    this.stopWatch()
    // (the loop may sleep without a bound: from now on it must look every ACK_CHECK_MS)
    this.wakeLoop()
    this.o.transport.agentReads(true)
    this.round()
    this.checkPeers()
  }

  /**
   * Peers the frame path found gone (end of stream, an error, a malformed stream), and losses the
   * transport reported: each is judged once everything the peer sent before has been taken in
   * (its goodbye may be behind frames that wait for room), or after LOSS_DRAIN_MS; before its
   * goodbye is in, never sooner than LOSS_LOOK_MS after it was seen.
   */
  private checkPeers (): void {
    const s = this.spec.net!.stream
    for (let p = 0; p < this.procs; p++) {
      if (p === this.o.rank || this.gone[p]) continue
      const f = peerFlags(s, p)
      const reported = this.reported[p]
      if ((f & (PEER_EOF | PEER_ERROR | PEER_MALFORMED)) === 0 && reported === undefined) continue
      if ((f & PEER_MALFORMED) === 0) {
        const now = performance.now()
        const seen = this.lossSeen[p] ??= now
        // (a peer whose goodbye is in needs no look for it)
        if ((now < seen + LOSS_LOOK_MS && (f & PEER_BYE) === 0) || (this.unread(p) && now < seen + LOSS_DRAIN_MS)) {
          this.later(1)
          continue
        }
      }
      this.gone[p] = true
      this.o.log.debug({ peer: p, flags: f, reported, unparsed: this.engine.path.unparsed(p), owner: Atomics.load(this.w, W_OWNER) }, 'peer gone')
      // (after its goodbye a peer's end is normal, even when a last write of ours found it closed)
      const normal = (f & PEER_BYE) !== 0 && (f & PEER_MALFORMED) === 0
      const reason = (f & PEER_MALFORMED) !== 0 ? 'it sent a malformed stream' : normal ? 'closed'
        : reported !== undefined ? reported : (f & PEER_ERROR) !== 0 ? (this.o.transport.lossReason?.(p) ?? 'connection lost') : 'connection closed without goodbye'
      this.o.transport.lost(p, reason, normal)
      this.peerLost(p, reason, normal)
    }
  }

  /**
   * Whether what peer `p` sent may still wait to be taken in: bytes in the frame path or read by
   * the event loop, or control messages a task took off the network and queued for this thread
   * (a peer's last `release` and `state` come just before its goodbye: judged first, its end
   * would mark its tasks gone before this process saw them pass the barrier). While a task holds
   * the lock nothing can be told: the answer is yes.
   */
  private unread (p: number): boolean {
    if (this.engine.path.unparsed(p) > 0) return true
    // (-1: a datagram, whose sender is known once it is taken in)
    for (let k = 0; k < this.inbound.length; k += 3) if (this.inbound[k] === p || this.inbound[k] === -1) return true
    let queued = true
    this.engine.locked(() => { queued = this.engine.controlQueued })
    return queued
  }

  /** A control message's body a task took off the network. */
  private controlBody (peer: number, body: Uint8Array): void {
    let m: unknown
    try { m = decodeBody(body) } catch { this.dropped++; return }
    this.onControl(peer, m)
  }

  /** Whether task `t` is one of process `peer`'s. */
  private ofPeer (peer: number, t: number): boolean {
    const { first, count } = placement(this.n, this.procs, peer)
    return Number.isInteger(t) && t >= first && t < first + count
  }

  /** The transport's onPeerLost. */
  onPeerLost (peer: number, reason: string, _normal: boolean): void {
    // judged by checkPeers: the goodbye may still be unread
    if (this.gone[peer]) return
    this.reported[peer] = reason
    this.checkPeers()
  }

  // ───────────────────────────── control ─────────────────────────────

  /** Sends a control message to process `peer` (after the packets the tasks have put toward the network). */
  private control (peer: number, m: unknown): void {
    this.outControl.push(peer, encodeMessage(m))
    this.round()
  }

  /** Sends a control message to every other process. */
  broadcast (m: unknown): void {
    for (let p = 0; p < this.procs; p++) if (p !== this.o.rank) this.control(p, m)
  }

  /** This process's tasks have all arrived at barrier generation `bar` - 1: report to rank 0 with their gather entries. */
  private arrive (bar: number): void {
    const m = { t: 'arrive', g: bar, f: this.localGather(this.gatherF64), i: this.localGather(this.gatherI64) }
    if (this.o.rank === 0) this.onArrive(0, m)
    else this.control(0, m)
  }

  /** This process's entries of both halves of a gather table (8 bytes per task). */
  private localGather (table: Uint8Array): Uint8Array {
    const L = this.spec.localTasks
    const out = new Uint8Array(16 * L)
    for (let h = 0; h < 2; h++) out.set(table.subarray(8 * (h * this.n + this.lo), 8 * (h * this.n + this.lo + L)), 8 * h * L)
    return out
  }

  private onArrive (peer: number, m: unknown): void {
    const g = field(m, 'g'); const f = field(m, 'f'); const i = field(m, 'i')
    const { first, count } = placement(this.n, this.procs, peer)
    if (this.o.rank !== 0 || typeof g !== 'number' || !(f instanceof Uint8Array) || !(i instanceof Uint8Array) || f.length !== 16 * count || i.length !== 16 * count) {
      this.dropped++
      return
    }
    for (let h = 0; h < 2; h++) {
      this.gatherF64.set(f.subarray(8 * h * count, 8 * (h + 1) * count), 8 * (h * this.n + first))
      this.gatherI64.set(i.subarray(8 * h * count, 8 * (h + 1) * count), 8 * (h * this.n + first))
    }
    const got = (this.arrivals.get(g) ?? 0) + 1
    if (got < this.procs) { this.arrivals.set(g, got); return }
    this.arrivals.delete(g)
    const rel = { t: 'release', g, f: this.gatherF64.slice(), i: this.gatherI64.slice() }
    this.broadcast(rel)
    this.onRelease(rel)
  }

  private onRelease (m: unknown): void {
    const g = field(m, 'g'); const f = field(m, 'f'); const i = field(m, 'i')
    if (typeof g !== 'number' || !(f instanceof Uint8Array) || !(i instanceof Uint8Array) || f.length !== 16 * this.n || i.length !== 16 * this.n) {
      this.dropped++
      return
    }
    const ctl = this.ctl
    if (((Atomics.load(ctl, CTL_BAR_GEN) + 1) | 0) !== g) { this.dropped++; return }
    this.gatherF64.set(f)
    this.gatherI64.set(i)
    Atomics.store(ctl, CTL_BAR_GEN, g)
    Atomics.notify(ctl, CTL_BAR_GEN)
    for (let t = this.lo; t < this.lo + this.spec.localTasks; t++) ringDoorbell(ctl, t)
  }

  private onControl (peer: number, m: unknown): void {
    switch (field(m, 't')) {
      case 'arrive': this.onArrive(peer, m); break
      case 'release': if (peer === 0) this.onRelease(m); else this.dropped++; break
      case 'state': {
        const task = field(m, 'task'); const state = field(m, 'state')
        if (typeof task !== 'number' || !this.ofPeer(peer, task) || (state !== TaskState.EXITED && state !== TaskState.FAILED && state !== TaskState.TERMINATED)) {
          this.dropped++
          break
        }
        const g = field(m, 'g')
        Atomics.store(this.ctl, taskWord(task, TASK_EXIT_GEN), typeof g === 'number' ? g | 0 : Atomics.load(this.ctl, CTL_BAR_GEN))
        this.setRemoteState(task, state)
        break
      }
      case 'abort': {
        const task = field(m, 'task'); const reason = field(m, 'reason')
        const t = typeof task === 'number' && Number.isInteger(task) && task >= -1 && task < this.n ? task : -1
        this.o.onAbort(t, typeof reason === 'string' ? reason : 'aborted by another process')
        break
      }
      default: this.dropped++
    }
  }

  private setRemoteState (task: number, state: number): void {
    Atomics.store(this.ctl, taskWord(task, TASK_STATE), state)
    for (let t = this.lo; t < this.lo + this.spec.localTasks; t++) ringDoorbell(this.ctl, t)
  }

  /**
   * The state of this process's network, in words, for the report of a job that timed out: who
   * reads the connections and holds the lock, what waits (to be sent, for room in a task's ring,
   * for this thread), and per peer the bytes received and not yet taken in: plain reads, no lock.
   * With `detail` (the debug line of a failed job) also this process's tasks, their rings (read
   * under the lock when it is free: NetEngine.ringState) and the counts.
   */
  describe (detail = false): string {
    const w = this.w
    const lock = Atomics.load(w, W_LOCK)
    const flags = [
      Atomics.load(w, W_WANT) !== 0 ? 'a task asks for the connections' : '',
      Atomics.load(w, W_BLOCKED) !== 0 ? 'frames wait for room in a task\'s network ring' : '',
      Atomics.load(w, W_PARKED) !== 0 ? 'Get answers wait for room toward their origin' : '',
      Atomics.load(w, W_CTRL) !== 0 ? 'a control message waits for this thread' : '',
      Atomics.load(w, W_FDSLEEP) !== 0 ? 'the task sleeps on the connections' : '',
      this.paused ? 'a peer is paused (its bytes wait for room)' : '',
    ].filter((f) => f !== '')
    const path = this.engine.path
    const peers: string[] = []
    for (let p = 0; p < this.procs; p++) {
      if (p === this.o.rank) continue
      let chunks = 0
      for (let k = 0; k < this.inbound.length; k += 3) if (this.inbound[k] === p) chunks++
      peers.push(`process ${p}: ${path.unparsed(p)} bytes not taken in, ${chunks} reads held by the agent, flags ${peerFlags(this.spec.net!.stream, p)}`)
    }
    const line = `network of process ${this.o.rank}: the connections read by ${Atomics.load(w, W_OWNER) === OWNER_TASKS ? 'the tasks' : 'the agent'} ` +
      `(${this.handovers} hand-overs), the lock ${lock === 0 ? 'free' : lock === AGENT_ID ? 'held by the agent' : `held by task ${lock - 1}`}, ` +
      `${path.queued()} bytes waiting to be sent${flags.length > 0 ? `; ${flags.join('; ')}` : ''}; ${peers.join('; ')}`
    if (!detail) return line
    // (for the debug log: this process's own tasks, whose report another process's may have
    // replaced, the rings, and the counts)
    const tasks: string[] = []
    for (let t = this.lo; t < this.lo + this.spec.localTasks; t++) {
      tasks.push(describeWatch(readTask(this.ctl, this.n, t, null, null)))
    }
    const s = this.o.transport.stats()
    return `${line}; ${tasks.join('; ')}; ${this.engine.ringState()}; frames sent ${s.framesSent}, received ${s.framesReceived}, dropped ${s.framesDropped}; ` +
      `bytes sent ${s.bytesSent}, received ${s.bytesReceived}; control messages dropped ${this.dropped}; agent wakes ${this.wakes}`
  }

  /** A task of this process ended (`failed`: not normally): tell the other processes. */
  taskEnded (task: number, failed: boolean): void {
    // (with the barrier generation it passed: a peer still waiting for that barrier's release, which
    // may arrive after this, must not take the end for a task that left before it)
    this.broadcast({ t: 'state', task, state: failed ? TaskState.FAILED : TaskState.EXITED, g: Atomics.load(this.ctl, CTL_BAR_GEN) })
  }

  /** The job is aborted here: tell the other processes. */
  abort (task: number, reason: string): void {
    this.broadcast({ t: 'abort', task, reason })
  }

  /** Process `peer` is gone: its tasks are marked, and unless it said goodbye, the job ends. */
  peerLost (peer: number, reason: string, normal: boolean): void {
    const { first, count } = placement(this.n, this.procs, peer)
    for (let t = first; t < first + count; t++) {
      const st = Atomics.load(this.ctl, taskWord(t, TASK_STATE))
      if (st !== TaskState.EXITED && st !== TaskState.FAILED) this.setRemoteState(t, normal ? TaskState.EXITED : TaskState.FAILED)
    }
    if (!normal) {
      const tasks = count === 1 ? `task ${first}` : `tasks ${first}-${first + count - 1}`
      const why = `process ${peer} (${tasks}) was lost: ${reason}`
      this.o.log.debug({ peer, reason }, 'peer lost')
      abortJob(this.ctl, this.n, first)
      this.o.onAbort(first, why)
    }
  }
}
