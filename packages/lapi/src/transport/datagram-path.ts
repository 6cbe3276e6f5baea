/**
 * The data path of the `udp` transport (docs/transports.md, "UDP"), usable from any thread of the
 * process under its network lock, like the stream path it extends (transport/stream-path.ts):
 * frames are queued into each peer's send buffer and parsed out of its receive buffer exactly as
 * there. What carries the bytes between the two buffers is LAPI's own reliability over datagrams:
 *
 *   - each peer's send buffer is a byte stream cut into datagrams of at most the peer's size (so a
 *     large frame is fragmented and several small ones ride in one datagram), numbered per peer;
 *   - a datagram stays in the buffer until the peer acknowledges it: cumulatively (the next number
 *     it expects) and selectively (a bitmap of the 32 after that), in the header of every datagram
 *     going back, or in an acknowledgement of its own when no data goes back soon;
 *   - one that is not acknowledged is sent again after a timeout estimated from measured round
 *     trips (RFC 6298's estimator, with a floor and doubling backoff), or at once when the bitmap
 *     shows three later ones arrived;
 *   - the receiver keeps datagrams that come early in a window of WINDOW slots and passes them on
 *     in order; duplicates are dropped; its cumulative acknowledgement moves only as its receive
 *     buffer takes the bytes, so a fast sender waits for a slow receiver (flow control);
 *   - every datagram names its sender and carries the pair's session value (from the job key and
 *     the handshake: transport/udp.ts) and a checksum, optionally a MAC: anything else is dropped
 *     and counted, never passed up;
 *   - a peer silent for the peer timeout, or whose port is closed (ICMP), is lost.
 *
 * One socket receives from every peer (its descriptor: word G_RECV_FD); one connected socket per
 * peer sends to it (the stream path's per-peer descriptor word), so any thread writes a datagram
 * with WASI's fd_write (two I/O vectors: the header, then the payload straight from the send
 * buffer) and reads one with fd_read.
 *
 * Datagram (little-endian):
 *
 *   offset size field
 *   0      1    version (UDP_VERSION)
 *   1      1    type: DG_DATA, or DG_ACK (no payload)
 *   2      1    flags: DG_MAC (a MAC follows the header), DG_HELD (number `ack` arrived and waits for
 *                room in the sender's receive buffer)
 *   3      1    reserved, 0
 *   4      2    sender's rank
 *   6      2    payload bytes
 *   8      8    session value of the pair
 *   16     4    sequence number (DATA; 0 in an ACK)
 *   20     4    acknowledgement: the next sequence number expected from the receiver
 *   24     4    selective acknowledgements: bit i = number ack + 1 + i arrived
 *   28     2    the sender's window (slots)
 *   30     2    reserved, 0
 *   32     4    checksum (computed with this field and the MAC zero)
 *   36     8    packet number (low 32 bits, then high): one more than the last datagram the sender
 *                sent this peer, of any type (a resent datagram gets a new one); only a datagram
 *                whose number is above every one heard from the peer, by less than PN_JUMP, counts
 *                as news of it (liveness, acknowledgements)
 *   44     4    reserved, 0
 *   48     16   MAC (with DG_MAC): HMAC-SHA-256 of the datagram with this field zero, first 16 bytes
 *   48|64  …    payload
 *
 * The checksum (transport/checksum.ts) sums the header and the payload as two pieces.
 */
import { performance } from 'node:perf_hooks'
import { readSync, writeSync, writevSync } from 'node:fs'
import { copyBuf } from '../base/copy.js'
import { lazyLoad } from '../base/lazy.js'
import { IO_AGAIN, IO_RESERVED, IO_SCRATCH_BYTES, type FdEnd, type FdPoll, type Sum4 } from './fd-io.js'
import { DatagramSum } from './checksum.js'
import { faultState, nextRandom, type FaultSpec } from './faults.js'
import { FRAME_HEADER_BYTES, SLEEP_FAILED } from './contract.js'
import { SP_FD, SP_FLAGS, PEER_BASE, PEER_BYE, PEER_EOF, PEER_ERROR, PEER_WORDS, SP_RX_END, SP_RX_START, S_BYTES_RECEIVED, S_BYTES_SENT, S_EMPTY_READS, S_FRAMES_SENT, S_READS, S_WRITES, SP_TX_END, SP_TX_START, type StreamShared } from '../layout/stream.js'
import { StreamPath } from './stream-path.js'
import { WASM_PAGE, sharedOrPlain } from '../layout/memory.js'

export const UDP_VERSION = 3
export const DG_DATA = 1
export const DG_ACK = 2
export const DG_MAC = 1
export const DG_HELD = 2
export const DG_HEADER_BYTES = 48
export const DG_MAC_BYTES = 16
const H_SRC = 4
const H_LEN = 6
const H_SESSION = 8
const H_SEQ = 16
const H_ACK = 20
const H_SACK = 24
const H_WIN = 28
const H_SUM = 32
const H_PN = 36
const H_PN_HI = 40
/**
 * How far above the highest heard a packet number may be and still be news: more datagrams than a
 * peer sends unheard within any peer timeout, far fewer than a corrupted high bit adds (a checksum
 * cannot tell every two-bit change: a MAC can).
 */
const PN_JUMP = 2 ** 24
const H_MAC = 48

/** Most datagrams a peer may have unacknowledged (the selective bitmap's width); a window is a power of 2 up to it. */
export const MAX_WINDOW = 32
/** Bounds of the retransmission timeout, ms, and its value before the first round trip is measured. */
export const RTO_MIN_MS = 0.1
export const RTO_MAX_MS = 500
export const RTO_INITIAL_MS = 20
/**
 * The least time before a datagram the receiver holds for room (DG_HELD) is sent again, ms: not a
 * loss, so only a probe in case the acknowledgement that the receiver took it in was lost.
 */
export const HELD_PROBE_MS = 20
/** How long an acknowledgement waits for data going back before it goes alone, ms. */
export const ACK_DELAY_MS = 0.25
/** A peer that has not been sent anything for this long is sent an acknowledgement (a keepalive), ms. */
export const KEEPALIVE_MS = 500
/** Default of the peer timeout: a peer silent this long is lost, ms (AMLAPI_PEER_TIMEOUT_MS). */
export const PEER_TIMEOUT_MS = 5000
/** How long a closing process that has everything acknowledged still answers peers that did not say goodbye, ms. */
const LINGER_MS = 20
/** Payload bytes from which an unaligned payload is copied to an aligned place to be summed. */
const ALIGN_COPY = 256
/**
 * Payload bytes from which a datagram's successor is read straight into its peer's receive buffer
 * (`rxTail`): a stream's; small ones are copied, cheaper than a second I/O vector in every read.
 */
const DIRECT_READ_MIN = 4096
/** Datagrams one poll reads at most (the rest wait for the next). */
const READ_BUDGET = 64
/** node:crypto's createHmac, loaded with the first MAC. */
let hmacOf: typeof import('node:crypto').createHmac | undefined
/** How long a datagram the `reorder` fault holds back waits, ms (later ones overtake it). */
const REORDER_HOLD_MS = 0.3
/** Slots of the fault injector's delay line. */
const DELAY_SLOTS = 32

/** Why a peer was lost (word U_LOST; docs/transports.md). */
export const LOST_SILENT = 1
export const LOST_REFUSED = 2

// ── global words (udp Int32) ──
const G_RECV_FD = 0
const G_RNG = 1
const G_WORDS = 8
// ── per peer words (udp Int32, from G_WORDS + UW·p) ──
const UW = 16
const U_READY = 0
const U_SND_NXT = 1
const U_SND_UNA = 2
const U_SENT = 3
const U_RCV_NXT = 4
const U_RMASK = 5
const U_ACK_OWED = 6
const U_ACK_NOW = 7
const U_PEER_WIN = 8
const U_PEER_MAX = 9
const U_LOST = 10
const U_SESSION_LO = 11
const U_SESSION_HI = 12
/** 1 while the peer holds the oldest datagram not acknowledged for room (DG_HELD): it arrived. */
const U_HELD = 13
// ── global times (Float64): the next time a tick is due ──
const T_DUE = 0
const T_GLOBAL = 4
// ── per peer times (Float64, from T_GLOBAL + TW·p) ──
const TW = 10
const T_SRTT = 0
const T_RTTVAR = 1
const T_RTO = 2
const T_HEARD = 3
const T_SENT = 4
const T_ACK_OWED = 5
const T_TXBASE = 6
/** The packet number of the last datagram sent to the peer, and the highest heard from it (whole numbers below 2^53: no wrap). */
const T_PN_OUT = 7
const T_PN_IN = 8
// in-flight table (Float64, per peer WINDOW entries of FL_DOUBLES): stream position, length, when sent
const FL_DOUBLES = 3
// and (Int32, per peer WINDOW entries of FI_WORDS): times sent, selectively acknowledged
const FI_WORDS = 2

// statistics (Float64, `udpStats`)
const D_SENT = 0
const D_RECEIVED = 1
const D_RETRANSMITS = 2
const D_FAST_RETRANSMITS = 3
const D_DUPLICATES = 4
const D_OUT_OF_ORDER = 5
const D_ACKS = 6
const D_KEEPALIVES = 7
const D_BAD_LENGTH = 8
const D_BAD_VERSION = 9
const D_BAD_TYPE = 10
const D_UNKNOWN_SENDER = 11
const D_BAD_SESSION = 12
const D_BAD_CHECKSUM = 13
const D_BAD_MAC = 14
const D_OUTSIDE_WINDOW = 15
const D_SEND_ERRORS = 16
const D_FAULT_DROPS = 17
const D_FAULT_DUPS = 18
const D_FAULT_REORDERS = 19
const D_FAULT_CORRUPTS = 20
const D_FAULT_DELAYS = 21
/** Datagrams whose packet number was not news (replays, duplicates, late copies). */
const D_STALE = 22
/** Acknowledgements that freed room in a send buffer (not a statistic: `freed`). */
const D_FREED = 23
const D_COUNT = 24

/** The datagram counters of a `udp` transport (every field only grows). */
export interface DatagramStats {
  datagramsSent: number
  datagramsReceived: number
  retransmits: number
  fastRetransmits: number
  duplicates: number
  outOfOrder: number
  acksSent: number
  keepalives: number
  /** Datagrams dropped, by cause: none of them ran a handler or changed memory. */
  badLength: number
  badVersion: number
  badType: number
  unknownSender: number
  badSession: number
  badChecksum: number
  badMac: number
  outsideWindow: number
  sendErrors: number
  /** What the fault injector did (`--faults`). */
  faultDrops: number
  faultDups: number
  faultReorders: number
  faultCorrupts: number
  faultDelays: number
  /** Datagrams that passed every check but brought no news (a packet number not above all heard: replays, duplicates, late copies). */
  stale: number
}
const STAT_NAMES: Array<keyof DatagramStats> = [
  'datagramsSent', 'datagramsReceived', 'retransmits', 'fastRetransmits', 'duplicates', 'outOfOrder', 'acksSent', 'keepalives',
  'badLength', 'badVersion', 'badType', 'unknownSender', 'badSession', 'badChecksum', 'badMac', 'outsideWindow', 'sendErrors',
  'faultDrops', 'faultDups', 'faultReorders', 'faultCorrupts', 'faultDelays', 'stale',
]

/** What a process's datagram path is made with (UdpTransport.geometry, and the job's settings). */
export interface DatagramOptions {
  /** The largest datagram this process receives, bytes (its peers send at most this). */
  maxDatagram: number
  /** Datagrams a peer may send beyond what this process acknowledged (a power of 2, ≤ MAX_WINDOW). */
  window: number
  /** Whether every datagram carries a MAC. */
  mac: boolean
  faults: FaultSpec | null
  peerTimeoutMs: number
}

/** The shared memory of a datagram path: the stream path's, and the reliability's state. */
export interface DatagramShared extends StreamShared {
  kind: 'datagram'
  rank: number
  opts: DatagramOptions
  udp: SharedArrayBuffer
  times: SharedArrayBuffer
  flight: SharedArrayBuffer
  flightI: SharedArrayBuffer
  /** Bytes of each peer's early datagram in each window slot (-1 none). */
  slotLens: SharedArrayBuffer
  /** Per peer: the MAC key (32 bytes). */
  keys: SharedArrayBuffer
  udpStats: SharedArrayBuffer
  /** The fault injector's delay line: release times, and (peer, length) per slot. */
  delayT: SharedArrayBuffer
  delayI: SharedArrayBuffer
  /** Where, in the memory, the receive staging buffer, the fault scratch, the delay line and the window slots lie. */
  stagingAt: number
  scratchAt: number
  /** Where a payload that does not start on a 4-byte boundary is copied to be summed and sent. */
  alignAt: number
  delayAt: number
  slotsAt: number
  slotBytes: number
}

/** Where the header of the datagram being sent lies in the I/O page. */
const SEND_HDR = 256
/** Where the checksum's eight running sums lie in the I/O page (16-byte aligned; used under the lock, as the page is). */
const SUM_STATE = 128
const up8 = (n: number): number => (n + 7) & ~7

/** The shared memory of a datagram path for `procs` processes (receive and send buffers of `bufBytes` each). */
export function createDatagramShared (procs: number, bufBytes: number, rank: number, opts: DatagramOptions): DatagramShared {
  const W = opts.window
  if (W < 1 || W > MAX_WINDOW || (W & (W - 1)) !== 0) throw new RangeError(`udp window must be a power of 2 up to ${MAX_WINDOW}, not ${W}`)
  const md = up8(opts.maxDatagram)
  const slotBytes = up8(opts.maxDatagram - DG_HEADER_BYTES)
  // (the send buffer holds a window of datagrams in flight besides what waits to be sent, and
  // room for another: making room moves what is in flight to its start, at most once per byte)
  const txCap = bufBytes + 2 * W * md
  const stagingAt = IO_SCRATCH_BYTES + procs * (bufBytes + txCap)
  const scratchAt = stagingAt + md
  const alignAt = scratchAt + md
  const delayAt = alignAt + md
  const slotsAt = delayAt + (opts.faults !== null ? DELAY_SLOTS * md : 0)
  const pages = Math.ceil((slotsAt + procs * W * slotBytes) / WASM_PAGE)
  const { mem, wasm } = sharedOrPlain(pages)
  const words = new SharedArrayBuffer(4 * (PEER_BASE + PEER_WORDS * procs))
  const w = new Int32Array(words)
  for (let p = 0; p < procs; p++) w[PEER_BASE + PEER_WORDS * p + SP_FD] = -1
  const udp = new SharedArrayBuffer(4 * (G_WORDS + UW * procs))
  const u = new Int32Array(udp)
  u[G_RECV_FD] = -1
  if (opts.faults !== null) u[G_RNG] = faultState(opts.faults.seed, rank)
  const times = new SharedArrayBuffer(8 * (T_GLOBAL + TW * procs))
  const t = new Float64Array(times)
  t[T_DUE] = Infinity
  for (let p = 0; p < procs; p++) t[T_GLOBAL + TW * p + T_RTO] = RTO_INITIAL_MS
  const slotLens = new SharedArrayBuffer(4 * procs * W)
  new Int32Array(slotLens).fill(-1)
  return {
    words, stats: new SharedArrayBuffer(8 * 8), mem, wasm, pages, cap: bufBytes, txCap, procs, corrupt: null,
    kind: 'datagram', rank, opts, udp, times,
    flight: new SharedArrayBuffer(8 * procs * W * FL_DOUBLES),
    flightI: new SharedArrayBuffer(4 * procs * W * FI_WORDS),
    slotLens,
    keys: new SharedArrayBuffer(32 * procs),
    udpStats: new SharedArrayBuffer(8 * D_COUNT),
    delayT: new SharedArrayBuffer(8 * DELAY_SLOTS),
    delayI: new SharedArrayBuffer(4 * 2 * DELAY_SLOTS),
    stagingAt, scratchAt, alignAt, delayAt, slotsAt, slotBytes,
  }
}

/** Sets the receiving socket's descriptor (the agent, before any peer is ready). */
export function setReceiveFd (s: DatagramShared, fd: number): void {
  Atomics.store(new Int32Array(s.udp), G_RECV_FD, fd)
}

/**
 * Peer `p`'s handshake is done (the agent): its sending socket `fd`, the pair's session value
 * (8 bytes) and MAC key (32), the largest datagram it takes and its window. From now on its
 * datagrams are taken and it is sent to.
 */
export function setDatagramPeer (s: DatagramShared, p: number, fd: number, session: Uint8Array, macKey: Uint8Array, peerMax: number, peerWindow: number): void {
  const u = new Int32Array(s.udp)
  const b = G_WORDS + UW * p
  const dv = new DataView(session.buffer, session.byteOffset, 8)
  u[b + U_SESSION_LO] = dv.getInt32(0, true)
  u[b + U_SESSION_HI] = dv.getInt32(4, true)
  u[b + U_PEER_MAX] = peerMax
  u[b + U_PEER_WIN] = Math.min(peerWindow, s.opts.window)
  new Uint8Array(s.keys, 32 * p, 32).set(macKey.subarray(0, 32))
  const t = new Float64Array(s.times)
  const now = performance.now()
  t[T_GLOBAL + TW * p + T_HEARD] = now
  t[T_GLOBAL + TW * p + T_SENT] = now
  // (the timers run from the handshake on, so keepalives flow both ways while the tasks are still
  // starting: the peer timeout counts from the last datagram heard, and a process whose tasks take
  // longer than it to load would otherwise be lost the moment a peer's first datagram goes unanswered)
  if (now + KEEPALIVE_MS < t[T_DUE]!) t[T_DUE] = now + KEEPALIVE_MS
  Atomics.store(new Int32Array(s.words), PEER_BASE + PEER_WORDS * p + SP_FD, fd)
  Atomics.store(u, b + U_READY, 1)
}

/** Marks peer `p` lost for `why` (LOST_*), from any thread (the agent, when the kernel refused a datagram to it). */
export function markLost (s: DatagramShared, p: number, why: number): void {
  Atomics.compareExchange(new Int32Array(s.udp), G_WORDS + UW * p + U_LOST, 0, why)
  Atomics.or(new Int32Array(s.words), PEER_BASE + PEER_WORDS * p + SP_FLAGS, PEER_ERROR)
}

/** Why peer `p` was lost, in words (null: it was not, as far as the datagram path knows). */
export function datagramLoss (s: DatagramShared, p: number): string | null {
  const why = Atomics.load(new Int32Array(s.udp), G_WORDS + UW * p + U_LOST)
  if (why === LOST_SILENT) return `no datagram from it for ${s.opts.peerTimeoutMs / 1000} s (the peer timeout)`
  if (why === LOST_REFUSED) return 'its port is closed (the network refused a datagram to it)'
  return null
}

/** The datagram counters of a path, from any thread. */
export function datagramStats (s: DatagramShared): DatagramStats {
  const f = new Float64Array(s.udpStats)
  const r = {} as DatagramStats
  STAT_NAMES.forEach((k, i) => { r[k] = f[i]! })
  return r
}

/** One thread's handle on a datagram path. Every method runs under the process's network lock. */
export class DatagramPath extends StreamPath {
  private readonly u: Int32Array
  private readonly t: Float64Array
  private readonly fl: Float64Array
  private readonly fi: Int32Array
  private readonly sl: Int32Array
  /**
   * The clock (performance.now, ms) as the current step of the path read it, in `clock[0]`: its
   * functions share it there rather than as an argument or a field, which would box the double.
   */
  private readonly clock = new Float64Array(1)
  private readonly ds: Float64Array
  private readonly dT: Float64Array
  private readonly dI: Int32Array
  private readonly mu8: Uint8Array
  private readonly mdv: DataView
  private readonly W: number
  /**
   * Datagrams received unacknowledged after which an acknowledgement goes at once, whatever comes
   * back soon: half the window, so that a one-way stream's sender keeps going (acknowledging more
   * often costs a flood of requests a datagram of its own each few requests).
   */
  private readonly ackEvery: number
  private readonly hl: number
  private readonly maxDatagram: number
  private readonly mac: boolean
  private readonly faults: FaultSpec | null
  private readonly peerTimeout: number
  private readonly sd: DatagramShared
  private readonly macKeys: Array<Buffer | null>
  private recvEnd: FdEnd | null = null
  private readonly sendEnds: Array<FdEnd | null>
  private recvPoller: FdPoll | null = null
  /** The peer whose datagram this thread took last, if it was a large one (-1: none): where the next is read to (`rxTail`). */
  private lastSrc = -1
  /** The last read found nothing: the next datagram is one somebody may be waiting for. */
  private waited = true
  /** The checksum of the datagram being sent or checked. */
  private readonly ck: DatagramSum

  constructor (s: DatagramShared, self: number) {
    super(s, self)
    this.sd = s
    this.u = new Int32Array(s.udp)
    this.t = new Float64Array(s.times)
    this.fl = new Float64Array(s.flight)
    this.fi = new Int32Array(s.flightI)
    this.sl = new Int32Array(s.slotLens)
    this.ds = new Float64Array(s.udpStats)
    this.dT = new Float64Array(s.delayT)
    this.dI = new Int32Array(s.delayI)
    this.mu8 = new Uint8Array(s.mem.buffer)
    this.mdv = new DataView(s.mem.buffer)
    this.W = s.opts.window
    this.ackEvery = Math.max(2, this.W >> 1)
    this.mac = s.opts.mac
    this.hl = DG_HEADER_BYTES + (this.mac ? DG_MAC_BYTES : 0)
    this.maxDatagram = s.opts.maxDatagram
    this.faults = s.opts.faults
    this.peerTimeout = s.opts.peerTimeoutMs
    this.macKeys = new Array<Buffer | null>(s.procs).fill(null)
    this.sendEnds = new Array<FdEnd | null>(s.procs).fill(null)
    let sum4: Sum4 | null = null
    if (this.io !== null) try { sum4 = this.io.sum4() } catch { sum4 = null }
    this.ck = new DatagramSum(s.mem, sum4, SUM_STATE)
  }

  /** Grows whenever an acknowledgement freed room in a send buffer, by any thread. */
  override get freed (): number { return this.ds[D_FREED]! }

  private uw (p: number, f: number): number { return G_WORDS + UW * p + f }
  private tw (p: number, f: number): number { return T_GLOBAL + TW * p + f }

  /** Whether peer `p` is connected and not lost (its datagrams are taken and it is sent acknowledgements). */
  private live (p: number): boolean {
    return p !== this.self && this.u[this.uw(p, U_READY)] === 1 && (this.w[this.word(p, SP_FLAGS)]! & PEER_ERROR) === 0
  }

  /**
   * Whether peer `p` said goodbye: it is sent nothing more but the acknowledgements its own
   * datagrams call for — no data, no resend, no keepalive — so that its port, once its process has
   * gone and whoever may have taken the port, hears nothing of the pair.
   */
  private gone (p: number): boolean {
    return (this.w[this.word(p, SP_FLAGS)]! & PEER_BYE) !== 0
  }

  // ─────────────────────────────── out ───────────────────────────────

  /**
   * The payload bytes of a full datagram to peer `p`: a multiple of 8, so that full datagrams after
   * an aligned one stay aligned (for the plain checksum's fast path).
   */
  private payloadMax (p: number): number { return (this.u[this.uw(p, U_PEER_MAX)]! - this.hl) & ~7 }

  /** As many whole datagrams to the peer as `max` allows (at least one), less the frame's `overhead`. */
  override directChunk (peer: number, overhead: number, max: number): number {
    const per = this.payloadMax(peer)
    if (per <= overhead) return max
    const k = Math.max(1, Math.floor((max + overhead) / per))
    return Math.min(max, k * per - overhead)
  }

  /**
   * Bytes queued and not yet sent once (what is sent and not yet acknowledged is not counted: the
   * timers resend it); a lost peer's are never sent, and not counted either (a leaving process
   * does not wait for them).
   */
  override queued (): number {
    let n = 0
    for (let p = 0; p < this.peers; p++) {
      if (p !== this.self && (this.w[this.word(p, SP_FLAGS)]! & PEER_ERROR) === 0) n += this.w[this.word(p, SP_TX_END)]! - this.u[this.uw(p, U_SENT)]!
    }
    return n
  }

  /**
   * Sends what the windows allow; returns the bytes not sent yet. (What is sent and not yet
   * acknowledged is the timers' business, and `settle`'s before a close.)
   */
  override flush (): number {
    for (let p = 0; p < this.peers; p++) if (p !== this.self) this.writeOut(p)
    return this.queued()
  }

  protected override writeOut (p: number): number {
    if (!this.live(p) || this.gone(p)) return 0
    const sent = this.u[this.uw(p, U_SENT)]!
    const end = this.w[this.word(p, SP_TX_END)]!
    if (sent < end) this.sendNew(p, sent, end)
    return this.w[this.word(p, SP_TX_END)]! - this.w[this.word(p, SP_TX_START)]!
  }

  /** As the stream's, and what was sent and where the buffer starts in the stream move with it. */
  protected override compactTx (p: number): number {
    const start = this.w[this.word(p, SP_TX_START)]!
    if (start > 0) {
      this.u[this.uw(p, U_SENT)]! -= start
      this.t[this.tw(p, T_TXBASE)]! += start
    }
    return super.compactTx(p)
  }

  /** A frame whose body is `head` then `data`, queued (copied) after what waits: false when it does not fit. */
  override sendDirect (peer: number, kind: number, dst: number, head: Uint8Array, headLen: number, data: Uint8Array, off: number, len: number): boolean {
    if (!this.open(peer)) return true
    const need = FRAME_HEADER_BYTES + headLen + len
    if (need > this.txCap) return false
    const we = this.word(peer, SP_TX_END)
    let end = this.w[we]!
    if (end + need > this.txCap) {
      this.writeOut(peer)
      end = this.compactTx(peer)
      if (end + need > this.txCap) return false
    }
    const b = this.tx[peer]!
    this.frameHeader(b, end, headLen + len, kind, dst)
    for (let k = 0; k < headLen; k++) b[end + FRAME_HEADER_BYTES + k] = head[k]!
    copyBuf(b, end + FRAME_HEADER_BYTES + headLen, data, off, len, false)
    this.w[we] = end + need
    this.st[S_FRAMES_SENT]!++
    this.writeOut(peer)
    return true
  }

  /** Sends the bytes [sent, end) of peer `p`'s send buffer as new datagrams, as far as its window allows. */
  private sendNew (p: number, sent: number, end: number): void {
    const W = this.W
    const win = this.u[this.uw(p, U_PEER_WIN)]!
    const max = this.payloadMax(p)
    const una = this.u[this.uw(p, U_SND_UNA)]!
    let s = this.u[this.uw(p, U_SND_NXT)]!
    if (((s - una) | 0) >= win) return
    const now = this.clock[0] = performance.now()
    const base = this.t[this.tw(p, T_TXBASE)]!
    const f0 = p * W
    let any = false
    while (sent < end && ((s - una) | 0) < win) {
      const len = end - sent < max ? end - sent : max
      const r = this.emit(p, DG_DATA, s, this.txAt[p]! + sent, len)
      if (r === 0) break
      if (r < 0) return
      const e = f0 + (s & (W - 1))
      this.fl[e * FL_DOUBLES] = base + sent
      this.fl[e * FL_DOUBLES + 1] = len
      this.fl[e * FL_DOUBLES + 2] = now
      this.fi[e * FI_WORDS] = 1
      this.fi[e * FI_WORDS + 1] = 0
      sent += len
      s = (s + 1) | 0
      any = true
    }
    this.u[this.uw(p, U_SENT)] = sent
    this.u[this.uw(p, U_SND_NXT)] = s
    if (any) this.dueBy(now + this.t[this.tw(p, T_RTO)]!)
  }

  /** The next tick is due by `at` (ms) at the latest. */
  private dueBy (at: number): void {
    if (at < this.t[T_DUE]!) this.t[T_DUE] = at
  }

  /**
   * Sends one datagram to peer `p`: its header (type, sequence number `seq`, the acknowledgements
   * owed to `p`), then `len` payload bytes of the memory from `at`. Returns 1 (sent, or lost on the
   * way: the timers see to it), 0 (the socket is full: not sent) or -1 (the peer is lost).
   */
  private emit (p: number, type: number, seq: number, at: number, len: number): number {
    const now = this.clock[0]!
    const d = this.mdv
    const h = SEND_HDR
    const u = this.u
    // (while the next datagram in order waits for room in the receive buffer, the ones after it
    // are not acknowledged selectively: they came in order, and a sender told of them would take
    // the waiting one for lost and send it again; DG_HELD tells it that one arrived)
    const rmask = u[this.uw(p, U_RMASK)]!
    const held = rmask & 1
    d.setUint32(h, UDP_VERSION | (type << 8) | (((this.mac ? DG_MAC : 0) | (held !== 0 ? DG_HELD : 0)) << 16), true)
    d.setUint32(h + H_SRC, this.self | (len << 16), true)
    d.setInt32(h + H_SESSION, u[this.uw(p, U_SESSION_LO)]!, true)
    d.setInt32(h + H_SESSION + 4, u[this.uw(p, U_SESSION_HI)]!, true)
    d.setInt32(h + H_SEQ, seq, true)
    d.setInt32(h + H_ACK, u[this.uw(p, U_RCV_NXT)]!, true)
    d.setInt32(h + H_SACK, held !== 0 ? 0 : rmask >>> 1, true)
    d.setUint32(h + H_WIN, this.W, true)
    d.setUint32(h + H_SUM, 0, true)
    const pn = this.t[this.tw(p, T_PN_OUT)]! + 1
    this.t[this.tw(p, T_PN_OUT)] = pn
    d.setUint32(h + H_PN, pn >>> 0, true)
    d.setUint32(h + H_PN_HI, (pn / 4294967296) >>> 0, true)
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
    if (this.mac) this.sign(p, h, hl, at, len)
    u[this.uw(p, U_ACK_OWED)] = 0
    u[this.uw(p, U_ACK_NOW)] = 0
    this.t[this.tw(p, T_SENT)] = now
    this.ds[D_SENT]!++
    if (this.faults !== null) return this.faulty(p, h, hl, at, len)
    return this.write(p, h, hl, at, len)
  }

  /** Writes header and payload as one datagram to peer `p` (see `emit` for the result). */
  private write (p: number, h: number, hl: number, at: number, len: number): number {
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
  private sendError (p: number, refused: boolean): number {
    if (!refused) { this.ds[D_SEND_ERRORS]!++; return 1 }
    this.lose(p, LOST_REFUSED)
    return -1
  }

  /** Marks peer `p` lost for `why` (LOST_*). */
  private lose (p: number, why: number): void { markLost(this.sd, p, why) }

  private makeEnd (fd: number): FdEnd | null {
    if (this.io === null || fd < 0) return null
    try { return this.io.end(fd) } catch { this.io = null; return null }
  }

  /** Writes the MAC of the datagram (header at `h`, payload at `at`) into its header. */
  private sign (p: number, h: number, hl: number, at: number, len: number): void {
    const m = this.hmac(p, h, hl, at, len)
    for (let k = 0; k < DG_MAC_BYTES; k++) this.mu8[h + H_MAC + k] = m[k]!
  }

  private hmac (p: number, h: number, hl: number, at: number, len: number): Buffer {
    let key = this.macKeys[p]!
    if (key === null) key = this.macKeys[p] = Buffer.from(new Uint8Array(this.sd.keys, 32 * p, 32))
    // (node:crypto loaded with the first MAC, not in every thread of a job)
    hmacOf ??= lazyLoad<typeof import('node:crypto')>('node:crypto').createHmac
    const m = hmacOf('sha256', key).update(this.mu8.subarray(h, h + hl))
    if (len > 0) m.update(this.mu8.subarray(at, at + len))
    return m.digest()
  }

  /** `emit`'s write through the fault injector (transport/faults.ts). */
  private faulty (p: number, h: number, hl: number, at: number, len: number): number {
    const now = this.clock[0]!
    const f = this.faults!
    if (f.drop > 0 && nextRandom(this.u, G_RNG) < f.drop) { this.ds[D_FAULT_DROPS]!++; return 1 }
    const n = hl + len
    const x = this.sd.scratchAt
    this.mu8.copyWithin(x, h, h + hl)
    if (len > 0) this.mu8.copyWithin(x + hl, at, at + len)
    if (f.corrupt > 0 && nextRandom(this.u, G_RNG) < f.corrupt) {
      const k = Math.floor(nextRandom(this.u, G_RNG) * n)
      this.mu8[x + k]! ^= 1 << Math.floor(nextRandom(this.u, G_RNG) * 8)
      this.ds[D_FAULT_CORRUPTS]!++
    }
    const copies = f.dup > 0 && nextRandom(this.u, G_RNG) < f.dup ? 2 : 1
    if (copies === 2) this.ds[D_FAULT_DUPS]!++
    let r = 1
    for (let c = 0; c < copies; c++) {
      let hold = 0
      if (f.reorder > 0 && nextRandom(this.u, G_RNG) < f.reorder) { hold = REORDER_HOLD_MS; this.ds[D_FAULT_REORDERS]!++ }
      if (f.delay > 0) { hold += nextRandom(this.u, G_RNG) * f.delay / 1000; this.ds[D_FAULT_DELAYS]!++ }
      if (hold > 0 && this.hold(p, x, n, now + hold)) continue
      r = this.write(p, x, n, 0, 0)
    }
    return r
  }

  /** Puts a datagram into the delay line until `until` (ms); false when the line is full. */
  private hold (p: number, x: number, n: number, until: number): boolean {
    const md = up8(this.maxDatagram)
    for (let i = 0; i < DELAY_SLOTS; i++) {
      if (this.dI[2 * i + 1] !== 0) continue
      this.mu8.copyWithin(this.sd.delayAt + i * md, x, x + n)
      this.dI[2 * i] = p
      this.dI[2 * i + 1] = n
      this.dT[i] = until
      this.dueBy(until)
      return true
    }
    return false
  }

  /** Sends what the delay line holds that is due by `now`; returns the earliest release still held (Infinity: none). */
  private release (): number {
    const now = this.clock[0]!
    const md = up8(this.maxDatagram)
    let next = Infinity
    for (let i = 0; i < DELAY_SLOTS; i++) {
      const n = this.dI[2 * i + 1]!
      if (n === 0) continue
      const p = this.dI[2 * i]!
      if (this.dT[i]! <= now || !this.live(p)) {
        this.dI[2 * i + 1] = 0
        if (this.live(p)) this.write(p, this.sd.delayAt + i * md, n, 0, 0)
      } else if (this.dT[i]! < next) next = this.dT[i]!
    }
    return next
  }

  // ─────────────────────────────── in ───────────────────────────────

  override poll (reading: boolean, onFrame: (peer: number, kind: number, dst: number, u8: Uint8Array, off: number, len: number) => boolean): number {
    if (reading) this.readAll()
    let n = 0
    for (let p = 0; p < this.peers; p++) {
      if (p === this.self) continue
      if ((this.u[this.uw(p, U_RMASK)]! & 1) !== 0) this.drain(p)
      n += this.parse(p, onFrame)
      if ((this.u[this.uw(p, U_RMASK)]! & 1) !== 0) this.drain(p)
    }
    const now = this.clock[0] = performance.now()
    this.acksOut()
    if (now >= this.t[T_DUE]!) this.runTimers()
    return n
  }

  /** Reads the datagrams waiting at the receiving socket (at most READ_BUDGET). */
  private readAll (): void {
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
        if (to >= 0) { pat = to; r = e.read2(at, hl, to, this.maxDatagram - hl) } else r = e.read(at, this.maxDatagram)
      } else {
        const lim = Error.stackTraceLimit
        Error.stackTraceLimit = 0
        try { r = readSync(fd, this.mu8, at, this.maxDatagram, null) } catch { r = IO_AGAIN } finally { Error.stackTraceLimit = lim }
      }
      if (r < 0) { if (k === 0) { this.st[S_EMPTY_READS]!++; this.waited = true }; return }
      this.st[S_READS]!++
      this.st[S_BYTES_RECEIVED]! += r
      this.movedCount++
      // (one clock reading for the datagrams of one read: the path's functions share it in clock[0])
      if (!stamped) { this.clock[0] = performance.now(); stamped = true }
      this.onDatagram(at, pat, r)
      // (a datagram that ends a wait is taken in at once: the read after it would find nothing,
      // which costs as much as a read, and on the round trip's path; a stream's datagrams come
      // while the reader is behind, and are read up to the budget)
      if (k === 0) { const w = this.waited; this.waited = false; if (w) return }
    }
  }

  /**
   * Where in the memory peer `p`'s receive buffer ends, when a datagram's whole payload fits
   * after it (moving the unparsed bytes to its start if that makes the room); -1 otherwise.
   */
  private rxTail (p: number): number {
    if (!this.live(p)) return -1
    const rs = this.word(p, SP_RX_START); const re = this.word(p, SP_RX_END)
    const start = this.w[rs]!; let end = this.w[re]!
    const need = this.maxDatagram - this.hl
    if (end + need > this.cap) {
      if (start === 0 || end - start + need > this.cap) return -1
      this.rx[p]!.copyWithin(0, start, end)
      end -= start
      this.w[rs] = 0; this.w[re] = end
    }
    return this.rxAt[p]! + end
  }

  /** A datagram the agent's event loop read (`peer` is unknown: the datagram names it): taken at once. */
  override ingest (_peer: number, chunk: Uint8Array, len: number): boolean {
    const at = this.sd.stagingAt
    this.st[S_BYTES_RECEIVED]! += len
    if (len > this.maxDatagram) { this.ds[D_BAD_LENGTH]!++; return true }
    copyBuf(this.mu8, at, chunk, 0, len, false)
    this.clock[0] = performance.now()
    this.onDatagram(at, at + this.hl, len)
    return true
  }

  /** Checks and takes the datagram of `n` bytes whose header is at `at` of the memory and its payload at `pat`. */
  private onDatagram (at: number, pat: number, n: number): void {
    const now = this.clock[0]!
    const d = this.mdv
    const ds = this.ds
    if (n < DG_HEADER_BYTES) { ds[D_BAD_LENGTH]!++; return }
    const w0 = d.getUint32(at, true)
    if ((w0 & 0xff) !== UDP_VERSION) { ds[D_BAD_VERSION]!++; return }
    const type = (w0 >>> 8) & 0xff
    if (type !== DG_DATA && type !== DG_ACK) { ds[D_BAD_TYPE]!++; return }
    const src = d.getUint16(at + H_SRC, true)
    // (a peer lost because its port closed sent what waits here before it closed: that is still
    // taken in, its goodbye among it; one lost for silence is not heard any more)
    if (src >= this.peers || src === this.self || this.u[this.uw(src, U_READY)] !== 1 ||
      ((this.w[this.word(src, SP_FLAGS)]! & PEER_ERROR) !== 0 && this.u[this.uw(src, U_LOST)] !== LOST_REFUSED)) { ds[D_UNKNOWN_SENDER]!++; return }
    if (d.getInt32(at + H_SESSION, true) !== this.u[this.uw(src, U_SESSION_LO)] || d.getInt32(at + H_SESSION + 4, true) !== this.u[this.uw(src, U_SESSION_HI)]) { ds[D_BAD_SESSION]!++; return }
    const mac = ((w0 >>> 16) & DG_MAC) !== 0
    if (mac !== this.mac) { ds[D_BAD_MAC]!++; return }
    const hl = this.hl
    const len = d.getUint16(at + H_LEN, true)
    if (hl + len !== n || (type === DG_ACK && len !== 0)) { ds[D_BAD_LENGTH]!++; return }
    const sum = d.getUint32(at + H_SUM, true)
    d.setUint32(at + H_SUM, 0, true)
    if (mac) {
      for (let k = 0; k < DG_MAC_BYTES; k++) { this.mu8[this.sd.scratchAt + k] = this.mu8[at + H_MAC + k]!; this.mu8[at + H_MAC + k] = 0 }
    }
    this.ck.reset()
    this.ck.add(at, hl)
    if (len > 0) this.ck.add(pat, len)
    if (this.ck.value() !== sum) { ds[D_BAD_CHECKSUM]!++; return }
    if (mac) {
      d.setUint32(at + H_SUM, sum, true)
      const m = this.hmac(src, at, hl, pat, len)
      for (let k = 0; k < DG_MAC_BYTES; k++) if (m[k] !== this.mu8[this.sd.scratchAt + k]) { ds[D_BAD_MAC]!++; return }
    }
    ds[D_RECEIVED]!++
    this.lastSrc = len >= DIRECT_READ_MIN ? src : -1
    // (news of the peer only from a packet number above all heard: a replay, a duplicate or a late
    // copy keeps no lost peer alive, and its acknowledgements are older than those already taken;
    // its data, if new, is still taken in order)
    const pi = this.tw(src, T_PN_IN)
    const jump = d.getUint32(at + H_PN, true) + d.getUint32(at + H_PN_HI, true) * 4294967296 - this.t[pi]!
    if (jump > 0 && jump < PN_JUMP) {
      this.t[pi]! += jump
      this.t[this.tw(src, T_HEARD)] = now
      this.onAck(src, d.getInt32(at + H_ACK, true), d.getInt32(at + H_SACK, true), ((w0 >>> 16) & DG_HELD) !== 0)
    } else ds[D_STALE]!++
    if (type === DG_DATA) this.onData(src, d.getInt32(at + H_SEQ, true), pat, len)
  }

  /**
   * The acknowledgements of a datagram from peer `p`: the next number it expects (`ack`), the
   * bitmap after it, and whether number `ack` arrived and waits there for room (`held`).
   */
  private onAck (p: number, ack: number, sack: number, held: boolean): void {
    const now = this.clock[0]!
    const W = this.W
    const u = this.u
    const una = u[this.uw(p, U_SND_UNA)]!
    const nxt = u[this.uw(p, U_SND_NXT)]!
    const adv = (ack - una) | 0
    const out = (nxt - una) | 0
    // (an acknowledgement older than one seen, or of what was never sent: only its news is ignored)
    if (adv < 0 || adv > out) return
    // (the oldest datagram not acknowledged arrived: its timer only probes, `runTimers`)
    u[this.uw(p, U_HELD)] = held && adv < out ? 1 : 0
    const f0 = p * W
    if (adv > 0) {
      let sample = -1
      let e = 0
      for (let s = una; s !== ack; s = (s + 1) | 0) {
        e = f0 + (s & (W - 1))
        // (Karn: a round trip is measured only on a datagram sent once, when first acknowledged;
        // and on the oldest one newly acknowledged, as TCP does: its sample holds the time the
        // receiver let the acknowledgement wait, which a timeout must cover)
        if (sample < 0 && this.fi[e * FI_WORDS] === 1 && this.fi[e * FI_WORDS + 1] === 0) sample = now - this.fl[e * FL_DOUBLES + 2]!
        this.fi[e * FI_WORDS + 1] = 0
      }
      const endPos = this.fl[e * FL_DOUBLES]! + this.fl[e * FL_DOUBLES + 1]!
      const base = this.t[this.tw(p, T_TXBASE)]!
      const ws = this.word(p, SP_TX_START); const we = this.word(p, SP_TX_END)
      this.w[ws] = endPos - base
      u[this.uw(p, U_SND_UNA)] = ack
      this.ds[D_FREED]!++
      if (this.w[ws] === this.w[we] && u[this.uw(p, U_SENT)] === this.w[we]) {
        // everything acknowledged: the buffer starts over
        this.t[this.tw(p, T_TXBASE)] = base + this.w[we]!
        this.w[ws] = 0; this.w[we] = 0; u[this.uw(p, U_SENT)] = 0
      }
      if (sample >= 0) this.measured(p, sample)
    }
    if (sack === 0 || adv === out) return
    // selective: mark, and resend at once a hole with three arrived after it
    const left = out - adv
    let high = -1
    let sample = -1
    for (let i = 0, m = sack; m !== 0 && i + 1 < left; i++, m >>>= 1) {
      if ((m & 1) === 0) continue
      const e = f0 + ((ack + 1 + i) & (W - 1))
      if (this.fi[e * FI_WORDS + 1] === 0 && this.fi[e * FI_WORDS] === 1) sample = now - this.fl[e * FL_DOUBLES + 2]!
      this.fi[e * FI_WORDS + 1] = 1
      high = i + 1
    }
    if (sample >= 0) this.measured(p, sample)
    const gap = Math.max(this.t[this.tw(p, T_SRTT)]!, 0.1)
    for (let i = 0; i + 3 <= high; i++) {
      const s = (ack + i) | 0
      const e = f0 + (s & (W - 1))
      if (this.fi[e * FI_WORDS + 1] === 1 || now - this.fl[e * FL_DOUBLES + 2]! < gap) continue
      if (this.resend(p, s, e) < 0) return
      this.ds[D_FAST_RETRANSMITS]!++
    }
  }

  /** A round trip of `r` ms measured to peer `p` (RFC 6298). */
  private measured (p: number, r: number): void {
    const t = this.t
    const srtt = t[this.tw(p, T_SRTT)]!
    let var_ = t[this.tw(p, T_RTTVAR)]!
    let s: number
    if (srtt === 0) { s = r; var_ = r / 2 } else { var_ = 0.75 * var_ + 0.25 * Math.abs(srtt - r); s = 0.875 * srtt + 0.125 * r }
    t[this.tw(p, T_SRTT)] = s
    t[this.tw(p, T_RTTVAR)] = var_
    const rto = s + 4 * var_
    t[this.tw(p, T_RTO)] = rto < RTO_MIN_MS ? RTO_MIN_MS : rto > RTO_MAX_MS ? RTO_MAX_MS : rto
  }

  /** Sends datagram `s` to peer `p` again (`e`: its in-flight entry); `emit`'s result. */
  private resend (p: number, s: number, e: number): number {
    const now = this.clock[0]!
    const at = this.fl[e * FL_DOUBLES]! - this.t[this.tw(p, T_TXBASE)]!
    const r = this.emit(p, DG_DATA, s, this.txAt[p]! + at, this.fl[e * FL_DOUBLES + 1]!)
    if (r <= 0) return r
    this.fi[e * FI_WORDS]!++
    this.fl[e * FL_DOUBLES + 2] = now
    this.ds[D_RETRANSMITS]!++
    return r
  }

  /** A data datagram `seq` from peer `p`, its payload `len` bytes at `at`. */
  private onData (p: number, seq: number, at: number, len: number): void {
    const now = this.clock[0]!
    const u = this.u
    const d = (seq - u[this.uw(p, U_RCV_NXT)]!) | 0
    if (d < 0) { this.ds[D_DUPLICATES]!++; u[this.uw(p, U_ACK_NOW)] = 1; return }
    if (d >= this.W) { this.ds[D_OUTSIDE_WINDOW]!++; u[this.uw(p, U_ACK_NOW)] = 1; return }
    const bit = 1 << d
    const mask = u[this.uw(p, U_RMASK)]!
    // (a duplicate of one held: answered at once, it may be the sender's probe, `runTimers`)
    if ((mask & bit) !== 0) { this.ds[D_DUPLICATES]!++; u[this.uw(p, U_ACK_NOW)] = 1; return }
    if (d === 0 && this.append(p, at, len)) {
      u[this.uw(p, U_RCV_NXT)] = (seq + 1) | 0
      u[this.uw(p, U_RMASK)] = mask >>> 1
      if ((mask & 2) !== 0) this.drain(p)
    } else {
      const e = p * this.W + (seq & (this.W - 1))
      this.mu8.copyWithin(this.sd.slotsAt + e * this.sd.slotBytes, at, at + len)
      this.sl[e] = len
      u[this.uw(p, U_RMASK)] = mask | bit
      // (a gap, acknowledged at once; not when the one expected is held for room: then this one
      // most likely came in order behind it, and an acknowledgement would carry no news)
      if (d > 0 && (mask & 1) === 0) { this.ds[D_OUT_OF_ORDER]!++; u[this.uw(p, U_ACK_NOW)] = 1 }
    }
    if (u[this.uw(p, U_ACK_OWED)]!++ === 0) this.t[this.tw(p, T_ACK_OWED)] = now
  }

  /** Appends `len` bytes of the memory at `at` to peer `p`'s receive buffer (read there already: `rxTail`); false when it has no room. */
  private append (p: number, at: number, len: number): boolean {
    const rs = this.word(p, SP_RX_START); const re = this.word(p, SP_RX_END)
    let start = this.w[rs]!; let end = this.w[re]!
    if (at === this.rxAt[p]! + end) { this.w[re] = end + len; return true }
    if (end + len > this.cap && start > 0) {
      this.rx[p]!.copyWithin(0, start, end)
      end -= start; start = 0
      this.w[rs] = 0; this.w[re] = end
    }
    if (end + len > this.cap) return false
    this.mu8.copyWithin(this.rxAt[p]! + end, at, at + len)
    this.w[re] = end + len
    return true
  }

  /** Passes peer `p`'s datagrams that waited in the window on to its receive buffer, in order, as far as it has room. */
  private drain (p: number): void {
    const u = this.u
    let mask = u[this.uw(p, U_RMASK)]!
    let nxt = u[this.uw(p, U_RCV_NXT)]!
    let moved = false
    while ((mask & 1) !== 0) {
      const e = p * this.W + (nxt & (this.W - 1))
      const at = this.sd.slotsAt + e * this.sd.slotBytes
      if (!this.append(p, at, this.sl[e]!)) break
      this.sl[e] = -1
      nxt = (nxt + 1) | 0
      mask >>>= 1
      moved = true
    }
    u[this.uw(p, U_RMASK)] = mask
    u[this.uw(p, U_RCV_NXT)] = nxt
    // (the window moved: the sender may be waiting for that)
    if (moved) u[this.uw(p, U_ACK_NOW)] = 1
  }

  /** Sends the acknowledgements that cannot wait: after a hole, a duplicate or a moved window, or half a window of datagrams. */
  private acksOut (): void {
    for (let p = 0; p < this.peers; p++) {
      if (p === this.self) continue
      const u = this.u
      if (u[this.uw(p, U_ACK_NOW)] === 0 && u[this.uw(p, U_ACK_OWED)]! < this.ackEvery) {
        if (u[this.uw(p, U_ACK_OWED)] !== 0) this.dueBy(this.t[this.tw(p, T_ACK_OWED)]! + ACK_DELAY_MS)
        continue
      }
      if (!this.live(p)) continue
      this.emit(p, DG_ACK, 0, 0, 0)
      this.ds[D_ACKS]!++
    }
  }

  /**
   * The timers (under the lock, by whoever polls, and by the agent at `due`): datagrams not
   * acknowledged in time are sent again, acknowledgements that waited long enough go alone, a
   * peer not sent anything for KEEPALIVE_MS is sent an acknowledgement, a peer silent for the
   * peer timeout is lost, and the delay line releases what is due.
   */
  override tick (): void {
    this.clock[0] = performance.now()
    this.runTimers()
  }

  /** `tick` at the time in clock[0]. */
  private runTimers (): void {
    const now = this.clock[0]!
    let next = Infinity
    const W = this.W
    for (let p = 0; p < this.peers; p++) {
      if (!this.live(p)) continue
      const heard = this.t[this.tw(p, T_HEARD)]!
      if (now - heard > this.peerTimeout) { this.lose(p, LOST_SILENT); continue }
      if (heard + this.peerTimeout < next) next = heard + this.peerTimeout
      // (a peer that said goodbye is sent only the acknowledgements its own datagrams call for)
      const gone = this.gone(p)
      const una = this.u[this.uw(p, U_SND_UNA)]!
      const nxt = this.u[this.uw(p, U_SND_NXT)]!
      // (RFC 6298: when the oldest datagram not acknowledged times out it alone is sent again and
      // the timeout doubles until a round trip is measured anew; the others wait for the answer,
      // whose selective acknowledgements say which of them are missing)
      // (one the peer holds for room arrived: sent again only as a probe, after HELD_PROBE_MS at
      // least, in case the acknowledgement that the peer took it in is lost)
      const rto0 = this.t[this.tw(p, T_RTO)]!
      const rto = this.u[this.uw(p, U_HELD)] !== 0 && rto0 < HELD_PROBE_MS ? HELD_PROBE_MS : rto0
      for (let s = una; s !== nxt && !gone; s = (s + 1) | 0) {
        const e = p * W + (s & (W - 1))
        if (this.fi[e * FI_WORDS + 1] === 1) continue
        let at = this.fl[e * FL_DOUBLES + 2]! + rto
        if (at <= now) {
          if (this.resend(p, s, e) < 0) break
          const backed = 2 * rto < RTO_MAX_MS ? 2 * rto : RTO_MAX_MS
          this.t[this.tw(p, T_RTO)] = backed
          at = now + backed
        }
        if (at < next) next = at
        break
      }
      if (!this.live(p)) continue
      if (this.u[this.uw(p, U_ACK_OWED)] !== 0) {
        const at = this.t[this.tw(p, T_ACK_OWED)]! + ACK_DELAY_MS
        if (at <= now) { this.emit(p, DG_ACK, 0, 0, 0); this.ds[D_ACKS]!++ } else if (at < next) next = at
      }
      if (gone) continue
      const ka = this.t[this.tw(p, T_SENT)]! + KEEPALIVE_MS
      if (ka <= now) {
        this.emit(p, DG_ACK, 0, 0, 0)
        this.ds[D_KEEPALIVES]!++
        if (now + KEEPALIVE_MS < next) next = now + KEEPALIVE_MS
      } else if (ka < next) next = ka
    }
    if (this.faults !== null) { const r = this.release(); if (r < next) next = r }
    this.t[T_DUE] = next
  }

  /** Milliseconds until the timers are due (0: now), or -1 when nothing is timed. */
  override due (): number {
    const at = this.t[T_DUE]!
    if (at === Infinity) return -1
    const ms = at - performance.now()
    return ms > 0 ? ms : 0
  }

  /**
   * Before a normal close: sends the acknowledgements owed now; true once everything this process
   * sent was acknowledged and every peer said goodbye (or is lost).
   */
  override settle (): boolean {
    const now = this.clock[0] = performance.now()
    let acked = true
    let byes = true
    for (let p = 0; p < this.peers; p++) {
      if (!this.live(p)) continue
      if (this.u[this.uw(p, U_ACK_OWED)] !== 0 || this.u[this.uw(p, U_ACK_NOW)] !== 0) { this.emit(p, DG_ACK, 0, 0, 0); this.ds[D_ACKS]!++ }
      if (this.writeOut(p) > 0) acked = false
      if ((this.w[this.word(p, SP_FLAGS)]! & PEER_BYE) === 0) byes = false
    }
    if (now >= this.t[T_DUE]!) this.runTimers()
    if (!acked) { this.settledAt = -1; return false }
    // (a peer still at work may resend what our acknowledgement of it missed: answered a while longer)
    if (byes) return true
    if (this.settledAt < 0) this.settledAt = now
    return now - this.settledAt >= LINGER_MS
  }

  /** When `settle` first found everything acknowledged (-1: not yet). */
  private settledAt = -1

  /** A peer's goodbye: its stream ends here (it is judged gone, normally); its datagrams are still acknowledged. */
  protected override onBye (p: number): void { Atomics.or(this.w, this.word(p, SP_FLAGS), PEER_BYE | PEER_EOF) }

  /** One receiving socket for all peers: sleep can wait on it while it is open. */
  override canSleep (): boolean { return this.io !== null && this.u[G_RECV_FD]! >= 0 }

  /** Sleeps in the kernel until a datagram comes to the receiving socket, or `ms` pass (at most until the timers are due). */
  override sleep (ms: number): number {
    if (this.io === null) return SLEEP_FAILED
    const fd = this.u[G_RECV_FD]!
    if (fd < 0) return SLEEP_FAILED
    let poller = this.recvPoller
    if (poller === null || poller.fd !== fd) {
      try { poller = this.recvPoller = this.io.poller(fd) } catch { this.recvPoller = null; return SLEEP_FAILED }
    }
    const due = this.due()
    return poller.wait(due >= 0 && due < ms ? due : ms)
  }
}

/** Whether `s` is a datagram path's shared memory. */
export function isDatagramShared (s: StreamShared): s is DatagramShared {
  return (s as Partial<DatagramShared>).kind === 'datagram'
}

// (the I/O page holds the I/O vectors and the checksum's sums below SEND_HDR, and FdPoll's records
// above it: a header fits between)
if (SUM_STATE < IO_RESERVED || SUM_STATE + 32 > SEND_HDR || SEND_HDR + DG_HEADER_BYTES + DG_MAC_BYTES > 4096 || IO_SCRATCH_BYTES < 4096) throw new Error('datagram header does not fit the I/O page')
