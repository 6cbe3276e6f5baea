/**
 * Layout of the SharedArrayBuffer shared by the two workers of the SAB ring baselines.
 *
 * Control words are Int32 slots, each in its own 128-byte block (two cache lines, since adjacent-line
 * prefetchers fetch lines in pairs) so that the two peers never write the same line or line pair. Data follows: the A→B area (a ring of `RING_SLOTS` slots, each padded to a
 * whole number of cache lines) and the B→A area (one slot, used by the round trip only).
 */
export const LINE = 64
/** Int32 index of each control word. */
export const ABORT = 0
export const READY = 32
export const SEQ_AB = 64
export const ACK_AB = 96
export const SEQ_BA = 128
export const CTL_BYTES = 1024
export const CTL_INTS = CTL_BYTES / 4
export const RING_SLOTS = 8

/** Distance between ring slots for messages of `size` bytes: `size` rounded up to a cache line. */
export function slotStride(size: number): number {
  return Math.ceil(Math.max(size, 1) / LINE) * LINE
}

export function offsetAB(): number {
  return CTL_BYTES
}

export function offsetBA(maxSize: number): number {
  return CTL_BYTES + RING_SLOTS * slotStride(maxSize)
}

export function sabBytes(maxSize: number): number {
  return offsetBA(maxSize) + slotStride(maxSize)
}

/**
 * The minimal active message (`baseline.sab-am`, mode `am`) uses two rings of AM_SLOTS slots after
 * the control block, A→B then B→A. A slot is one cache line: STAMP (packet number + 1, stored last
 * with Atomics.store), the header words (source, payload length, handler index, counter index),
 * then the payload. Each ring's consumer gives slots back through its TAIL word.
 */
export const AM_SLOTS = 16
export const AM_SLOT_BYTES = LINE
/** Bytes of a slot before the payload: STAMP and four header words. */
export const AM_HEADER_BYTES = 20
/** Largest payload of the minimal active message (one line in all). */
export const AM_MAX_PAYLOAD = AM_SLOT_BYTES - AM_HEADER_BYTES
/** Int32 index of the TAIL of the A→B ring (written by B) and of the B→A ring (written by A). */
export const TAIL_AB = 160
export const TAIL_BA = 192

/** Byte offset of the A→B (`dir` 0) or B→A (`dir` 1) ring of the minimal active message. */
export function amRingOffset(dir: 0 | 1): number {
  return CTL_BYTES + dir * AM_SLOTS * AM_SLOT_BYTES
}

/** Bytes of the buffer for `mode` and messages of up to `maxSize` bytes. */
export function sabBytesFor(mode: SyncMode, maxSize: number): number {
  return mode === 'am' ? amRingOffset(1) + AM_SLOTS * AM_SLOT_BYTES : sabBytes(maxSize)
}

/**
 * `spin` and `wait`: the ring baselines (busy-spinning, or Atomics.wait/notify). `am`: the
 * minimal active message, round trip only, busy-spinning.
 */
export type SyncMode = 'spin' | 'wait' | 'am'

export interface SabWorkerData {
  sab: SharedArrayBuffer
  role: 'a' | 'b'
  mode: SyncMode
  /** Largest message size the buffer was laid out for. */
  maxSize: number
}

export interface SabCommand {
  op: 'rtt' | 'bw'
  size: number
  iterations: number
  /** Generation number of this command: B announces it in READY, A waits for it before timing. */
  gen: number
  /** `Date.now()` after which the worker gives up. */
  deadline: number
}

/** A's reply carries the elapsed seconds; B's reply just acknowledges. */
export interface SabReply {
  gen: number
  seconds?: number
}
