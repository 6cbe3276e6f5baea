/**
 * The agent's engine rounds: what its event loop read and the control messages it sends go into
 * the frame path under the process's network lock, then the engine does its work (out, in,
 * acknowledgements). A round that finds the lock taken is tried again (`retry`, `later`); the
 * frame path's timers and the delayed acknowledgements are rounds too.
 */
import type { Logger } from 'pino'
import { FRAME_CONTROL, type Transport } from '../transport/contract.js'
import type { NetEngine } from '../engine/engine.js'
import { OWNER_AGENT, OWNER_TASKS, ENG_CTRL, ENG_LOCK, ENG_LOCK_WAITER, ENG_OWNER, ENG_POLLS } from '../layout/engine.js'

/**
 * How long the agent, whose round found the lock taken by a task while its event loop reads the
 * connections, gives that task the CPU before it tries again, ms (see `retry`).
 */
const LOCK_WAIT_MS = 0.03
/**
 * How long acknowledgements the agent's rounds owe wait for a frame to ride on, ms: a task that
 * answers what it was given carries them; otherwise the agent sends them then.
 */
const ACK_DELAY_MS = 1
/** A path timer already set to fire at most this much later than asked stays (ms): no re-arming per round. */
const PATH_TIMER_SLACK_MS = 0.5
/** Bytes of a read by the event loop that filled its buffer (Node reads a stream 64 KiB at a time). */
const FULL_READ = 64 << 10

export interface RoundsOptions {
  engine: NetEngine
  transport: Transport
  log: Logger
  /** The stream path's words (the engine's: owner, lock, polls, …). */
  w: Int32Array
  procs: number
  /** What the doorbell may mean: a round put off for later runs it (Agent.onBell). */
  onBell: () => void
  /** Judges the peers found gone (the path's timer may have found one). */
  checkPeers: () => void
  /** A control message's body a task took off the network. */
  onControl: (peer: number, body: Uint8Array) => void
}

export class Rounds {
  private readonly o: RoundsOptions
  private readonly engine: NetEngine
  private readonly w: Int32Array
  /** Whether the agent serves (between its start and its stop). */
  running = false
  /** Chunks the event loop read, waiting for the lock: peer, bytes, length, … */
  readonly inbound: Array<number | Uint8Array> = []
  /** Control messages waiting for the lock: peer, encoded message (with its length prefix), … */
  private readonly outControl: Array<number | Buffer> = []
  /** Whether a round is put off (`later`). */
  queued = false
  /** Whether a peer may be paused (`ingestAll`). */
  paused = false
  /** Whether the next round reads the connections itself after what the event loop read (see `read`). */
  private drain = false
  /** Whether the round `later` runs next reads the datagrams waiting itself (see `read`). */
  private drainNext = false
  /** Whether a round runs (control messages its work sends wait for its end). */
  private inRound = false
  /** The round that sends the acknowledgements owed (ACK_DELAY_MS after a round left some). */
  private ackTimer: NodeJS.Timeout | null = null
  private pathTimer: NodeJS.Timeout | null = null
  private pathDueAt = Infinity
  /** The tasks' poll count when the path's timer last found them polling. */
  private pathPolls = -1

  constructor(o: RoundsOptions) {
    this.o = o
    this.engine = o.engine
    this.w = o.w
  }

  /** What the event loop read from process `peer` (-1: a datagram): into the frame path by a round. */
  read(peer: number, chunk: Uint8Array, len: number): void {
    const inb = this.inbound
    inb.push(peer, chunk, len)
    // (a read that filled the event loop's buffer: more is waiting, a bulk stream. A datagram
    // (peer -1): the others waiting are read by a round of our own, straight into the frame path,
    // once the event loop is past its I/O — libuv reads datagrams in batches (recvmmsg) before it
    // hands them over one by one, and what a round read earlier would overtake the batch's rest)
    if (len >= FULL_READ) this.drain = true
    else if (peer < 0 && !this.drainNext) {
      this.drainNext = true
      this.later()
    }
    this.round()
    // (what waits for the lock or for room is copied out of the transport's buffer, which the next
    // read reuses; a Buffer's slice would be a view of it)
    for (let k = 1; k < inb.length; k += 3) if (inb[k] === chunk) inb[k] = Uint8Array.prototype.slice.call(chunk, 0, len)
  }

  /** Sends a control message (encoded, with its length prefix) to process `peer`, after the packets the tasks have put toward the network. */
  send(peer: number, message: Buffer): void {
    this.outControl.push(peer, message)
    this.round()
  }

  /** Clears the timers (the agent stops). */
  stop(): void {
    this.running = false
    if (this.ackTimer !== null) {
      clearTimeout(this.ackTimer)
      this.ackTimer = null
    }
    if (this.pathTimer !== null) {
      clearTimeout(this.pathTimer)
      this.pathTimer = null
    }
  }

  /**
   * One engine round by the agent: what its event loop read, its control messages, then the
   * engine's work (out, in, acknowledgements). Tried again (`retry`) when a task holds the lock.
   */
  round(): void {
    // (a control message sent from within a round goes with it: see tryRound)
    if (this.inRound) return
    if (!this.tryRound()) this.retry()
  }

  /** `round` once, and again while its work left control messages to send: false when a task held the lock. */
  private tryRound(): boolean {
    this.inRound = true
    let done: boolean
    try {
      do done = this.roundOnce()
      while (done && this.outControl.length > 0)
    } finally {
      this.inRound = false
    }
    return done
  }

  private roundOnce(): boolean {
    const done = this.engine.agentRound(() => {
      const path = this.engine.path
      // (the bytes the event loop read go in first: a read of our own comes after them)
      const read = this.ingestAll(path) && this.drain
      this.drain = false
      // (cleared only here, under the lock: until the messages are taken the agent is not quiet)
      Atomics.store(this.w, ENG_CTRL, 0)
      this.engine.takeControl(this.o.onControl)
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
      if (Atomics.load(this.w, ENG_OWNER) === OWNER_AGENT && this.engine.path.queued() > 0) this.later(1)
    }
    return done
  }

  /**
   * Arms the frame path's timers (a datagram path's retransmissions, delayed acknowledgements,
   * keepalives and peer timeout): a round when they are due, which runs them (its poll does). A
   * timer that fires by then stays.
   */
  timers(): void {
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

  private readonly pathDue = (): void => {
    this.pathTimer = null
    this.pathDueAt = Infinity
    if (!this.running) return
    // (tasks that read the connections and poll run the timers themselves: a round here would take
    // a CPU from one of them and contend for the lock, and re-arming would wake this thread every
    // millisecond, each wake taking a CPU from a task that spins. The watch, which looks anyway
    // while they read, arms the timer again once they stop polling: connections.ts `tick`.)
    if (Atomics.load(this.w, ENG_OWNER) === OWNER_TASKS) {
      const polls = Atomics.load(this.w, ENG_POLLS)
      if (polls !== this.pathPolls) {
        this.pathPolls = polls
        return
      }
    }
    this.round()
    this.o.checkPeers()
  }

  /** ACK_DELAY_MS after a round that left acknowledgements owed: a round that sends them. */
  private readonly ackDue = (): void => {
    this.ackTimer = null
    this.engine.acksDue = true
    this.round()
  }

  /**
   * A round found the lock taken. The holder is a task: one that sends (while this event loop
   * reads) or one that polls (while the tasks read the connections). Either way this thread asks
   * for the lock (ENG_LOCK_WAITER: a task's poll leaves it alone meanwhile, and its holder wakes this
   * thread when it lets go), gives the holder the CPU for a moment (a wait on the lock word), and
   * tries again: a barrier's arrival or release, a control message, waits for this round. Failing
   * that, again on the next turn of the event loop — or, while the tasks read, in a millisecond:
   * a loop of tries would take a CPU from the tasks that spin on it (on a CPU shared with such a
   * task, it kept the task from finishing for a whole time slice: 2–4 ms round trips).
   */
  private retry(): void {
    const holder = Atomics.load(this.w, ENG_LOCK)
    Atomics.store(this.w, ENG_LOCK_WAITER, 1)
    try {
      if (holder !== 0) Atomics.wait(this.w, ENG_LOCK, holder, LOCK_WAIT_MS)
      if (this.tryRound()) return
    } finally {
      Atomics.store(this.w, ENG_LOCK_WAITER, 0)
    }
    this.later(Atomics.load(this.w, ENG_OWNER) === OWNER_TASKS ? 1 : 0)
  }

  /**
   * Hands the chunks the event loop read to the frame path, in order, until one does not fit (its
   * peer is paused until room is made). Under the lock. Returns whether all went in.
   */
  ingestAll(path: NetEngine['path']): boolean {
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
        for (let p = 0; p < this.o.procs; p++) this.o.transport.resumePeer(p)
      }
    } else if (k > 0) inb.splice(0, k)
    return inb.length === 0
  }

  /** Runs a round again soon (`ms` 0: on the next turn of the event loop). */
  later(ms = 0): void {
    if (this.queued) return
    this.queued = true
    const f = (): void => {
      this.queued = false
      if (this.drainNext) {
        this.drainNext = false
        this.drain = Atomics.load(this.w, ENG_OWNER) === OWNER_AGENT
      }
      if (this.running) this.o.onBell()
      else if (this.inbound.length > 0) this.round()
    }
    if (ms === 0) setImmediate(f)
    else setTimeout(f, ms)
  }
}
