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
 * Lock protocol (words of the process's network block, `NetShared`): LOCK is taken with a
 * compare-and-swap and never waited for; a thread that finds it taken sets TXPEND (when it has
 * packets to send), tries once more, and leaves — the holder looks at TXPEND again after it lets
 * go, and takes the lock back if it is set. So no packet waits for a thread that is not coming
 * back. OWNER says who reads the connections: the agent's event loop (OWNER_AGENT) or the threads
 * that poll (OWNER_TASKS); a task that polls while the agent reads asks for them (WANT) once.
 */
import { performance } from 'node:perf_hooks'
import { RmwOp } from '../base/constants.js'
import { rmw32, rmw64 } from '../base/rmw.js'
import { WORD_COPY, copySeg, copySmall } from '../base/copy.js'
import { CTL_AGENT_QUIET, agentQuiet, counterWakes, ringAgent, ringCounter, ringDoorbell } from '../layout/control.js'
import { NS_DIRTY, NS_DROPPED, NS_LANDED_AT, netAckedFrom, netLandedFrom, netTagOffset, placement, type JobSpec } from '../layout/job-spec.js'
import { BACKPRESSURE, FRAME_CONTROL, FRAME_HEADER_BYTES, FRAME_PACKET, type FramePath } from '../transport/contract.js'
import { decodeBody } from '../transport/messages.js'
import {
  BODY_PACKET, F_ACK, F_LAST, F_NOTIFY, NET_PUT_DIRECT_MAX, N_COUNT, N_COUNTER, N_OP, N_ORG_ADDR, N_ORG_CNTR, N_TGT_ADDR, N_TGT_CNTR, N_VAL0, N_VAL1,
  PACKET_HEADER_BYTES, PACKET_VERSION, P_FLAGS, P_LEN, P_MSG_ID, P_MSG_LEN, P_OFFSET, P_SRC, P_TYPE, P_VERSION,
  T_AM_BARE, T_AM_SHORT, T_NET_ACK, T_NET_BUMP, T_NET_DONE, T_NET_GET, T_NET_GETR, T_NET_PUT, T_NET_RMW, T_NET_RMWR, packetBodyBytes, writePacketHeader,
} from '../transport/packet.js'
import { RingReader, RingWriter } from '../transport/ring.js'
import { netRingAt } from '../layout/ring.js'
import { StreamPath } from '../transport/stream-path.js'
import { DatagramPath } from '../transport/udp/path.js'
import { isDatagramShared } from '../transport/udp/shared.js'

const SHORT_WORD0 = PACKET_VERSION | (T_AM_SHORT << 8)
const BARE_WORD0 = PACKET_VERSION | (T_AM_BARE << 8)

// ── the process's network block (Int32 words of NetShared.words, before the frame path's) ──
/** 0 free, else the id of the holder of the network lock. */
export const W_LOCK = 0
/** Who reads the connections: OWNER_AGENT or OWNER_TASKS. */
export const W_OWNER = 1
/** 1 when a polling task asked the agent for the connections. */
export const W_WANT = 2
/** Polls by tasks (free-running): the agent takes the connections back when it stops moving. */
export const W_POLLS = 3
/** 1 when packets wait in a ring toward the network and the thread that put them there did not get the lock. */
export const W_TXPEND = 4
/** The holder id of the last thread that held the lock (a thread that finds itself there need not re-read the rings' positions). */
export const W_LAST = 5
/** 1 when a control message waits for the agent at the front of a peer's frames. */
export const W_CTRL = 6
/** 1 when a frame waits for room in a task's network ring. */
export const W_BLOCKED = 7
/** 1 when a task that read the connections stops polling (it goes to sleep): the agent reads them again. */
export const W_GIVEBACK = 8
/** 1 while the agent waits on W_LOCK for a task to let the lock go (the task wakes it when it does; a task's poll leaves the lock to it meanwhile). */
export const W_LOCK_WAITER = 9
/** 1 while the process's only task sleeps in the kernel on the connections (`sleepBegin`): the agent leaves them to it. */
export const W_FDSLEEP = 10
/** Get answers set aside for room toward their origin (`park`): the agent keeps rounds coming while there are. */
export const W_PARKED = 11
export const OWNER_AGENT = 0
export const OWNER_TASKS = 1
/** Engine rounds acknowledgements wait for another frame to ride on before they go by themselves. */
const ACK_ROUNDS = 4
/** How long a waiting task gives the agent its CPU to hand the connections over, ms. */
const HANDOVER_WAIT_MS = 0.2
/**
 * A send within this long of its thread's last write, with nothing taken in since, waits for the
 * next write (`flushOut`), ms.
 */
const COALESCE_MS = 0.05
/** … unless this many bytes wait. */
const COALESCE_BYTES = 16 << 10
/**
 * … and a send within that window leaves its packet in the ring toward the network, for the write
 * that ends the window to frame, up to this many packets (`kick`).
 */
const RING_HOLD_MAX = 16
/** A thread's incidental polls (inside a send) read the connections at most once per this long, ms. */
const READ_GAP_MS = 0.05
/** Body bytes of an answer without payload (an acknowledgement, an Rmw's old value). */
const ANSWER_BYTES = BODY_PACKET + PACKET_HEADER_BYTES
/** Holder id of the agent (tasks use their task id + 1). */
export const AGENT_ID = 0x7fffffff

// a thread's clock readings (NetEngine.times)
const TM_WRITE = 0
const TM_READ = 1
const TM_CLOCK = 2

// engine statistics (Float64, under the lock)
const ST_PACKETS_OUT = 0
const ST_PACKETS_IN = 1
const ST_ACKS = 2

/** What a doorbell is rung for: anything (BELL_ANY), or acknowledgements, which no counter wait is waiting for (BELL_ACK). */
const BELL_ANY = 1
const BELL_ACK = 2

/** Rings task `t`'s doorbell for `kind` (BELL_ANY wins when both are owed). */
function ring (ctl: Int32Array, t: number, kind: number): void {
  if ((kind & BELL_ANY) !== 0) ringDoorbell(ctl, t)
  // (word -1 is no counter: a task asleep in a counter wait stays asleep, any other is woken)
  else ringCounter(ctl, t, -1, 0)
}

/** The list of Get answers set aside (`park`): its count, then its records. */
const GQ_COUNT = 0
const GQ_HEADER = 1
const GQ_WORDS = 11
export const GQ_SLOTS = 64

/** Bytes before the records of the control queue. */
const CQ_HEADER = 8

/** A local task's ends, as an engine sees them. */
interface LocalTask {
  id: number
  /** Its index among this process's tasks. */
  at: number
  out: RingReader
  netIn: RingWriter
  u8: Uint8Array
  i32: Int32Array
  i64: BigInt64Array
  state: Int32Array
}

export class NetEngine {
  private readonly ctl: Int32Array
  private readonly w: Int32Array
  private readonly st: Float64Array
  readonly path: FramePath
  private readonly me: number
  private readonly rank: number
  private readonly n: number
  private readonly lo: number
  private readonly tasks: LocalTask[] = []
  private readonly procOf: Int32Array
  private readonly segSize: number
  private readonly tag: number
  private readonly bodyRoom: number
  /** The largest frame body taken in: a ring slot's, or a direct Put's (NET_PUT_DIRECT_MAX). */
  private readonly frameRoom: number
  private readonly scratch: Uint8Array
  private readonly sdv: DataView
  /** DataViews of frame bodies, by the receive buffer's view (the buffers of all peers are views of one memory). */
  private readonly views = new Map<Uint8Array, DataView>()
  private readonly frame = (peer: number, kind: number, dst: number, u8: Uint8Array, off: number, len: number): boolean => this.onFrame(peer, kind, dst, u8, off, len)
  /** The agent's handler of control messages; null in a task (it leaves them to the agent). */
  private readonly onControl: ((peer: number, m: unknown) => void) | null

  /**
   * Whether this task asks for the connections when it polls: only where the job's tasks can each
   * have a CPU to spin on. Where they cannot (more tasks on the host than CPUs), a polling task
   * would only keep the agent and the other processes off the CPU they need, and the agent's event
   * loop reads for everyone.
   */
  private readonly asks: boolean

  /** Whether this thread may sleep in the kernel on the connections: the only task of its process (`sleepBegin`). */
  private readonly fdSleeps: boolean

  /** `holder`: this thread's lock id (task id + 1, or AGENT_ID); `asks`: see the field. */
  constructor (spec: Omit<JobSpec, 'taskId'>, rank: number, holder: number, onControl: ((peer: number, m: unknown) => void) | null, asks = true) {
    this.asks = asks && onControl === null
    this.fdSleeps = onControl === null && spec.localTasks === 1
    const net = spec.net!
    this.ctl = new Int32Array(spec.control)
    this.w = new Int32Array(net.stream.words)
    this.st = new Float64Array(net.stats)
    this.path = isDatagramShared(net.stream) ? new DatagramPath(net.stream, rank) : new StreamPath(net.stream, rank)
    this.me = holder
    this.rank = rank
    this.onControl = onControl
    this.n = spec.numTasks
    this.lo = spec.firstTask
    this.segSize = spec.config.segmentSize
    this.tag = netTagOffset(spec.ring)
    this.bodyRoom = spec.ring.slotBytes - 4
    this.frameRoom = Math.max(this.bodyRoom, BODY_PACKET + PACKET_HEADER_BYTES + NET_PUT_DIRECT_MAX)
    this.procOf = new Int32Array(this.n)
    for (let p = 0; p < spec.processes; p++) {
      const { first, count } = placement(this.n, spec.processes, p)
      for (let t = first; t < first + count; t++) this.procOf[t] = p
    }
    for (let t = spec.firstTask; t < spec.firstTask + spec.localTasks; t++) {
      const seg = spec.segments[t]!
      this.tasks.push({
        id: t,
        at: t - spec.firstTask,
        out: new RingReader(spec.netOut[t]!, spec.netRing, 0),
        netIn: new RingWriter(spec.inboxes[t]!, spec.netIn!, 0, netRingAt(spec.ring)),
        u8: new Uint8Array(seg),
        i32: new Int32Array(seg),
        i64: new BigInt64Array(seg, 0, seg.byteLength >>> 3),
        state: new Int32Array(spec.netState[t]!),
      })
    }
    this.owedBell = new Uint8Array(spec.localTasks)
    this.owedCounter = new Int32Array(spec.localTasks).fill(-1)
    this.scratch = new Uint8Array(spec.ring.slotBytes)
    this.sdv = new DataView(this.scratch.buffer)
    this.gq = new Int32Array(net.gets)
    this.cq = new Uint8Array(net.control)
    this.cqw = new Int32Array(net.control, 0, 2)
    this.cqv = new DataView(net.control)
    if (this.cqw[1] === 0) { this.cqw[0] = CQ_HEADER; this.cqw[1] = CQ_HEADER }
  }

  private readonly cq: Uint8Array
  private readonly gq: Int32Array
  private readonly cqw: Int32Array
  private readonly cqv: DataView

  /** Engine statistics (packets out and in, acknowledgements sent). */
  stats (): { packetsOut: number, packetsIn: number, acksSent: number } {
    return { packetsOut: this.st[ST_PACKETS_OUT]!, packetsIn: this.st[ST_PACKETS_IN]!, acksSent: this.st[ST_ACKS]! }
  }

  // ───────────────────────────── the lock ─────────────────────────────

  private tryLock (): boolean {
    if (Atomics.compareExchange(this.w, W_LOCK, 0, this.me) !== 0) return false
    if (this.w[W_LAST] !== this.me) {
      // another thread moved the rings' positions: take them from memory
      for (const t of this.tasks) { t.out.resync(); t.netIn.resync() }
      this.w[W_LAST] = this.me
    }
    return true
  }

  /** Lets the lock go; takes it back while packets wait that their sender could not send (TXPEND). */
  private unlock (): boolean {
    Atomics.store(this.w, W_LOCK, 0)
    // (the agent may be giving this thread its CPU until it lets go: wake it now, not after its bound)
    if (Atomics.load(this.w, W_LOCK_WAITER) !== 0) Atomics.notify(this.w, W_LOCK)
    if (Atomics.load(this.w, W_TXPEND) === 0) return false
    return this.tryLock()
  }

  /**
   * Clears TXPEND under the lock (the holder sends everything that waits): a store only when it is
   * set — one set after the look is seen when the lock is let go (`unlock`).
   */
  private clearTxpend (): void {
    if (this.w[W_TXPEND] !== 0) Atomics.store(this.w, W_TXPEND, 0)
  }

  /** Lets the lock go after sending what others left while it was held (TXPEND), as often as that happens. */
  private release (): void {
    while (this.unlock()) {
      Atomics.store(this.w, W_TXPEND, 0)
      this.sendOut()
      this.path.flush()
    }
  }

  // ───────────────────────────── what threads call ─────────────────────────────

  /**
   * A task's step in LAPI (its dispatcher round, a wait): sends what waits, takes in what came,
   * and asks the agent for the connections while it reads them. A task that `waiting` gives the
   * agent its CPU for a moment to hand them over (on a machine whose CPUs the spinning tasks fill,
   * the agent would otherwise wait for a time slice). Returns the frames handed in.
   */
  poll (waiting = false): number {
    // (OWNER, TXPEND and LOCK_WAITER are read plainly here: each is a hint that the lock's
    // compare-and-swap, or the next poll, makes good; Atomics.load is a call into a builtin in
    // Node 20, several times the cost of a plain read, and a poll is made per request)
    const w = this.w
    const owner = w[W_OWNER]!
    if (owner !== OWNER_TASKS && this.asks) {
      // (one request at a time: the agent clears WANT when it hands the connections over)
      if (Atomics.compareExchange(w, W_WANT, 0, 1) === 0) ringAgent(this.ctl)
      if (waiting) Atomics.wait(w, W_OWNER, owner, HANDOVER_WAIT_MS)
    } else if (!waiting && owner === OWNER_TASKS && w[W_TXPEND] === 0 && this.sendClock() - this.times[TM_READ]! < READ_GAP_MS) {
      // (a poll on the side of a send, within the read gap: the send framed and wrote, or held,
      // what it had; nothing else is due)
      this.countPoll()
      return 0
    }
    // (the agent waits for the lock, for a round that may complete a barrier or take a control
    // message in: this poll leaves it to it)
    if (w[W_LOCK_WAITER] !== 0 || !this.tryLock()) return 0
    this.clearTxpend()
    // (OWNER changes under the lock only)
    const n = this.work(w[W_OWNER] === OWNER_TASKS, waiting)
    this.release()
    this.countPoll()
    return n
  }

  /**
   * Counts a poll for the agent's idle test, which only asks whether POLLS changed since its last
   * look: a plain increment, as two tasks that bump it at once still change it.
   */
  private countPoll (): void { this.w[W_POLLS] = (this.w[W_POLLS]! + 1) | 0 }

  /** After a packet went into a ring toward the network: send it now if nobody else is at it. */
  kick (): void {
    if (this.holds !== 0) { this.kickOwed = true; return }
    // (while the agent reads, nobody may poll soon: what is sent goes at once)
    const now = this.w[W_OWNER] !== OWNER_TASKS
    if (!now && this.holdInRing()) return
    this.send(now)
  }

  /**
   * Whether a send leaves its packet in the ring toward the network for now: where `flushOut`
   * would only hold it back in the send queue (not an answer, within COALESCE_MS of this thread's
   * last write), the framing waits too, for whatever writes next (a send after the window, a
   * wait or a poll, a sleep, the agent's watch: each frames the rings first). A burst then takes
   * the lock and frames once per write, not once per packet. At most RING_HOLD_MAX packets wait
   * so (of the ring's 128 slots or more): a bound on what a burst of large packets leaves unframed.
   */
  private holdInRing (): boolean {
    if (this.framesIn !== this.framesAtWrite || this.ringHeld >= RING_HOLD_MAX) return false
    const t = performance.now()
    this.times[TM_CLOCK] = t
    if (t - this.times[TM_WRITE]! >= COALESCE_MS) return false
    this.ringHeld++
    return true
  }

  /** Packets this thread's sends left in its ring since it last framed (`holdInRing`). */
  private ringHeld = 0

  /** `holdSends` calls not yet released, and whether a kick waits for the last release. */
  private holds = 0
  private kickOwed = false

  /** Kicks wait until `releaseSends` (a batch of handlers' answers goes in one write); nested. */
  holdSends (): void { this.holds++ }

  /** Ends a `holdSends`: the last one sends what the held kicks left, at once. */
  releaseSends (): void {
    if (--this.holds !== 0 || !this.kickOwed) return
    this.kickOwed = false
    this.send(true)
  }

  /**
   * Frames what waits in the rings toward the network and writes it (`now`: whatever this thread
   * held back too, see `flushOut`); when another thread holds the lock it does that instead (TXPEND).
   */
  private send (now: boolean): void {
    // (TXPEND is set only when the lock is taken, and the lock tried again after it: a holder that
    // let go before it looked at TXPEND is not there any more)
    if (!this.tryLock()) {
      Atomics.store(this.w, W_TXPEND, 1)
      if (!this.tryLock()) return
    }
    this.clearTxpend()
    // (acknowledgements ride on packets; a send with none writes nothing for them)
    if (this.sendOut() > 0) this.acks(true)
    this.flushOut(now)
    this.release()
  }

  /**
   * Writes what is queued: at once when `now`, when this thread took frames in since its last
   * write (an answer: a ping-pong's sends never wait), or once that write is COALESCE_MS old or
   * COALESCE_BYTES wait. A send that follows another closely waits for the ones after it (a burst
   * goes in few writes, not one system call per message); a wait, an explicit poll, a sleep, the
   * agent, or the next send after COALESCE_MS writes it (docs/transports.md, "Coalescing").
   */
  private flushOut (now: boolean): void {
    const q = this.path.queued()
    if (q === 0) return
    if (!now && this.framesIn === this.framesAtWrite && q < COALESCE_BYTES) {
      const t = performance.now()
      this.times[TM_CLOCK] = t
      // (held back: if this thread leaves LAPI now, the agent's watch writes it at its next look
      // that finds no poll. Ringing the agent instead cost the sending thread its CPU for the
      // agent's wake, 50-150 us on 2 vCPUs, about once a millisecond in a burst)
      if (t - this.times[TM_WRITE]! < COALESCE_MS) return
    }
    this.path.flush()
    // (the window counts from the end of the write: a system call as long as it must not close it)
    this.times[TM_WRITE] = performance.now()
    this.framesAtWrite = this.framesIn
  }

  /**
   * This thread's clock readings (performance.now ms; a typed array, as a double stored in a field
   * would be boxed): when its last write ended (TM_WRITE), when it last read in an incidental poll
   * (TM_READ), and the clock as the last send's coalescing test read it (TM_CLOCK, -1: none since),
   * for the poll that follows it on the side of the same send: one clock read per request, not two.
   */
  private readonly times = new Float64Array([-1, -1, -1])
  /** `framesIn` at this thread's last write. */
  private framesAtWrite = 0
  private sendClock (): number {
    const c = this.times[TM_CLOCK]!
    if (c < 0) return performance.now()
    this.times[TM_CLOCK] = -1
    return c
  }

  /**
   * A chunk of a large Put of task `src` (docs/transports.md, "Large Puts"): one T_NET_PUT frame
   * whose payload, `len` ≤ NET_PUT_DIRECT_MAX bytes of `data` from `off`, is written straight from
   * there — not copied into a ring slot and the send queue first. It goes under the lock, after
   * everything that waits (the rings toward the network, the send queue), so a task's packets keep
   * their order. False when that cannot be now (the lock is taken, or bytes still wait for the
   * connection): the caller sends the chunk as ring packets instead.
   */
  putDirect (src: number, tgt: number, flags: number, tgtAddr: number, offset: number, msgLen: number,
    tgtCntr: number, cmplCntr: number, data: Uint8Array, off: number, len: number): boolean {
    if (!this.tryLock()) return false
    Atomics.store(this.w, W_TXPEND, 0)
    this.sendOut()
    let ok = false
    if (!this.ringsPending()) {
      this.path.flush()
      const o = this.begin(T_NET_PUT, flags, src, len, 0, offset, msgLen)
      this.sdv.setUint32(o + N_TGT_ADDR, tgtAddr, true)
      this.sdv.setUint32(o + N_TGT_CNTR, tgtCntr, true)
      this.sdv.setUint32(o + N_ORG_CNTR, cmplCntr, true)
      ok = this.path.sendDirect(this.procOf[tgt]!, FRAME_PACKET, tgt, this.scratch, o + PACKET_HEADER_BYTES, data, off, len)
      if (ok) {
        this.st[ST_PACKETS_OUT]!++
        this.acks(true)
        this.path.flush()
      }
    }
    this.release()
    return ok
  }

  /** The payload bytes of a direct chunk toward task `tgt` (`putDirect`): what fills the path's units best, up to NET_PUT_DIRECT_MAX. */
  putChunk (tgt: number): number {
    return this.path.directChunk(this.procOf[tgt]!, FRAME_HEADER_BYTES + BODY_PACKET + PACKET_HEADER_BYTES, NET_PUT_DIRECT_MAX)
  }

  /**
   * Whether a direct chunk of `len` payload bytes toward task `tgt` could go now (`putDirect`'s
   * wait): nothing of this process waits to be written, and the send queue toward it has room
   * (a datagram path's queue holds what is not acknowledged yet). A plain look, without the lock.
   */
  putDirectReady (tgt: number, len: number): boolean {
    return !this.pendingOut && this.path.room(this.procOf[tgt]!, ANSWER_BYTES + len, false)
  }

  /** Whether packets wait in a ring toward the network (under the lock). */
  private ringsPending (): boolean {
    for (const t of this.tasks) if (t.out.available() > 0) return true
    return false
  }

  /**
   * The agent's round: `first` (what its event loop read, its control messages), then the engine's
   * work, reading the connections itself only when `first` says so (its event loop reads them; a
   * bulk stream is drained faster by a read straight into the receive buffer); false when the
   * lock was taken (what waits to be sent is then sent by the holder: TXPEND).
   */
  agentRound (first: () => boolean): boolean {
    if (!this.tryLock()) { Atomics.store(this.w, W_TXPEND, 1); return false }
    Atomics.store(this.w, W_TXPEND, 0)
    this.owing = true
    const freed = this.path.freed
    try {
      const read = first()
      this.work(read, true)
      // (room toward a peer came: a task asleep while a large Put waits for it wakes; one asleep in
      // a counter wait does not)
      if (this.path.freed !== freed) for (const t of this.tasks) this.bell(t, BELL_ACK)
    } finally {
      try { this.release() } finally { this.payBells() }
    }
    return true
  }

  /** A task that may have read the connections is about to sleep: the agent reads them meanwhile. */
  beforeSleep (): void {
    // what this thread left to go with later sends goes now
    if (this.pendingOut) this.send(true)
    if (Atomics.load(this.w, W_OWNER) !== OWNER_TASKS) return
    Atomics.store(this.w, W_GIVEBACK, 1)
    ringAgent(this.ctl)
  }

  /**
   * A waiting task is about to sleep (docs/transports.md, "Who polls, who sleeps"): whether it may
   * sleep in the kernel on the connections (`sleep`, then `sleepEnd`) rather than on its doorbell.
   * It may where it is its process's only task (no other task of it rings its doorbell), reads
   * the connections (else it asks for them and waits up to HANDOVER_WAIT_MS for them), the agent
   * sleeps with nothing to do (`agentQuiet`: its rings could not reach this sleep; else it waits up
   * to HANDOVER_WAIT_MS for that), and nothing waits to be sent or handed to the agent: then a
   * message that comes wakes this task, and nothing else has to.
   * The caller re-checks its condition after a true answer.
   */
  sleepBegin (): boolean {
    if (!this.fdSleeps || !this.path.canSleep()) return false
    const w = this.w
    if (Atomics.load(w, W_OWNER) !== OWNER_TASKS) {
      // (asks for them and gives the agent the CPU for a moment to hand them over, as a waiting
      // poll does: on a crowded host the agent would otherwise take them back before the next sleep)
      if (Atomics.compareExchange(w, W_WANT, 0, 1) === 0) ringAgent(this.ctl)
      Atomics.wait(w, W_OWNER, OWNER_AGENT, HANDOVER_WAIT_MS)
      if (Atomics.load(w, W_OWNER) !== OWNER_TASKS) return false
    }
    if (!agentQuiet(this.ctl)) {
      // (the agent is at work, a hand-over or a round: it says when it is done)
      Atomics.wait(this.ctl, CTL_AGENT_QUIET, 0, HANDOVER_WAIT_MS)
      if (!agentQuiet(this.ctl)) return false
    }
    if (!this.tryLock()) return false
    this.clearTxpend()
    this.sendOut()
    this.acks(true)
    const ok = this.path.flush() === 0 && Atomics.load(w, W_CTRL) === 0 && w[W_BLOCKED] === 0 && w[W_PARKED] === 0 && !this.ringsPending()
    // (set under the lock: the agent takes the connections back only under it, seeing this)
    if (ok) Atomics.store(w, W_FDSLEEP, 1)
    this.release()
    return ok
  }

  /**
   * After `sleepBegin` and the caller's re-check of its condition, which may have taken frames in
   * (a wait looks at its inbox, and so at the network): whether the sleep may still go ahead —
   * nothing was handed to the agent meanwhile, whose rings could not reach it.
   */
  sleepStill (): boolean {
    const w = this.w
    return Atomics.load(w, W_CTRL) === 0 && Atomics.load(w, W_BLOCKED) === 0 && Atomics.load(w, W_PARKED) === 0 && agentQuiet(this.ctl)
  }

  /** Sleeps in the kernel until a peer sends or `ms` pass (after `sleepBegin`): SLEEP_READY, SLEEP_TIMEOUT or SLEEP_FAILED (FramePath.sleep). */
  sleep (ms: number): number { return this.path.sleep(ms) }

  /** The sleep that `sleepBegin` allowed is over. */
  sleepEnd (): void { Atomics.store(this.w, W_FDSLEEP, 0) }

  /** A task took packets from its network ring: frames that waited for the room may go on (the agent's, when it reads). */
  roomFreed (): void {
    if (Atomics.load(this.w, W_BLOCKED) !== 0 && Atomics.load(this.w, W_OWNER) === OWNER_AGENT) ringAgent(this.ctl)
  }

  /** Runs `f` under the lock (the agent, for what must not overlap a poll); false when it was taken. */
  locked (f: () => void): boolean {
    if (!this.tryLock()) return false
    try { f() } finally { this.release() }
    return true
  }

  /**
   * One round under the lock: out, in, acknowledgements, out again. Acknowledgements go with other
   * frames (a task's next send carries them: `kick`), or once they have waited ACK_ROUNDS rounds
   * of a task, or in an agent's round that `acksDue` asks for: one whose Puts woke their target
   * task leaves them a moment to ride on that task's answer (sent at once, each would wake the
   * other process's agent too).
   */
  private work (reading: boolean, urgent: boolean): number {
    this.sendOut()
    if (this.w[W_PARKED] !== 0) this.answerParked()
    // (set only under the lock: this thread's look is exact)
    if (this.w[W_BLOCKED] !== 0) Atomics.store(this.w, W_BLOCKED, 0)
    // (a poll made by a send reads at most once per READ_GAP_MS: a read per request would be a
    // system call per request, mostly finding nothing; a wait or an explicit poll always reads)
    if (reading && !urgent) {
      const t = performance.now()
      if (t - this.times[TM_READ]! < READ_GAP_MS) reading = false
      else this.times[TM_READ] = t
    }
    const n = this.path.poll(reading, this.frame)
    this.framesIn += n
    this.acks(this.path.queued() > 0 || (this.onControl !== null ? this.acksDue : this.ackRound()))
    this.flushOut(urgent)
    return n
  }

  /** Whether doorbells are owed rather than rung (the agent's rounds), and what is owed: per local task, a bell, and a counter word (-1 none). */
  private owing = false
  private readonly owedBell: Uint8Array
  private readonly owedCounter: Int32Array
  /** Rounds acknowledgements have waited for a frame to ride on. */
  private ackRounds = 0
  /** Frames this thread handed in. */
  private framesIn = 0

  /**
   * Grows whenever this thread's engine work moved something (bytes written or read, frames
   * handed in): a wait whose spin budget ran out while it did is not idle, and keeps spinning.
   */
  get moved (): number { return this.framesIn + this.path.moved }

  /**
   * The agent's round sends the acknowledgements that wait, whatever else it has to send (set by
   * the agent ACK_DELAY_MS after a round left some, and by a Put whose target nobody woke: no
   * answer is coming to carry them).
   */
  acksDue = false

  /**
   * A task's round without frames to send: whether the acknowledgements owed have waited
   * ACK_ROUNDS rounds. The count starts when some are owed (a plain look at DIRTY: one read late
   * only makes them wait a round more), so that a Put performed in a wait's round leaves its
   * acknowledgement to the answer that follows, not to a write of its own.
   */
  private ackRound (): boolean {
    for (const t of this.tasks) if (t.state[NS_DIRTY] !== 0) return ++this.ackRounds >= ACK_ROUNDS
    this.ackRounds = 0
    return false
  }

  /** Whether acknowledgements wait to be sent (a task's landed messages not yet acknowledged). */
  get acksOwed (): boolean {
    for (const t of this.tasks) if (Atomics.load(t.state, NS_DIRTY) !== 0) return true
    return false
  }

  /**
   * Whether every task of the process has taken in what its network ring held (under the lock:
   * the rings' positions are then this thread's), so that no message of another process waits to
   * be counted landed and acknowledged.
   */
  get ringsTaken (): boolean {
    for (const t of this.tasks) if (t.netIn.pending() !== 0) return false
    return true
  }

  /** Sends the acknowledgements that wait, when `now`. */
  private acks (now: boolean): void {
    if (!now) return
    this.ackRounds = 0
    this.acksDue = false
    for (const t of this.tasks) if (Atomics.load(t.state, NS_DIRTY) !== 0) this.sendAcks(t)
  }

  /**
   * What waits in the rings of this process's tasks, in words, for the report of a job that
   * failed: per task the packets in its ring toward the network and in its network ring, and
   * whether acknowledgements are owed; then this engine's counts. Under the lock when it is free.
   */
  ringState (): string {
    let rings = ''
    const look = (): void => {
      rings = this.tasks.map((t) => `task ${t.id}: ${t.out.available()} packets toward the network, ${t.netIn.pending()} in its network ring` +
        `${Atomics.load(t.state, NS_DIRTY) !== 0 ? ', acknowledgements owed' : ''}`).join('; ')
    }
    // (asked from within this thread's own round, it holds the lock already)
    let ok = true
    if (Atomics.load(this.w, W_LOCK) === this.me) look()
    else ok = this.locked(look)
    const st = this.st
    return `${ok ? rings : 'the rings not read (the lock is taken)'}; ${Atomics.load(this.w, W_TXPEND) !== 0 ? 'TXPEND set; ' : ''}` +
      `packets out ${st[ST_PACKETS_OUT]!}, in ${st[ST_PACKETS_IN]!}, acknowledgements sent ${st[ST_ACKS]!}`
  }

  /** Whether anything waits for the network: packets in a ring toward it, or bytes not written. */
  get pendingOut (): boolean {
    for (const t of this.tasks) if (t.out.nonEmpty) return true
    return this.path.queued() > 0
  }

  // ───────────────────────────── out ─────────────────────────────

  /** Frames every packet the tasks put toward the network (until a peer's queue is full); returns how many. */
  private sendOut (): number {
    this.ringHeld = 0
    let sent = 0
    for (const t of this.tasks) {
      const r = t.out
      const n = r.available()
      if (n === 0) continue
      const u8 = r.u8
      const dv = r.dv
      let k = 0
      for (; k < n; k++) {
        const off = r.front()
        const dst = dv.getInt32(off + this.tag, true)
        if ((dst >>> 0) >= this.n || this.procOf[dst] === this.rank) {
          this.path.dropped()
        } else {
          const len = packetBodyBytes(dv, off)
          // (a packet whose header claims more than its slot goes as the whole slot: its receiver drops and counts it)
          if (this.path.queue(this.procOf[dst]!, FRAME_PACKET, dst, u8, off, len <= this.bodyRoom ? len : this.bodyRoom, dv) === BACKPRESSURE) break
          this.st[ST_PACKETS_OUT]!++
        }
        r.release(0, 1)
      }
      if (k > 0) {
        r.publishTail()
        // the sender may be waiting for room
        this.bell(t)
        sent += k
      }
    }
    return sent
  }

  /** Acknowledges the messages of remote tasks that landed at `t` since the last acknowledgement. */
  private sendAcks (t: LocalTask): void {
    Atomics.store(t.state, NS_DIRTY, 0)
    for (let src = 0; src < this.n; src++) {
      if (this.procOf[src] === this.rank) continue
      const now = Atomics.load(t.state, netLandedFrom(this.n, src))
      const was = netAckedFrom(this.n, src)
      const d = (now - t.state[was]!) | 0
      if (d === 0) continue
      // (no room toward its process now: this one waits for a later round)
      if (!this.path.room(this.procOf[src]!, ANSWER_BYTES, false)) { Atomics.store(t.state, NS_DIRTY, 1); continue }
      t.state[was] = now
      this.ack(t.id, src, d, 0)
    }
  }

  /** Tells task `to` (remote) that `count` of its messages landed at `from`, and bumps its counter `cntr`. */
  private ack (from: number, to: number, count: number, cntr: number): void {
    const off = this.begin(T_NET_ACK, 0, from, 0, 0, 0, 0)
    this.sdv.setUint32(off + N_COUNT, count, true)
    this.sdv.setUint32(off + N_ORG_CNTR, cntr, true)
    this.sendScratch(to, off, 0)
    this.st[ST_ACKS]!++
  }

  /** Writes a common header into the scratch packet; returns the packet's offset in it. */
  private begin (type: number, flags: number, src: number, len: number, id: number, offset: number, msgLen: number): number {
    this.sdv.setUint32(0, 0, true)
    writePacketHeader(this.sdv, BODY_PACKET, type, flags, src, len, id, offset, msgLen)
    return BODY_PACKET
  }

  /** Sends the scratch packet (with `len` payload bytes) to remote task `to`: its caller made sure the queue has room (`FramePath.room`). */
  private sendScratch (to: number, off: number, len: number): void {
    if (this.path.queue(this.procOf[to]!, FRAME_PACKET, to, this.scratch, 0, off + PACKET_HEADER_BYTES + len, this.sdv) === BACKPRESSURE) this.path.dropped()
  }

  /**
   * A DataView of a receive buffer (one per buffer, kept: frame bodies are read at their offsets in
   * it), by the buffer's view (`u8.buffer` is a call into the runtime); the last one at hand.
   */
  private dvOf (u8: Uint8Array): DataView {
    if (u8 === this.lastU8) return this.lastDv!
    let v = this.views.get(u8)
    if (v === undefined) { v = new DataView(u8.buffer, u8.byteOffset, u8.byteLength); this.views.set(u8, v) }
    this.lastU8 = u8
    this.lastDv = v
    return v
  }

  private lastU8: Uint8Array | null = null
  private lastDv: DataView | null = null

  // ───────────────────────────── in ─────────────────────────────

  /** A frame from process `peer`, handed over by the frame path. */
  private onFrame (peer: number, kind: number, dst: number, u8: Uint8Array, off: number, len: number): boolean {
    if (kind === FRAME_CONTROL) {
      const h = this.onControl
      if (h === null) {
        // (a task queues control messages for the agent, and rings it once; a full queue keeps
        // the frame where it is, for the agent to take)
        const ok = this.toAgent(peer, u8, off, len)
        if (Atomics.compareExchange(this.w, W_CTRL, 0, 1) === 0) ringAgent(this.ctl)
        return ok
      }
      let m: unknown
      try { m = decodeBody(u8.subarray(off, off + len)) } catch { this.path.dropped(); return true }
      h(peer, m)
      return true
    }
    const t = this.tasks[dst - this.lo]
    if (t === undefined) { this.path.dropped(); return true }
    if (len < 8 || len > this.frameRoom) return this.drop(t)
    const dv = this.dvOf(u8)
    const w0 = dv.getUint32(off, true)
    if (w0 === SHORT_WORD0 || w0 === BARE_WORD0) {
      if (len > this.bodyRoom || !this.fromPeer(peer, dv.getUint32(off + 4, true)) || packetBodyBytes(dv, off) !== len) return this.drop(t)
      return this.deliver(t, u8, off, len)
    }
    if (w0 !== 0 || len < BODY_PACKET + PACKET_HEADER_BYTES) return this.drop(t)
    // (offsets below are in the receive buffer: p is where the packet's common header starts)
    const p = off + BODY_PACKET
    const src = dv.getUint32(p + P_SRC, true)
    const plen = dv.getUint32(p + P_LEN, true)
    const type = dv.getUint8(p + P_TYPE)
    if (dv.getUint8(p + P_VERSION) !== PACKET_VERSION || !this.fromPeer(peer, src) || BODY_PACKET + PACKET_HEADER_BYTES + plen !== len) return this.drop(t)
    // (only a Put, whose payload goes to the segment, may be larger than a ring slot)
    if (len > this.bodyRoom && type !== T_NET_PUT) return this.drop(t)
    // (those that answer count themselves once performed: they may wait for room first)
    if (type !== T_NET_PUT && type !== T_NET_GET && type !== T_NET_RMW) this.st[ST_PACKETS_IN]!++
    switch (type) {
      case T_NET_PUT: return this.onPut(t, dv, p, src, plen, u8, peer)
      case T_NET_GET: return this.onGet(t, dv, p, src, peer)
      case T_NET_GETR: return this.onGetReply(t, dv, p, src, plen, u8)
      case T_NET_RMW: return this.onRmw(t, dv, p, src, peer)
      case T_NET_RMWR: return this.done(t, dv.getUint32(p + P_MSG_ID, true), dv, p + N_VAL0)
      case T_NET_BUMP: this.bumpCounter(t, dv.getUint32(p + N_COUNTER, true)); return true
      case T_NET_ACK: {
        Atomics.add(t.state, NS_LANDED_AT + src, dv.getUint32(p + N_COUNT, true))
        const c = dv.getUint32(p + N_ORG_CNTR, true)
        if (c !== 0) this.bumpCounter(t, c)
        else this.bell(t, BELL_ACK)
        return true
      }
      case T_NET_DONE: return this.drop(t)
      default: return this.deliver(t, u8, off, len)
    }
  }

  /** Queues a control message for the agent; false when the queue has no room. */
  private toAgent (peer: number, u8: Uint8Array, off: number, len: number): boolean {
    const q = this.cq
    const w = this.cqw
    let start = w[0]!; let end = w[1]!
    const need = 8 + len
    if (end + need > q.length) {
      if (start > CQ_HEADER) { q.copyWithin(CQ_HEADER, start, end); end -= start - CQ_HEADER; start = CQ_HEADER; w[0] = start; w[1] = end }
      if (end + need > q.length) return false
    }
    this.cqv.setUint32(end, peer, true)
    this.cqv.setUint32(end + 4, len, true)
    copySeg(q, end + 8, u8, off, len)
    w[1] = end + need
    return true
  }

  /** Whether control messages tasks queued wait for the agent (under the lock). */
  get controlQueued (): boolean { return this.cqw[1] !== this.cqw[0] }

  /** The agent takes the control messages tasks queued (under the lock), oldest first. */
  takeControl (f: (peer: number, body: Uint8Array) => void): void {
    const q = this.cq
    const w = this.cqw
    let at = w[0]!
    const end = w[1]!
    while (at < end) {
      const peer = this.cqv.getUint32(at, true)
      const len = this.cqv.getUint32(at + 4, true)
      f(peer, q.slice(at + 8, at + 8 + len))
      at += 8 + len
    }
    w[0] = CQ_HEADER; w[1] = CQ_HEADER
  }

  /** Drops a malformed packet for task `t`, counted for it (its dispatcher statistics show it) and here. */
  private drop (t: LocalTask): boolean {
    this.path.dropped()
    Atomics.add(t.state, NS_DROPPED, 1)
    return true
  }

  /** Whether `src` is a task of process `peer` (a peer speaks only for its own tasks). */
  private fromPeer (peer: number, src: number): boolean {
    return src < this.n && this.procOf[src] === peer
  }

  /** Puts a packet into `t`'s network ring; false when the ring is full (the frame is offered again later). */
  private deliver (t: LocalTask, u8: Uint8Array, off: number, len: number): boolean {
    const w = t.netIn
    const at = w.reserve()
    if (at < 0) { Atomics.store(this.w, W_BLOCKED, 1); return false }
    // (small packets word by word through the DataViews of the whole ring and receive buffer: a
    // view of the packet itself would be made, and allocated, per packet)
    if (len <= WORD_COPY) copySmall(w.dv, w.u8, at, this.dvOf(u8), u8, off, len)
    else copySeg(w.u8, at, u8, off, len)
    w.publish()
    this.bell(t)
    return true
  }

  /** Whether [addr, addr + len) lies in a segment (addr 0 only for len 0). */
  private inSeg (addr: number, len: number): boolean {
    return addr + len <= this.segSize && (addr !== 0 || len === 0)
  }

  /**
   * Bumps counter `c` of task `t`. In the agent's rounds (`owing`) returns whether its owed ring
   * will wake the task (asleep in a wait the bump ends); elsewhere false (it rings at once).
   */
  private bumpCounter (t: LocalTask, c: number): boolean {
    if (c === 0) return false
    if ((c & 3) !== 0 || c + 4 > this.segSize) { this.drop(t); return false }
    const w = c >>> 2
    const v = Atomics.add(t.i32, w, 1) + 1
    if (!this.owing) { ringCounter(this.ctl, t.id, w, v); return false }
    // (one counter per task is remembered; a second one's owed ring is paid now)
    const prev = this.owedCounter[t.at]!
    if (prev >= 0 && prev !== w) ringCounter(this.ctl, t.id, prev, Atomics.load(t.i32, prev))
    this.owedCounter[t.at] = w
    return counterWakes(this.ctl, t.id, w, v)
  }

  /**
   * Rings task `t`'s doorbell: at once, or, in the agent's rounds (`owing`), once the round has let
   * the lock go. On a CPU the woken task shares with the agent it would otherwise run at once, find
   * the lock taken or its packet not yet there, and sleep again: two wakes instead of one.
   */
  private bell (t: LocalTask, kind = BELL_ANY): void {
    // (a task's own thread is awake: the round it runs goes on to what it handed itself)
    if (t.id + 1 === this.me) return
    if (this.owing) this.owedBell[t.at]! |= kind
    else ring(this.ctl, t.id, kind)
  }

  /** Rings what the round owes (see `bell`). */
  private payBells (): void {
    this.owing = false
    for (const t of this.tasks) {
      const w = this.owedCounter[t.at]!
      if (w >= 0) { this.owedCounter[t.at] = -1; ringCounter(this.ctl, t.id, w, Atomics.load(t.i32, w)) }
      const b = this.owedBell[t.at]!
      if (b !== 0) { this.owedBell[t.at] = 0; ring(this.ctl, t.id, b) }
    }
  }

  private onPut (t: LocalTask, dv: DataView, p: number, src: number, plen: number, u8: Uint8Array, peer: number): boolean {
    const addr = dv.getUint32(p + N_TGT_ADDR, true)
    const at = addr + dv.getUint32(p + P_OFFSET, true)
    const total = dv.getUint32(p + P_MSG_LEN, true)
    if (!this.inSeg(addr, total) || at + plen > addr + total) return this.drop(t)
    const flags = dv.getUint16(p + P_FLAGS, true)
    const last = (flags & F_LAST) !== 0
    const cmpl = last && (flags & F_ACK) !== 0 ? dv.getUint32(p + N_ORG_CNTR, true) : 0
    // (its acknowledgement must not be lost: a Put that will have one waits for the room first)
    if (cmpl !== 0 && !this.path.room(peer, ANSWER_BYTES, true)) return false
    this.st[ST_PACKETS_IN]!++
    if (plen > 0) copySeg(t.u8, at, u8, p + PACKET_HEADER_BYTES, plen)
    if (!last) return true
    const woke = this.bumpCounter(t, dv.getUint32(p + N_TGT_CNTR, true))
    // acknowledged for the origin's fence (F_ACK), with its completion counter
    if ((flags & F_ACK) === 0) return true
    if (cmpl !== 0) this.ack(t.id, src, 1, cmpl)
    else {
      // (no counter to move at the origin: counted with the next batch of acknowledgements, which
      // rides on the next frame toward it; in the agent's round, sent at its end unless the Put
      // woke its target, whose answer is likely to carry it — see `acksDue`)
      Atomics.add(t.state, netLandedFrom(this.n, src), 1)
      Atomics.store(t.state, NS_DIRTY, 1)
      if (this.owing && !woke) this.acksDue = true
    }
    return true
  }

  /**
   * Answers a Get with T_NET_GETR packets, as many as the send queue toward the origin has room
   * for: an answer is never dropped. A Get answered in part keeps its place at the front of the
   * stream, with how far it got in its own P_OFFSET, and goes on at the next round.
   */
  private onGet (t: LocalTask, dv: DataView, p: number, src: number, peer: number): boolean {
    const addr = dv.getUint32(p + N_TGT_ADDR, true)
    const len = dv.getUint32(p + P_MSG_LEN, true)
    const id = dv.getUint32(p + P_MSG_ID, true)
    const flags = dv.getUint16(p + P_FLAGS, true) & F_NOTIFY
    const orgAddr = dv.getUint32(p + N_ORG_ADDR, true)
    const orgCntr = dv.getUint32(p + N_ORG_CNTR, true)
    const tgtCntr = dv.getUint32(p + N_TGT_CNTR, true)
    const pos = dv.getUint32(p + P_OFFSET, true)
    if (!this.inSeg(addr, len) || pos > len) return this.drop(t)
    // (behind answers to the same origin set aside before: after them)
    const at = this.w[W_PARKED] !== 0 && this.parkedFor(peer) ? pos : this.answer(t, peer, src, addr, len, id, flags, orgAddr, orgCntr, pos)
    if (at === len) { this.getAnswered(t, tgtCntr); return true }
    // (no room toward the origin for the rest: set aside, so that the frames behind it — the
    // origin's own answers among them — are not held up; a full list keeps it in the stream)
    if (this.park(t.at, peer, src, addr, len, id, flags, orgAddr, orgCntr, tgtCntr, at)) return true
    dv.setUint32(p + P_OFFSET, at, true)
    return false
  }

  /**
   * Sends T_NET_GETR packets of task `t`'s Get answer from `pos` on, as far as the send queue toward
   * the origin has room (an answer is never dropped); returns how far it got.
   */
  private answer (t: LocalTask, peer: number, src: number, addr: number, len: number, id: number, flags: number, orgAddr: number, orgCntr: number, pos: number): number {
    const room = this.bodyRoom - BODY_PACKET - PACKET_HEADER_BYTES
    do {
      const n = len - pos < room ? len - pos : room
      if (!this.path.room(peer, ANSWER_BYTES + n, true)) return pos
      const last = pos + n >= len
      const o = this.begin(T_NET_GETR, last ? flags | F_LAST : 0, t.id, n, id, pos, len)
      this.sdv.setUint32(o + N_ORG_ADDR, orgAddr, true)
      this.sdv.setUint32(o + N_ORG_CNTR, orgCntr, true)
      if (n > 0) copySeg(this.scratch, o + PACKET_HEADER_BYTES, t.u8, addr + pos, n)
      this.sendScratch(src, o, n)
      pos += n
    } while (pos < len)
    return pos
  }

  private getAnswered (t: LocalTask, tgtCntr: number): void {
    this.st[ST_PACKETS_IN]!++
    // (LAPI: the target counter of a Get moves once the data has been taken from the segment)
    this.bumpCounter(t, tgtCntr)
  }

  /**
   * Sets a Get answer aside (the `gets` list of NetShared: GQ_SLOTS records of GQ_WORDS words,
   * oldest first): false when the list is full. LAPI does not order a Get with the operations
   * after it unless a fence says so; the answers to one origin keep their order among themselves.
   */
  private park (at: number, peer: number, src: number, addr: number, len: number, id: number, flags: number, orgAddr: number, orgCntr: number, tgtCntr: number, pos: number): boolean {
    const g = this.gq
    const n = g[GQ_COUNT]!
    if (n === GQ_SLOTS) return false
    const r = GQ_HEADER + GQ_WORDS * n
    g[r] = at; g[r + 1] = peer; g[r + 2] = src; g[r + 3] = addr; g[r + 4] = len; g[r + 5] = id
    g[r + 6] = flags; g[r + 7] = orgAddr; g[r + 8] = orgCntr; g[r + 9] = tgtCntr; g[r + 10] = pos
    g[GQ_COUNT] = n + 1
    Atomics.store(this.w, W_PARKED, n + 1)
    return true
  }

  /** Whether a Get answer to process `peer` is set aside. */
  private parkedFor (peer: number): boolean {
    const g = this.gq
    for (let k = 0, n = g[GQ_COUNT]!; k < n; k++) if (g[GQ_HEADER + GQ_WORDS * k + 1] === peer) return true
    return false
  }

  /** Goes on with the Get answers set aside, oldest first (one origin's in order), as far as there is room. */
  private answerParked (): void {
    const g = this.gq
    let n = g[GQ_COUNT]!
    if (n === 0) return
    let blocked = 0
    for (let k = 0; k < n;) {
      const r = GQ_HEADER + GQ_WORDS * k
      const peer = g[r + 1]!
      if ((blocked & (1 << (peer & 31))) !== 0) { k++; continue }
      const t = this.tasks[g[r]!]!
      const len = g[r + 4]!
      const pos = this.answer(t, peer, g[r + 2]!, g[r + 3]!, len, g[r + 5]!, g[r + 6]!, g[r + 7]!, g[r + 8]!, g[r + 10]!)
      if (pos < len) { g[r + 10] = pos; blocked |= 1 << (peer & 31); k++; continue }
      this.getAnswered(t, g[r + 9]!)
      g.copyWithin(r, r + GQ_WORDS, GQ_HEADER + GQ_WORDS * n)
      n--
    }
    g[GQ_COUNT] = n
    Atomics.store(this.w, W_PARKED, n)
  }

  private onGetReply (t: LocalTask, dv: DataView, p: number, src: number, plen: number, u8: Uint8Array): boolean {
    const orgAddr = dv.getUint32(p + N_ORG_ADDR, true)
    const at = orgAddr + dv.getUint32(p + P_OFFSET, true)
    const total = dv.getUint32(p + P_MSG_LEN, true)
    if (!this.inSeg(orgAddr, total) || at + plen > orgAddr + total) { this.drop(t); return true }
    if (plen > 0) copySeg(t.u8, at, u8, p + PACKET_HEADER_BYTES, plen)
    const flags = dv.getUint16(p + P_FLAGS, true)
    if ((flags & F_LAST) === 0) return true
    if ((flags & F_NOTIFY) !== 0) return this.done(t, dv.getUint32(p + P_MSG_ID, true), null, 0)
    Atomics.add(t.state, NS_LANDED_AT + src, 1)
    const c = dv.getUint32(p + N_ORG_CNTR, true)
    if (c !== 0) this.bumpCounter(t, c)
    else this.bell(t)
    return true
  }

  private onRmw (t: LocalTask, dv: DataView, p: number, src: number, peer: number): boolean {
    const addr = dv.getUint32(p + N_TGT_ADDR, true)
    const opw = dv.getUint32(p + N_OP, true)
    const op = opw & 0xff
    const width = opw >>> 8
    const id = dv.getUint32(p + P_MSG_ID, true)
    if ((width !== 32 && width !== 64) || op > RmwOp.COMPARE_AND_SWAP || (addr & (width === 32 ? 3 : 7)) !== 0 || !this.inSeg(addr, width >> 3)) {
      return this.drop(t)
    }
    // (performed only once its answer has room: it is not performed twice, nor answered never)
    if (!this.path.room(peer, ANSWER_BYTES, true)) return false
    this.st[ST_PACKETS_IN]!++
    const o = this.begin(T_NET_RMWR, 0, t.id, 0, id, 0, 0)
    if (width === 32) {
      // (int32 operands travel sign-extended to int64: their low words are the values)
      const old = rmw32(t.i32, addr >>> 2, op, dv.getInt32(p + N_VAL0, true), dv.getInt32(p + N_VAL1, true))
      this.sdv.setInt32(o + N_VAL0, old, true)
      this.sdv.setInt32(o + N_VAL0 + 4, old >> 31, true)
    } else {
      this.sdv.setBigInt64(o + N_VAL0, rmw64(t.i64, addr >>> 3, op, dv.getBigInt64(p + N_VAL0, true), dv.getBigInt64(p + N_VAL1, true)), true)
    }
    this.sendScratch(src, o, 0)
    return true
  }

  /**
   * Hands task `t` the completion of its operation `id` (T_NET_DONE in its network ring), with the 8
   * bytes of an Rmw's old value from `vdv` at `vat` (none: null); false when the ring is full.
   */
  private done (t: LocalTask, id: number, vdv: DataView | null, vat: number): boolean {
    const w = t.netIn
    const at = w.reserve()
    if (at < 0) return false
    const d = w.dv
    d.setUint32(at, 0, true)
    const p = at + BODY_PACKET
    writePacketHeader(d, p, T_NET_DONE, 0, t.id, 0, id, 0, 0)
    if (vdv !== null) {
      d.setInt32(p + N_VAL0, vdv.getInt32(vat, true), true)
      d.setInt32(p + N_VAL0 + 4, vdv.getInt32(vat + 4, true), true)
    }
    w.publish()
    this.bell(t)
    return true
  }

}
