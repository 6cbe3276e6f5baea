/**
 * Each task's block of shared memory for the other tasks of its process: allocated in its segment
 * when the first runtime starts on its LAPI context (addresses gathered with addressInit, kept
 * for the context's life), zeroed by every runtime that starts (before the barrier that ends
 * Pgas.init, so no task uses it before). Layout, in bytes from the block's address:
 *
 *   0      WAITING   int32: non-zero while the task waits in a message wait (channels.ts)
 *   4      AT_SEQ    int32: the sequence number of the task's current barrier or collective
 *   8      AT_KIND   int32: its kind (as messages carry it)
 *   64     the sync mailboxes (shm-sync.ts): 2 sets × MAX_ROUNDS × 64 bytes
 *   +      the sync data slots (set 1's): MAX_ROUNDS × SYNC_DATA bytes
 *   +      the rings (channels.ts): one per other task of the process, RING_HDR + cap bytes each
 */
import type { Lapi } from '@amlapi/lapi'
import type { Core } from './core.js'

export const W_WAITING = 0
export const W_AT_SEQ = 1
export const W_AT_KIND = 2
const HDR = 64
/** Dissemination rounds a mailbox set holds (2^16 tasks). */
export const MAX_ROUNDS = 16
export const MBOX = 64
/** Bytes of one sync data slot (a small all-reduce's operand). */
export const SYNC_DATA = 256
export const RING_HDR = 128
/** Most data bytes of a ring; smaller where the segment is small (all rings at most 1/16 of it). */
export const RING_BYTES = 256 * 1024
const MIN_RING = 16 * 1024

const MBOXES = HDR
const DATA = MBOXES + 2 * MAX_ROUNDS * MBOX
const RINGS = DATA + MAX_ROUNDS * SYNC_DATA

/** Per LAPI context, every task's block (-1: none), index = task. */
const BLOCKS = new WeakMap<Lapi, number[]>()

export class SharedBlocks {
  /** Every task's block address (-1: none; only tasks of this process matter). */
  readonly at: readonly number[]
  /** Bytes of each ring's data (0: no rings). */
  readonly ringCap: number
  /** The tasks of this process, in task order. */
  readonly locals: readonly number[]

  /** Collective (every task of the job calls it, in Pgas.init). */
  constructor(core: Core) {
    const me = core.rank
    const locals: number[] = []
    for (let t = 0; t < core.size; t++) if (core.isLocal(t)) locals.push(t)
    this.locals = locals
    const peers = locals.length - 1
    let cap = RING_BYTES
    while (peers > 0 && cap >= MIN_RING && peers * (cap + RING_HDR) > core.segmentSize / 16) cap >>= 1
    if (cap < MIN_RING) cap = 0
    this.ringCap = cap
    const bytes = RINGS + peers * (RING_HDR + cap)
    let at = BLOCKS.get(core.lapi)
    if (at === undefined) {
      let mine = -1
      if (peers > 0) {
        try {
          mine = core.lapi.malloc(bytes)
        } catch {
          mine = -1
        }
      }
      // (collective: every task of the job takes part, whether it has co-located tasks or not)
      at = core.lapi.addressInit(mine)
      BLOCKS.set(core.lapi, at)
    }
    this.at = at
    if (at[me]! >= 0) core.u8[me]!.fill(0, at[me]!, at[me]! + bytes)
  }

  /** Whether task `t` (of this process) has a block. */
  has(t: number): boolean {
    return (this.at[t] ?? -1) >= 0
  }

  /** The byte address of `owner`'s ring to `reader` (both of this process, both with blocks). */
  ring(owner: number, reader: number): number {
    let k = 0
    for (const t of this.locals) {
      if (t === reader) break
      if (t !== owner) k++
    }
    return this.at[owner]! + RINGS + k * (RING_HDR + this.ringCap)
  }

  /** The byte address of `owner`'s mailbox of set `set` for round `round`. */
  mailbox(owner: number, set: number, round: number): number {
    return this.at[owner]! + MBOXES + (set * MAX_ROUNDS + round) * MBOX
  }

  /** The byte address of `owner`'s data slot for round `round` (set 1's mailboxes). */
  data(owner: number, round: number): number {
    return this.at[owner]! + DATA + round * SYNC_DATA
  }
}
