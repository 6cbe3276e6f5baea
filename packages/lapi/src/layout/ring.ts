/**
 * Inbox rings: single-producer / single-consumer rings of fixed-size packet slots in a
 * SharedArrayBuffer (docs/wire-format.md). Every task has one inbox: a ring per co-located sender
 * task plus one from its process's agent (what comes over the network). Only the sender writes
 * its ring's slots and HEAD; only the owner reads slots and writes TAIL.
 *
 *   inbox of task r (one SharedArrayBuffer), ring i at i × ringBytes (i = sender task; N = agent):
 *   ┌──────────── ring ────────────────────────────────────────────────────────────┐
 *   │ +0    HEAD u32   packets published (free-running; the producer's own record)  │
 *   │ +128  TAIL u32   packets consumed  (free-running; written by the consumer)   │
 *   │ +132  LANDED u32 messages of this sender complete here (consumer; the fence)  │
 *   │ +256  slot 0 │ slot 1 │ … │ slot S-1      each slotBytes (a multiple of 64)    │
 *   └──────────────────────────────────────────────────────────────────────────────┘
 *   slot: +0 STAMP u32 (packet number + 1) │ +4 body: what reserve()/front() point at
 *   empty: HEAD == TAIL;  full: HEAD - TAIL == S;  packet k lives in slot k mod S.
 *
 * A packet is published by its slot's STAMP: the producer writes the body, then stores k + 1
 * (packet k, free-running) into STAMP with Atomics.store (sequentially consistent, so the body is
 * visible first); the consumer waits for STAMP of its next slot to read k + 1 (Atomics.load), so
 * the mark that a packet is there and the packet's first bytes travel in one cache line: a small
 * packet costs the consumer one line from the producer's cache, not two (a separate HEAD word and
 * then the slot). A stamp of an earlier lap is k + 1 - S, never k + 1, so slots need no clearing.
 * The consumer processes the slot and then releases it with Atomics.store(TAIL), at once or, with
 * `release(…, hold)`, at its next `publishTail` (several slots in one store). HEAD is the
 * producer's own count (a plain write that nobody polls); a writer made later on the same inbox
 * starts from it. Back-pressure is a return value (reserve() = -1), never a throw. Nothing here
 * allocates. The producer keeps the last TAIL it read and reads it again only when the ring looks
 * full, so a packet costs it no read of the consumer's cache line. LANDED (in TAIL's line) counts
 * the sender's messages that are complete here: the sender's fence compares it with what it sent.
 * HEAD, TAIL and the slots each start a 128-byte block, so the two ends never write the same pair
 * of lines (adjacent-line prefetchers move lines in pairs); the inbox is page-aligned for that
 * (`pageAlignedShared`: a plain SharedArrayBuffer is only 16-byte aligned). The consumer gives
 * each slot back as soon as its packet is handled (a handler further on may send into the same
 * ring); a ring whose writer is in the same thread never holds TAIL back.
 */
import { pageAlignedShared } from './memory.js'

// <layout ring> written by scripts/gen-layouts.mjs from its table: do not edit by hand
// a ring's header (Int32 index from the ring's start); the slots follow it:
//   0       RING_HEAD
//   1…31    (reserved)
//   32      RING_TAIL
//   33      RING_LANDED
//   34…63   (reserved)
/** Packets published (free-running; the producer's own record). */
export const RING_HEAD = 0
/** Packets consumed (free-running; written by the consumer). */
export const RING_TAIL = 32
/** Messages from this ring's sender whose data has landed (written by the consumer; the sender's fence). */
export const RING_LANDED = 33
/** Bytes of a ring's header: HEAD and TAIL each start a 128-byte block. */
export const RING_HEADER_BYTES = 256
// </layout ring>
/** Bytes of a slot before its body: the STAMP word that publishes the packet. */
export const SLOT_STAMP_BYTES = 4
/**
 * Where a packet with the common 64-byte header starts, from its slot's start: after STAMP and a
 * word the one-line formats use, so that its payload is 8-aligned. A writer of such a packet must
 * put 0 in that word (the body's first): a SHORT packet's first word there (`0x00000601`) makes
 * the dispatcher read the slot as one.
 */
export const SLOT_PACKET = 8

/** Geometry of every ring of a job's inboxes. */
export interface RingGeometry {
  /** Slots per ring (a power of two). */
  slots: number
  /** Bytes per slot: STAMP, a word, then the largest packet, rounded up to 64. */
  slotBytes: number
  /** Bytes per ring including its header. */
  ringBytes: number
  /** Rings per inbox: one per task of the process (a job of several processes adds its network ring: `netRingGeometry`). */
  rings: number
}

/**
 * Slots of a task's network ring (at least; the job's ring slots where more): it carries what the
 * engine takes in from every remote task, and one datagram of a burst brings tens of packets. The
 * engine takes in only what the ring holds, and a batch of handlers answers in one write only what
 * the ring toward the network holds (which has as many slots), so the ring's size bounds how many
 * messages share a datagram (docs/transports.md, "Memory").
 */
export const NET_RING_SLOTS = 128

/**
 * The geometry of a task's network ring, whose packets are `g`'s; with `extra` bytes more per slot
 * for its ring toward the network (the destination tag), which has as many slots.
 */
export function netRingGeometry(g: RingGeometry, extra = 0): RingGeometry {
  const slots = Math.max(g.slots, NET_RING_SLOTS)
  const slotBytes = g.slotBytes + extra
  return { slots, slotBytes, ringBytes: RING_HEADER_BYTES + slots * slotBytes, rings: 1 }
}

/** Where an inbox's network ring starts: after the rings of the process's tasks. */
export function netRingAt(g: RingGeometry): number {
  return g.rings * g.ringBytes
}

/**
 * The geometry for `localTasks` senders (the tasks of one process), `slots` slots (rounded up to a
 * power of two) that hold packets of up to `packetBytes` at SLOT_PACKET.
 */
export function ringGeometry(localTasks: number, slots: number, packetBytes: number): RingGeometry {
  let s = 1
  while (s < slots) s <<= 1
  const slotBytes = Math.ceil((packetBytes + SLOT_PACKET) / 64) * 64
  return { slots: s, slotBytes, ringBytes: RING_HEADER_BYTES + s * slotBytes, rings: localTasks }
}

/** Creates one inbox (all its rings, and the network ring `net` after them if given, empty), page-aligned (`pageAlignedShared`). */
export function createInbox(g: RingGeometry, net: RingGeometry | null = null): SharedArrayBuffer {
  return pageAlignedShared(netRingAt(g) + (net === null ? 0 : net.ringBytes))
}

/**
 * Starts every ring of a new inbox at packet `k` (an int32) instead of 0, for tests of the
 * counters' wrap: HEAD, TAIL and LANDED read `k`, and every slot's STAMP `k` too, which no packet
 * of the first lap waits for (packet j waits for j + 1); zeros would be taken for the publication
 * of packet -1.
 */
export function startRingsAt(inbox: SharedArrayBuffer, g: RingGeometry, k: number, net: RingGeometry | null = null): void {
  const i32 = new Int32Array(inbox)
  const start = (at: number, r: RingGeometry): void => {
    const base = at >> 2
    i32[base + RING_HEAD] = k
    i32[base + RING_TAIL] = k
    i32[base + RING_LANDED] = k
    for (let s = 0; s < r.slots; s++) i32[base + (RING_HEADER_BYTES >> 2) + s * (r.slotBytes >> 2)] = k
  }
  for (let r = 0; r < g.rings; r++) start(r * g.ringBytes, g)
  if (net !== null) start(netRingAt(g), net)
}
