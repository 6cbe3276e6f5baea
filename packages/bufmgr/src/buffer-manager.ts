/**
 * BufferManager: size classes over slabs for small and medium regions, TLSF over granules for
 * large regions and for the slabs themselves. All bookkeeping lives in typed arrays outside the
 * managed buffer.
 *
 * Hot path (alloc/free/sizeOf/isLive): integer arithmetic on preallocated typed arrays; no
 * objects, closures or arrays are created. Slow paths (a class with no partial slab, a slab
 * that empties, large regions, exhaustion, misuse, stats) may allocate.
 *
 *   alloc(n ≤ maxClassSize)  head = meta[M_CLASSOF + ((n + 15) >> 4)]       (one table load)
 *     partial slab at head?  pop its free list (a full slab leaves the list)  ← hot path
 *                             (the class's cached empty slab is kept in its partial list)
 *     else                   the slow path: a new slab from TLSF, else trim() and retry,
 *                             else a large block of ceil(n / granule) granules from TLSF,
 *                             else a block of the smallest larger class with a partial slab,
 *                             else 0.
 *   alloc(n > maxClassSize)  TLSF block of ceil(n / granule) granules, else trim() and retry, else 0.
 *   free(addr)               live bit → the granule's slab record → push on its free list (a
 *                             slab that was full joins the list) ← hot path; the slow path when
 *                             the slab empties, or TLSF free for a large region.
 *
 * Everything the hot paths touch is in one Int32Array (`meta`, laid out in layout.ts): the class
 * table and list heads, the slab records with their free lists, the granule → slab map, the
 * live/ever bits and two counters; plus one counter field. The other figures of stats() (live
 * regions, allocations, per-class blocks in use, requested bytes of slab blocks) are derived there
 * from the records (stats.ts).
 * V8 inlines both fast paths into the caller: keep alloc and free under 460 bytes of bytecode
 * each (920 together) and do not add branches to them that belong in a slow path.
 *
 * This file holds the public class, its hot paths and the slow paths of alloc and free; the
 * parts it is made of: options.ts (options, defaults, checks), slabs.ts (the slabs of the size
 * classes, and `meta`), tlsf.ts (the coalescing allocator), zero.ts (zero-filling), stats.ts
 * (stats()), misuse.ts (the errors of a bad size or address).
 */
import { BufMgrError, BufMgrErrorCode } from './errors.js'
import {
  ALIGNMENT,
  ALIGN_SHIFT,
  M_CLASSOF,
  M_HEADS,
  M_HIGH,
  M_INUSE,
  M_REQ,
  S_FIRST,
  S_HSLOT,
  S_LIMIT,
  S_NEXT,
  S_PREV,
  S_SIZE,
  S_UNIT,
  SLAB_STRIDE,
} from './layout.js'
import { badSize, misuseError } from './misuse.js'
import { resolveOptions, type BufferManagerOptions } from './options.js'
import { classIndexOf, classSizeOf } from './size-classes.js'
import { SlabTable } from './slabs.js'
import { collectStats, type BufMgrStats } from './stats.js'
import { BlockState, GranuleHeap } from './tlsf.js'
import { Zeroer } from './zero.js'

/**
 * Manages the free space of one `ArrayBuffer` or `SharedArrayBuffer` (or a sub-range of it) and
 * hands out regions as byte offsets into the buffer.
 *
 * - Every address is a multiple of {@link alignment} (16) measured from the start of the buffer,
 *   is > 0, and lies in the managed range. 0 means "no region" (exhaustion).
 * - The caller owns a region from `alloc` until `free`; the manager never reads or writes the
 *   managed bytes except to zero-fill on request. Its metadata lives outside the buffer, so
 *   writing past a region cannot corrupt it, and double frees are always detected.
 * - alloc, free, sizeOf and isLive are O(1) and allocate no JavaScript objects.
 * - Not thread-safe: one thread owns a manager (other threads may read and write the regions).
 *
 * @example
 * ```ts
 * const mm = new BufferManager({ size: 1 << 20 })
 * const a = mm.alloc(100)          // offset of ≥ 100 usable bytes, or 0 when full
 * mm.view(a).fill(7)               // a Uint8Array over the region (not a copy)
 * mm.free(a)
 * ```
 */
export class BufferManager {
  /** The managed buffer (given or created). Regions are byte offsets into it. */
  declare readonly buffer: ArrayBuffer | SharedArrayBuffer
  /** Alignment of every address handed out, in bytes, from the start of the buffer: 16. */
  readonly alignment: number = ALIGNMENT
  /** First managed byte offset (the start of the first granule). */
  declare readonly start: number
  /** End (exclusive) of the managed bytes: `start + managedBytes`. */
  declare readonly end: number
  /** Bytes under management: a whole number of granules. */
  declare readonly managedBytes: number
  /** Granule of the coalescing allocator, bytes. */
  declare readonly granule: number
  /** Largest request served by size classes, bytes (the option rounded up to a class size). */
  declare readonly maxClassSize: number
  /** Minimum slab size, bytes. */
  declare readonly slabSize: number
  /** Whether every region is zeroed when allocated. */
  declare readonly zeroFill: boolean

  // Fields are `declare`d and all set in the constructor, so that V8 sees one shape and exact
  // field types from the start (a class field without initializer would first hold undefined,
  // which makes every later load check the type again).
  declare private readonly zeroer: Zeroer
  declare private readonly gShift: number
  declare private readonly heap: GranuleHeap
  /** The size classes' slabs; owns `meta`. */
  declare private readonly slabs: SlabTable
  /**
   * `slabs.meta`, for the hot paths (one load less). Taken again after each new slab, the only
   * time the table may replace it (createSlab).
   */
  declare private meta: Int32Array
  /** See MetaLayout.slabOf (layout.ts). */
  declare private readonly slabOf: number
  /** See MetaLayout.bits (layout.ts). */
  declare private readonly bits: number

  /** Successful frees (allocs = frees + live regions, counted in stats()). */
  declare private frees: number
  declare private lastSize: number
  declare private largeRegions: number
  declare private failed: number

  /**
   * Creates a manager. Setup cost: O(managed bytes / granule) for the metadata arrays.
   * @param opts [in] options; see {@link BufferManagerOptions}
   * @throws BufMgrError `BAD_OPTIONS` for an invalid option or a range smaller than one granule
   */
  constructor(opts: BufferManagerOptions = {}) {
    const s = resolveOptions(opts)
    const managed = s.granules * s.granule
    this.buffer = s.buffer
    this.start = s.start
    this.end = s.start + managed
    this.managedBytes = managed
    this.granule = s.granule
    this.maxClassSize = s.maxClassSize
    this.slabSize = s.slabSize
    this.zeroFill = s.zeroFill
    this.zeroer = new Zeroer(s.buffer)
    this.gShift = 31 - Math.clz32(s.granule)
    this.heap = new GranuleHeap(s.granules)
    this.slabs = new SlabTable(this.heap, s.granule, s.maxClassSize, s.slabSize)
    this.meta = this.slabs.meta
    this.slabOf = this.slabs.slabOf
    this.bits = this.slabs.bits
    this.frees = 0
    this.lastSize = 0
    this.largeRegions = 0
    this.failed = 0
  }

  /**
   * Allocates a region of at least `nbytes` bytes. O(1); allocates no JavaScript objects
   * (except when a class needs a new slab record or the record tables grow: amortised).
   * `alloc(0)` returns a unique 16-byte region (like `malloc(0)` returning a unique pointer).
   * When no space is left it calls {@link trim} and retries before giving up.
   * @param nbytes [in] bytes wanted: a non-negative safe integer
   * @param zero   [in] zero the region's usable bytes (always done when the manager has `zeroFill`)
   * @retval the region's byte offset in {@link buffer} (> 0, a multiple of 16); the caller owns it until {@link free}
   * @retval 0 when the space is exhausted (counted in `stats().failedAllocs`)
   * @throws BufMgrError `BAD_SIZE` when `nbytes` is not a non-negative safe integer
   */
  alloc(nbytes: number, zero?: boolean): number {
    // Hot path: a class with a partial slab. Kept small (V8 inlines functions of up to 460
    // bytes of bytecode, 920 in all per caller); everything else is in allocSlow.
    let small: boolean
    // (a BigInt fails the integer test by throwing: the catch, which costs the path nothing, makes it BAD_SIZE)
    try {
      small = nbytes >>> 0 === nbytes
    } catch {
      throw badSize(nbytes)
    }
    if (small && nbytes <= this.maxClassSize) {
      const m = this.meta
      const head = m[M_CLASSOF + ((nbytes + 15) >>> ALIGN_SHIFT)]!
      const o = m[head]!
      const top = m[o]! - 1 // S_TOP; the sentinel (no partial slab) gives -1
      if (top >= 0) {
        m[o] = top
        if (top === 0) {
          // the slab fills up: it leaves the partial list, whose head it is
          const nx = m[o + S_NEXT]!
          m[head] = nx
          m[nx + S_PREV] = 0
        }
        const size = m[o + S_SIZE]!
        const j = m[o + S_FIRST]!
        const slot = o + SLAB_STRIDE + (j >>> (27 - Math.clz32(size)))
        m[o + S_FIRST] = m[slot]!
        m[slot] = size - nbytes
        const u = m[o + S_UNIT]! + j
        m[this.bits + (u >>> 4)] |= 3 << ((u & 15) << 1) // live + ever
        const inUse = m[M_INUSE]! + size
        m[M_INUSE] = inUse
        if (inUse > m[M_HIGH]!) m[M_HIGH] = inUse
        const addr = this.start + (u << ALIGN_SHIFT)
        if (zero === true || this.zeroFill) this.zero(addr, size)
        return addr
      }
    }
    return this.allocSlow(nbytes, zero === true)
  }

  /**
   * Like {@link alloc}, but exhaustion throws.
   * @param nbytes [in] bytes wanted: a non-negative safe integer
   * @param zero   [in] zero the region's usable bytes
   * @retval the region's byte offset (> 0, a multiple of 16)
   * @throws BufMgrError `EXHAUSTED` (the message gives the requested bytes, free bytes and the
   *   largest free region), `BAD_SIZE`
   */
  allocOrThrow(nbytes: number, zero?: boolean): number {
    const addr = this.alloc(nbytes, zero)
    if (addr === 0) {
      const st = this.stats()
      throw new BufMgrError(
        BufMgrErrorCode.EXHAUSTED,
        `bufmgr: out of space: requested ${nbytes} bytes; ${st.freeBytes} bytes free, largest free region ` +
          `${st.largestFreeRegion} bytes; ${st.bytesInUse} bytes in use in ${st.regionsInUse} regions of ` +
          `${st.managedBytes} managed bytes`,
      )
    }
    return addr
  }

  /**
   * Frees a live region. O(1); allocates no JavaScript objects. A failed free changes nothing.
   * @param addr [in] an address returned by {@link alloc} and not yet freed
   * @throws BufMgrError `DOUBLE_FREE` (already freed), `NOT_ALLOCATED` (0, outside the managed
   *   range, unaligned, or never handed out), `INTERIOR` (inside a live region, not its start)
   */
  free(addr: number): void {
    // (a BigInt fails the arithmetic by throwing: the catch, which costs the path nothing, makes it NOT_ALLOCATED)
    let off: number
    try {
      off = addr - this.start
    } catch {
      throw this.misuse(addr, 'free')
    }
    // (addr | 0) === addr: an int32 (no string, fraction, NaN); then off >>> 0 < managedBytes
    // is exactly start ≤ addr < end, because end ≤ 2^31.
    if ((addr | 0) === addr && off >>> 0 < this.managedBytes && (off & (ALIGNMENT - 1)) === 0) {
      const u = off >>> ALIGN_SHIFT
      const m = this.meta
      const w = this.bits + (u >>> 4)
      const live = 1 << ((u & 15) << 1)
      const word = m[w]!
      if ((word & live) !== 0) {
        m[w] = word ^ live
        // Hot path: a slab block whose slab does not become empty, or is the cached empty one.
        // Not a slab: the sentinel record has S_TOP 0 and S_LIMIT 0.
        const o = m[this.slabOf + (off >>> this.gShift)]!
        const top = m[o]!
        if (top + 1 < m[o + S_LIMIT]!) {
          m[o] = top + 1
          if (top === 0) {
            // the slab was full: it joins its class's partial list, at the head
            const head = m[o + S_HSLOT]!
            const first = m[head]!
            m[o + S_NEXT] = first
            m[o + S_PREV] = 0
            m[first + S_PREV] = o
            m[head] = o
          }
          const j = u - m[o + S_UNIT]!
          const size = m[o + S_SIZE]!
          const slot = o + SLAB_STRIDE + (j >>> (27 - Math.clz32(size)))
          m[slot] = m[o + S_FIRST]!
          m[o + S_FIRST] = j
          m[M_INUSE] -= size
          this.frees++
          return
        }
        this.freeSlow(o, u)
        return
      }
    }
    throw this.misuse(addr, 'free')
  }

  /**
   * Usable size of a live region: at least the bytes requested (the class size, or whole
   * granules for large regions). O(1).
   * @param addr [in] a live address
   * @retval usable bytes
   * @throws BufMgrError like {@link free} when `addr` is not a live region
   */
  sizeOf(addr: number): number {
    if (this.liveUnit(addr) < 0) throw this.misuse(addr, 'sizeOf')
    return this.usableOf(addr)
  }

  /**
   * Whether `addr` is the start of a live region. O(1); never throws.
   * @param addr [in] any value
   */
  isLive(addr: number): boolean {
    return this.liveUnit(addr) >= 0
  }

  /**
   * A `Uint8Array` over a live region (a view, not a copy; it stays valid only while the region
   * is live). Creates one object per call.
   * @param addr   [in] a live address
   * @param nbytes [in] bytes to view from `addr`; default the region's usable size
   * @retval the view
   * @throws BufMgrError like {@link free} when `addr` is not live; RangeError when `nbytes` is
   *   not an integer in [0, sizeOf(addr)]
   */
  view(addr: number, nbytes?: number): Uint8Array {
    const size = this.sizeOf(addr)
    if (nbytes === undefined) return new Uint8Array(this.buffer, addr, size)
    if (!Number.isSafeInteger(nbytes) || nbytes < 0 || nbytes > size) {
      throw new RangeError(`bufmgr: view(${addr}, ${String(nbytes)}) is outside the region of ${size} bytes`)
    }
    return new Uint8Array(this.buffer, addr, nbytes)
  }

  /**
   * Usable size that `alloc(nbytes)` normally returns (the class size, or whole granules), in
   * bytes; when space is short a request may be served with more. O(1).
   * @param nbytes [in] a non-negative safe integer
   * @throws BufMgrError `BAD_SIZE`
   */
  usableSizeFor(nbytes: number): number {
    if (!Number.isSafeInteger(nbytes) || nbytes < 0) throw badSize(nbytes)
    if (nbytes <= this.maxClassSize) return classSizeOf(classIndexOf(nbytes))
    return Math.ceil(nbytes / this.granule) * this.granule
  }

  /**
   * Gives every cached empty slab back to the coalescing allocator (where it merges with free
   * neighbours). O(number of classes). `alloc` calls it itself before reporting exhaustion.
   * @retval bytes released
   */
  trim(): number {
    return this.slabs.trim()
  }

  /**
   * A snapshot of the figures. Allocates, and walks the TLSF blocks, the slab records and the
   * blocks of the non-empty slabs (O(blocks + slab blocks + classes)): not for hot paths.
   */
  stats(): BufMgrStats {
    return collectStats(this.slabs, this.managedBytes, this.frees, this.largeRegions, this.failed)
  }

  // ───────────────────────────── internals ─────────────────────────────

  /** The 16-byte unit index of `addr` when it starts a live region, else -1. */
  private liveUnit(addr: number): number {
    if (typeof addr !== 'number' || (addr | 0) !== addr) return -1
    const off = (addr - this.start) | 0
    if (off >>> 0 >= this.managedBytes || (off & (ALIGNMENT - 1)) !== 0) return -1
    const u = off >>> ALIGN_SHIFT
    return (this.meta[this.bits + (u >>> 4)]! & (1 << ((u & 15) << 1))) !== 0 ? u : -1
  }

  private usableOf(addr: number): number {
    const g = (addr - this.start) >>> this.gShift
    const o = this.meta[this.slabOf + g]!
    return o !== 0 ? this.meta[o + S_SIZE]! : this.heap.tag[g]! * this.granule
  }

  /** alloc() off the hot path: validation, no partial slab, large, exhaustion. */
  private allocSlow(nbytes: number, zero: boolean): number {
    if (!Number.isSafeInteger(nbytes) || nbytes < 0) throw badSize(nbytes)
    let addr: number
    if (nbytes <= this.maxClassSize) {
      const c = this.meta[M_CLASSOF + ((nbytes + 15) >>> ALIGN_SHIFT)]! - M_HEADS
      const o = this.meta[M_HEADS + c]!
      addr = o !== 0 ? this.takeBlock(o, nbytes) : this.allocClassSlow(c, nbytes)
    } else {
      addr = this.allocLarge(nbytes)
    }
    if (addr === 0) {
      this.failed++
      return 0
    }
    if (zero || this.zeroFill) this.zero(addr, this.lastSize)
    return addr
  }

  /** Zeroes `size` bytes at `addr` (both multiples of 16). */
  private zero(addr: number, size: number): void {
    this.zeroer.zero(addr, size)
  }

  /** Records a new live region (slow paths; the hot path does the same inline). */
  private noteAlloc(addr: number, usable: number): void {
    const m = this.meta
    const u = (addr - this.start) >>> ALIGN_SHIFT
    m[this.bits + (u >>> 4)] |= 3 << ((u & 15) << 1)
    this.lastSize = usable
    const inUse = m[M_INUSE]! + usable
    m[M_INUSE] = inUse
    if (inUse > m[M_HIGH]!) m[M_HIGH] = inUse
  }

  /** Takes a free block from slab record `o` (in its class's partial list, S_TOP ≥ 1). */
  private takeBlock(o: number, n: number): number {
    const addr = this.start + (this.slabs.take(o, n) << ALIGN_SHIFT)
    this.noteAlloc(addr, this.meta[o + S_SIZE]!)
    return addr
  }

  /** Class `c` has no partial slab (its cached empty slab, if any, would be in the partial list). */
  private allocClassSlow(c: number, n: number): number {
    let o = this.createSlab(c)
    if (o === 0 && this.trim() > 0) o = this.createSlab(c)
    if (o !== 0) {
      this.slabs.linkPartial(c, o)
      return this.takeBlock(o, n)
    }
    // No slab: serve from the coalescing allocator, or from a larger class as a last resort.
    const addr = this.allocGranules(n === 0 ? 1 : (n + this.granule - 1) >>> this.gShift, n)
    if (addr !== 0) return addr
    const o2 = this.slabs.largerPartial(c, n)
    return o2 !== 0 ? this.takeBlock(o2, n) : 0
  }

  /** A new slab of class `c` (not yet in the partial list), or 0; takes `meta` again. */
  private createSlab(c: number): number {
    const o = this.slabs.create(c)
    this.meta = this.slabs.meta
    return o
  }

  private allocLarge(n: number): number {
    if (n > this.managedBytes) return 0
    const k = (n + this.granule - 1) >>> this.gShift
    let addr = this.allocGranules(k, n)
    if (addr === 0 && this.trim() > 0) addr = this.allocGranules(k, n)
    return addr
  }

  /** A LARGE block of `k` granules for a request of `n` bytes, or 0. */
  private allocGranules(k: number, n: number): number {
    const h = this.heap.alloc(k, BlockState.LARGE)
    if (h < 0) return 0
    this.heap.next[h] = n
    this.largeRegions++
    const addr = this.start + h * this.granule
    this.noteAlloc(addr, k * this.granule)
    this.meta[M_REQ] += n
    return addr
  }

  /**
   * free() off the hot path, after the live bit of unit `u` was checked and cleared: a large
   * region, or a slab block whose slab was full or becomes empty.
   */
  private freeSlow(o: number, u: number): void {
    this.frees++
    if (o === 0) {
      this.freeLarge(u >>> (this.gShift - ALIGN_SHIFT))
      return
    }
    this.slabs.freeBlock(o, u)
  }

  private freeLarge(h: number): void {
    const heap = this.heap
    const m = this.meta
    m[M_INUSE] -= heap.tag[h]! * this.granule
    m[M_REQ] -= heap.next[h]!
    this.largeRegions--
    heap.free(h)
  }

  /** The error for an address that is not a live region start (slow path: error reports only). */
  private misuse(addr: unknown, op: string): BufMgrError {
    return misuseError(addr, op, this.start, this.managedBytes, this.slabs)
  }
}
