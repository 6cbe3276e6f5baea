/**
 * The layout of `meta`, the one Int32Array that holds everything the hot paths of BufferManager
 * read or write (one typed array: V8 loads its base and length once per call instead of once per
 * array), the layout of the slab records in it, and the building of a new one.
 */
import { classIndexOf } from './size-classes.js'

/**
 * Alignment of every region (size-classes.ts ALIGNMENT), a literal of its own: the bundle reads a
 * binding that the package exports from its module cell, and a plain constant from the module's
 * context, which is what the hot paths want.
 */
export const ALIGNMENT = 16
/** log2(ALIGNMENT). */
export const ALIGN_SHIFT = 4
/** Largest slack (class size − requested bytes) a slab block can record. */
export const MAX_SLACK = 0xffff

// `meta`:
//   [0, 16)                 the sentinel slab record: all zero, so its S_TOP and S_NB are 0
//   [16, 32)                counters (M_*)
//   [M_HEADS, +48)          head of each class's list of partial slabs (a record offset, 0: none)
//   [M_CLASSOF, +maxClassSize/16 + 1)
//                           M_HEADS + the size class of a request of n bytes, at
//                           M_CLASSOF + ((n + 15) >> 4): the index of that class's list head
//   [slabOf, +granules)     the slab record owning each granule, 0 (the sentinel) if none
//   [bits, +units/16)       live/ever bits, two per 16-byte unit (see MetaLayout.bits)
//   [recBase, recEnd)       slab records: SLAB_STRIDE ints, then the slab's block slots; the
//                           array grows by doubling when a new record does not fit (slabs.ts)
// Records are referred to by their offset in `meta` (partial lists, slabOf); offset 0 is the
// sentinel, so "no partial slab" and "not in a slab" fail the hot paths' tests by themselves.
/** Bytes in use (usable size of the live regions; ≤ managed bytes < 2^31). */
export const M_INUSE = 16
/** Highest M_INUSE seen. */
export const M_HIGH = 17
/** Requested bytes of the live large regions (those of slab blocks are summed in stats()). */
export const M_REQ = 18
/** Class list heads (at most 48 classes). */
export const M_HEADS = 32
/** Class table, one entry per 16 bytes of request up to maxClassSize (then the records). */
export const M_CLASSOF = M_HEADS + 48

// A slab record at offset o of `meta`: SLAB_STRIDE ints of fields (S_*), then one slot per
// block. A block is named by j, its offset from the slab's start in 16-byte units (so neither
// alloc nor free multiplies or divides by the block size); its slot is
// meta[o + SLAB_STRIDE + (j >> k)] with k = floor(log2(size / 16)) = 27 − clz32(size), one slot
// per block because 2^k ≤ size / 16. A free block's slot links the slab's free list (the j of
// the next free block); a live block's slot holds its slack (block size − requested bytes).
/** Free blocks of the slab. First: the hot path reads `meta[o]`. */
export const S_TOP = 0
/** Block size, bytes (the class size). */
export const S_SIZE = 1
/** 16-byte unit (from `start`) of the slab's first byte: a block's unit is S_UNIT + j. */
export const S_UNIT = 2
/** Blocks in the slab. */
export const S_NB = 3
/** j of the first block of the free list (meaningful while S_TOP > 0). */
export const S_FIRST = 4
/** Index in `meta` of the head of the slab's class's partial list: M_HEADS + its class. */
export const S_HSLOT = 5
/** Next / previous record in the class's partial list (next also links retired records); 0: none. */
export const S_NEXT = 6
export const S_PREV = 7
/** First granule of the slab. */
export const S_HEAD = 8
/** 1 while the record is a slab, 0 once retired (it waits in its class's retired list). */
export const S_LIVE = 9
/** Slots after the fields. */
export const S_SLOTS = 10
/**
 * S_NB + 1 while the record is its class's cached empty slab, else S_NB: free takes the hot path
 * while the slab's free blocks stay below it, so the cached slab may empty there (no slow path
 * when one region ping-pongs) while any other slab that empties goes to freeSlow.
 */
export const S_LIMIT = 11
export const SLAB_STRIDE = 16

/** A new `meta` and where its parts start. */
export interface MetaLayout {
  /** Zero but for the class table, with room for the fields of 64 slab records. */
  meta: Int32Array
  /**
   * `meta[slabOf + g]`: the slab record owning granule g, 0 (the sentinel) when g is not in a
   * slab.
   */
  slabOf: number
  /**
   * `meta[bits + (u >> 4)]`: two bits per 16-byte unit u, 16 units per word: bit 2(u & 15): a
   * live region starts at u; bit 2(u & 15) + 1: a region has ever started at u (tells
   * DOUBLE_FREE from NOT_ALLOCATED).
   */
  bits: number
  /** First slab record. */
  recBase: number
}

/**
 * Builds `meta` for `granules` granules of `granule` bytes and size classes up to `maxClassSize`.
 * @param maxClassSize [in] largest class size, bytes
 * @param granules     [in] granules managed
 * @param granule      [in] bytes per granule
 */
export function createMeta(maxClassSize: number, granules: number, granule: number): MetaLayout {
  const managed = granules * granule
  const tableEnd = M_CLASSOF + (maxClassSize >>> ALIGN_SHIFT) + 1
  const bitsBase = tableEnd + granules
  const recBase = (bitsBase + (((managed >>> ALIGN_SHIFT) + 15) >>> 4) + SLAB_STRIDE - 1) & ~(SLAB_STRIDE - 1)
  const meta = new Int32Array(recBase + 64 * SLAB_STRIDE)
  for (let i = 0; M_CLASSOF + i < tableEnd; i++) meta[M_CLASSOF + i] = M_HEADS + classIndexOf(i << ALIGN_SHIFT)
  return { meta, slabOf: tableEnd, bits: bitsBase, recBase }
}
