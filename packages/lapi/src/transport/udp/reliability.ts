/**
 * The reliability of the `udp` transport (docs/transports.md, "UDP"): LAPI's own delivery over
 * datagrams, as a state machine with no socket and no clock of its own.
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
 *   - only a datagram whose packet number is above every one heard from the peer is news of it
 *     (its acknowledgements, liveness); a peer silent for the peer timeout is lost.
 *
 * Its state is the shared memory it is given (layout/datagram.ts, and the buffers and their words
 * of layout/stream.ts through a FrameBuffers): any thread of the process may run it, under the
 * process's network lock. The time (ms) is what the caller put in `clock[0]` before the call (a cell
 * rather than an argument: a double passed to a call that is not inlined is boxed, on every
 * datagram); a datagram goes out through the DatagramLink it is given: its header record (`out`)
 * filled, the payload in the memory. A datagram that came in is handed to `receive` as a header
 * record, checked already (transport/udp/path.ts checks sender, session, checksum and MAC).
 */
import { SP_FLAGS, PEER_BASE, PEER_BYE, PEER_ERROR, PEER_WORDS, SP_RX_END, SP_TX_END, SP_TX_START } from '../../layout/stream.js'
import {
  D_ACKS,
  D_DUPLICATES,
  D_FAST_RETRANSMITS,
  D_FREED,
  D_KEEPALIVES,
  D_OUTSIDE_WINDOW,
  D_OUT_OF_ORDER,
  D_RECEIVED,
  D_RETRANSMITS,
  D_SENT,
  D_STALE,
  FI_WORDS,
  FL_DOUBLES,
  LOST_SILENT,
  UT_ACK_OWED,
  UT_DUE,
  UT_GLOBAL,
  UT_HEARD,
  UT_PN_IN,
  UT_PN_OUT,
  UT_RTO,
  UT_RTTVAR,
  UT_SENT,
  UT_SRTT,
  UT_TXBASE,
  TW,
  G_WORDS,
  UW,
  U_ACK_NOW,
  U_ACK_OWED,
  U_HELD,
  U_LOST,
  U_PEER_MAX,
  U_PEER_WIN,
  U_RCV_NXT,
  U_READY,
  U_RMASK,
  U_SENT,
  U_SND_NXT,
  U_SND_UNA,
} from '../../layout/datagram.js'
import type { FrameBuffers } from '../frame-buffers.js'
import { DG_ACK, DG_DATA, DG_HELD, HF_ACK, HF_COUNT, HF_FLAGS, HF_PN, HF_SACK, HF_SEQ, HF_SRC, HF_TYPE, HF_WIN, headerBytes } from './header.js'
import type { DatagramShared } from './shared.js'
import { ACK_DELAY_MS, HELD_PROBE_MS, KEEPALIVE_MS, LINGER_MS, PN_JUMP, RTO_MAX_MS, RTO_MIN_MS } from './constants.js'

/** Where the reliability's datagrams go: the path (header, checksum, MAC, faults, socket), or a test's network. */
export interface DatagramLink {
  /**
   * Sends one datagram to peer `p`: the fields of the reliability's header record `out` (type,
   * flags, sequence number, acknowledgements, window, packet number), then `len` payload bytes of
   * the memory from `at`. Returns 1 (sent, or lost on the way: the timers see to it), 0 (the
   * socket is full: not sent) or -1 (the peer is lost).
   */
  transmit(p: number, at: number, len: number): number
  /** Sends what the link held back that is due by the time in the clock; returns when the next is due (Infinity: none). */
  release(): number
}

/** One thread's handle on the reliability of a datagram path. Every method runs under the process's network lock. */
export class Reliability {
  /** The header record of the datagram being sent (header.ts: HF_*), for the link. */
  readonly out = new Float64Array(HF_COUNT)
  private readonly fb: FrameBuffers
  private readonly w: Int32Array
  private readonly u: Int32Array
  private readonly t: Float64Array
  private readonly fl: Float64Array
  private readonly fi: Int32Array
  private readonly sl: Int32Array
  private readonly ds: Float64Array
  private readonly mu8: Uint8Array
  private readonly clock: Float64Array
  private readonly link: DatagramLink
  private readonly W: number
  /**
   * Datagrams received unacknowledged after which an acknowledgement goes at once, whatever comes
   * back soon: half the window, so that a one-way stream's sender keeps going (acknowledging more
   * often costs a flood of requests a datagram of its own each few requests).
   */
  private readonly ackEvery: number
  private readonly hl: number
  private readonly peerTimeout: number
  private readonly self: number
  private readonly peers: number
  private readonly slotsAt: number
  private readonly slotBytes: number
  /** When `settle` first found everything acknowledged (-1: not yet). */
  private settledAt = -1

  /** `clock`: where the caller puts the time (ms) before each call; `fb`: the path's buffers (over the memory of `s`). */
  constructor(s: DatagramShared, fb: FrameBuffers, clock: Float64Array, link: DatagramLink) {
    this.fb = fb
    this.w = fb.w
    this.u = new Int32Array(s.udp)
    this.t = new Float64Array(s.times)
    this.fl = new Float64Array(s.flight)
    this.fi = new Int32Array(s.flightI)
    this.sl = new Int32Array(s.slotLens)
    this.ds = new Float64Array(s.udpStats)
    this.mu8 = new Uint8Array(s.mem.buffer)
    this.clock = clock
    this.link = link
    this.W = s.opts.window
    this.ackEvery = Math.max(2, this.W >> 1)
    this.hl = headerBytes(s.opts.mac)
    this.peerTimeout = s.opts.peerTimeoutMs
    this.self = fb.self
    this.peers = fb.peers
    this.slotsAt = s.slotsAt
    this.slotBytes = s.slotBytes
  }

  /** Grows whenever an acknowledgement freed room in a send buffer, by any thread. */
  get freed(): number {
    return this.ds[D_FREED]!
  }

  private uw(p: number, f: number): number {
    return G_WORDS + UW * p + f
  }
  private tw(p: number, f: number): number {
    return UT_GLOBAL + TW * p + f
  }
  private word(p: number, f: number): number {
    return PEER_BASE + PEER_WORDS * p + f
  }

  /** Whether peer `p` is connected and not lost (its datagrams are taken and it is sent acknowledgements). */
  live(p: number): boolean {
    return p !== this.self && this.u[this.uw(p, U_READY)] === 1 && (this.w[this.word(p, SP_FLAGS)]! & PEER_ERROR) === 0
  }

  /**
   * Whether peer `p` said goodbye: it is sent nothing more but the acknowledgements its own
   * datagrams call for — no data, no resend, no keepalive — so that its port, once its process has
   * gone and whoever may have taken the port, hears nothing of the pair.
   */
  gone(p: number): boolean {
    return (this.w[this.word(p, SP_FLAGS)]! & PEER_BYE) !== 0
  }

  /** Marks peer `p` lost for `why` (LOST_*): as `markLost` (shared.ts), with this thread's views. */
  lose(p: number, why: number): void {
    Atomics.compareExchange(this.u, this.uw(p, U_LOST), 0, why)
    Atomics.or(this.w, this.word(p, SP_FLAGS), PEER_ERROR)
  }

  /** When the timers are next due (ms; Infinity: nothing is timed). */
  dueAt(): number {
    return this.t[UT_DUE]!
  }

  /** Whether the timers are due by the time in the clock. */
  timersDue(): boolean {
    return this.clock[0]! >= this.t[UT_DUE]!
  }

  /** The next tick is due by `at` (ms) at the latest. */
  dueBy(at: number): void {
    if (at < this.t[UT_DUE]!) this.t[UT_DUE] = at
  }

  // ─────────────────────────────── out ───────────────────────────────

  /**
   * The payload bytes of a full datagram to peer `p`: a multiple of 8, so that full datagrams after
   * an aligned one stay aligned (for the plain checksum's fast path).
   */
  payloadMax(p: number): number {
    return (this.u[this.uw(p, U_PEER_MAX)]! - this.hl) & ~7
  }

  /**
   * Bytes queued and not yet sent once (what is sent and not yet acknowledged is not counted: the
   * timers resend it); a lost peer's are never sent, and not counted either (a leaving process
   * does not wait for them).
   */
  queued(): number {
    let n = 0
    for (let p = 0; p < this.peers; p++) {
      if (p !== this.self && (this.w[this.word(p, SP_FLAGS)]! & PEER_ERROR) === 0) n += this.w[this.word(p, SP_TX_END)]! - this.u[this.uw(p, U_SENT)]!
    }
    return n
  }

  /** Whether `writeOut(p)` would send a datagram: bytes not sent yet, and room in the peer's window (the caller sets the clock first). */
  sendable(p: number): boolean {
    if (!this.live(p) || this.gone(p) || this.u[this.uw(p, U_SENT)]! >= this.w[this.word(p, SP_TX_END)]!) return false
    return ((this.u[this.uw(p, U_SND_NXT)]! - this.u[this.uw(p, U_SND_UNA)]!) | 0) < this.u[this.uw(p, U_PEER_WIN)]!
  }

  /** Sends peer `p` what its window allows of the bytes not sent yet; returns the bytes in its send buffer (sent or not) that are not acknowledged. */
  writeOut(p: number): number {
    if (!this.live(p) || this.gone(p)) return 0
    const sent = this.u[this.uw(p, U_SENT)]!
    const end = this.w[this.word(p, SP_TX_END)]!
    if (sent < end) this.sendNew(p, sent, end)
    return this.w[this.word(p, SP_TX_END)]! - this.w[this.word(p, SP_TX_START)]!
  }

  /** Moves peer `p`'s send buffer to its start (FrameBuffers.compactTx), what was sent and where the buffer starts in the stream with it. */
  compactTx(p: number): number {
    const start = this.w[this.word(p, SP_TX_START)]!
    if (start > 0) {
      this.u[this.uw(p, U_SENT)]! -= start
      this.t[this.tw(p, UT_TXBASE)]! += start
    }
    return this.fb.compactTx(p)
  }

  /** Sends the bytes [sent, end) of peer `p`'s send buffer as new datagrams, as far as its window allows. */
  private sendNew(p: number, sent: number, end: number): void {
    const W = this.W
    const win = this.u[this.uw(p, U_PEER_WIN)]!
    const max = this.payloadMax(p)
    const una = this.u[this.uw(p, U_SND_UNA)]!
    let s = this.u[this.uw(p, U_SND_NXT)]!
    if (((s - una) | 0) >= win) return
    const now = this.clock[0]!
    const base = this.t[this.tw(p, UT_TXBASE)]!
    const f0 = p * W
    let any = false
    while (sent < end && ((s - una) | 0) < win) {
      const len = end - sent < max ? end - sent : max
      const r = this.emit(p, DG_DATA, s, this.fb.txAt[p]! + sent, len)
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
    if (any) this.dueBy(now + this.t[this.tw(p, UT_RTO)]!)
  }

  /**
   * Sends one datagram to peer `p` through the link: type, sequence number `seq`, the
   * acknowledgements owed to `p`, then `len` payload bytes of the memory from `at`. Returns the
   * link's answer (DatagramLink.transmit).
   */
  private emit(p: number, type: number, seq: number, at: number, len: number): number {
    const u = this.u
    const o = this.out
    // (while the next datagram in order waits for room in the receive buffer, the ones after it
    // are not acknowledged selectively: they came in order, and a sender told of them would take
    // the waiting one for lost and send it again; DG_HELD tells it that one arrived)
    const rmask = u[this.uw(p, U_RMASK)]!
    const held = rmask & 1
    o[HF_TYPE] = type
    o[HF_FLAGS] = held !== 0 ? DG_HELD : 0
    o[HF_SEQ] = seq
    o[HF_ACK] = u[this.uw(p, U_RCV_NXT)]!
    o[HF_SACK] = held !== 0 ? 0 : rmask >>> 1
    o[HF_WIN] = this.W
    const pn = this.t[this.tw(p, UT_PN_OUT)]! + 1
    this.t[this.tw(p, UT_PN_OUT)] = pn
    o[HF_PN] = pn
    u[this.uw(p, U_ACK_OWED)] = 0
    u[this.uw(p, U_ACK_NOW)] = 0
    this.t[this.tw(p, UT_SENT)] = this.clock[0]!
    this.ds[D_SENT]!++
    return this.link.transmit(p, at, len)
  }

  /** Sends peer `p` an acknowledgement of its own. */
  private ack(p: number): void {
    this.emit(p, DG_ACK, 0, 0, 0)
    this.ds[D_ACKS]!++
  }

  // ─────────────────────────────── in ───────────────────────────────

  /**
   * Takes a datagram that passed the path's checks: its header record `f` (HF_*: sender, type,
   * sequence number, acknowledgements, flags, packet number) and its payload, `len` bytes of the
   * memory at `at` (where the path read it: at the end of the sender's receive buffer, it is not
   * copied).
   */
  receive(f: Float64Array, at: number, len: number): void {
    const now = this.clock[0]!
    const src = f[HF_SRC]! | 0
    this.ds[D_RECEIVED]!++
    // (news of the peer only from a packet number above all heard: a replay, a duplicate or a late
    // copy keeps no lost peer alive, and its acknowledgements are older than those already taken;
    // its data, if new, is still taken in order)
    const pi = this.tw(src, UT_PN_IN)
    const jump = f[HF_PN]! - this.t[pi]!
    if (jump > 0 && jump < PN_JUMP) {
      this.t[pi]! += jump
      this.t[this.tw(src, UT_HEARD)] = now
      this.onAck(src, f[HF_ACK]! | 0, f[HF_SACK]! | 0, (f[HF_FLAGS]! & DG_HELD) !== 0)
    } else this.ds[D_STALE]!++
    if (f[HF_TYPE] === DG_DATA) this.onData(src, f[HF_SEQ]! | 0, at, len)
  }

  /**
   * The acknowledgements of a datagram from peer `p`: the next number it expects (`ack`), the
   * bitmap after it, and whether number `ack` arrived and waits there for room (`held`).
   */
  private onAck(p: number, ack: number, sack: number, held: boolean): void {
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
      const base = this.t[this.tw(p, UT_TXBASE)]!
      const ws = this.word(p, SP_TX_START)
      const we = this.word(p, SP_TX_END)
      this.w[ws] = endPos - base
      u[this.uw(p, U_SND_UNA)] = ack
      this.ds[D_FREED]!++
      if (this.w[ws] === this.w[we] && u[this.uw(p, U_SENT)] === this.w[we]) {
        // everything acknowledged: the buffer starts over
        this.t[this.tw(p, UT_TXBASE)] = base + this.w[we]!
        this.w[ws] = 0
        this.w[we] = 0
        u[this.uw(p, U_SENT)] = 0
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
    const gap = Math.max(this.t[this.tw(p, UT_SRTT)]!, 0.1)
    for (let i = 0; i + 3 <= high; i++) {
      const s = (ack + i) | 0
      const e = f0 + (s & (W - 1))
      if (this.fi[e * FI_WORDS + 1] === 1 || now - this.fl[e * FL_DOUBLES + 2]! < gap) continue
      if (this.resend(p, s, e) < 0) return
      this.ds[D_FAST_RETRANSMITS]!++
    }
  }

  /** A round trip of `r` ms measured to peer `p` (RFC 6298). */
  private measured(p: number, r: number): void {
    const t = this.t
    const srtt = t[this.tw(p, UT_SRTT)]!
    let var_ = t[this.tw(p, UT_RTTVAR)]!
    let s: number
    if (srtt === 0) {
      s = r
      var_ = r / 2
    } else {
      var_ = 0.75 * var_ + 0.25 * Math.abs(srtt - r)
      s = 0.875 * srtt + 0.125 * r
    }
    t[this.tw(p, UT_SRTT)] = s
    t[this.tw(p, UT_RTTVAR)] = var_
    const rto = s + 4 * var_
    t[this.tw(p, UT_RTO)] = rto < RTO_MIN_MS ? RTO_MIN_MS : rto > RTO_MAX_MS ? RTO_MAX_MS : rto
  }

  /** Sends datagram `s` to peer `p` again (`e`: its in-flight entry); `emit`'s result. */
  private resend(p: number, s: number, e: number): number {
    const now = this.clock[0]!
    const at = this.fl[e * FL_DOUBLES]! - this.t[this.tw(p, UT_TXBASE)]!
    const r = this.emit(p, DG_DATA, s, this.fb.txAt[p]! + at, this.fl[e * FL_DOUBLES + 1]!)
    if (r <= 0) return r
    this.fi[e * FI_WORDS]!++
    this.fl[e * FL_DOUBLES + 2] = now
    this.ds[D_RETRANSMITS]!++
    return r
  }

  /** A data datagram `seq` from peer `p`, its payload `len` bytes at `at`. */
  private onData(p: number, seq: number, at: number, len: number): void {
    const now = this.clock[0]!
    const u = this.u
    const d = (seq - u[this.uw(p, U_RCV_NXT)]!) | 0
    if (d < 0) {
      this.ds[D_DUPLICATES]!++
      u[this.uw(p, U_ACK_NOW)] = 1
      return
    }
    if (d >= this.W) {
      this.ds[D_OUTSIDE_WINDOW]!++
      u[this.uw(p, U_ACK_NOW)] = 1
      return
    }
    const bit = 1 << d
    const mask = u[this.uw(p, U_RMASK)]!
    // (a duplicate of one held: answered at once, it may be the sender's probe, `runTimers`)
    if ((mask & bit) !== 0) {
      this.ds[D_DUPLICATES]!++
      u[this.uw(p, U_ACK_NOW)] = 1
      return
    }
    if (d === 0 && this.append(p, at, len)) {
      u[this.uw(p, U_RCV_NXT)] = (seq + 1) | 0
      u[this.uw(p, U_RMASK)] = mask >>> 1
      if ((mask & 2) !== 0) this.drain(p)
    } else {
      const e = p * this.W + (seq & (this.W - 1))
      this.mu8.copyWithin(this.slotsAt + e * this.slotBytes, at, at + len)
      this.sl[e] = len
      u[this.uw(p, U_RMASK)] = mask | bit
      // (a gap, acknowledged at once; not when the one expected is held for room: then this one
      // most likely came in order behind it, and an acknowledgement would carry no news)
      if (d > 0 && (mask & 1) === 0) {
        this.ds[D_OUT_OF_ORDER]!++
        u[this.uw(p, U_ACK_NOW)] = 1
      }
    }
    if (u[this.uw(p, U_ACK_OWED)]!++ === 0) this.t[this.tw(p, UT_ACK_OWED)] = now
  }

  /** Appends `len` bytes of the memory at `at` to peer `p`'s receive buffer (read there already: the path's `rxTail`); false when it has no room. */
  private append(p: number, at: number, len: number): boolean {
    const re = this.word(p, SP_RX_END)
    const end = this.w[re]!
    if (at === this.fb.rxAt[p]! + end) {
      this.w[re] = end + len
      return true
    }
    const to = this.fb.rxRoom(p, len)
    if (to < 0) return false
    this.mu8.copyWithin(this.fb.rxAt[p]! + to, at, at + len)
    this.w[re] = to + len
    return true
  }

  /** Passes peer `p`'s datagrams that waited in the window on to its receive buffer, in order, as far as it has room (the frames parsed there made room). */
  deliver(p: number): void {
    if ((this.u[this.uw(p, U_RMASK)]! & 1) !== 0) this.drain(p)
  }

  private drain(p: number): void {
    const u = this.u
    let mask = u[this.uw(p, U_RMASK)]!
    let nxt = u[this.uw(p, U_RCV_NXT)]!
    let moved = false
    while ((mask & 1) !== 0) {
      const e = p * this.W + (nxt & (this.W - 1))
      const at = this.slotsAt + e * this.slotBytes
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
  acksOut(): void {
    for (let p = 0; p < this.peers; p++) {
      if (p === this.self) continue
      const u = this.u
      if (u[this.uw(p, U_ACK_NOW)] === 0 && u[this.uw(p, U_ACK_OWED)]! < this.ackEvery) {
        if (u[this.uw(p, U_ACK_OWED)] !== 0) this.dueBy(this.t[this.tw(p, UT_ACK_OWED)]! + ACK_DELAY_MS)
        continue
      }
      if (!this.live(p)) continue
      this.ack(p)
    }
  }

  // ─────────────────────────────── time ───────────────────────────────

  /**
   * The timers, at the time in the clock (by whoever polls, and by the agent at `dueAt`):
   * datagrams not acknowledged in time are sent again, acknowledgements that waited long enough go
   * alone, a peer not sent anything for KEEPALIVE_MS is sent an acknowledgement, a peer silent for
   * the peer timeout is lost, and the link releases what it held that is due. Sets when they are
   * next due.
   */
  runTimers(): void {
    const now = this.clock[0]!
    let next = Infinity
    const W = this.W
    for (let p = 0; p < this.peers; p++) {
      if (!this.live(p)) continue
      const heard = this.t[this.tw(p, UT_HEARD)]!
      if (now - heard > this.peerTimeout) {
        this.lose(p, LOST_SILENT)
        continue
      }
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
      const rto0 = this.t[this.tw(p, UT_RTO)]!
      const rto = this.u[this.uw(p, U_HELD)] !== 0 && rto0 < HELD_PROBE_MS ? HELD_PROBE_MS : rto0
      for (let s = una; s !== nxt && !gone; s = (s + 1) | 0) {
        const e = p * W + (s & (W - 1))
        if (this.fi[e * FI_WORDS + 1] === 1) continue
        let at = this.fl[e * FL_DOUBLES + 2]! + rto
        if (at <= now) {
          if (this.resend(p, s, e) < 0) break
          const backed = 2 * rto < RTO_MAX_MS ? 2 * rto : RTO_MAX_MS
          this.t[this.tw(p, UT_RTO)] = backed
          at = now + backed
        }
        if (at < next) next = at
        break
      }
      if (!this.live(p)) continue
      if (this.u[this.uw(p, U_ACK_OWED)] !== 0) {
        const at = this.t[this.tw(p, UT_ACK_OWED)]! + ACK_DELAY_MS
        if (at <= now) this.ack(p)
        else if (at < next) next = at
      }
      if (gone) continue
      const ka = this.t[this.tw(p, UT_SENT)]! + KEEPALIVE_MS
      if (ka <= now) {
        this.emit(p, DG_ACK, 0, 0, 0)
        this.ds[D_KEEPALIVES]!++
        if (now + KEEPALIVE_MS < next) next = now + KEEPALIVE_MS
      } else if (ka < next) next = ka
    }
    const r = this.link.release()
    if (r < next) next = r
    this.t[UT_DUE] = next
  }

  /**
   * Before a normal close, at the time in the clock: sends the acknowledgements owed now; true once
   * everything this process sent was acknowledged and every peer said goodbye (or is lost), or
   * LINGER_MS after everything was acknowledged.
   */
  settle(): boolean {
    const now = this.clock[0]!
    let acked = true
    let byes = true
    for (let p = 0; p < this.peers; p++) {
      if (!this.live(p)) continue
      if (this.u[this.uw(p, U_ACK_OWED)] !== 0 || this.u[this.uw(p, U_ACK_NOW)] !== 0) this.ack(p)
      if (this.writeOut(p) > 0) acked = false
      if ((this.w[this.word(p, SP_FLAGS)]! & PEER_BYE) === 0) byes = false
    }
    if (now >= this.t[UT_DUE]!) this.runTimers()
    if (!acked) {
      this.settledAt = -1
      return false
    }
    // (a peer still at work may resend what our acknowledgement of it missed: answered a while longer)
    if (byes) return true
    if (this.settledAt < 0) this.settledAt = now
    return now - this.settledAt >= LINGER_MS
  }
}
