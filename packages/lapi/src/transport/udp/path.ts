/**
 * The data path of the `udp` transport (docs/transports.md, "UDP"), usable from any thread of the
 * process under its network lock. It is made of parts: frames are queued into each peer's send
 * buffer and parsed out of its receive buffer as on the stream path (transport/frame-buffers.ts);
 * what carries the bytes between the two buffers is LAPI's own reliability over datagrams
 * (reliability.ts); this path puts its datagrams on the wire and takes them off: the header
 * (header.ts), the checksum (transport/checksum.ts), the MAC (mac.ts), the fault injector
 * (fault-injector.ts) and the sockets.
 *
 * Every datagram names its sender and carries the pair's session value (from the job key and the
 * handshake: transport/udp/transport.ts) and a checksum, optionally a MAC: anything else is dropped
 * and counted, never passed up. A peer whose port is closed (ICMP) is lost.
 *
 * One socket receives from every peer (its descriptor: word G_RECV_FD); one connected socket per
 * peer sends to it (the per-peer descriptor word of layout/stream.ts), so any thread writes a
 * datagram with WASI's fd_write (two I/O vectors: the header, then the payload straight from the
 * send buffer) and reads one with fd_read.
 *
 *   Its shared memory is laid out in layout/datagram.ts and layout/stream.ts (made in shared.ts).
 */
import { performance } from 'node:perf_hooks'
import { readSync, writeSync, writevSync } from 'node:fs'
import { copyBuf } from '../../base/copy.js'
import { FdIo, IO_AGAIN, IO_RESERVED, IO_SCRATCH_BYTES, type FdEnd, type FdPoll, type Sum4 } from '../fd-io.js'
import { DatagramSum } from '../checksum.js'
import { BACKPRESSURE, FRAME_HEADER_BYTES, SLEEP_FAILED, type FramePath } from '../contract.js'
import { FrameBuffers, type OnFrame } from '../frame-buffers.js'
import {
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
  S_FRAMES_SENT,
  S_READS,
  S_WRITES,
  SP_TX_END,
  SP_TX_START,
} from '../../layout/stream.js'
import {
  D_BAD_CHECKSUM,
  D_BAD_LENGTH,
  D_BAD_MAC,
  D_BAD_SESSION,
  D_BAD_TYPE,
  D_BAD_VERSION,
  D_SEND_ERRORS,
  D_UNKNOWN_SENDER,
  G_RECV_FD,
  G_WORDS,
  LOST_REFUSED,
  UW,
  U_LOST,
  U_READY,
  U_SESSION_HI,
  U_SESSION_LO,
} from '../../layout/datagram.js'
import {
  DG_ACK,
  DG_DATA,
  DG_HEADER_BYTES,
  DG_MAC,
  DG_MAC_BYTES,
  H_MAC,
  H_SUM,
  HF_COUNT,
  HF_FLAGS,
  HF_LEN,
  HF_SESSION_HI,
  HF_SESSION_LO,
  HF_SRC,
  HF_SUM,
  HF_TYPE,
  HF_VERSION,
  UDP_VERSION,
  decodeHeader,
  encodeHeader,
  headerBytes,
} from './header.js'
import { Reliability, type DatagramLink } from './reliability.js'
import { FaultInjector, type DatagramWriter } from './fault-injector.js'
import { DatagramMac } from './mac.js'
import type { DatagramShared } from './shared.js'

/** Payload bytes from which an unaligned payload is copied to an aligned place to be summed. */
const ALIGN_COPY = 256
/**
 * Payload bytes from which a datagram's successor is read straight into its peer's receive buffer
 * (`rxTail`): a stream's; small ones are copied, cheaper than a second I/O vector in every read.
 */
const DIRECT_READ_MIN = 4096
/** Datagrams one poll reads at most (the rest wait for the next). */
const READ_BUDGET = 64
/** Where the header of the datagram being sent lies in the I/O page. */
const SEND_HDR = 256
/** Where the checksum's eight running sums lie in the I/O page (16-byte aligned; used under the lock, as the page is). */
const SUM_STATE = 128

/** One thread's handle on a datagram path. Every method runs under the process's network lock. */
export class DatagramPath implements FramePath, DatagramLink, DatagramWriter {
  /** The send and receive buffers, and their words. */
  private readonly fb: FrameBuffers
  /** The reliability, and its header record of the datagram it sends. */
  private readonly proto: Reliability
  private readonly out: Float64Array
  private readonly faults: FaultInjector | null
  private readonly macs: DatagramMac | null
  private readonly w: Int32Array
  private readonly st: Float64Array
  private readonly u: Int32Array
  private readonly ds: Float64Array
  private readonly mu8: Uint8Array
  private readonly mdv: DataView
  /**
   * The clock (performance.now, ms) as the current step of the path read it, in `clock[0]`: the
   * parts share it there rather than as an argument or a field, which would box the double.
   */
  private readonly clock = new Float64Array(1)
  /** The header record of the datagram being checked. */
  private readonly hdr = new Float64Array(HF_COUNT)
  readonly peers: number
  private readonly self: number
  private readonly txCap: number
  private readonly hl: number
  private readonly maxDatagram: number
  private readonly mac: boolean
  private readonly sd: DatagramShared
  /** This thread's WASI reads and writes (null: Node's fs calls, where WASI could not be had). */
  private io: FdIo | null
  private recvEnd: FdEnd | null = null
  private readonly sendEnds: Array<FdEnd | null>
  private recvPoller: FdPoll | null = null
  /** Writes and reads that moved bytes, by this thread (see `moved`). */
  private movedCount = 0
  /** The peer whose datagram this thread took last, if it was a large one (-1: none): where the next is read to (`rxTail`). */
  private lastSrc = -1
  /** The last read found nothing: the next datagram is one somebody may be waiting for. */
  private waited = true
  /** The checksum of the datagram being sent or checked. */
  private readonly ck: DatagramSum

  constructor(s: DatagramShared, self: number) {
    this.sd = s
    const fb = (this.fb = new FrameBuffers(s, self))
    this.w = fb.w
    this.st = fb.st
    this.peers = fb.peers
    this.self = self
    this.txCap = fb.txCap
    this.u = new Int32Array(s.udp)
    this.ds = new Float64Array(s.udpStats)
    this.mu8 = new Uint8Array(s.mem.buffer)
    this.mdv = new DataView(s.mem.buffer)
    this.mac = s.opts.mac
    this.hl = headerBytes(this.mac)
    this.maxDatagram = s.opts.maxDatagram
    this.proto = new Reliability(s, fb, this.clock, this)
    this.out = this.proto.out
    this.faults = s.opts.faults !== null ? new FaultInjector(s, s.opts.faults, this.clock, this) : null
    this.macs = this.mac ? new DatagramMac(s) : null
    this.sendEnds = new Array<FdEnd | null>(s.procs).fill(null)
    let io: FdIo | null = null
    if (s.wasm)
      try {
        io = new FdIo(s.mem, s.pages)
      } catch {
        io = null
      }
    this.io = io
    let sum4: Sum4 | null = null
    if (io !== null)
      try {
        sum4 = io.sum4()
      } catch {
        sum4 = null
      }
    this.ck = new DatagramSum(s.mem, sum4, SUM_STATE)
  }

  /** How often this thread moved datagrams (a write or read): grows while the path makes progress. */
  get moved(): number {
    return this.movedCount
  }

  /** Grows whenever an acknowledgement freed room in a send buffer, by any thread. */
  get freed(): number {
    return this.proto.freed
  }

  /** Whether this thread reads and writes the sockets through WASI (false: Node's fs calls). */
  get wasi(): boolean {
    return this.io !== null
  }

  private word(p: number, f: number): number {
    return PEER_BASE + PEER_WORDS * p + f
  }

  /** Whether peer `p` can be queued frames (connected, not ended or failed). */
  private open(p: number): boolean {
    return p !== this.self && this.w[this.word(p, SP_FD)]! >= 0 && (this.w[this.word(p, SP_FLAGS)]! & (PEER_EOF | PEER_ERROR | PEER_MALFORMED)) === 0
  }
  private uw(p: number, f: number): number {
    return G_WORDS + UW * p + f
  }

  /** Whether peer `p` is connected and not lost (the reliability's; the fault injector's delay line asks). */
  live(p: number): boolean {
    return this.proto.live(p)
  }

  // ─────────────────────────────── out ───────────────────────────────

  /** As many whole datagrams to the peer as `max` allows (at least one), less the frame's `overhead`. */
  directChunk(peer: number, overhead: number, max: number): number {
    const per = this.proto.payloadMax(peer)
    if (per <= overhead) return max
    const k = Math.max(1, Math.floor((max + overhead) / per))
    return Math.min(max, k * per - overhead)
  }

  /** Bytes queued and not yet sent once (Reliability.queued). */
  queued(): number {
    return this.proto.queued()
  }

  /**
   * Sends what the windows allow; returns the bytes not sent yet. (What is sent and not yet
   * acknowledged is the timers' business, and `settle`'s before a close.)
   */
  flush(): number {
    for (let p = 0; p < this.peers; p++) if (p !== this.self) this.writeOut(p)
    return this.proto.queued()
  }

  /** Sends peer `p` what its window allows (the clock read when a datagram goes); returns the bytes in its send buffer. */
  private writeOut(p: number): number {
    if (this.proto.sendable(p)) this.clock[0] = performance.now()
    return this.proto.writeOut(p)
  }

  /** Whether `peer`'s queue has room for a frame of `len` body bytes (after sending what its window allows, when `write`). */
  room(peer: number, len: number, write: boolean): boolean {
    if (!this.open(peer)) return true
    const need = FRAME_HEADER_BYTES + len
    const ws = this.word(peer, SP_TX_START)
    const we = this.word(peer, SP_TX_END)
    if (this.w[we]! - this.w[ws]! + need <= this.txCap) return true
    if (write) this.writeOut(peer)
    return this.w[we]! - this.w[ws]! + need <= this.txCap
  }

  /** Appends a frame for `peer` (copied); 0, or BACKPRESSURE when its queue has no room even after sending (nothing queued then). */
  queue(peer: number, kind: number, dst: number, u8: Uint8Array, off: number, len: number, dv: DataView | null = null): number {
    if (!this.open(peer)) return 0
    const need = FRAME_HEADER_BYTES + len
    let end = this.w[this.word(peer, SP_TX_END)]!
    if (end + need > this.txCap) {
      this.writeOut(peer)
      end = this.proto.compactTx(peer)
      if (end + need > this.txCap) return BACKPRESSURE
    }
    this.fb.put(peer, end, kind, dst, u8, off, len, dv)
    return 0
  }

  /** A frame whose body is `head` then `data`, queued (copied) after what waits: false when it does not fit. */
  sendDirect(peer: number, kind: number, dst: number, head: Uint8Array, headLen: number, data: Uint8Array, off: number, len: number): boolean {
    if (!this.open(peer)) return true
    const need = FRAME_HEADER_BYTES + headLen + len
    const txCap = this.txCap
    if (need > txCap) return false
    const we = this.word(peer, SP_TX_END)
    let end = this.w[we]!
    if (end + need > txCap) {
      this.writeOut(peer)
      end = this.proto.compactTx(peer)
      if (end + need > txCap) return false
    }
    const b = this.fb.tx[peer]!
    this.fb.frameHeader(b, end, headLen + len, kind, dst)
    for (let k = 0; k < headLen; k++) b[end + FRAME_HEADER_BYTES + k] = head[k]!
    copyBuf(b, end + FRAME_HEADER_BYTES + headLen, data, off, len, false)
    this.w[we] = end + need
    this.st[S_FRAMES_SENT]!++
    this.writeOut(peer)
    return true
  }

  /**
   * The reliability's datagram to peer `p` (DatagramLink.transmit): its header record with the
   * sender, length, session value and MAC flag added, summed, signed, through the fault injector
   * if there is one, to the socket.
   */
  transmit(p: number, at: number, len: number): number {
    const d = this.mdv
    const h = SEND_HDR
    const o = this.out
    o[HF_FLAGS] = o[HF_FLAGS]! | (this.mac ? DG_MAC : 0)
    o[HF_SRC] = this.self
    o[HF_LEN] = len
    o[HF_SESSION_LO] = this.u[this.uw(p, U_SESSION_LO)]!
    o[HF_SESSION_HI] = this.u[this.uw(p, U_SESSION_HI)]!
    encodeHeader(d, h, o)
    const hl = this.hl
    if (this.mac) for (let k = 0; k < DG_MAC_BYTES; k++) this.mu8[h + H_MAC + k] = 0
    if (!this.ck.simd && (at & 3) !== 0 && len >= ALIGN_COPY) {
      // (a DataView's reads of shared memory are slow, an Int32Array's are not: a copy to an
      // aligned place costs less than summing the words where they are)
      this.mu8.copyWithin(this.sd.alignAt, at, at + len)
      at = this.sd.alignAt
    }
    this.ck.reset()
    this.ck.add(h, hl)
    if (len > 0) this.ck.add(at, len)
    d.setUint32(h + H_SUM, this.ck.value(), true)
    if (this.macs !== null) this.macs.sign(p, h, hl, at, len)
    if (this.faults !== null) return this.faults.send(p, h, hl, at, len)
    return this.write(p, h, hl, at, len)
  }

  /** What the fault injector's delay line releases (DatagramLink.release). */
  release(): number {
    return this.faults !== null ? this.faults.release() : Infinity
  }

  /** Writes header and payload as one datagram to peer `p` (DatagramWriter.write). */
  write(p: number, h: number, hl: number, at: number, len: number): number {
    const fd = this.w[this.word(p, SP_FD)]!
    let e: FdEnd | null = this.sendEnds[p]!
    if (e === null || e.fd !== fd) e = this.sendEnds[p] = this.makeEnd(fd)
    let r: number
    if (e !== null) {
      r = len > 0 ? e.write2(h, hl, at, len) : e.write(h, hl)
      if (r === IO_AGAIN) return 0
      if (r < 0) return this.sendError(p, -2 - r === 14)
    } else {
      const lim = Error.stackTraceLimit
      Error.stackTraceLimit = 0
      try {
        r = len > 0 ? writevSync(fd, [this.mu8.subarray(h, h + hl), this.mu8.subarray(at, at + len)]) : writeSync(fd, this.mu8, h, hl)
      } catch (x) {
        const c = (x as NodeJS.ErrnoException).code
        if (c === 'EAGAIN' || c === 'EWOULDBLOCK') return 0
        return this.sendError(p, c === 'ECONNREFUSED')
      } finally {
        Error.stackTraceLimit = lim
      }
    }
    this.st[S_WRITES]!++
    this.st[S_BYTES_SENT]! += hl + len
    this.movedCount++
    return 1
  }

  /** A write failed: a closed port (ICMP) loses the peer; anything else is counted, and the timers resend. */
  private sendError(p: number, refused: boolean): number {
    if (!refused) {
      this.ds[D_SEND_ERRORS]!++
      return 1
    }
    this.proto.lose(p, LOST_REFUSED)
    return -1
  }

  private makeEnd(fd: number): FdEnd | null {
    if (this.io === null || fd < 0) return null
    try {
      return this.io.end(fd)
    } catch {
      this.io = null
      return null
    }
  }

  // ─────────────────────────────── in ───────────────────────────────

  poll(reading: boolean, onFrame: OnFrame): number {
    if (reading) this.readAll()
    let n = 0
    for (let p = 0; p < this.peers; p++) {
      if (p === this.self) continue
      this.proto.deliver(p)
      // (a goodbye: the peer's stream ends there, and it is judged gone, normally; its datagrams
      // are still acknowledged)
      n += this.fb.parse(p, onFrame, PEER_BYE | PEER_EOF)
      this.proto.deliver(p)
    }
    this.clock[0] = performance.now()
    this.proto.acksOut()
    if (this.proto.timersDue()) this.proto.runTimers()
    return n
  }

  /** Reads the datagrams waiting at the receiving socket (at most READ_BUDGET). */
  private readAll(): void {
    const fd = this.u[G_RECV_FD]!
    if (fd < 0) return
    let e = this.recvEnd
    if (e === null || e.fd !== fd) e = this.recvEnd = this.makeEnd(fd)
    const at = this.sd.stagingAt
    const hl = this.hl
    let stamped = false
    for (let k = 0; k < READ_BUDGET; k++) {
      let r: number
      let pat = at + hl
      if (e !== null) {
        // (the payload goes straight to the end of the receive buffer of the peer the last datagram
        // came from, where the next one in order appends it: a stream's datagrams are not copied)
        const to = this.lastSrc >= 0 ? this.rxTail(this.lastSrc) : -1
        if (to >= 0) {
          pat = to
          r = e.read2(at, hl, to, this.maxDatagram - hl)
        } else r = e.read(at, this.maxDatagram)
      } else {
        const lim = Error.stackTraceLimit
        Error.stackTraceLimit = 0
        try {
          r = readSync(fd, this.mu8, at, this.maxDatagram, null)
        } catch {
          r = IO_AGAIN
        } finally {
          Error.stackTraceLimit = lim
        }
      }
      if (r < 0) {
        if (k === 0) {
          this.st[S_EMPTY_READS]!++
          this.waited = true
        }
        return
      }
      this.st[S_READS]!++
      this.st[S_BYTES_RECEIVED]! += r
      this.movedCount++
      // (one clock reading for the datagrams of one read: the parts share it in clock[0])
      if (!stamped) {
        this.clock[0] = performance.now()
        stamped = true
      }
      this.onDatagram(at, pat, r)
      // (a datagram that ends a wait is taken in at once: the read after it would find nothing,
      // which costs as much as a read, and on the round trip's path; a stream's datagrams come
      // while the reader is behind, and are read up to the budget)
      if (k === 0) {
        const w = this.waited
        this.waited = false
        if (w) return
      }
    }
  }

  /**
   * Where in the memory peer `p`'s receive buffer ends, when a datagram's whole payload fits
   * after it (moving the unparsed bytes to its start if that makes the room); -1 otherwise.
   */
  private rxTail(p: number): number {
    if (!this.proto.live(p)) return -1
    const rs = this.word(p, SP_RX_START)
    const re = this.word(p, SP_RX_END)
    const start = this.w[rs]!
    let end = this.w[re]!
    const need = this.maxDatagram - this.hl
    const cap = this.fb.cap
    if (end + need > cap) {
      if (start === 0 || end - start + need > cap) return -1
      this.fb.rx[p]!.copyWithin(0, start, end)
      end -= start
      this.w[rs] = 0
      this.w[re] = end
    }
    return this.fb.rxAt[p]! + end
  }

  /** A datagram the agent's event loop read (`peer` is unknown: the datagram names it): taken at once. */
  ingest(_peer: number, chunk: Uint8Array, len: number): boolean {
    const at = this.sd.stagingAt
    this.st[S_BYTES_RECEIVED]! += len
    if (len > this.maxDatagram) {
      this.ds[D_BAD_LENGTH]!++
      return true
    }
    copyBuf(this.mu8, at, chunk, 0, len, false)
    this.clock[0] = performance.now()
    this.onDatagram(at, at + this.hl, len)
    return true
  }

  /** Checks the datagram of `n` bytes whose header is at `at` of the memory and its payload at `pat`, and hands it to the reliability. */
  private onDatagram(at: number, pat: number, n: number): void {
    const d = this.mdv
    const ds = this.ds
    const f = this.hdr
    if (n < DG_HEADER_BYTES) {
      ds[D_BAD_LENGTH]!++
      return
    }
    decodeHeader(d, at, f)
    if (f[HF_VERSION] !== UDP_VERSION) {
      ds[D_BAD_VERSION]!++
      return
    }
    const type = f[HF_TYPE]!
    if (type !== DG_DATA && type !== DG_ACK) {
      ds[D_BAD_TYPE]!++
      return
    }
    const src = f[HF_SRC]! | 0
    // (a peer lost because its port closed sent what waits here before it closed: that is still
    // taken in, its goodbye among it; one lost for silence is not heard any more)
    if (
      src >= this.peers ||
      src === this.self ||
      this.u[this.uw(src, U_READY)] !== 1 ||
      ((this.w[this.word(src, SP_FLAGS)]! & PEER_ERROR) !== 0 && this.u[this.uw(src, U_LOST)] !== LOST_REFUSED)
    ) {
      ds[D_UNKNOWN_SENDER]!++
      return
    }
    if (f[HF_SESSION_LO] !== this.u[this.uw(src, U_SESSION_LO)] || f[HF_SESSION_HI] !== this.u[this.uw(src, U_SESSION_HI)]) {
      ds[D_BAD_SESSION]!++
      return
    }
    const mac = (f[HF_FLAGS]! & DG_MAC) !== 0
    if (mac !== this.mac) {
      ds[D_BAD_MAC]!++
      return
    }
    const hl = this.hl
    const len = f[HF_LEN]!
    if (hl + len !== n || (type === DG_ACK && len !== 0)) {
      ds[D_BAD_LENGTH]!++
      return
    }
    const sum = f[HF_SUM]!
    d.setUint32(at + H_SUM, 0, true)
    const saved = this.sd.scratchAt
    if (mac) {
      for (let k = 0; k < DG_MAC_BYTES; k++) {
        this.mu8[saved + k] = this.mu8[at + H_MAC + k]!
        this.mu8[at + H_MAC + k] = 0
      }
    }
    this.ck.reset()
    this.ck.add(at, hl)
    if (len > 0) this.ck.add(pat, len)
    if (this.ck.value() !== sum) {
      ds[D_BAD_CHECKSUM]!++
      return
    }
    if (mac) {
      d.setUint32(at + H_SUM, sum, true)
      const m = this.macs!.of(src, at, hl, pat, len)
      for (let k = 0; k < DG_MAC_BYTES; k++)
        if (m[k] !== this.mu8[saved + k]) {
          ds[D_BAD_MAC]!++
          return
        }
    }
    this.lastSrc = len >= DIRECT_READ_MIN ? src : -1
    this.proto.receive(f, pat, len)
  }

  // ─────────────────────────────── time, and the end ───────────────────────────────

  /** The timers (Reliability.runTimers), now: under the lock, by whoever polls, and by the agent when they are due. */
  tick(): void {
    this.clock[0] = performance.now()
    this.proto.runTimers()
  }

  /** Milliseconds until the timers are due (0: now), or -1 when nothing is timed. */
  due(): number {
    const at = this.proto.dueAt()
    if (at === Infinity) return -1
    const ms = at - performance.now()
    return ms > 0 ? ms : 0
  }

  /** Before a normal close (Reliability.settle), now. */
  settle(): boolean {
    this.clock[0] = performance.now()
    return this.proto.settle()
  }

  /** Bytes received from peer `p` and not yet handed over as frames. */
  unparsed(p: number): number {
    return this.fb.unparsed(p)
  }

  /** Counts a frame dropped above the path (a packet the engine refused as malformed). */
  dropped(): void {
    this.fb.dropped()
  }

  /** Queues a goodbye for every open peer not sent one yet; false while a queue has no room for it. */
  bye(): boolean {
    return this.fb.bye(this)
  }

  /** One receiving socket for all peers: sleep can wait on it while it is open. */
  canSleep(): boolean {
    return this.io !== null && this.u[G_RECV_FD]! >= 0
  }

  /** Sleeps in the kernel until a datagram comes to the receiving socket, or `ms` pass (at most until the timers are due). */
  sleep(ms: number): number {
    if (this.io === null) return SLEEP_FAILED
    const fd = this.u[G_RECV_FD]!
    if (fd < 0) return SLEEP_FAILED
    let poller = this.recvPoller
    if (poller === null || poller.fd !== fd) {
      try {
        poller = this.recvPoller = this.io.poller(fd)
      } catch {
        this.recvPoller = null
        return SLEEP_FAILED
      }
    }
    const due = this.due()
    return poller.wait(due >= 0 && due < ms ? due : ms)
  }
}

// (the I/O page holds the I/O vectors and the checksum's sums below SEND_HDR, and FdPoll's records
// above it: a header fits between)
if (SUM_STATE < IO_RESERVED || SUM_STATE + 32 > SEND_HDR || SEND_HDR + DG_HEADER_BYTES + DG_MAC_BYTES > 4096 || IO_SCRATCH_BYTES < 4096)
  throw new Error('datagram header does not fit the I/O page')
