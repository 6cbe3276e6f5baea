/**
 * The network engine's way out (engine/): it takes the packets this process's tasks put into their
 * rings toward the network, frames them for the frame path (transport/contract.ts) and writes
 * them, coalescing a burst of sends into few writes (docs/transports.md, "Coalescing"); sends the
 * engine's own packets (acknowledgements, answers) from its scratch packet; and writes a large
 * Put's chunks straight from their source (`putDirect`).
 */
import { performance } from 'node:perf_hooks'
import { NS_DIRTY, netAckedFrom, netLandedFrom } from '../layout/job-spec.js'
import { OWNER_TASKS, ENG_OWNER, ENG_TXPEND } from '../layout/engine.js'
import { BACKPRESSURE, FRAME_HEADER_BYTES, FRAME_PACKET } from '../transport/contract.js'
import {
  BODY_PACKET,
  NET_PUT_DIRECT_MAX,
  N_COUNT,
  N_ORG_CNTR,
  N_TGT_ADDR,
  N_TGT_CNTR,
  PACKET_HEADER_BYTES,
  T_NET_ACK,
  T_NET_PUT,
  packetBodyBytes,
  writePacketHeader,
} from '../transport/packet.js'
import { clearTxpend, tryLock, unlock } from './lock.js'
import { ANSWER_BYTES, ST_ACKS, ST_PACKETS_OUT, TM_CLOCK, TM_WRITE, type EngineState, type LocalTask } from './state.js'
import { bell } from './tasks.js'

/** Engine rounds acknowledgements wait for another frame to ride on before they go by themselves. */
const ACK_ROUNDS = 4
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
export const READ_GAP_MS = 0.05

/** Lets the lock go after sending what others left while it was held (TXPEND), as often as that happens. */
export function release(s: EngineState): void {
  while (unlock(s)) {
    Atomics.store(s.w, ENG_TXPEND, 0)
    sendOut(s)
    s.path.flush()
  }
}

/** After a packet went into a ring toward the network: send it now if nobody else is at it. */
export function kick(s: EngineState): void {
  if (s.holds !== 0) {
    s.kickOwed = true
    return
  }
  // (while the agent reads, nobody may poll soon: what is sent goes at once)
  const now = s.w[ENG_OWNER] !== OWNER_TASKS
  if (!now && holdInRing(s)) return
  send(s, now)
}

/** Ends a `holdSends`: the last one sends what the held kicks left, at once. */
export function releaseSends(s: EngineState): void {
  if (--s.holds !== 0 || !s.kickOwed) return
  s.kickOwed = false
  send(s, true)
}

/**
 * Whether a send leaves its packet in the ring toward the network for now: where `flushOut`
 * would only hold it back in the send queue (not an answer, within COALESCE_MS of this thread's
 * last write), the framing waits too, for whatever writes next (a send after the window, a
 * wait or a poll, a sleep, the agent's watch: each frames the rings first). A burst then takes
 * the lock and frames once per write, not once per packet. At most RING_HOLD_MAX packets wait
 * so (of the ring's 128 slots or more): a bound on what a burst of large packets leaves unframed.
 */
function holdInRing(s: EngineState): boolean {
  if (s.framesIn !== s.framesAtWrite || s.ringHeld >= RING_HOLD_MAX) return false
  const t = performance.now()
  s.times[TM_CLOCK] = t
  if (t - s.times[TM_WRITE]! >= COALESCE_MS) return false
  s.ringHeld++
  return true
}

/**
 * Frames what waits in the rings toward the network and writes it (`now`: whatever this thread
 * held back too, see `flushOut`); when another thread holds the lock it does that instead (TXPEND).
 */
export function send(s: EngineState, now: boolean): void {
  // (TXPEND is set only when the lock is taken, and the lock tried again after it: a holder that
  // let go before it looked at TXPEND is not there any more)
  if (!tryLock(s)) {
    Atomics.store(s.w, ENG_TXPEND, 1)
    if (!tryLock(s)) return
  }
  clearTxpend(s)
  // (acknowledgements ride on packets; a send with none writes nothing for them)
  if (sendOut(s) > 0) acks(s, true)
  flushOut(s, now)
  release(s)
}

/**
 * Writes what is queued: at once when `now`, when this thread took frames in since its last
 * write (an answer: a ping-pong's sends never wait), or once that write is COALESCE_MS old or
 * COALESCE_BYTES wait. A send that follows another closely waits for the ones after it (a burst
 * goes in few writes, not one system call per message); a wait, an explicit poll, a sleep, the
 * agent, or the next send after COALESCE_MS writes it (docs/transports.md, "Coalescing").
 */
export function flushOut(s: EngineState, now: boolean): void {
  const q = s.path.queued()
  if (q === 0) return
  if (!now && s.framesIn === s.framesAtWrite && q < COALESCE_BYTES) {
    const t = performance.now()
    s.times[TM_CLOCK] = t
    // (held back: if this thread leaves LAPI now, the agent's watch writes it at its next look
    // that finds no poll. Ringing the agent instead cost the sending thread its CPU for the
    // agent's wake, 50-150 us on 2 vCPUs, about once a millisecond in a burst)
    if (t - s.times[TM_WRITE]! < COALESCE_MS) return
  }
  s.path.flush()
  // (the window counts from the end of the write: a system call as long as it must not close it)
  s.times[TM_WRITE] = performance.now()
  s.framesAtWrite = s.framesIn
}

/** The clock as the last send's coalescing test read it (once), else now (see EngineState.times). */
export function sendClock(s: EngineState): number {
  const c = s.times[TM_CLOCK]!
  if (c < 0) return performance.now()
  s.times[TM_CLOCK] = -1
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
export function putDirect(
  s: EngineState,
  src: number,
  tgt: number,
  flags: number,
  tgtAddr: number,
  offset: number,
  msgLen: number,
  tgtCntr: number,
  cmplCntr: number,
  data: Uint8Array,
  off: number,
  len: number,
): boolean {
  if (!tryLock(s)) return false
  Atomics.store(s.w, ENG_TXPEND, 0)
  sendOut(s)
  let ok = false
  if (!ringsPending(s)) {
    s.path.flush()
    const o = begin(s, T_NET_PUT, flags, src, len, 0, offset, msgLen)
    s.sdv.setUint32(o + N_TGT_ADDR, tgtAddr, true)
    s.sdv.setUint32(o + N_TGT_CNTR, tgtCntr, true)
    s.sdv.setUint32(o + N_ORG_CNTR, cmplCntr, true)
    ok = s.path.sendDirect(s.procOf[tgt]!, FRAME_PACKET, tgt, s.scratch, o + PACKET_HEADER_BYTES, data, off, len)
    if (ok) {
      s.st[ST_PACKETS_OUT]!++
      acks(s, true)
      s.path.flush()
    }
  }
  release(s)
  return ok
}

/** The payload bytes of a direct chunk toward task `tgt` (`putDirect`): what fills the path's units best, up to NET_PUT_DIRECT_MAX. */
export function putChunk(s: EngineState, tgt: number): number {
  return s.path.directChunk(s.procOf[tgt]!, FRAME_HEADER_BYTES + BODY_PACKET + PACKET_HEADER_BYTES, NET_PUT_DIRECT_MAX)
}

/**
 * Whether a direct chunk of `len` payload bytes toward task `tgt` could go now (`putDirect`'s
 * wait): nothing of this process waits to be written, and the send queue toward it has room
 * (a datagram path's queue holds what is not acknowledged yet). A plain look, without the lock.
 */
export function putDirectReady(s: EngineState, tgt: number, len: number): boolean {
  return !pendingOut(s) && s.path.room(s.procOf[tgt]!, ANSWER_BYTES + len, false)
}

/** Whether packets wait in a ring toward the network (under the lock). */
export function ringsPending(s: EngineState): boolean {
  for (const t of s.tasks) if (t.out.available() > 0) return true
  return false
}

/** Whether anything waits for the network: packets in a ring toward it, or bytes not written. */
export function pendingOut(s: EngineState): boolean {
  for (const t of s.tasks) if (t.out.nonEmpty) return true
  return s.path.queued() > 0
}

/** Frames every packet the tasks put toward the network (until a peer's queue is full); returns how many. */
export function sendOut(s: EngineState): number {
  s.ringHeld = 0
  let sent = 0
  for (const t of s.tasks) {
    const r = t.out
    const n = r.available()
    if (n === 0) continue
    const u8 = r.u8
    const dv = r.dv
    let k = 0
    for (; k < n; k++) {
      const off = r.front()
      const dst = dv.getInt32(off + s.tag, true)
      if (dst >>> 0 >= s.n || s.procOf[dst] === s.rank) {
        s.path.dropped()
      } else {
        const len = packetBodyBytes(dv, off)
        // (a packet whose header claims more than its slot goes as the whole slot: its receiver drops and counts it)
        if (s.path.queue(s.procOf[dst]!, FRAME_PACKET, dst, u8, off, len <= s.bodyRoom ? len : s.bodyRoom, dv) === BACKPRESSURE) break
        s.st[ST_PACKETS_OUT]!++
      }
      r.release(0, 1)
    }
    if (k > 0) {
      r.publishTail()
      // the sender may be waiting for room
      bell(s, t)
      sent += k
    }
  }
  return sent
}

// ───────────────────────────── acknowledgements ─────────────────────────────

/**
 * A task's round without frames to send: whether the acknowledgements owed have waited
 * ACK_ROUNDS rounds. The count starts when some are owed (a plain look at DIRTY: one read late
 * only makes them wait a round more), so that a Put performed in a wait's round leaves its
 * acknowledgement to the answer that follows, not to a write of its own.
 */
export function ackRound(s: EngineState): boolean {
  for (const t of s.tasks) if (t.state[NS_DIRTY] !== 0) return ++s.ackRounds >= ACK_ROUNDS
  s.ackRounds = 0
  return false
}

/** Whether acknowledgements wait to be sent (a task's landed messages not yet acknowledged). */
export function acksOwed(s: EngineState): boolean {
  for (const t of s.tasks) if (Atomics.load(t.state, NS_DIRTY) !== 0) return true
  return false
}

/** Sends the acknowledgements that wait, when `now`. */
export function acks(s: EngineState, now: boolean): void {
  if (!now) return
  s.ackRounds = 0
  s.acksDue = false
  for (const t of s.tasks) if (Atomics.load(t.state, NS_DIRTY) !== 0) sendAcks(s, t)
}

/** Acknowledges the messages of remote tasks that landed at `t` since the last acknowledgement. */
function sendAcks(s: EngineState, t: LocalTask): void {
  Atomics.store(t.state, NS_DIRTY, 0)
  for (let src = 0; src < s.n; src++) {
    if (s.procOf[src] === s.rank) continue
    const now = Atomics.load(t.state, netLandedFrom(s.n, src))
    const was = netAckedFrom(s.n, src)
    const d = (now - t.state[was]!) | 0
    if (d === 0) continue
    // (no room toward its process now: this one waits for a later round)
    if (!s.path.room(s.procOf[src]!, ANSWER_BYTES, false)) {
      Atomics.store(t.state, NS_DIRTY, 1)
      continue
    }
    t.state[was] = now
    ack(s, t.id, src, d, 0)
  }
}

/** Tells task `to` (remote) that `count` of its messages landed at `from`, and bumps its counter `cntr`. */
export function ack(s: EngineState, from: number, to: number, count: number, cntr: number): void {
  const off = begin(s, T_NET_ACK, 0, from, 0, 0, 0, 0)
  s.sdv.setUint32(off + N_COUNT, count, true)
  s.sdv.setUint32(off + N_ORG_CNTR, cntr, true)
  sendScratch(s, to, off, 0)
  s.st[ST_ACKS]!++
}

// ───────────────────────────── the scratch packet ─────────────────────────────

/** Writes a common header into the scratch packet; returns the packet's offset in it. */
export function begin(s: EngineState, type: number, flags: number, src: number, len: number, id: number, offset: number, msgLen: number): number {
  s.sdv.setUint32(0, 0, true)
  writePacketHeader(s.sdv, BODY_PACKET, type, flags, src, len, id, offset, msgLen)
  return BODY_PACKET
}

/** Sends the scratch packet (with `len` payload bytes) to remote task `to`: its caller made sure the queue has room (`FramePath.room`). */
export function sendScratch(s: EngineState, to: number, off: number, len: number): void {
  if (s.path.queue(s.procOf[to]!, FRAME_PACKET, to, s.scratch, 0, off + PACKET_HEADER_BYTES + len, s.sdv) === BACKPRESSURE) s.path.dropped()
}
