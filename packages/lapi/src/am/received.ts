/**
 * The receiving side's records: one per message being received (pooled), and per source the
 * finished message ids (duplicates of them are dropped) and the messages still in progress.
 */
import { DoneIds, IdTable } from '../base/id-table.js'
import type { compl_hndlr_t, lapi_vec_t } from '../base/types.js'

/** One message being received. Pooled. */
export class RecvMsg {
  src = 0
  id = 0
  msgLen = 0
  got = 0
  headSeen = false
  rndv = false
  /** Landing: an Addr in the own segment (≥ 0), or -1 with `buf` (a Uint8Array), or -2 to discard. */
  landing = -2
  buf: Uint8Array | null = null
  vec: lapi_vec_t | null = null
  vecOffsets: number[] | null = null
  vecCap = 0
  compl: compl_hndlr_t | null = null
  uinfo: unknown = null
  tgtCntr = 0
  cmplCntr = 0
  inline = false
  /** Rendezvous by pull: the data's Addr in the source's segment (-1: not a pull) and its origin counter. */
  pullSrc = -1
  pullOrg = 0
  /** Data that arrived before the HEAD: stream bytes at their offsets, and the [pos, len] pairs held. */
  stash: Uint8Array | null = null
  stashed: number[] | null = null
  /** Seen DATA packets (bitmap by packet index), for duplicate suppression. */
  seen: Uint8Array | null = null
  packets = 0

  reset(): void {
    this.got = 0
    this.headSeen = false
    this.rndv = false
    this.landing = -2
    this.buf = null
    this.vec = null
    this.vecOffsets = null
    this.vecCap = 0
    this.compl = null
    this.uinfo = null
    this.tgtCntr = 0
    this.cmplCntr = 0
    this.inline = false
    this.pullSrc = -1
    this.pullOrg = 0
    this.stash = null
    this.stashed = null
    this.seen = null
    this.packets = 0
  }
}

/** Per-source bookkeeping of finished message ids (duplicates of them are dropped). */
export class SourceState {
  done = new DoneIds()
  inProgress = new IdTable<RecvMsg>()
}
