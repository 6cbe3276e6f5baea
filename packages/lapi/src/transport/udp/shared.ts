/**
 * The shared memory of a datagram path (laid out in layout/datagram.ts and layout/stream.ts): how
 * it is made for a process, and what the agent sets in it and reads of it from outside the
 * network lock (the receiving socket, a peer's handshake, a lost peer, the counters).
 */
import { performance } from 'node:perf_hooks'
import { IO_SCRATCH_BYTES } from '../fd-io.js'
import { faultState, type FaultSpec } from '../faults.js'
import { WASM_PAGE, sharedOrPlain } from '../../layout/memory.js'
import { SP_FD, SP_FLAGS, PEER_BASE, PEER_ERROR, PEER_WORDS, type StreamShared } from '../../layout/stream.js'
import {
  D_COUNT,
  DELAY_SLOTS,
  FI_WORDS,
  FL_DOUBLES,
  G_RECV_FD,
  G_RNG,
  G_WORDS,
  LOST_REFUSED,
  LOST_SILENT,
  STAT_NAMES,
  UT_DUE,
  UT_GLOBAL,
  UT_HEARD,
  UT_RTO,
  UT_SENT,
  TW,
  UW,
  U_LOST,
  U_PEER_MAX,
  U_PEER_WIN,
  U_READY,
  U_SESSION_HI,
  U_SESSION_LO,
  up8,
  type DatagramStats,
} from '../../layout/datagram.js'
import { DG_HEADER_BYTES } from './header.js'
import { KEEPALIVE_MS, MAX_WINDOW, RTO_INITIAL_MS } from './constants.js'

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

/** The shared memory of a datagram path for `procs` processes (receive and send buffers of `bufBytes` each). */
export function createDatagramShared(procs: number, bufBytes: number, rank: number, opts: DatagramOptions): DatagramShared {
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
  const times = new SharedArrayBuffer(8 * (UT_GLOBAL + TW * procs))
  const t = new Float64Array(times)
  t[UT_DUE] = Infinity
  for (let p = 0; p < procs; p++) t[UT_GLOBAL + TW * p + UT_RTO] = RTO_INITIAL_MS
  const slotLens = new SharedArrayBuffer(4 * procs * W)
  new Int32Array(slotLens).fill(-1)
  return {
    words,
    stats: new SharedArrayBuffer(8 * 8),
    mem,
    wasm,
    pages,
    cap: bufBytes,
    txCap,
    procs,
    corrupt: null,
    kind: 'datagram',
    rank,
    opts,
    udp,
    times,
    flight: new SharedArrayBuffer(8 * procs * W * FL_DOUBLES),
    flightI: new SharedArrayBuffer(4 * procs * W * FI_WORDS),
    slotLens,
    keys: new SharedArrayBuffer(32 * procs),
    udpStats: new SharedArrayBuffer(8 * D_COUNT),
    delayT: new SharedArrayBuffer(8 * DELAY_SLOTS),
    delayI: new SharedArrayBuffer(4 * 2 * DELAY_SLOTS),
    stagingAt,
    scratchAt,
    alignAt,
    delayAt,
    slotsAt,
    slotBytes,
  }
}

/** Whether `s` is a datagram path's shared memory. */
export function isDatagramShared(s: StreamShared): s is DatagramShared {
  return (s as Partial<DatagramShared>).kind === 'datagram'
}

/** Sets the receiving socket's descriptor (the agent, before any peer is ready). */
export function setReceiveFd(s: DatagramShared, fd: number): void {
  Atomics.store(new Int32Array(s.udp), G_RECV_FD, fd)
}

/**
 * Peer `p`'s handshake is done (the agent): its sending socket `fd`, the pair's session value
 * (8 bytes) and MAC key (32), the largest datagram it takes and its window. From now on its
 * datagrams are taken and it is sent to; it counts as heard and sent to at `now` (ms, the clock of
 * the path: performance.now).
 */
export function setDatagramPeer(
  s: DatagramShared,
  p: number,
  fd: number,
  session: Uint8Array,
  macKey: Uint8Array,
  peerMax: number,
  peerWindow: number,
  now = performance.now(),
): void {
  const u = new Int32Array(s.udp)
  const b = G_WORDS + UW * p
  const dv = new DataView(session.buffer, session.byteOffset, 8)
  u[b + U_SESSION_LO] = dv.getInt32(0, true)
  u[b + U_SESSION_HI] = dv.getInt32(4, true)
  u[b + U_PEER_MAX] = peerMax
  u[b + U_PEER_WIN] = Math.min(peerWindow, s.opts.window)
  new Uint8Array(s.keys, 32 * p, 32).set(macKey.subarray(0, 32))
  const t = new Float64Array(s.times)
  t[UT_GLOBAL + TW * p + UT_HEARD] = now
  t[UT_GLOBAL + TW * p + UT_SENT] = now
  // (the timers run from the handshake on, so keepalives flow both ways while the tasks are still
  // starting: the peer timeout counts from the last datagram heard, and a process whose tasks take
  // longer than it to load would otherwise be lost the moment a peer's first datagram goes unanswered)
  if (now + KEEPALIVE_MS < t[UT_DUE]!) t[UT_DUE] = now + KEEPALIVE_MS
  Atomics.store(new Int32Array(s.words), PEER_BASE + PEER_WORDS * p + SP_FD, fd)
  Atomics.store(u, b + U_READY, 1)
}

/** Marks peer `p` lost for `why` (LOST_*), from any thread (the agent, when the kernel refused a datagram to it). */
export function markLost(s: DatagramShared, p: number, why: number): void {
  Atomics.compareExchange(new Int32Array(s.udp), G_WORDS + UW * p + U_LOST, 0, why)
  Atomics.or(new Int32Array(s.words), PEER_BASE + PEER_WORDS * p + SP_FLAGS, PEER_ERROR)
}

/** Why peer `p` was lost, in words (null: it was not, as far as the datagram path knows). */
export function datagramLoss(s: DatagramShared, p: number): string | null {
  const why = Atomics.load(new Int32Array(s.udp), G_WORDS + UW * p + U_LOST)
  if (why === LOST_SILENT) return `no datagram from it for ${s.opts.peerTimeoutMs / 1000} s (the peer timeout)`
  if (why === LOST_REFUSED) return 'its port is closed (the network refused a datagram to it)'
  return null
}

/** The datagram counters of a path, from any thread. */
export function datagramStats(s: DatagramShared): DatagramStats {
  const f = new Float64Array(s.udpStats)
  const r = {} as DatagramStats
  STAT_NAMES.forEach((k, i) => {
    r[k] = f[i]!
  })
  return r
}
