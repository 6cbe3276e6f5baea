/**
 * The data path of a stream transport (tcp), usable from any thread of the process: each peer's
 * connection is a file descriptor that every thread may read and write (non-blocking: EAGAIN
 * means nothing yet; through WASI's fd_read and fd_write, which report it as a number:
 * transport/fd-io.ts), with the bytes received and not yet parsed, and those queued and not yet
 * written, in one shared WebAssembly memory (after its first page, the I/O vector's: rx[p] then
 * tx[p] for each peer p). Whoever holds the process's
 * network lock (engine/engine.ts) moves them; the agent, while it reads in its event loop instead
 * (no task polls), hands its chunks to `ingest`. Frames are as transport/contract.ts lays them out;
 * the buffers, and the frames queued into and parsed out of them, are transport/frame-buffers.ts's.
 *
 *   Its shared memory is laid out in layout/stream.ts.
 */
import { performance } from 'node:perf_hooks'
import { readSync, writeSync, writevSync } from 'node:fs'
import { copyBuf } from '../base/copy.js'
import { nextRandom } from './faults.js'
import { FdIo, IO_AGAIN, IO_SCRATCH_BYTES, type FdEnd, type FdPoll } from './fd-io.js'
import { FrameBuffers, NO_BYTES, type OnFrame } from './frame-buffers.js'
import { WASM_PAGE, sharedOrPlain } from '../layout/memory.js'
import {
  SP_ERRNO,
  SP_FD,
  SP_FLAGS,
  PEER_BASE,
  PEER_BYE,
  PEER_EOF,
  PEER_ERROR,
  PEER_MALFORMED,
  PEER_WORDS,
  SP_RX_END,
  SP_RX_START,
  S_BYTES_RECEIVED,
  S_BYTES_SENT,
  S_EMPTY_READS,
  S_FRAMES_DROPPED,
  S_FRAMES_RECEIVED,
  S_FRAMES_SENT,
  S_READS,
  S_WRITES,
  SP_TX_END,
  SP_TX_START,
  type StreamShared,
} from '../layout/stream.js'
import { BACKPRESSURE, SLEEP_FAILED, FRAME_HEADER_BYTES, type FramePath, type TransportStats } from './contract.js'

/** `readFd`/`writeFd` result after an error, which marked the peer (SP_FLAGS ERROR, SP_ERRNO). */
const IO_FAILED = -2
/** How long a thread leaves a peer's full socket alone before it tries to write again, ms. */
const FULL_BACKOFF_MS = 0.005

/** Bytes of each peer's receive and send buffers for a job of `numTasks` tasks (room for the largest control message: the all-gather tables). */
export function streamBufferBytes(numTasks: number): number {
  return (256 << 10) + 64 * numTasks
}

/** Bytes of the memory of a stream data path: the I/O vector's page, then a receive and a send buffer per peer, in whole pages. */
export function streamMemoryBytes(procs: number, bufBytes: number): number {
  return Math.ceil((IO_SCRATCH_BYTES + 2 * procs * bufBytes) / WASM_PAGE) * WASM_PAGE
}

export function createStreamShared(procs: number, bufBytes: number, corrupt: { p: number; seed: number } | null = null): StreamShared {
  const words = new SharedArrayBuffer(4 * (PEER_BASE + PEER_WORDS * procs))
  const w = new Int32Array(words)
  for (let p = 0; p < procs; p++) w[PEER_BASE + PEER_WORDS * p + SP_FD] = -1
  const pages = streamMemoryBytes(procs, bufBytes) / WASM_PAGE
  const { mem, wasm } = sharedOrPlain(pages)
  let c: StreamShared['corrupt'] = null
  if (corrupt !== null) {
    c = { p: corrupt.p, rng: new SharedArrayBuffer(4) }
    new Int32Array(c.rng)[0] = corrupt.seed
  }
  return { words, stats: new SharedArrayBuffer(8 * 8), mem, wasm, pages, cap: bufBytes, txCap: bufBytes, procs, corrupt: c }
}

/** Sets the descriptor of peer `p`'s connection (the agent, once the handshake is done). */
export function setPeerFd(s: StreamShared, p: number, fd: number): void {
  Atomics.store(new Int32Array(s.words), PEER_BASE + PEER_WORDS * p + SP_FD, fd)
}

/** Flags of peer `p` (PEER_*). */
export function peerFlags(s: StreamShared, p: number): number {
  return Atomics.load(new Int32Array(s.words), PEER_BASE + PEER_WORDS * p + SP_FLAGS)
}

/** The statistics of a stream data path, from any thread. */
export function streamStats(
  s: StreamShared,
): Pick<TransportStats, 'framesSent' | 'framesReceived' | 'bytesSent' | 'bytesReceived' | 'framesDropped' | 'writes'> & { reads: number; emptyReads: number } {
  const f = new Float64Array(s.stats)
  return {
    framesSent: f[S_FRAMES_SENT]!,
    framesReceived: f[S_FRAMES_RECEIVED]!,
    bytesSent: f[S_BYTES_SENT]!,
    bytesReceived: f[S_BYTES_RECEIVED]!,
    framesDropped: f[S_FRAMES_DROPPED]!,
    writes: f[S_WRITES]!,
    reads: f[S_READS]!,
    emptyReads: f[S_EMPTY_READS]!,
  }
}

/** One thread's handle on a stream data path. Every method runs under the process's network lock. */
export class StreamPath implements FramePath {
  /** The send and receive buffers, and their words (the views below are its). */
  private readonly fb: FrameBuffers
  private readonly w: Int32Array
  private readonly st: Float64Array
  private readonly rx: Uint8Array[]
  private readonly tx: Uint8Array[]
  private readonly cap: number
  private readonly txCap: number
  readonly peers: number
  private readonly self: number
  /**
   * Per peer, until when (performance.now ms) this thread does not try to write to it again: its
   * socket was full (EAGAIN). A full socket drains at the reader's pace; a write tried at once
   * would only fail again, and each failure is an exception.
   */
  private readonly fullUntil: Float64Array
  /** Writes and reads that moved bytes, by this thread (see `moved`). */
  private movedCount = 0
  /** Where each peer's buffers start in the memory. */
  private readonly rxAt: Int32Array
  private readonly txAt: Int32Array
  /** This thread's WASI reads and writes (null: Node's fs calls, where WASI could not be had). */
  private io: FdIo | null
  /** Per peer, its descriptor's WASI end (made when first used, again if the descriptor changes). */
  private readonly ends: Array<FdEnd | null>
  /** `sleep`'s FdPoll (on the descriptor it last slept on; null: none yet, or it failed). */
  private poller: FdPoll | null = null

  /** The fault injector's corruption probability per frame (0: none), and its generator. */
  private readonly corrupt: number
  private readonly rng: Int32Array | null

  constructor(s: StreamShared, self: number) {
    this.corrupt = s.corrupt?.p ?? 0
    this.rng = s.corrupt !== null ? new Int32Array(s.corrupt.rng) : null
    const fb = (this.fb = new FrameBuffers(s, self))
    this.w = fb.w
    this.st = fb.st
    this.cap = fb.cap
    this.txCap = fb.txCap
    this.peers = fb.peers
    this.rxAt = fb.rxAt
    this.txAt = fb.txAt
    this.rx = fb.rx
    this.tx = fb.tx
    this.ends = new Array<FdEnd | null>(s.procs).fill(null)
    let io: FdIo | null = null
    if (s.wasm)
      try {
        io = new FdIo(s.mem, s.pages)
      } catch {
        io = null
      }
    this.io = io
    this.self = self
    this.fullUntil = new Float64Array(this.peers)
  }

  /** How often this thread moved bytes (a write or read that moved some): grows while the path makes progress. */
  get moved(): number {
    return this.movedCount
  }

  /** Grows whenever room came in a peer's send queue, by any thread (a stream's: bytes written). */
  get freed(): number {
    return this.st[S_WRITES]!
  }

  /** Whether this thread reads and writes the send queue and receive buffers through WASI (false: Node's fs calls). */
  get wasi(): boolean {
    return this.io !== null
  }

  private word(p: number, f: number): number {
    return PEER_BASE + PEER_WORDS * p + f
  }

  /** The WASI end of peer `p`'s descriptor `fd`, or null when this thread uses Node's fs calls. */
  private end(p: number, fd: number): FdEnd | null {
    const e = this.ends[p]!
    if (e !== null && e.fd === fd) return e
    if (this.io === null) return null
    try {
      const n = this.io.end(fd)
      this.ends[p] = n
      return n
    } catch {
      // (no WASI in this Node: the fs calls, with their exceptions, for good)
      this.io = null
      return null
    }
  }

  /** Whether peer `p` can be written to and read from. */
  private open(p: number): boolean {
    return p !== this.self && this.w[this.word(p, SP_FD)]! >= 0 && (this.w[this.word(p, SP_FLAGS)]! & (PEER_EOF | PEER_ERROR | PEER_MALFORMED)) === 0
  }

  /** The only open peer's descriptor, or -1 when none or several are open (an FdPoll watches one). */
  private onlyFd(): number {
    let fd = -1
    for (let p = 0; p < this.peers; p++) {
      if (!this.open(p)) continue
      if (fd >= 0) return -1
      fd = this.w[this.word(p, SP_FD)]!
    }
    return fd
  }

  canSleep(): boolean {
    return this.io !== null && this.onlyFd() >= 0
  }

  /**
   * Sleeps in the kernel until the peer's connection has bytes (or its end) to read, or `ms`
   * pass: SLEEP_READY, SLEEP_TIMEOUT, or SLEEP_FAILED when this thread cannot (no WASI, not
   * exactly one open peer, the call failed). Outside the lock, by the process's only task.
   */
  sleep(ms: number): number {
    if (this.io === null) return SLEEP_FAILED
    const fd = this.onlyFd()
    if (fd < 0) return SLEEP_FAILED
    let poller = this.poller
    if (poller === null || poller.fd !== fd) {
      try {
        poller = this.io.poller(fd)
      } catch {
        this.poller = null
        return SLEEP_FAILED
      }
      this.poller = poller
    }
    return poller.wait(ms)
  }

  // ─────────────────────────────── out ───────────────────────────────

  /** A stream has no units: the largest. */
  directChunk(_peer: number, _overhead: number, max: number): number {
    return max
  }

  /** Whether `peer`'s queue has room for a frame of `len` body bytes (after writing what the socket takes, when `write`). */
  room(peer: number, len: number, write: boolean): boolean {
    if (!this.open(peer)) return true
    const need = FRAME_HEADER_BYTES + len
    const ws = this.word(peer, SP_TX_START)
    const we = this.word(peer, SP_TX_END)
    if (this.w[we]! - this.w[ws]! + need <= this.txCap) return true
    if (write) this.writeOut(peer)
    return this.w[we]! - this.w[ws]! + need <= this.txCap
  }

  /** Appends a frame for `peer` (copied); 0, or BACKPRESSURE when its queue has no room even after writing (nothing queued then). */
  queue(peer: number, kind: number, dst: number, u8: Uint8Array, off: number, len: number, dv: DataView | null = null): number {
    if (!this.open(peer)) return 0
    const need = FRAME_HEADER_BYTES + len
    let end = this.w[this.word(peer, SP_TX_END)]!
    if (end + need > this.txCap) {
      this.writeOut(peer)
      end = this.fb.compactTx(peer)
      if (end + need > this.txCap) return BACKPRESSURE
    }
    this.fb.put(peer, end, kind, dst, u8, off, len, dv)
    // (the fault injector's corrupt frame: a length no receiver can follow, so the connection ends, named)
    if (this.corrupt !== 0 && nextRandom(this.rng!, 0) < this.corrupt) {
      const b = this.tx[peer]!
      b[end] = 0xf0
      b[end + 1] = 0xff
      b[end + 2] = 0xff
      b[end + 3] = 0xff
    }
    return 0
  }

  sendDirect(peer: number, kind: number, dst: number, head: Uint8Array, headLen: number, data: Uint8Array, off: number, len: number): boolean {
    if (!this.open(peer)) return true
    const ws = this.word(peer, SP_TX_START)
    const we = this.word(peer, SP_TX_END)
    if (this.w[we]! !== this.w[ws]! || FRAME_HEADER_BYTES + headLen + len > this.txCap) return false
    // the frame's header and `head` go through the (empty) queue, the data after them
    const b = this.tx[peer]!
    const hl = FRAME_HEADER_BYTES + headLen
    this.fb.frameHeader(b, 0, headLen + len, kind, dst)
    for (let k = 0; k < headLen; k++) b[FRAME_HEADER_BYTES + k] = head[k]!
    this.w[ws] = 0
    this.w[we] = hl
    this.st[S_FRAMES_SENT]!++
    // (header and data in one writev: a header written alone would go as a segment of its own)
    const wrote = this.writeFrom(peer, data, off, len, b, hl)
    // (what the socket took of the header leaves the queue; what it did not take of the data follows)
    if (wrote >= hl) {
      this.w[ws] = 0
      this.w[we] = 0
    } else this.w[ws] = wrote
    const n = wrote > hl ? wrote - hl : 0
    if (n < len && this.open(peer)) {
      // (what the connection did not take waits in the queue, behind what is left of the header)
      const end = this.w[we]!
      copyBuf(b, end, data, off + n, len - n, false)
      this.w[we] = end + len - n
    }
    return true
  }

  /** The two parts of a direct frame's writev: the array is kept, its two views are made per frame (one chunk of up to 64 KiB). */
  private readonly two: Uint8Array[] = [NO_BYTES, NO_BYTES]

  /** Writes what is queued for every peer (as much as each socket takes now). Returns the bytes still queued. */
  flush(): number {
    let left = 0
    for (let p = 0; p < this.peers; p++) if (p !== this.self) left += this.writeOut(p)
    return left
  }

  /** Bytes queued for all peers and not yet written. */
  queued(): number {
    let n = 0
    for (let p = 0; p < this.peers; p++) n += this.w[this.word(p, SP_TX_END)]! - this.w[this.word(p, SP_TX_START)]!
    return n
  }

  private writeOut(p: number): number {
    const ws = this.word(p, SP_TX_START)
    const we = this.word(p, SP_TX_END)
    let start = this.w[ws]!
    const end = this.w[we]!
    if (start === end) return 0
    if (!this.open(p)) {
      this.w[ws] = 0
      this.w[we] = 0
      return 0
    }
    start += this.writeFrom(p, this.tx[p]!, start, end - start)
    if (start === end) {
      this.w[ws] = 0
      this.w[we] = 0
      return 0
    }
    this.w[ws] = start
    return end - start
  }

  /**
   * One write of `len` bytes of `u8` from `off` to peer `p`'s connection, after the first `hl`
   * bytes of `head` when there is one (a writev); returns the bytes it took (0 while its socket is
   * full: then it is left alone for FULL_BACKOFF_MS, or on an error, which marks the peer).
   */
  private writeFrom(p: number, u8: Uint8Array, off: number, len: number, head: Uint8Array | null = null, hl = 0): number {
    if (this.fullUntil[p] !== 0) {
      if (performance.now() < this.fullUntil[p]!) return 0
      this.fullUntil[p] = 0
    }
    const n = this.writeFd(p, u8, off, len, head, hl)
    if (n === IO_AGAIN) this.fullUntil[p] = performance.now() + FULL_BACKOFF_MS
    if (n < 0) return 0
    this.st[S_WRITES]!++
    this.st[S_BYTES_SENT]! += n
    if (n > 0) this.movedCount++
    return n
  }

  /**
   * The system call of `writeFrom`: the send queue through WASI, a direct frame (its data lies
   * outside the memory) or any write where WASI cannot be had through Node's fs calls. Returns the
   * bytes written, IO_AGAIN, or IO_FAILED (the peer is marked).
   */
  private writeFd(p: number, u8: Uint8Array, off: number, len: number, head: Uint8Array | null, hl: number): number {
    const fd = this.w[this.word(p, SP_FD)]!
    const e = head === null && u8 === this.tx[p] ? this.end(p, fd) : null
    if (e !== null) return this.wasiResult(p, e.write(this.txAt[p]! + off, len))
    const lim = Error.stackTraceLimit
    Error.stackTraceLimit = 0
    const two = this.two
    try {
      if (head === null) return writeSync(fd, u8, off, len)
      two[0] = head.subarray(0, hl)
      two[1] = u8.subarray(off, off + len)
      return writevSync(fd, two)
    } catch (x) {
      return this.fsError(p, x)
    } finally {
      Error.stackTraceLimit = lim
      two[0] = NO_BYTES
      two[1] = NO_BYTES
    }
  }

  /** The system call of `readIn`: at most `len` bytes into rx[p] at `at`, as `writeFd` says; 0 is the end of the stream. */
  private readFd(p: number, at: number, len: number): number {
    const fd = this.w[this.word(p, SP_FD)]!
    const e = this.end(p, fd)
    if (e !== null) return this.wasiResult(p, e.read(this.rxAt[p]! + at, len))
    // (an empty read is an EAGAIN exception: its stack trace is most of its cost)
    const lim = Error.stackTraceLimit
    Error.stackTraceLimit = 0
    try {
      return readSync(fd, this.rx[p]!, at, len, null)
    } catch (x) {
      return this.fsError(p, x)
    } finally {
      Error.stackTraceLimit = lim
    }
  }

  /** A WASI call's result as `readFd`/`writeFd` give it (an error marks the peer; SP_ERRNO holds 1000 + WASI's errno). */
  private wasiResult(p: number, r: number): number {
    return r >= IO_AGAIN ? r : this.fail(p, 1000 + (-2 - r))
  }

  /** An fs call's exception as `readFd`/`writeFd` give it: IO_AGAIN for EAGAIN, else the peer is marked. */
  private fsError(p: number, x: unknown): number {
    const e = x as NodeJS.ErrnoException
    if (e.code === 'EAGAIN' || e.code === 'EWOULDBLOCK') return IO_AGAIN
    return this.fail(p, typeof e.errno === 'number' ? e.errno : -1)
  }

  /** Marks peer `p` failed (ERROR, with `errno`); returns IO_FAILED. */
  private fail(p: number, errno: number): number {
    this.w[this.word(p, SP_ERRNO)] = errno
    Atomics.or(this.w, this.word(p, SP_FLAGS), PEER_ERROR)
    return IO_FAILED
  }

  // ─────────────────────────────── in ───────────────────────────────

  /**
   * Reads what each peer sent (reading: whether this thread reads the descriptors, or only parses
   * what `ingest` put in) and hands every whole frame to `onFrame` until it refuses one (false: it
   * stays for the next call). Returns the frames handed over.
   */
  poll(reading: boolean, onFrame: OnFrame): number {
    let n = 0
    for (let p = 0; p < this.peers; p++) {
      if (p === this.self) continue
      if (reading && this.open(p)) this.readIn(p)
      // (a goodbye: the peer's stream ends after it)
      n += this.fb.parse(p, onFrame, PEER_BYE)
    }
    return n
  }

  /** Bytes the agent read itself (its event loop) from peer `p`: kept for `poll` to parse. Returns false when there is no room (the agent stops reading). */
  ingest(p: number, chunk: Uint8Array, len: number): boolean {
    const end = this.fb.rxRoom(p, len)
    if (end < 0) return false
    copyBuf(this.rx[p]!, end, chunk, 0, len, false)
    this.w[this.word(p, SP_RX_END)] = end + len
    this.st[S_BYTES_RECEIVED]! += len
    return true
  }

  /** Bytes received from peer `p` and not yet handed over as frames. */
  unparsed(p: number): number {
    return this.fb.unparsed(p)
  }

  private readIn(p: number): void {
    const rs = this.word(p, SP_RX_START)
    const re = this.word(p, SP_RX_END)
    const b = this.rx[p]!
    let start = this.w[rs]!
    let end = this.w[re]!
    if (start > 0 && (start === end || end > this.cap - (this.cap >> 2))) {
      b.copyWithin(0, start, end)
      end -= start
      start = 0
      this.w[rs] = 0
      this.w[re] = end
    }
    if (end === this.cap) return
    const got = this.readFd(p, end, this.cap - end)
    if (got === 0) Atomics.or(this.w, this.word(p, SP_FLAGS), PEER_EOF)
    else if (got === IO_AGAIN) this.st[S_EMPTY_READS]!++
    else if (got > 0) {
      this.movedCount++
      this.st[S_READS]!++
      this.st[S_BYTES_RECEIVED]! += got
      this.w[re] = end + got
    }
  }

  /** A stream path has no timers: TCP keeps its own. */
  tick(): void {}
  due(): number {
    return -1
  }
  /** Nothing to settle before a close: a written byte is TCP's to deliver. */
  settle(): boolean {
    return true
  }

  /** Counts a frame dropped above the path (a packet the engine refused as malformed). */
  dropped(): void {
    this.fb.dropped()
  }

  /** Queues a goodbye for every open peer not sent one yet; false while a queue has no room for it. */
  bye(): boolean {
    return this.fb.bye(this)
  }
}
