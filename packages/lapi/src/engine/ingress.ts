/**
 * The network engine's way in (engine/): each frame the frame path hands over is checked and
 * dispatched — an active message into its target task's network ring, a Put, Get or Rmw to the
 * target side (target.ts), the answers to this process's own Gets and Rmws and the
 * acknowledgements of its messages to their origin task, a control message to the agent (its
 * handler in the agent; in a task, the control queue). Malformed or misaddressed packets are
 * dropped and counted (for their target task when there is one), never performed.
 */
import { WORD_COPY, copySeg, copySmall } from '../base/copy.js'
import { ringAgent } from '../layout/control.js'
import { CQ_END, CQ_HEADER, CQ_RECORD, CQ_START, CQR_LEN, CQR_PEER, ENG_BLOCKED, ENG_CTRL } from '../layout/engine.js'
import { NS_LANDED_AT } from '../layout/job-spec.js'
import { FRAME_CONTROL } from '../transport/contract.js'
import {
  BODY_PACKET,
  F_LAST,
  F_NOTIFY,
  N_COUNT,
  N_COUNTER,
  N_ORG_ADDR,
  N_ORG_CNTR,
  N_VAL0,
  PACKET_HEADER_BYTES,
  PACKET_VERSION,
  P_FLAGS,
  P_LEN,
  P_MSG_ID,
  P_MSG_LEN,
  P_OFFSET,
  P_SRC,
  P_TYPE,
  P_VERSION,
  T_AM_BARE,
  T_AM_SHORT,
  T_NET_ACK,
  T_NET_BUMP,
  T_NET_DONE,
  T_NET_GET,
  T_NET_GETR,
  T_NET_PUT,
  T_NET_RMW,
  T_NET_RMWR,
  packetBodyBytes,
  writePacketHeader,
} from '../transport/packet.js'
import { ST_PACKETS_IN, type EngineState, type LocalTask } from './state.js'
import { inSeg, onGet, onPut, onRmw } from './target.js'
import { BELL_ACK, bell, bumpCounter, drop } from './tasks.js'

const SHORT_WORD0 = PACKET_VERSION | (T_AM_SHORT << 8)
const BARE_WORD0 = PACKET_VERSION | (T_AM_BARE << 8)

/** A frame from process `peer`, handed over by the frame path. */
export function onFrame(s: EngineState, peer: number, kind: number, dst: number, u8: Uint8Array, off: number, len: number): boolean {
  if (kind === FRAME_CONTROL) {
    const h = s.onControl
    if (h === null) {
      // (a task queues control messages for the agent, and rings it once; a full queue keeps
      // the frame where it is, for the agent to take)
      const ok = toAgent(s, peer, u8, off, len)
      if (Atomics.compareExchange(s.w, ENG_CTRL, 0, 1) === 0) ringAgent(s.ctl)
      return ok
    }
    h(peer, u8.subarray(off, off + len))
    return true
  }
  const t = s.tasks[dst - s.lo]
  if (t === undefined) {
    s.path.dropped()
    return true
  }
  if (len < 8 || len > s.frameRoom) return drop(s, t)
  const dv = dvOf(s, u8)
  const w0 = dv.getUint32(off, true)
  if (w0 === SHORT_WORD0 || w0 === BARE_WORD0) {
    if (len > s.bodyRoom || !fromPeer(s, peer, dv.getUint32(off + 4, true)) || packetBodyBytes(dv, off) !== len) return drop(s, t)
    return deliver(s, t, u8, off, len)
  }
  if (w0 !== 0 || len < BODY_PACKET + PACKET_HEADER_BYTES) return drop(s, t)
  // (offsets below are in the receive buffer: p is where the packet's common header starts)
  const p = off + BODY_PACKET
  const src = dv.getUint32(p + P_SRC, true)
  const plen = dv.getUint32(p + P_LEN, true)
  const type = dv.getUint8(p + P_TYPE)
  if (dv.getUint8(p + P_VERSION) !== PACKET_VERSION || !fromPeer(s, peer, src) || BODY_PACKET + PACKET_HEADER_BYTES + plen !== len) return drop(s, t)
  // (only a Put, whose payload goes to the segment, may be larger than a ring slot)
  if (len > s.bodyRoom && type !== T_NET_PUT) return drop(s, t)
  // (those that answer count themselves once performed: they may wait for room first)
  if (type !== T_NET_PUT && type !== T_NET_GET && type !== T_NET_RMW) s.st[ST_PACKETS_IN]!++
  switch (type) {
    case T_NET_PUT:
      return onPut(s, t, dv, p, src, plen, u8, peer)
    case T_NET_GET:
      return onGet(s, t, dv, p, src, peer)
    case T_NET_GETR:
      return onGetReply(s, t, dv, p, src, plen, u8)
    case T_NET_RMW:
      return onRmw(s, t, dv, p, src, peer)
    case T_NET_RMWR:
      return done(s, t, dv.getUint32(p + P_MSG_ID, true), dv, p + N_VAL0)
    case T_NET_BUMP:
      bumpCounter(s, t, dv.getUint32(p + N_COUNTER, true))
      return true
    case T_NET_ACK: {
      Atomics.add(t.state, NS_LANDED_AT + src, dv.getUint32(p + N_COUNT, true))
      const c = dv.getUint32(p + N_ORG_CNTR, true)
      if (c !== 0) bumpCounter(s, t, c)
      else bell(s, t, BELL_ACK)
      return true
    }
    case T_NET_DONE:
      return drop(s, t)
    default:
      return deliver(s, t, u8, off, len)
  }
}

/** Whether `src` is a task of process `peer` (a peer speaks only for its own tasks). */
function fromPeer(s: EngineState, peer: number, src: number): boolean {
  return src < s.n && s.procOf[src] === peer
}

/** Puts a packet into `t`'s network ring; false when the ring is full (the frame is offered again later). */
function deliver(s: EngineState, t: LocalTask, u8: Uint8Array, off: number, len: number): boolean {
  const w = t.netIn
  const at = w.reserve()
  if (at < 0) {
    Atomics.store(s.w, ENG_BLOCKED, 1)
    return false
  }
  // (small packets word by word through the DataViews of the whole ring and receive buffer: a
  // view of the packet itself would be made, and allocated, per packet)
  if (len <= WORD_COPY) copySmall(w.dv, w.u8, at, dvOf(s, u8), u8, off, len)
  else copySeg(w.u8, at, u8, off, len)
  w.publish()
  bell(s, t)
  return true
}

/** The answer to a Get of task `t` (the payload at `u8`, after the header at `p`). */
function onGetReply(s: EngineState, t: LocalTask, dv: DataView, p: number, src: number, plen: number, u8: Uint8Array): boolean {
  const orgAddr = dv.getUint32(p + N_ORG_ADDR, true)
  const at = orgAddr + dv.getUint32(p + P_OFFSET, true)
  const total = dv.getUint32(p + P_MSG_LEN, true)
  if (!inSeg(s, orgAddr, total) || at + plen > orgAddr + total) {
    drop(s, t)
    return true
  }
  if (plen > 0) copySeg(t.u8, at, u8, p + PACKET_HEADER_BYTES, plen)
  const flags = dv.getUint16(p + P_FLAGS, true)
  if ((flags & F_LAST) === 0) return true
  if ((flags & F_NOTIFY) !== 0) return done(s, t, dv.getUint32(p + P_MSG_ID, true), null, 0)
  Atomics.add(t.state, NS_LANDED_AT + src, 1)
  const c = dv.getUint32(p + N_ORG_CNTR, true)
  if (c !== 0) bumpCounter(s, t, c)
  else bell(s, t)
  return true
}

/**
 * Hands task `t` the completion of its operation `id` (T_NET_DONE in its network ring), with the 8
 * bytes of an Rmw's old value from `vdv` at `vat` (none: null); false when the ring is full.
 */
function done(s: EngineState, t: LocalTask, id: number, vdv: DataView | null, vat: number): boolean {
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
  bell(s, t)
  return true
}

/**
 * A DataView of a receive buffer (one per buffer, kept: frame bodies are read at their offsets in
 * it), by the buffer's view (`u8.buffer` is a call into the runtime); the last one at hand.
 */
function dvOf(s: EngineState, u8: Uint8Array): DataView {
  if (u8 === s.lastU8) return s.lastDv!
  let v = s.views.get(u8)
  if (v === undefined) {
    v = new DataView(u8.buffer, u8.byteOffset, u8.byteLength)
    s.views.set(u8, v)
  }
  s.lastU8 = u8
  s.lastDv = v
  return v
}

// ───────────────────────────── the control queue ─────────────────────────────

/** Queues a control message for the agent; false when the queue has no room. */
function toAgent(s: EngineState, peer: number, u8: Uint8Array, off: number, len: number): boolean {
  const q = s.cq
  const w = s.cqw
  let start = w[CQ_START]!
  let end = w[CQ_END]!
  const need = CQ_RECORD + len
  if (end + need > q.length) {
    if (start > CQ_HEADER) {
      q.copyWithin(CQ_HEADER, start, end)
      end -= start - CQ_HEADER
      start = CQ_HEADER
      w[CQ_START] = start
      w[CQ_END] = end
    }
    if (end + need > q.length) return false
  }
  s.cqv.setUint32(end + CQR_PEER, peer, true)
  s.cqv.setUint32(end + CQR_LEN, len, true)
  copySeg(q, end + CQ_RECORD, u8, off, len)
  w[CQ_END] = end + need
  return true
}

/** Whether control messages tasks queued wait for the agent (under the lock). */
export function controlQueued(s: EngineState): boolean {
  return s.cqw[CQ_END] !== s.cqw[CQ_START]
}

/** The agent takes the control messages tasks queued (under the lock), oldest first. */
export function takeControl(s: EngineState, f: (peer: number, body: Uint8Array) => void): void {
  const q = s.cq
  const w = s.cqw
  let at = w[CQ_START]!
  const end = w[CQ_END]!
  while (at < end) {
    const peer = s.cqv.getUint32(at + CQR_PEER, true)
    const len = s.cqv.getUint32(at + CQR_LEN, true)
    f(peer, q.slice(at + CQ_RECORD, at + CQ_RECORD + len))
    at += CQ_RECORD + len
  }
  w[CQ_START] = CQ_HEADER
  w[CQ_END] = CQ_HEADER
}
