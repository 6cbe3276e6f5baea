/**
 * The slabs of the size classes: each class's geometry (block size, blocks and granules per
 * slab), the slab records in `meta` (layout.ts) with their partial lists, and a slab's life:
 * carved from the coalescing allocator, partial, full, its class's cached empty slab, given back
 * (its record retired to its class, to be reused with its free list). BufferManager's hot paths
 * take and give back blocks on the records themselves; what they leave to a slow path comes here.
 */
import {
  ALIGN_SHIFT,
  M_HEADS,
  M_INUSE,
  MAX_SLACK,
  S_FIRST,
  S_HEAD,
  S_HSLOT,
  S_LIMIT,
  S_LIVE,
  S_NB,
  S_NEXT,
  S_PREV,
  S_SIZE,
  S_SLOTS,
  S_TOP,
  S_UNIT,
  SLAB_STRIDE,
  createMeta,
} from './layout.js'
import { classIndexOf, classSizeOf } from './size-classes.js'
import { BlockState, type GranuleHeap } from './tlsf.js'

/** A slab holds at least this many blocks. */
const MIN_BLOCKS_PER_SLAB = 4

function growI32(a: Int32Array, n: number): Int32Array {
  const b = new Int32Array(n)
  b.set(a)
  return b
}

/** The slabs of every size class, and `meta`. Internal to the package. */
export class SlabTable {
  // `declare`d fields, all set in the constructor (see BufferManager).
  /**
   * Everything the hot paths use (layout.ts). Built here, and replaced by a larger copy here
   * when a new slab record does not fit (only in {@link create}).
   */
  declare meta: Int32Array
  /** See MetaLayout.slabOf. */
  declare readonly slabOf: number
  /** See MetaLayout.bits. */
  declare readonly bits: number
  /** First slab record in `meta`, and the end of the records. */
  declare readonly recBase: number
  declare recEnd: number
  /** The coalescing allocator the slabs are carved from. */
  declare readonly heap: GranuleHeap
  /** Granule of the coalescing allocator, bytes. */
  declare readonly granule: number

  declare readonly nClasses: number
  declare readonly classSize: Int32Array
  declare readonly classBlocks: Int32Array
  declare readonly classGranules: Int32Array
  /** Slabs of each class, including a cached empty one. */
  declare readonly classSlabs: Int32Array
  /**
   * The cached empty slab of each class (kept in the partial list), 0: none. Set when a slab
   * empties; an alloc that takes from it does not clear it, so it counts only while the slab is
   * still empty: see {@link cachedEmpty}.
   */
  declare private readonly emptySlab: Int32Array
  /** Head of each class's list of retired slab records (reused with their free lists), 0: none. */
  declare private readonly idFreeHead: Int32Array

  /**
   * @param heap         [in] the coalescing allocator over the managed granules
   * @param granule      [in] bytes per granule
   * @param maxClassSize [in] largest class size, bytes
   * @param slabSize     [in] minimum slab size, bytes: a multiple of the granule
   */
  constructor(heap: GranuleHeap, granule: number, maxClassSize: number, slabSize: number) {
    const layout = createMeta(maxClassSize, heap.count, granule)
    this.meta = layout.meta
    this.slabOf = layout.slabOf
    this.bits = layout.bits
    this.recBase = layout.recBase
    this.recEnd = layout.recBase
    this.heap = heap
    this.granule = granule
    const nc = classIndexOf(maxClassSize) + 1
    this.nClasses = nc
    this.classSize = new Int32Array(nc)
    this.classBlocks = new Int32Array(nc)
    this.classGranules = new Int32Array(nc)
    for (let c = 0; c < nc; c++) {
      const size = classSizeOf(c)
      const slabBytes = Math.max(slabSize, Math.ceil((MIN_BLOCKS_PER_SLAB * size) / granule) * granule)
      this.classSize[c] = size
      this.classBlocks[c] = Math.floor(slabBytes / size)
      this.classGranules[c] = slabBytes / granule
    }
    this.classSlabs = new Int32Array(nc)
    this.emptySlab = new Int32Array(nc)
    this.idFreeHead = new Int32Array(nc)
  }

  /** Class `c`'s cached empty slab if it is still empty, else 0. */
  cachedEmpty(c: number): number {
    const o = this.emptySlab[c]!
    return o !== 0 && this.meta[o + S_TOP] === this.meta[o + S_NB] ? o : 0
  }

  /**
   * Takes a free block from slab record `o` (in its class's partial list, S_TOP ≥ 1) for a
   * request of `n` bytes, and records its slack; a slab that fills up leaves the partial list.
   * @retval the block's 16-byte unit, from the manager's `start`
   */
  take(o: number, n: number): number {
    const m = this.meta
    const top = m[o]! - 1
    m[o] = top
    const size = m[o + S_SIZE]!
    const j = m[o + S_FIRST]!
    const slot = o + SLAB_STRIDE + (j >>> (27 - Math.clz32(size)))
    m[o + S_FIRST] = m[slot]!
    m[slot] = size - n
    if (top === 0) this.unlinkPartial(m[o + S_HSLOT]! - M_HEADS, o)
    return m[o + S_UNIT]! + j
  }

  /**
   * Gives back the block at unit `u` of slab record `o` (its live bit already cleared) when the
   * hot path cannot: the slab was full, or becomes empty and is not its class's cached empty
   * slab. An empty slab becomes the cached one when its class has none, else goes back to the
   * coalescing allocator.
   */
  freeBlock(o: number, u: number): void {
    const m = this.meta
    const top = m[o]!
    const nb = m[o + S_NB]!
    m[o] = top + 1
    const j = u - m[o + S_UNIT]!
    const size = m[o + S_SIZE]!
    const slot = o + SLAB_STRIDE + (j >>> (27 - Math.clz32(size)))
    m[slot] = m[o + S_FIRST]!
    m[o + S_FIRST] = j
    m[M_INUSE] -= size
    const c = m[o + S_HSLOT]! - M_HEADS
    if (top + 1 === nb) {
      const e = this.cachedEmpty(c)
      if (e === 0 || e === o) {
        // keep it as the class's cached empty slab, still in the partial list, so that the next
        // alloc of this class takes the hot path (no thrash when one size ping-pongs)
        if (top === 0) this.linkPartial(c, o)
        this.setCached(c, o)
      } else {
        if (top !== 0) this.unlinkPartial(c, o)
        this.release(c, o)
      }
    } else if (top === 0) {
      this.linkPartial(c, o) // it was full
    }
  }

  /**
   * Carves a new slab for class `c` from the coalescing allocator; may replace {@link meta}.
   * @retval its record, not yet in the partial list; 0 when there is no room
   */
  create(c: number): number {
    const k = this.classGranules[c]!
    const h = this.heap.alloc(k, BlockState.SLAB)
    if (h < 0) return 0
    let o = this.idFreeHead[c]!
    if (o !== 0) {
      // a retired record of this class: its free list still links every block (it was empty)
      this.idFreeHead[c] = this.meta[o + S_NEXT]!
    } else {
      o = this.newRecord(c)
    }
    const m = this.meta
    m[o + S_TOP] = m[o + S_NB]!
    m[o + S_LIMIT] = m[o + S_NB]!
    m[o + S_UNIT] = (h * this.granule) >>> ALIGN_SHIFT
    m[o + S_HEAD] = h
    m[o + S_LIVE] = 1
    m.fill(o, this.slabOf + h, this.slabOf + h + k)
    this.classSlabs[c]!++
    return o
  }

  /**
   * A partial slab of the smallest class above `c` whose blocks can record the slack of a
   * request of `n` bytes (the last resort when class `c` gets no slab), or 0.
   */
  largerPartial(c: number, n: number): number {
    for (let c2 = c + 1; c2 < this.nClasses; c2++) {
      const o2 = this.meta[M_HEADS + c2]!
      if (o2 !== 0 && this.classSize[c2]! - n <= MAX_SLACK) return o2
    }
    return 0
  }

  /**
   * Gives every cached empty slab back to the coalescing allocator. O(number of classes).
   * @retval bytes released
   */
  trim(): number {
    let released = 0
    for (let c = 0; c < this.nClasses; c++) {
      const o = this.cachedEmpty(c)
      this.setCached(c, 0)
      if (o === 0) continue
      released += this.classGranules[c]! * this.granule
      this.unlinkPartial(c, o)
      this.release(c, o)
    }
    return released
  }

  /** Puts record `o` at the head of class `c`'s partial list. */
  linkPartial(c: number, o: number): void {
    const m = this.meta
    const first = m[M_HEADS + c]!
    m[o + S_NEXT] = first
    m[o + S_PREV] = 0
    if (first !== 0) m[first + S_PREV] = o
    m[M_HEADS + c] = o
  }

  private unlinkPartial(c: number, o: number): void {
    const m = this.meta
    const nx = m[o + S_NEXT]!
    const pv = m[o + S_PREV]!
    if (pv !== 0) m[pv + S_NEXT] = nx
    else m[M_HEADS + c] = nx
    if (nx !== 0) m[nx + S_PREV] = pv
  }

  /** Makes slab record `o` (0: none) class `c`'s cached empty slab. */
  private setCached(c: number, o: number): void {
    const m = this.meta
    const old = this.emptySlab[c]!
    if (old !== 0) m[old + S_LIMIT] = m[old + S_NB]!
    this.emptySlab[c] = o
    if (o !== 0) m[o + S_LIMIT] = m[o + S_NB]! + 1
  }

  /** A new slab record of class `c`, all of its blocks in its free list (block 0 first). */
  private newRecord(c: number): number {
    const nb = this.classBlocks[c]!
    const size = this.classSize[c]!
    const step = size >>> ALIGN_SHIFT
    const shift = 27 - Math.clz32(size)
    const slots = (((nb - 1) * step) >>> shift) + 1
    const o = this.recEnd
    const end = o + SLAB_STRIDE + slots
    if (end > this.meta.length) this.meta = growI32(this.meta, Math.max(2 * this.meta.length, end))
    this.recEnd = end
    const m = this.meta
    for (let j = 0; j < nb * step; j += step) m[o + SLAB_STRIDE + (j >>> shift)] = j + step
    m[o + S_SIZE] = size
    m[o + S_NB] = nb
    m[o + S_FIRST] = 0
    m[o + S_HSLOT] = M_HEADS + c
    m[o + S_SLOTS] = slots
    return o
  }

  /** Gives an empty slab back to the coalescing allocator and retires its record to its class. */
  private release(c: number, o: number): void {
    const m = this.meta
    const h = m[o + S_HEAD]!
    m.fill(0, this.slabOf + h, this.slabOf + h + this.classGranules[c]!)
    this.heap.free(h)
    m[o + S_LIVE] = 0
    m[o + S_NEXT] = this.idFreeHead[c]!
    this.idFreeHead[c] = o
    this.classSlabs[c]!--
  }
}
