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
 * Everything the hot paths touch is in one Int32Array (`meta`): the class table and list heads,
 * the slab records with their free lists, the granule → slab map, the live/ever bits and two
 * counters; plus one counter field. The other figures of stats() (live regions, allocations,
 * per-class blocks in use, requested bytes of slab blocks) are derived there from the records.
 * V8 inlines both fast paths into the caller: keep alloc and free under 460 bytes of bytecode
 * each (920 together) and do not add branches to them that belong in a slow path.
 */
import { BufMgrError, BufMgrErrorCode } from './errors.js'
import { MAX_CLASS_LIMIT, classIndexOf, classSizeOf } from './size-classes.js'
import { BlockState, GranuleHeap } from './tlsf.js'

/** Alignment of every region (size-classes.ts ALIGNMENT), a local literal: imports are live bindings. */
const ALIGNMENT = 16
/** log2(ALIGNMENT). */
const ALIGN_SHIFT = 4
const KIB = 1024
const MIB = 1024 * KIB
/** Default size of a created buffer, bytes. */
const DEFAULT_SIZE = MIB
/** Default largest size served by size classes, bytes. */
const DEFAULT_MAX_CLASS = 8 * KIB
/** Default granule of the coalescing allocator, bytes. */
const DEFAULT_GRANULE = 256
/** A slab holds at least this many blocks. */
const MIN_BLOCKS_PER_SLAB = 4
/** Largest allowed slab size, bytes. */
const MAX_SLAB = MIB
/** The managed range must end at or below this byte offset (offsets stay int32). */
const MAX_END = 2 ** 31
/** Largest slack (class size − requested bytes) a slab block can record. */
const MAX_SLACK = 0xffff

// `BufferManager.meta`, one Int32Array holding everything the hot paths read or write (one
// typed array: V8 loads its base and length once per call instead of once per array):
//   [0, 16)                 the sentinel slab record: all zero, so its S_TOP and S_NB are 0
//   [16, 32)                counters (M_*)
//   [M_HEADS, +48)          head of each class's list of partial slabs (a record offset, 0: none)
//   [M_CLASSOF, +maxClassSize/16 + 1)
//                           M_HEADS + the size class of a request of n bytes, at
//                           M_CLASSOF + ((n + 15) >> 4): the index of that class's list head
//   [slabOf, +granules)     the slab record owning each granule, 0 (the sentinel) if none
//   [bits, +units/16)       live/ever bits, two per 16-byte unit (see BufferManager.bits)
//   [recBase, recEnd)       slab records: SLAB_STRIDE ints, then the slab's block slots; the
//                           array grows by doubling when a new record does not fit
// Records are referred to by their offset in `meta` (partial lists, slabOf); offset 0 is the
// sentinel, so "no partial slab" and "not in a slab" fail the hot paths' tests by themselves.
/** Bytes in use (usable size of the live regions; ≤ managed bytes < 2^31). */
const M_INUSE = 16
/** Highest M_INUSE seen. */
const M_HIGH = 17
/** Requested bytes of the live large regions (those of slab blocks are summed in stats()). */
const M_REQ = 18
/** Class list heads (at most 48 classes). */
const M_HEADS = 32
/** Class table, one entry per 16 bytes of request up to maxClassSize (then the records). */
const M_CLASSOF = M_HEADS + 48

// A slab record at offset o of `meta`: SLAB_STRIDE ints of fields (S_*), then one slot per
// block. A block is named by j, its offset from the slab's start in 16-byte units (so neither
// alloc nor free multiplies or divides by the block size); its slot is
// meta[o + SLAB_STRIDE + (j >> k)] with k = floor(log2(size / 16)) = 27 − clz32(size), one slot
// per block because 2^k ≤ size / 16. A free block's slot links the slab's free list (the j of
// the next free block); a live block's slot holds its slack (block size − requested bytes).
/** Free blocks of the slab. First: the hot path reads `meta[o]`. */
const S_TOP = 0
/** Block size, bytes (the class size). */
const S_SIZE = 1
/** 16-byte unit (from `start`) of the slab's first byte: a block's unit is S_UNIT + j. */
const S_UNIT = 2
/** Blocks in the slab. */
const S_NB = 3
/** j of the first block of the free list (meaningful while S_TOP > 0). */
const S_FIRST = 4
/** Index in `meta` of the head of the slab's class's partial list: M_HEADS + its class. */
const S_HSLOT = 5
/** Next / previous record in the class's partial list (next also links retired records); 0: none. */
const S_NEXT = 6
const S_PREV = 7
/** First granule of the slab. */
const S_HEAD = 8
/** 1 while the record is a slab, 0 once retired (it waits in its class's retired list). */
const S_LIVE = 9
/** Slots after the fields. */
const S_SLOTS = 10
/**
 * S_NB + 1 while the record is its class's cached empty slab, else S_NB: free takes the hot path
 * while the slab's free blocks stay below it, so the cached slab may empty there (no slow path
 * when one region ping-pongs) while any other slab that empties goes to freeSlow.
 */
const S_LIMIT = 11
const SLAB_STRIDE = 16

/** Zero-fills up to this many bytes with a loop of 8-byte stores. */
const SMALL_ZERO = 512
let zeroViewsCache: Uint8Array[] | undefined
/** Views of 2^k zero bytes, k = 9..16, over one 64 KiB ArrayBuffer shared by all managers. */
function zeroViews (): Uint8Array[] {
  if (zeroViewsCache === undefined) {
    const zeros = new ArrayBuffer(65536)
    zeroViewsCache = []
    for (let n = SMALL_ZERO; n <= 65536; n *= 2) zeroViewsCache.push(new Uint8Array(zeros, 0, n))
  }
  return zeroViewsCache
}

/** Options of {@link BufferManager}. Every size is in bytes. */
export interface BufferManagerOptions {
  /** The buffer to manage. When absent, one of `size` bytes is created. */
  buffer?: ArrayBuffer | SharedArrayBuffer
  /** Bytes of the buffer to create when `buffer` is absent. Default 1 MiB. Ignored with `buffer`. */
  size?: number
  /** Create a `SharedArrayBuffer` (true, default) or an `ArrayBuffer`. Ignored with `buffer`. */
  shared?: boolean
  /**
   * Start of the managed range inside the buffer. Default 0. Rounded up to the alignment (16);
   * a range that starts at 0 starts at 16 instead, so that 0 (NULL) is never handed out.
   */
  offset?: number
  /**
   * Bytes managed from `offset` (the range is `[offset, offset + length)`). Default: to the end
   * of the buffer. The range must end at or below 2 GiB. The tail that does not fill a whole
   * granule is not used.
   */
  length?: number
  /** Zero every region when it is allocated. Default false (`alloc(n, true)` zero-fills one call). */
  zeroFill?: boolean
  /**
   * Largest request served by the size classes; larger requests go to the coalescing allocator.
   * Default 8 KiB. Allowed 16..65536, rounded up to a class size.
   */
  maxClassSize?: number
  /**
   * Granule of the coalescing allocator: large regions and slabs are whole granules, and the
   * off-band metadata costs about 17 bytes per granule. Default 256. A power of two, 16..65536.
   */
  granule?: number
  /**
   * Minimum slab size (a class's slab is this or 4 blocks, whichever is larger, rounded up to
   * the granule). Default: the power of two nearest to managed bytes / 256, clamped to
   * 4 KiB..64 KiB (4 KiB for a 1 MiB buffer, 64 KiB from 16 MiB up), and at least one granule,
   * so that one partial slab in every class stays a small part of the space. A multiple of the
   * granule, at most 1 MiB.
   */
  slabSize?: number
}

/** Figures of one size class in {@link BufMgrStats}. */
export interface BufMgrClassStats {
  /** Block size of the class, bytes (the usable size of its regions). */
  size: number
  /** Blocks of this class's slabs handed out and not freed. */
  inUse: number
  /** Free blocks in this class's slabs (partial slabs and the cached empty slab). */
  free: number
  /** Slabs of this class, including a cached empty one. */
  slabs: number
  /** Bytes of one slab of this class. */
  slabBytes: number
}

/** A snapshot of a manager's state, from {@link BufferManager.stats}. Sizes in bytes. */
export interface BufMgrStats {
  /** Bytes under management (whole granules of the managed range). */
  managedBytes: number
  /** Usable bytes of the live regions (the sum of their `sizeOf`). */
  bytesInUse: number
  /** Bytes the callers asked for, summed over the live regions. */
  requestedBytesInUse: number
  /** Live regions. */
  regionsInUse: number
  /** Highest `bytesInUse` ever seen. */
  highWaterBytes: number
  /**
   * Everything allocatable: free granules of the coalescing allocator, cached empty slabs, and
   * free blocks of partial slabs.
   */
  freeBytes: number
  /** Largest `nbytes` for which `alloc(nbytes)` succeeds right now (trim included). */
  largestFreeRegion: number
  /** Successful allocations since creation. */
  allocCount: number
  /** Successful frees since creation. */
  freeCount: number
  /** Allocations that returned 0 (exhaustion). */
  failedAllocs: number
  /** Live regions served by the coalescing allocator (large requests and class fallbacks). */
  largeRegionsInUse: number
  /** One entry per size class, smallest first. */
  classes: BufMgrClassStats[]
}

function isBuffer (b: unknown): b is ArrayBuffer | SharedArrayBuffer {
  const tag = Object.prototype.toString.call(b)
  return tag === '[object ArrayBuffer]' || tag === '[object SharedArrayBuffer]'
}

function badOptions (what: string): BufMgrError {
  return new BufMgrError(BufMgrErrorCode.BAD_OPTIONS, `bufmgr: bad options: ${what}`)
}

function intOption (v: unknown, name: string, dflt: number, min: number, max: number): number {
  if (v === undefined) return dflt
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) {
    throw badOptions(`${name} must be an integer in [${min}, ${max}], got ${String(v)}`)
  }
  return v
}

function boolOption (v: unknown, name: string, dflt: boolean): boolean {
  if (v === undefined) return dflt
  if (typeof v !== 'boolean') throw badOptions(`${name} must be a boolean, got ${String(v)}`)
  return v
}

function growI32 (a: Int32Array, n: number): Int32Array {
  const b = new Int32Array(n)
  b.set(a)
  return b
}


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
  private declare readonly bytes: Uint8Array
  /** The buffer as 8-byte words (its whole 8-byte prefix): regions are 16-byte aligned. */
  private declare readonly words: Float64Array
  /** Whether `buffer` is a SharedArrayBuffer (its TypedArray fill stores element by element). */
  private declare readonly shared: boolean
  private declare readonly gShift: number
  private declare readonly heap: GranuleHeap
  /** Everything the hot paths use: see the layout above the M_* constants. Grows (slow path). */
  private declare meta: Int32Array
  /**
   * `meta[slabOf + g]`: the slab record owning granule g, 0 (the sentinel) when g is not in a
   * slab.
   */
  private declare readonly slabOf: number
  /**
   * `meta[bits + (u >> 4)]`: two bits per 16-byte unit u, 16 units per word: bit 2(u & 15): a
   * live region starts at u; bit 2(u & 15) + 1: a region has ever started at u (tells
   * DOUBLE_FREE from NOT_ALLOCATED).
   */
  private declare readonly bits: number
  /** First slab record in `meta`, and the end of the records. */
  private declare readonly recBase: number
  private declare recEnd: number

  private declare readonly nClasses: number
  private declare readonly classSize: Int32Array
  private declare readonly classBlocks: Int32Array
  private declare readonly classGranules: Int32Array
  /**
   * The cached empty slab of each class (kept in the partial list), 0: none. Set when a slab
   * empties; an alloc that takes from it does not clear it, so it counts only while the slab is
   * still empty: see {@link cachedEmpty}.
   */
  private declare readonly emptySlab: Int32Array
  /** Head of each class's list of retired slab records (reused with their free lists), 0: none. */
  private declare readonly idFreeHead: Int32Array
  private declare readonly classSlabs: Int32Array

  /** Successful frees (allocs = frees + live regions, counted in stats()). */
  private declare frees: number
  private declare lastSize: number
  private declare largeRegions: number
  private declare failed: number

  /**
   * Creates a manager. Setup cost: O(managed bytes / granule) for the metadata arrays.
   * @param opts [in] options; see {@link BufferManagerOptions}
   * @throws BufMgrError `BAD_OPTIONS` for an invalid option or a range smaller than one granule
   */
  constructor (opts: BufferManagerOptions = {}) {
    if (opts === null || typeof opts !== 'object') throw badOptions('options must be an object')
    let buffer: ArrayBuffer | SharedArrayBuffer
    if (opts.buffer !== undefined) {
      if (!isBuffer(opts.buffer)) throw badOptions('buffer must be an ArrayBuffer or a SharedArrayBuffer')
      buffer = opts.buffer
    } else {
      const size = intOption(opts.size, 'size', DEFAULT_SIZE, 1, MAX_END)
      const shared = boolOption(opts.shared, 'shared', true)
      if (shared && typeof SharedArrayBuffer === 'undefined') throw badOptions('SharedArrayBuffer is not available here; pass shared: false')
      buffer = shared ? new SharedArrayBuffer(size) : new ArrayBuffer(size)
    }
    const total = buffer.byteLength
    const offset = intOption(opts.offset, 'offset', 0, 0, total)
    const length = intOption(opts.length, 'length', total - offset, 0, total - offset)
    const rangeEnd = offset + length
    if (rangeEnd > MAX_END) throw badOptions(`the managed range must end at or below 2 GiB (${MAX_END}); it ends at ${rangeEnd}`)
    const granule = intOption(opts.granule, 'granule', DEFAULT_GRANULE, ALIGNMENT, 65536)
    if ((granule & (granule - 1)) !== 0) throw badOptions(`granule must be a power of two, got ${granule}`)
    let start = Math.ceil(offset / ALIGNMENT) * ALIGNMENT
    if (start === 0) start = ALIGNMENT
    const count = Math.floor((rangeEnd - start) / granule)
    if (count < 1) {
      throw badOptions(`the managed range [${start}, ${rangeEnd}) is smaller than one granule (${granule} bytes)`)
    }
    const managed = count * granule
    const requestedMax = intOption(opts.maxClassSize, 'maxClassSize', DEFAULT_MAX_CLASS, 16, MAX_CLASS_LIMIT)
    const dfltSlab = Math.max(granule, Math.min(64 * KIB, Math.max(4 * KIB, 2 ** Math.round(Math.log2(managed / 256)))))
    const slabSize = intOption(opts.slabSize, 'slabSize', dfltSlab, granule, MAX_SLAB)
    if (slabSize % granule !== 0) throw badOptions(`slabSize (${slabSize}) must be a multiple of the granule (${granule})`)
    const zeroFill = boolOption(opts.zeroFill, 'zeroFill', false)
    const top = classIndexOf(requestedMax)
    const maxClass = classSizeOf(top)
    const nc = top + 1

    this.buffer = buffer
    this.start = start
    this.end = start + managed
    this.managedBytes = managed
    this.granule = granule
    this.maxClassSize = maxClass
    this.slabSize = slabSize
    this.zeroFill = zeroFill
    this.bytes = new Uint8Array(buffer)
    this.words = new Float64Array(buffer, 0, Math.floor(total / 8))
    this.shared = Object.prototype.toString.call(buffer) === '[object SharedArrayBuffer]'
    this.gShift = 31 - Math.clz32(granule)
    this.heap = new GranuleHeap(count)
    const tableEnd = M_CLASSOF + (maxClass >>> ALIGN_SHIFT) + 1
    const bitsBase = tableEnd + count
    const recBase = (bitsBase + (((managed >>> ALIGN_SHIFT) + 15) >>> 4) + SLAB_STRIDE - 1) & ~(SLAB_STRIDE - 1)
    const meta = new Int32Array(recBase + 64 * SLAB_STRIDE)
    for (let i = 0; M_CLASSOF + i < tableEnd; i++) meta[M_CLASSOF + i] = M_HEADS + classIndexOf(i << ALIGN_SHIFT)
    this.meta = meta
    this.slabOf = tableEnd
    this.bits = bitsBase
    this.recBase = recBase
    this.recEnd = recBase
    this.nClasses = nc
    this.classSize = new Int32Array(nc)
    this.classBlocks = new Int32Array(nc)
    this.classGranules = new Int32Array(nc)
    for (let c = 0; c < nc; c++) {
      const size = classSizeOf(c)
      const slabBytes = Math.max(slabSize, Math.ceil(MIN_BLOCKS_PER_SLAB * size / granule) * granule)
      this.classSize[c] = size
      this.classBlocks[c] = Math.floor(slabBytes / size)
      this.classGranules[c] = slabBytes / granule
    }
    this.emptySlab = new Int32Array(nc)
    this.idFreeHead = new Int32Array(nc)
    this.classSlabs = new Int32Array(nc)
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
  alloc (nbytes: number, zero?: boolean): number {
    // Hot path: a class with a partial slab. Kept small (V8 inlines functions of up to 460
    // bytes of bytecode, 920 in all per caller); everything else is in allocSlow.
    let small: boolean
    // (a BigInt fails the integer test by throwing: the catch, which costs the path nothing, makes it BAD_SIZE)
    try { small = (nbytes >>> 0) === nbytes } catch { throw this.badSize(nbytes) }
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
  allocOrThrow (nbytes: number, zero?: boolean): number {
    const addr = this.alloc(nbytes, zero)
    if (addr === 0) {
      const st = this.stats()
      throw new BufMgrError(BufMgrErrorCode.EXHAUSTED,
        `bufmgr: out of space: requested ${nbytes} bytes; ${st.freeBytes} bytes free, largest free region ` +
        `${st.largestFreeRegion} bytes; ${st.bytesInUse} bytes in use in ${st.regionsInUse} regions of ` +
        `${st.managedBytes} managed bytes`)
    }
    return addr
  }

  /**
   * Frees a live region. O(1); allocates no JavaScript objects. A failed free changes nothing.
   * @param addr [in] an address returned by {@link alloc} and not yet freed
   * @throws BufMgrError `DOUBLE_FREE` (already freed), `NOT_ALLOCATED` (0, outside the managed
   *   range, unaligned, or never handed out), `INTERIOR` (inside a live region, not its start)
   */
  free (addr: number): void {
    // (a BigInt fails the arithmetic by throwing: the catch, which costs the path nothing, makes it NOT_ALLOCATED)
    let off: number
    try { off = addr - this.start } catch { throw this.misuse(addr, 'free') }
    // (addr | 0) === addr: an int32 (no string, fraction, NaN); then off >>> 0 < managedBytes
    // is exactly start ≤ addr < end, because end ≤ 2^31.
    if ((addr | 0) === addr && (off >>> 0) < this.managedBytes && (off & (ALIGNMENT - 1)) === 0) {
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
  sizeOf (addr: number): number {
    if (this.liveUnit(addr) < 0) throw this.misuse(addr, 'sizeOf')
    return this.usableOf(addr)
  }

  /**
   * Whether `addr` is the start of a live region. O(1); never throws.
   * @param addr [in] any value
   */
  isLive (addr: number): boolean {
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
  view (addr: number, nbytes?: number): Uint8Array {
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
  usableSizeFor (nbytes: number): number {
    if (!Number.isSafeInteger(nbytes) || nbytes < 0) throw this.badSize(nbytes)
    if (nbytes <= this.maxClassSize) return classSizeOf(classIndexOf(nbytes))
    return Math.ceil(nbytes / this.granule) * this.granule
  }

  /**
   * Gives every cached empty slab back to the coalescing allocator (where it merges with free
   * neighbours). O(number of classes). `alloc` calls it itself before reporting exhaustion.
   * @retval bytes released
   */
  trim (): number {
    let released = 0
    for (let c = 0; c < this.nClasses; c++) {
      const o = this.cachedEmpty(c)
      this.setCached(c, 0)
      if (o === 0) continue
      released += this.classGranules[c]! * this.granule
      this.unlinkPartial(c, o)
      this.releaseSlab(c, o)
    }
    return released
  }

  /**
   * A snapshot of the figures. Allocates, and walks the TLSF blocks, the slab records and the
   * blocks of the non-empty slabs (O(blocks + slab blocks + classes)): not for hot paths.
   */
  stats (): BufMgrStats {
    const heap = this.heap
    const m = this.meta
    const G = this.granule
    let largestRun = 0
    let run = 0
    for (let h = 0; h < heap.count; h += heap.tag[h]!) {
      const st = heap.state[h]
      let free = st === BlockState.FREE
      if (st === BlockState.SLAB) {
        const o = m[this.slabOf + h]!
        free = this.cachedEmpty(m[o + S_HSLOT]! - M_HEADS) === o
      }
      if (free) {
        run += heap.tag[h]!
        if (run > largestRun) largestRun = run
      } else {
        run = 0
      }
    }
    // blocks in use per class, from the slab records (the hot path keeps no per-class counts)
    const nc = this.nClasses
    const inUseOf = new Array<number>(nc).fill(0)
    let regions = this.largeRegions
    for (let o = this.recBase; o < this.recEnd; o += SLAB_STRIDE + m[o + S_SLOTS]!) {
      if (m[o + S_LIVE] !== 1) continue
      const used = m[o + S_NB]! - m[o + S_TOP]!
      inUseOf[m[o + S_HSLOT]! - M_HEADS] += used
      regions += used
    }
    let largest = largestRun * G
    let freeBytes = heap.freeGranules * G
    const classes: BufMgrClassStats[] = []
    for (let c = 0; c < nc; c++) {
      const size = this.classSize[c]!
      const nb = this.classBlocks[c]!
      const slabs = this.classSlabs[c]!
      const inUse = inUseOf[c]!
      let partialFree = slabs * nb - inUse
      if (this.cachedEmpty(c) !== 0) {
        partialFree -= nb
        freeBytes += this.classGranules[c]! * G
      }
      freeBytes += partialFree * size
      if (m[M_HEADS + c]! !== 0 && size > largest) largest = size
      classes.push({ size, inUse, free: slabs * nb - inUse, slabs, slabBytes: this.classGranules[c]! * G })
    }
    const frees = this.frees
    return {
      managedBytes: this.managedBytes,
      bytesInUse: m[M_INUSE]!,
      requestedBytesInUse: m[M_REQ]! + this.requestedInSlabs(),
      regionsInUse: regions,
      highWaterBytes: m[M_HIGH]!,
      freeBytes,
      largestFreeRegion: largest,
      allocCount: frees + regions,
      freeCount: frees,
      failedAllocs: this.failed,
      largeRegionsInUse: this.largeRegions,
      classes,
    }
  }

  // ───────────────────────────── internals ─────────────────────────────

  /** The 16-byte unit index of `addr` when it starts a live region, else -1. */
  private liveUnit (addr: number): number {
    if (typeof addr !== 'number' || (addr | 0) !== addr) return -1
    const off = (addr - this.start) | 0
    if ((off >>> 0) >= this.managedBytes || (off & (ALIGNMENT - 1)) !== 0) return -1
    const u = off >>> ALIGN_SHIFT
    return (this.meta[this.bits + (u >>> 4)]! & (1 << ((u & 15) << 1))) !== 0 ? u : -1
  }

  private usableOf (addr: number): number {
    const g = (addr - this.start) >>> this.gShift
    const o = this.meta[this.slabOf + g]!
    return o !== 0 ? this.meta[o + S_SIZE]! : this.heap.tag[g]! * this.granule
  }

  /** Class `c`'s cached empty slab if it is still empty, else 0. */
  private cachedEmpty (c: number): number {
    const o = this.emptySlab[c]!
    return o !== 0 && this.meta[o + S_TOP] === this.meta[o + S_NB] ? o : 0
  }

  /** Requested bytes of the live slab blocks: their sizes less their recorded slacks. O(slab blocks). */
  private requestedInSlabs (): number {
    const m = this.meta
    const bits = this.bits
    let total = 0
    for (let o = this.recBase; o < this.recEnd; o += SLAB_STRIDE + m[o + S_SLOTS]!) {
      if (m[o + S_LIVE] !== 1 || m[o + S_TOP] === m[o + S_NB]) continue
      const size = m[o + S_SIZE]!
      const step = size >>> ALIGN_SHIFT
      const shift = 27 - Math.clz32(size)
      const slots = o + SLAB_STRIDE
      const u0 = m[o + S_UNIT]!
      for (let j = 0, end = m[o + S_NB]! * step; j < end; j += step) {
        const u = u0 + j
        if ((m[bits + (u >>> 4)]! & (1 << ((u & 15) << 1))) !== 0) total += size - m[slots + (j >>> shift)]!
      }
    }
    return total
  }

  /** Makes slab record `o` (0: none) class `c`'s cached empty slab. */
  private setCached (c: number, o: number): void {
    const m = this.meta
    const old = this.emptySlab[c]!
    if (old !== 0) m[old + S_LIMIT] = m[old + S_NB]!
    this.emptySlab[c] = o
    if (o !== 0) m[o + S_LIMIT] = m[o + S_NB]! + 1
  }

  /** alloc() off the hot path: validation, no partial slab, large, exhaustion. */
  private allocSlow (nbytes: number, zero: boolean): number {
    if (!Number.isSafeInteger(nbytes) || nbytes < 0) throw this.badSize(nbytes)
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

  /**
   * Zeroes `size` bytes at `addr` (both multiples of 16). Up to 512 bytes: a loop of 8-byte
   * stores. Above, in an ArrayBuffer: `fill` (a memset). In a SharedArrayBuffer, `fill` stores
   * element by element (0.3 ns a byte), while `set` from a zero array copies words, so the region
   * is zeroed with `set` from zero views of 2^k bytes (k = 9..16), largest first.
   */
  private zero (addr: number, size: number): void {
    let a = addr
    const end = addr + size
    if (size > SMALL_ZERO) {
      if (!this.shared) {
        this.bytes.fill(0, addr, end)
        return
      }
      const views = zeroViews()
      for (let k = views.length - 1; k >= 0; k--) {
        const v = views[k]!
        while (end - a >= v.length) {
          this.bytes.set(v, a)
          a += v.length
        }
      }
    }
    const w = this.words
    for (let i = a >>> 3, e = end >>> 3; i < e; i++) w[i] = 0
  }

  /** Records a new live region (slow paths; the hot path does the same inline). */
  private noteAlloc (addr: number, usable: number): void {
    const m = this.meta
    const u = (addr - this.start) >>> ALIGN_SHIFT
    m[this.bits + (u >>> 4)] |= 3 << ((u & 15) << 1)
    this.lastSize = usable
    const inUse = m[M_INUSE]! + usable
    m[M_INUSE] = inUse
    if (inUse > m[M_HIGH]!) m[M_HIGH] = inUse
  }

  /** Takes a free block from slab record `o` (in its class's partial list, S_TOP ≥ 1). */
  private takeBlock (o: number, n: number): number {
    const m = this.meta
    const top = m[o]! - 1
    m[o] = top
    const size = m[o + S_SIZE]!
    const j = m[o + S_FIRST]!
    const slot = o + SLAB_STRIDE + (j >>> (27 - Math.clz32(size)))
    m[o + S_FIRST] = m[slot]!
    m[slot] = size - n
    if (top === 0) this.unlinkPartial(m[o + S_HSLOT]! - M_HEADS, o)
    const addr = this.start + ((m[o + S_UNIT]! + j) << ALIGN_SHIFT)
    this.noteAlloc(addr, size)
    return addr
  }

  /** Class `c` has no partial slab (its cached empty slab, if any, would be in the partial list). */
  private allocClassSlow (c: number, n: number): number {
    let o = this.createSlab(c)
    if (o === 0 && this.trim() > 0) o = this.createSlab(c)
    if (o !== 0) {
      this.linkPartial(c, o)
      return this.takeBlock(o, n)
    }
    // No slab: serve from the coalescing allocator, or from a larger class as a last resort.
    const addr = this.allocGranules(n === 0 ? 1 : (n + this.granule - 1) >>> this.gShift, n)
    if (addr !== 0) return addr
    for (let c2 = c + 1; c2 < this.nClasses; c2++) {
      const o2 = this.meta[M_HEADS + c2]!
      if (o2 !== 0 && this.classSize[c2]! - n <= MAX_SLACK) return this.takeBlock(o2, n)
    }
    return 0
  }

  private allocLarge (n: number): number {
    if (n > this.managedBytes) return 0
    const k = (n + this.granule - 1) >>> this.gShift
    let addr = this.allocGranules(k, n)
    if (addr === 0 && this.trim() > 0) addr = this.allocGranules(k, n)
    return addr
  }

  /** A LARGE block of `k` granules for a request of `n` bytes, or 0. */
  private allocGranules (k: number, n: number): number {
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
  private freeSlow (o: number, u: number): void {
    this.frees++
    if (o === 0) {
      this.freeLarge(u >>> (this.gShift - ALIGN_SHIFT))
      return
    }
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
        this.releaseSlab(c, o)
      }
    } else if (top === 0) {
      this.linkPartial(c, o) // it was full
    }
  }

  private freeLarge (h: number): void {
    const heap = this.heap
    const m = this.meta
    m[M_INUSE] -= heap.tag[h]! * this.granule
    m[M_REQ] -= heap.next[h]!
    this.largeRegions--
    heap.free(h)
  }

  /** Carves a new slab for class `c` from the coalescing allocator; 0 when there is no room. */
  private createSlab (c: number): number {
    const k = this.classGranules[c]!
    const h = this.heap.alloc(k, BlockState.SLAB)
    if (h < 0) return 0
    let o = this.idFreeHead[c]!
    if (o !== 0) {
      // a retired record of this class: its free list still links every block (it was empty)
      this.idFreeHead[c] = this.meta[o + S_NEXT]!
    } else {
      o = this.newSlabRecord(c)
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

  /** A new slab record of class `c`, all of its blocks in its free list (block 0 first). */
  private newSlabRecord (c: number): number {
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
  private releaseSlab (c: number, o: number): void {
    const m = this.meta
    const h = m[o + S_HEAD]!
    m.fill(0, this.slabOf + h, this.slabOf + h + this.classGranules[c]!)
    this.heap.free(h)
    m[o + S_LIVE] = 0
    m[o + S_NEXT] = this.idFreeHead[c]!
    this.idFreeHead[c] = o
    this.classSlabs[c]!--
  }

  private linkPartial (c: number, o: number): void {
    const m = this.meta
    const first = m[M_HEADS + c]!
    m[o + S_NEXT] = first
    m[o + S_PREV] = 0
    if (first !== 0) m[first + S_PREV] = o
    m[M_HEADS + c] = o
  }

  private unlinkPartial (c: number, o: number): void {
    const m = this.meta
    const nx = m[o + S_NEXT]!
    const pv = m[o + S_PREV]!
    if (pv !== 0) m[pv + S_NEXT] = nx
    else m[M_HEADS + c] = nx
    if (nx !== 0) m[nx + S_PREV] = pv
  }

  private badSize (nbytes: unknown): BufMgrError {
    return new BufMgrError(BufMgrErrorCode.BAD_SIZE, typeof nbytes === 'bigint'
      ? `bufmgr: size ${String(nbytes)}n is a BigInt, but a size is a number of bytes: pass ${Number(nbytes)}`
      : `bufmgr: size must be a non-negative safe integer number of bytes, got ${String(nbytes)}`)
  }

  /** The error for an address that is not a live region start (slow path: error reports only). */
  private misuse (addr: unknown, op: string): BufMgrError {
    const NA = BufMgrErrorCode.NOT_ALLOCATED
    if (typeof addr === 'bigint') return new BufMgrError(NA, `bufmgr: ${op}(${String(addr)}n): a BigInt, but an address is a number`)
    if (typeof addr !== 'number' || !Number.isSafeInteger(addr)) {
      return new BufMgrError(NA, `bufmgr: ${op}(${String(addr)}): not an address`)
    }
    if (addr === 0) return new BufMgrError(NA, `bufmgr: ${op}(0): 0 is NULL, never handed out`)
    const off = addr - this.start
    if (off < 0 || off >= this.managedBytes) {
      return new BufMgrError(NA, `bufmgr: ${op}(${addr}): outside the managed range [${this.start}, ${this.end})`)
    }
    const g = off >>> this.gShift
    const o = this.meta[this.slabOf + g]!
    let regionStart = -1
    let regionSize = 0
    if (o !== 0) {
      const m = this.meta
      const size = m[o + S_SIZE]!
      const first = this.start + (m[o + S_UNIT]! << ALIGN_SHIFT)
      const b = Math.floor((addr - first) / size)
      const bs = first + b * size
      if (b < m[o + S_NB]! && bs !== addr && this.liveUnit(bs) >= 0) {
        regionStart = bs
        regionSize = size
      }
    } else {
      const h = this.heap.headOf(g)
      if (this.heap.state[h] === BlockState.LARGE) {
        regionStart = this.start + h * this.granule
        regionSize = this.heap.tag[h]! * this.granule
      }
    }
    if (regionStart >= 0 && regionStart !== addr) {
      return new BufMgrError(BufMgrErrorCode.INTERIOR,
        `bufmgr: ${op}(${addr}): inside the live region at ${regionStart} (${regionSize} bytes), not its start`)
    }
    const u = off >>> ALIGN_SHIFT
    if (u << ALIGN_SHIFT === off && (this.meta[this.bits + (u >>> 4)]! & (2 << ((u & 15) << 1))) !== 0) {
      return new BufMgrError(BufMgrErrorCode.DOUBLE_FREE, `bufmgr: ${op}(${addr}): the region was already freed`)
    }
    return new BufMgrError(NA, `bufmgr: ${op}(${addr}): no region was handed out at this address`)
  }
}
