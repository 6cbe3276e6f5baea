/**
 * Channels: byte rings in shared memory between the tasks of one process, one per ordered pair,
 * through which the larger tagged messages (messages.ts) go from task to task. The sender copies a
 * message into the ring while the receiver copies it out a piece behind: two copies that overlap
 * on two cores, where an active message would make a staging copy, then a handshake, then a pull.
 *
 * The rings live in the tasks' shared blocks (shared-block.ts), one per other task of the
 * process, in the writer's segment:
 *
 *   ring  +0     HEAD: bytes written, mod 2^32 (the writer's line)
 *         +4     STALLED: the writer waits for room (the reader then wakes it)
 *         +64    TAIL: bytes read, mod 2^32 (the reader's line)
 *         +128   data, `cap` bytes (a power of two)
 *
 * A message in a ring is a 16-byte header (sequence, round and kind word, argument, length), its
 * bytes, and padding to a multiple of 16 (so a header never wraps). Writers publish HEAD after
 * each piece, readers TAIL after each piece; each then wakes the other side only if it said it
 * waits. A reader takes a message when a receive for it is posted; it drains one into a buffer of
 * its own (`force`) when waiting for it would deadlock: its own wait is for a message of the same
 * writer, or the writer is stalled and the reader has waited DRAIN_MS.
 */
import type { Core } from './core.js'
import { OpHandle } from './rma.js'
import { RING_HDR, type SharedBlocks, W_WAITING } from './shared-block.js'

/** Bytes copied between two publications of HEAD or TAIL. */
const PIECE = 32 * 1024
const MSG_HDR = 16
/** Word offsets in a ring's header. */
const HEAD = 0
const STALLED = 1
const TAIL = 16
/** How long a waiting reader leaves a stalled writer's unexpected message in the ring. */
const DRAIN_MS = 0.2

/** Where a message's bytes go at the receiver (messages.ts's entry). */
export interface Landing {
  /** The buffer the message's bytes go into (its receive's, or one of its own). */
  landing(): Uint8Array
  /** Its bytes are all in. */
  landed(): void
}

/** What the receiving side of the channels needs from the matching of messages. */
export interface ChannelSink {
  /**
   * A message's header came from `src`: its landing, or null to leave it in the ring for now (no
   * receive posted for it, and not `force`).
   */
  begin(src: number, seq: number, w1: number, arg: number, len: number, force: boolean): Landing | null
  /** Whether this task waits for a message of `src` that has not begun to land (then whatever is ahead of it is drained). */
  waitsFor(src: number): boolean
}

/** A send through a channel: complete (`done`) when its last byte is in the ring. */
export class ChannelSend extends OpHandle {
  done = false
  seq = 0
  w1 = 0
  arg = 0
  data: Uint8Array = EMPTY
  /** Bytes of header (0 or 16) and body (data and padding) written. */
  started = false
  off = 0
  constructor() {
    super(null, 0, 0)
  }
}
const EMPTY = new Uint8Array(0)

class Out {
  readonly to: number
  readonly u8: Uint8Array
  readonly i32: Int32Array
  /** Word index of the ring's header, byte offset of its data. */
  readonly w: number
  readonly data: number
  head = 0
  readonly queue: ChannelSend[] = []
  first = 0
  constructor(to: number, u8: Uint8Array, i32: Int32Array, ring: number) {
    this.to = to
    this.u8 = u8
    this.i32 = i32
    this.w = ring >> 2
    this.data = ring + RING_HDR
  }
}

class In {
  readonly from: number
  readonly u8: Uint8Array
  readonly i32: Int32Array
  readonly w: number
  readonly data: number
  tail = 0
  /** The message being read: its landing, bytes of it read, its body (data and padding). */
  cur: Landing | null = null
  buf: Uint8Array = EMPTY
  off = 0
  len = 0
  body = 0
  /** When this reader first found the writer stalled behind a message it had no receive for (0: not). */
  stalledSince = 0
  constructor(from: number, u8: Uint8Array, i32: Int32Array, ring: number) {
    this.from = from
    this.u8 = u8
    this.i32 = i32
    this.w = ring >> 2
    this.data = ring + RING_HDR
  }
}

export class Channels {
  private readonly core: Core
  private readonly sink: ChannelSink
  /** Per task: the channel to it / from it, or null. */
  private readonly out: Array<Out | null> = []
  private readonly in: In[] = []
  private readonly cap: number
  /** This task's block (-1: none), its WAITING word, and every task's WAITING word index (-1: none). */
  private readonly block: number
  private readonly waitingWord: Int32Array
  private readonly waitingAt: number[]
  private waits = 0
  private readonly outs: Out[] = []

  constructor(core: Core, sink: ChannelSink, blocks: SharedBlocks) {
    this.core = core
    this.sink = sink
    const me = core.rank
    this.cap = blocks.ringCap
    const block = blocks.at[me]!
    this.block = block
    this.waitingWord = core.i32[me] ?? new Int32Array(1)
    this.waitingAt = blocks.at.map((b, t) => (b >= 0 && core.isLocal(t) ? (b >> 2) + W_WAITING : -1))
    for (let t = 0; t < core.size; t++) {
      const ok = this.cap > 0 && t !== me && blocks.has(me) && blocks.has(t) && core.isLocal(t)
      if (!ok) {
        this.out.push(null)
        continue
      }
      const o = new Out(t, core.u8[me]!, core.i32[me]!, blocks.ring(me, t))
      this.out.push(o)
      this.outs.push(o)
      this.in.push(new In(t, core.u8[t]!, core.i32[t]!, blocks.ring(t, me)))
    }
  }

  /** Whether messages to task `t` go through a channel. */
  reaches(t: number): boolean {
    return this.out[t] !== null && this.out[t] !== undefined
  }

  /** Whether this task has any channel (else `pump` has nothing to do). */
  get any(): boolean {
    return this.outs.length > 0
  }

  /** Queues `data` for task `to` (a channel it `reaches`) and writes what fits now. */
  send(to: number, seq: number, w1: number, arg: number, data: Uint8Array): ChannelSend {
    const o = this.out[to]!
    const s = this.spare.pop() ?? new ChannelSend()
    s.done = false
    s.started = false
    s.off = 0
    s.seq = seq
    s.w1 = w1
    s.arg = arg
    s.data = data
    o.queue.push(s)
    if (o.queue.length - o.first === 1) this.push(o)
    return s
  }

  /** Sends whose handles were waited for, to be used again (a send allocates nothing once warm). */
  private readonly spare: ChannelSend[] = []

  /** Takes back the handle of a complete send that its caller waited for and drops. */
  recycle(s: ChannelSend): void {
    if (s.done && this.spare.length < 64) this.spare.push(s)
  }

  /** Marks this task as waiting (writers wake it when they write) or no longer; nests. */
  waiting(on: boolean): void {
    if (this.block < 0) return
    const w = this.block >> 2
    if (on) {
      if (this.waits++ === 0) Atomics.store(this.waitingWord, w + W_WAITING, 1)
    } else if (--this.waits === 0) Atomics.store(this.waitingWord, w + W_WAITING, 0)
  }

  /** Writes and reads what can be: returns whether any byte moved. `now`: the clock, for DRAIN_MS. */
  pump(now: number): boolean {
    let moved = false
    const outs = this.outs
    for (let i = 0; i < outs.length; i++) {
      const o = outs[i]!
      if (o.queue.length > o.first && this.push(o)) moved = true
    }
    const ins = this.in
    for (let i = 0; i < ins.length; i++) if (this.pull(ins[i]!, now)) moved = true
    return moved
  }

  /** Writes the queued sends of `o` as far as the ring has room; returns whether any byte moved. */
  private push(o: Out): boolean {
    const i32 = o.i32
    const cap = this.cap
    let moved = false
    let stalled = false
    while (o.queue.length > o.first) {
      const s = o.queue[o.first]!
      let room = cap - ((o.head - Atomics.load(i32, o.w + TAIL)) | 0)
      if (!s.started) {
        if (room < MSG_HDR) {
          if (!this.stall(o)) {
            stalled = true
            break
          }
          continue
        }
        const at = (o.data + (o.head & (cap - 1))) >> 2
        i32[at] = s.seq
        i32[at + 1] = s.w1
        i32[at + 2] = s.arg
        i32[at + 3] = s.data.length
        o.head = (o.head + MSG_HDR) | 0
        room -= MSG_HDR
        s.started = true
        moved = true
      }
      const len = s.data.length
      const body = (len + 15) & ~15
      while (s.off < body && room > 0) {
        const n = Math.min(room, body - s.off, PIECE)
        const copy = Math.min(n, len - s.off)
        if (copy > 0) this.copyIn(o, s.data, s.off, copy)
        s.off += n
        o.head = (o.head + n) | 0
        room -= n
        Atomics.store(i32, o.w + HEAD, o.head)
        this.wakeReader(o.to)
        moved = true
      }
      if (s.off < body) {
        if (!this.stall(o)) {
          stalled = true
          break
        }
        continue
      }
      Atomics.store(i32, o.w + HEAD, o.head)
      this.wakeReader(o.to)
      s.done = true
      s.data = EMPTY
      o.queue[o.first++] = undefined as unknown as ChannelSend
      if (o.first === o.queue.length) {
        o.queue.length = 0
        o.first = 0
      }
    }
    if (!stalled && Atomics.load(i32, o.w + STALLED) !== 0) Atomics.store(i32, o.w + STALLED, 0)
    return moved
  }

  /**
   * The writer of `o` has no room: says so (the reader then wakes it) and looks again; true when
   * there is room now after all.
   */
  private stall(o: Out): boolean {
    const i32 = o.i32
    if (Atomics.load(i32, o.w + STALLED) === 0) Atomics.store(i32, o.w + STALLED, 1)
    const s = o.queue[o.first]!
    const room = this.cap - ((o.head - Atomics.load(i32, o.w + TAIL)) | 0)
    return room >= (s.started ? 1 : MSG_HDR)
  }

  private wakeReader(t: number): void {
    const w = this.waitingAt[t]!
    if (w >= 0 && Atomics.load(this.core.i32[t]!, w) !== 0) this.core.lapi.wake(t)
  }

  /** Copies `n` bytes of `src` from `off` into `o`'s ring at its head (in two parts where it wraps). */
  private copyIn(o: Out, src: Uint8Array, off: number, n: number): void {
    const cap = this.cap
    const pos = o.head & (cap - 1)
    const first = Math.min(n, cap - pos)
    o.u8.set(src.subarray(off, off + first), o.data + pos)
    if (first < n) o.u8.set(src.subarray(off + first, off + n), o.data)
  }

  /** Reads what came on `c` as far as there are receives for it; returns whether any byte moved. */
  private pull(c: In, now: number): boolean {
    const i32 = c.i32
    const cap = this.cap
    let avail = (Atomics.load(i32, c.w + HEAD) - c.tail) | 0
    if (avail === 0) return false
    let moved = false
    while (avail > 0) {
      if (c.cur === null) {
        const at = (c.data + (c.tail & (cap - 1))) >> 2
        const len = i32[at + 3]!
        const force = this.sink.waitsFor(c.from) || this.drainDue(c, now)
        const l = this.sink.begin(c.from, i32[at]!, i32[at + 1]!, i32[at + 2]!, len, force)
        if (l === null) break
        c.stalledSince = 0
        c.cur = l
        c.buf = l.landing()
        c.off = 0
        c.len = len
        c.body = (len + 15) & ~15
        c.tail = (c.tail + MSG_HDR) | 0
        avail -= MSG_HDR
        moved = true
      }
      const n = Math.min(avail, c.body - c.off, PIECE)
      const copy = Math.min(n, c.len - c.off)
      if (copy > 0) this.copyOut(c, copy)
      c.off += n
      c.tail = (c.tail + n) | 0
      avail -= n
      moved = true
      if (c.off === c.body) {
        const l = c.cur!
        c.cur = null
        c.buf = EMPTY
        l.landed()
      }
      Atomics.store(i32, c.w + TAIL, c.tail)
      if (Atomics.load(i32, c.w + STALLED) !== 0) this.core.lapi.wake(c.from)
      if (avail === 0) avail = (Atomics.load(i32, c.w + HEAD) - c.tail) | 0
    }
    return moved
  }

  /** Whether the writer of `c` is stalled and has been for DRAIN_MS of this reader's looks. */
  private drainDue(c: In, now: number): boolean {
    if (Atomics.load(c.i32, c.w + STALLED) === 0) {
      c.stalledSince = 0
      return false
    }
    if (c.stalledSince === 0) {
      c.stalledSince = now
      return false
    }
    return now - c.stalledSince >= DRAIN_MS
  }

  private copyOut(c: In, n: number): void {
    const cap = this.cap
    const pos = c.tail & (cap - 1)
    const first = Math.min(n, cap - pos)
    c.buf.set(c.u8.subarray(c.data + pos, c.data + pos + first), c.off)
    if (first < n) c.buf.set(c.u8.subarray(c.data, c.data + n - first), c.off + first)
  }
}
