/**
 * The target side of Put, Get and Rmw (engine/), performed on the target task's segment by
 * whichever thread runs the engine, without the target task: a Put's data lands and its counters
 * move, a Get is answered (its answer set aside when there is no room toward its origin, and
 * gone on with later), an Rmw is performed and its old value sent back. Each performs a packet
 * ingress.ts took off a frame, or declines it (false) for the frame to be offered again later.
 */
import { RmwOp } from '../base/constants.js'
import { copySeg } from '../base/copy.js'
import { rmw32, rmw64 } from '../base/rmw.js'
import {
  ENG_PARKED,
  GQ_COUNT,
  GQ_HEADER,
  GQ_SLOTS,
  GQ_WORDS,
  GR_ADDR,
  GR_FLAGS,
  GR_LEN,
  GR_MSG_ID,
  GR_ORG_ADDR,
  GR_ORG_CNTR,
  GR_PEER,
  GR_POS,
  GR_SRC,
  GR_TASK,
  GR_TGT_CNTR,
} from '../layout/engine.js'
import { NS_DIRTY, netLandedFrom } from '../layout/job-spec.js'
import {
  BODY_PACKET,
  F_ACK,
  F_LAST,
  F_NOTIFY,
  N_OP,
  N_ORG_ADDR,
  N_ORG_CNTR,
  N_TGT_ADDR,
  N_TGT_CNTR,
  N_VAL0,
  N_VAL1,
  PACKET_HEADER_BYTES,
  P_FLAGS,
  P_MSG_ID,
  P_MSG_LEN,
  P_OFFSET,
  T_NET_GETR,
  T_NET_RMWR,
} from '../transport/packet.js'
import { ack, begin, sendScratch } from './egress.js'
import { ANSWER_BYTES, ST_PACKETS_IN, type EngineState, type LocalTask } from './state.js'
import { bumpCounter, drop } from './tasks.js'

/** Whether [addr, addr + len) lies in a segment (addr 0 only for len 0). */
export function inSeg(s: EngineState, addr: number, len: number): boolean {
  return addr + len <= s.segSize && (addr !== 0 || len === 0)
}

/** A Put's packet for task `t` (the payload at `u8`, after the header at `p`). */
export function onPut(s: EngineState, t: LocalTask, dv: DataView, p: number, src: number, plen: number, u8: Uint8Array, peer: number): boolean {
  const addr = dv.getUint32(p + N_TGT_ADDR, true)
  const at = addr + dv.getUint32(p + P_OFFSET, true)
  const total = dv.getUint32(p + P_MSG_LEN, true)
  if (!inSeg(s, addr, total) || at + plen > addr + total) return drop(s, t)
  const flags = dv.getUint16(p + P_FLAGS, true)
  const last = (flags & F_LAST) !== 0
  const cmpl = last && (flags & F_ACK) !== 0 ? dv.getUint32(p + N_ORG_CNTR, true) : 0
  // (its acknowledgement must not be lost: a Put that will have one waits for the room first)
  if (cmpl !== 0 && !s.path.room(peer, ANSWER_BYTES, true)) return false
  s.st[ST_PACKETS_IN]!++
  if (plen > 0) copySeg(t.u8, at, u8, p + PACKET_HEADER_BYTES, plen)
  if (!last) return true
  const woke = bumpCounter(s, t, dv.getUint32(p + N_TGT_CNTR, true))
  // acknowledged for the origin's fence (F_ACK), with its completion counter
  if ((flags & F_ACK) === 0) return true
  if (cmpl !== 0) ack(s, t.id, src, 1, cmpl)
  else {
    // (no counter to move at the origin: counted with the next batch of acknowledgements, which
    // rides on the next frame toward it; in the agent's round, sent at its end unless the Put
    // woke its target, whose answer is likely to carry it — see `acksDue`)
    Atomics.add(t.state, netLandedFrom(s.n, src), 1)
    Atomics.store(t.state, NS_DIRTY, 1)
    if (s.owing && !woke) s.acksDue = true
  }
  return true
}

/**
 * Answers a Get with T_NET_GETR packets, as many as the send queue toward the origin has room
 * for: an answer is never dropped. A Get answered in part keeps its place at the front of the
 * stream, with how far it got in its own P_OFFSET, and goes on at the next round.
 */
export function onGet(s: EngineState, t: LocalTask, dv: DataView, p: number, src: number, peer: number): boolean {
  const addr = dv.getUint32(p + N_TGT_ADDR, true)
  const len = dv.getUint32(p + P_MSG_LEN, true)
  const id = dv.getUint32(p + P_MSG_ID, true)
  const flags = dv.getUint16(p + P_FLAGS, true) & F_NOTIFY
  const orgAddr = dv.getUint32(p + N_ORG_ADDR, true)
  const orgCntr = dv.getUint32(p + N_ORG_CNTR, true)
  const tgtCntr = dv.getUint32(p + N_TGT_CNTR, true)
  const pos = dv.getUint32(p + P_OFFSET, true)
  if (!inSeg(s, addr, len) || pos > len) return drop(s, t)
  // (behind answers to the same origin set aside before: after them)
  const at = s.w[ENG_PARKED] !== 0 && parkedFor(s, peer) ? pos : answer(s, t, peer, src, addr, len, id, flags, orgAddr, orgCntr, pos)
  if (at === len) {
    getAnswered(s, t, tgtCntr)
    return true
  }
  // (no room toward the origin for the rest: set aside, so that the frames behind it — the
  // origin's own answers among them — are not held up; a full list keeps it in the stream)
  if (park(s, t.at, peer, src, addr, len, id, flags, orgAddr, orgCntr, tgtCntr, at)) return true
  dv.setUint32(p + P_OFFSET, at, true)
  return false
}

/**
 * Sends T_NET_GETR packets of task `t`'s Get answer from `pos` on, as far as the send queue toward
 * the origin has room (an answer is never dropped); returns how far it got.
 */
function answer(
  s: EngineState,
  t: LocalTask,
  peer: number,
  src: number,
  addr: number,
  len: number,
  id: number,
  flags: number,
  orgAddr: number,
  orgCntr: number,
  pos: number,
): number {
  const room = s.bodyRoom - BODY_PACKET - PACKET_HEADER_BYTES
  do {
    const n = len - pos < room ? len - pos : room
    if (!s.path.room(peer, ANSWER_BYTES + n, true)) return pos
    const last = pos + n >= len
    const o = begin(s, T_NET_GETR, last ? flags | F_LAST : 0, t.id, n, id, pos, len)
    s.sdv.setUint32(o + N_ORG_ADDR, orgAddr, true)
    s.sdv.setUint32(o + N_ORG_CNTR, orgCntr, true)
    if (n > 0) copySeg(s.scratch, o + PACKET_HEADER_BYTES, t.u8, addr + pos, n)
    sendScratch(s, src, o, n)
    pos += n
  } while (pos < len)
  return pos
}

function getAnswered(s: EngineState, t: LocalTask, tgtCntr: number): void {
  s.st[ST_PACKETS_IN]!++
  // (LAPI: the target counter of a Get moves once the data has been taken from the segment)
  bumpCounter(s, t, tgtCntr)
}

/**
 * Sets a Get answer aside (the `gets` list of NetShared: GQ_SLOTS records of GQ_WORDS words,
 * oldest first): false when the list is full. LAPI does not order a Get with the operations
 * after it unless a fence says so; the answers to one origin keep their order among themselves.
 */
function park(
  s: EngineState,
  at: number,
  peer: number,
  src: number,
  addr: number,
  len: number,
  id: number,
  flags: number,
  orgAddr: number,
  orgCntr: number,
  tgtCntr: number,
  pos: number,
): boolean {
  const g = s.gq
  const n = g[GQ_COUNT]!
  if (n === GQ_SLOTS) return false
  const r = GQ_HEADER + GQ_WORDS * n
  g[r + GR_TASK] = at
  g[r + GR_PEER] = peer
  g[r + GR_SRC] = src
  g[r + GR_ADDR] = addr
  g[r + GR_LEN] = len
  g[r + GR_MSG_ID] = id
  g[r + GR_FLAGS] = flags
  g[r + GR_ORG_ADDR] = orgAddr
  g[r + GR_ORG_CNTR] = orgCntr
  g[r + GR_TGT_CNTR] = tgtCntr
  g[r + GR_POS] = pos
  g[GQ_COUNT] = n + 1
  Atomics.store(s.w, ENG_PARKED, n + 1)
  return true
}

/** Whether a Get answer to process `peer` is set aside. */
function parkedFor(s: EngineState, peer: number): boolean {
  const g = s.gq
  for (let k = 0, n = g[GQ_COUNT]!; k < n; k++) if (g[GQ_HEADER + GQ_WORDS * k + GR_PEER] === peer) return true
  return false
}

/** Goes on with the Get answers set aside, oldest first (one origin's in order), as far as there is room. */
export function answerParked(s: EngineState): void {
  const g = s.gq
  let n = g[GQ_COUNT]!
  if (n === 0) return
  let blocked = 0
  for (let k = 0; k < n; ) {
    const r = GQ_HEADER + GQ_WORDS * k
    const peer = g[r + GR_PEER]!
    if ((blocked & (1 << (peer & 31))) !== 0) {
      k++
      continue
    }
    const t = s.tasks[g[r + GR_TASK]!]!
    const len = g[r + GR_LEN]!
    const pos = answer(
      s,
      t,
      peer,
      g[r + GR_SRC]!,
      g[r + GR_ADDR]!,
      len,
      g[r + GR_MSG_ID]!,
      g[r + GR_FLAGS]!,
      g[r + GR_ORG_ADDR]!,
      g[r + GR_ORG_CNTR]!,
      g[r + GR_POS]!,
    )
    if (pos < len) {
      g[r + GR_POS] = pos
      blocked |= 1 << (peer & 31)
      k++
      continue
    }
    getAnswered(s, t, g[r + GR_TGT_CNTR]!)
    g.copyWithin(r, r + GQ_WORDS, GQ_HEADER + GQ_WORDS * n)
    n--
  }
  g[GQ_COUNT] = n
  Atomics.store(s.w, ENG_PARKED, n)
}

/** An Rmw on task `t`'s segment: performed once its answer, the old value, has room toward the origin. */
export function onRmw(s: EngineState, t: LocalTask, dv: DataView, p: number, src: number, peer: number): boolean {
  const addr = dv.getUint32(p + N_TGT_ADDR, true)
  const opw = dv.getUint32(p + N_OP, true)
  const op = opw & 0xff
  const width = opw >>> 8
  const id = dv.getUint32(p + P_MSG_ID, true)
  if ((width !== 32 && width !== 64) || op > RmwOp.COMPARE_AND_SWAP || (addr & (width === 32 ? 3 : 7)) !== 0 || !inSeg(s, addr, width >> 3)) {
    return drop(s, t)
  }
  // (performed only once its answer has room: it is not performed twice, nor answered never)
  if (!s.path.room(peer, ANSWER_BYTES, true)) return false
  s.st[ST_PACKETS_IN]!++
  const o = begin(s, T_NET_RMWR, 0, t.id, 0, id, 0, 0)
  if (width === 32) {
    // (int32 operands travel sign-extended to int64: their low words are the values)
    const old = rmw32(t.i32, addr >>> 2, op, dv.getInt32(p + N_VAL0, true), dv.getInt32(p + N_VAL1, true))
    s.sdv.setInt32(o + N_VAL0, old, true)
    s.sdv.setInt32(o + N_VAL0 + 4, old >> 31, true)
  } else {
    s.sdv.setBigInt64(o + N_VAL0, rmw64(t.i64, addr >>> 3, op, dv.getBigInt64(p + N_VAL0, true), dv.getBigInt64(p + N_VAL1, true)), true)
  }
  sendScratch(s, src, o, 0)
  return true
}
