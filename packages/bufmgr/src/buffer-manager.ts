/**
 * BufferManager: size classes over slabs for small and medium regions, TLSF over granules for
 * large regions and for the slabs themselves. All bookkeeping lives in typed arrays outside the
 * managed buffer.
 *
 * Hot path (alloc/free/sizeOf/isLive): integer arithmetic on preallocated typed arrays; no
 * objects, closures or arrays are created. Slow paths (a class with no partial slab, exhaustion,
 * misuse, stats) may allocate.
 *
 *   alloc(n ≤ maxClassSize)  class c = classIndexOf(n)
 *     partial slab of c?      pop its free stack (or bump)                 ← hot path
 *                             (the class's cached empty slab is kept in its partial list)
 *     else a new slab from TLSF, else trim() and retry,
 *     else a large block of ceil(n / granule) granules from TLSF,
 *     else a block of the smallest larger class that has a partial slab, else 0.
 *   alloc(n > maxClassSize)  TLSF block of ceil(n / granule) granules, else trim() and retry, else 0.
 *   free(addr)               live bit → slabOf[granule] → the slab's free stack, or TLSF free.
 */
import { BufMgrError, BufMgrErrorCode } from './errors.js'
import { ALIGN_SHIFT, ALIGNMENT, MAX_CLASS_LIMIT, classIndexOf, classSizeOf } from './size-classes.js'
import { BlockState, GranuleHeap } from './tlsf.js'

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
/** Largest allowed slab size, bytes (keeps block indices in 16 bits). */
const MAX_SLAB = MIB
/** The managed range must end at or below this byte offset (offsets stay int32). */
const MAX_END = 2 ** 31
/** Largest slack (class size − requested bytes) a slab block can record. */
const MAX_SLACK = 0xffff

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
  readonly buffer: ArrayBuffer | SharedArrayBuffer
  /** Alignment of every address handed out, in bytes, from the start of the buffer: 16. */
  readonly alignment: number = ALIGNMENT
  /** First managed byte offset (the start of the first granule). */
  readonly start: number
  /** End (exclusive) of the managed bytes: `start + managedBytes`. */
  readonly end: number
  /** Bytes under management: a whole number of granules. */
  readonly managedBytes: number
  /** Granule of the coalescing allocator, bytes. */
  readonly granule: number
  /** Largest request served by size classes, bytes (the option rounded up to a class size). */
  readonly maxClassSize: number
  /** Minimum slab size, bytes. */
  readonly slabSize: number
  /** Whether every region is zeroed when allocated. */
  readonly zeroFill: boolean

  private readonly bytes: Uint8Array
  private readonly gShift: number
  private readonly heap: GranuleHeap
  /** Slab id owning each granule, -1 when the granule is not in a slab. */
  private readonly slabOf: Int32Array
  /** One bit per 16-byte unit: a live region starts here. */
  private readonly liveBits: Int32Array
  /** One bit per 16-byte unit: a region has ever started here (tells DOUBLE_FREE from NOT_ALLOCATED). */
  private readonly everBits: Int32Array

  private readonly nClasses: number
  private readonly classSize: Int32Array
  private readonly classBlocks: Int32Array
  private readonly classGranules: Int32Array
  /** Head of each class's list of partial slabs (some blocks free, some used), -1: none. */
  private readonly partialHead: Int32Array
  /** The cached empty slab of each class (kept in the partial list), -1: none. */
  private readonly emptySlab: Int32Array
  /** Head of each class's list of retired slab ids (their stacks are reused), -1: none. */
  private readonly idFreeHead: Int32Array
  private readonly classInUse: Int32Array
  private readonly classSlabs: Int32Array

  // Slab records, indexed by slab id; grown by doubling when a new id is needed.
  private sClass: Int32Array
  private sAddr: Int32Array
  private sHead: Int32Array
  private sFree: Int32Array
  private sTop: Int32Array
  private sBump: Int32Array
  private sNext: Int32Array
  private sPrev: Int32Array
  /** Per slab: free stack of block indices in [0, n), requested-size slack in [n, 2n). */
  private readonly sMem: Uint16Array[] = []
  private slabIds = 0

  private cachedSlabs = 0
  private lastSize = 0
  private inUseBytes = 0
  private requestedBytes = 0
  private regions = 0
  private largeRegions = 0
  private highWater = 0
  private allocs = 0
  private frees = 0
  private failed = 0

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

    this.buffer = buffer
    this.bytes = new Uint8Array(buffer)
    this.start = start
    this.end = start + managed
    this.managedBytes = managed
    this.granule = granule
    this.gShift = 31 - Math.clz32(granule)
    this.slabSize = slabSize
    this.zeroFill = boolOption(opts.zeroFill, 'zeroFill', false)
    this.heap = new GranuleHeap(count)
    this.slabOf = new Int32Array(count).fill(-1)
    const units = managed >>> ALIGN_SHIFT
    this.liveBits = new Int32Array((units + 31) >>> 5)
    this.everBits = new Int32Array((units + 31) >>> 5)

    const top = classIndexOf(requestedMax)
    this.maxClassSize = classSizeOf(top)
    const nc = top + 1
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
    this.partialHead = new Int32Array(nc).fill(-1)
    this.emptySlab = new Int32Array(nc).fill(-1)
    this.idFreeHead = new Int32Array(nc).fill(-1)
    this.classInUse = new Int32Array(nc)
    this.classSlabs = new Int32Array(nc)

    const cap = 16
    this.sClass = new Int32Array(cap)
    this.sAddr = new Int32Array(cap)
    this.sHead = new Int32Array(cap)
    this.sFree = new Int32Array(cap)
    this.sTop = new Int32Array(cap)
    this.sBump = new Int32Array(cap)
    this.sNext = new Int32Array(cap)
    this.sPrev = new Int32Array(cap)
  }

  /**
   * Allocates a region of at least `nbytes` bytes. O(1); allocates no JavaScript objects
   * (except when a class needs its first slab record or the slab table grows: amortised).
   * `alloc(0)` returns a unique 16-byte region (like `malloc(0)` returning a unique pointer).
   * When no space is left it calls {@link trim} and retries before giving up.
   * @param nbytes [in] bytes wanted: a non-negative safe integer
   * @param zero   [in] zero the region's usable bytes (always done when the manager has `zeroFill`)
   * @retval the region's byte offset in {@link buffer} (> 0, a multiple of 16); the caller owns it until {@link free}
   * @retval 0 when the space is exhausted (counted in `stats().failedAllocs`)
   * @throws BufMgrError `BAD_SIZE` when `nbytes` is not a non-negative safe integer
   */
  alloc (nbytes: number, zero?: boolean): number {
    if (!Number.isSafeInteger(nbytes) || nbytes < 0) throw this.badSize(nbytes)
    let addr: number
    if (nbytes <= this.maxClassSize) {
      const c = classIndexOf(nbytes)
      const s = this.partialHead[c]!
      addr = s >= 0 ? this.takeBlock(s, c, nbytes) : this.allocClassSlow(c, nbytes)
    } else {
      addr = this.allocLarge(nbytes)
    }
    if (addr === 0) {
      this.failed++
      return 0
    }
    if (zero === true || this.zeroFill) this.bytes.fill(0, addr, addr + this.lastSize)
    return addr
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
    const u = this.liveUnit(addr)
    if (u < 0) throw this.misuse(addr, 'free')
    this.liveBits[u >>> 5] &= ~(1 << (u & 31))
    const g = (addr - this.start) >>> this.gShift
    const s = this.slabOf[g]!
    if (s >= 0) this.freeBlock(s, addr)
    else this.freeLarge(g)
    this.regions--
    this.frees++
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
    if (this.cachedSlabs === 0) return 0
    let released = 0
    for (let c = 0; c < this.nClasses; c++) {
      const s = this.emptySlab[c]!
      if (s < 0) continue
      this.emptySlab[c] = -1
      released += this.classGranules[c]! * this.granule
      this.unlinkPartial(c, s)
      this.releaseSlab(c, s)
    }
    this.cachedSlabs = 0
    return released
  }

  /**
   * A snapshot of the figures. Allocates and walks the blocks (O(blocks + classes)): not for
   * hot paths.
   */
  stats (): BufMgrStats {
    const heap = this.heap
    const G = this.granule
    let largestRun = 0
    let run = 0
    for (let h = 0; h < heap.count; h += heap.tag[h]!) {
      const st = heap.state[h]
      const free = st === BlockState.FREE ||
        (st === BlockState.SLAB && this.emptySlab[this.sClass[this.slabOf[h]!]!] === this.slabOf[h])
      if (free) {
        run += heap.tag[h]!
        if (run > largestRun) largestRun = run
      } else {
        run = 0
      }
    }
    let largest = largestRun * G
    let freeBytes = heap.freeGranules * G
    const classes: BufMgrClassStats[] = []
    for (let c = 0; c < this.nClasses; c++) {
      const size = this.classSize[c]!
      const nb = this.classBlocks[c]!
      const slabs = this.classSlabs[c]!
      const inUse = this.classInUse[c]!
      let partialFree = slabs * nb - inUse
      if (this.emptySlab[c]! >= 0) {
        partialFree -= nb
        freeBytes += this.classGranules[c]! * G
      }
      freeBytes += partialFree * size
      if (this.partialHead[c]! >= 0 && size > largest) largest = size
      classes.push({ size, inUse, free: slabs * nb - inUse, slabs, slabBytes: this.classGranules[c]! * G })
    }
    return {
      managedBytes: this.managedBytes,
      bytesInUse: this.inUseBytes,
      requestedBytesInUse: this.requestedBytes,
      regionsInUse: this.regions,
      highWaterBytes: this.highWater,
      freeBytes,
      largestFreeRegion: largest,
      allocCount: this.allocs,
      freeCount: this.frees,
      failedAllocs: this.failed,
      largeRegionsInUse: this.largeRegions,
      classes,
    }
  }

  // ───────────────────────────── internals ─────────────────────────────

  /** The 16-byte unit index of `addr` when it starts a live region, else -1. */
  private liveUnit (addr: number): number {
    if (typeof addr !== 'number') return -1
    const off = addr - this.start
    if (!(off >= 0 && off < this.managedBytes)) return -1
    const u = off >>> ALIGN_SHIFT
    if (u << ALIGN_SHIFT !== off) return -1
    return (this.liveBits[u >>> 5]! & (1 << (u & 31))) !== 0 ? u : -1
  }

  private usableOf (addr: number): number {
    const g = (addr - this.start) >>> this.gShift
    const s = this.slabOf[g]!
    return s >= 0 ? this.classSize[this.sClass[s]!]! : this.heap.tag[g]! * this.granule
  }

  /** Records a new live region. */
  private noteAlloc (addr: number, usable: number, requested: number): void {
    const u = (addr - this.start) >>> ALIGN_SHIFT
    const w = u >>> 5
    const bit = 1 << (u & 31)
    this.liveBits[w] |= bit
    this.everBits[w] |= bit
    this.lastSize = usable
    const inUse = this.inUseBytes + usable
    this.inUseBytes = inUse
    if (inUse > this.highWater) this.highWater = inUse
    this.requestedBytes += requested
    this.regions++
    this.allocs++
  }

  /** Takes a free block from slab `s` (in class `c`'s partial list). */
  private takeBlock (s: number, c: number, n: number): number {
    const size = this.classSize[c]!
    const nb = this.classBlocks[c]!
    const mem = this.sMem[s]!
    const top = this.sTop[s]!
    let b: number
    if (top > 0) {
      b = mem[top - 1]!
      this.sTop[s] = top - 1
    } else {
      b = this.sBump[s]!
      this.sBump[s] = b + 1
    }
    mem[nb + b] = size - n
    const f = this.sFree[s]! - 1
    this.sFree[s] = f
    if (f === nb - 1 && this.emptySlab[c] === s) {
      this.emptySlab[c] = -1 // the cached empty slab is in use again
      this.cachedSlabs--
    }
    if (f === 0) this.unlinkPartial(c, s)
    this.classInUse[c]!++
    const addr = this.sAddr[s]! + b * size
    this.noteAlloc(addr, size, n)
    return addr
  }

  /** Class `c` has no partial slab (its cached empty slab, if any, would be in the partial list). */
  private allocClassSlow (c: number, n: number): number {
    let s = this.createSlab(c)
    if (s < 0 && this.cachedSlabs > 0) {
      this.trim()
      s = this.createSlab(c)
    }
    if (s >= 0) {
      this.linkPartial(c, s)
      return this.takeBlock(s, c, n)
    }
    // No slab: serve from the coalescing allocator, or from a larger class as a last resort.
    const addr = this.allocGranules(n === 0 ? 1 : (n + this.granule - 1) >>> this.gShift, n)
    if (addr !== 0) return addr
    for (let c2 = c + 1; c2 < this.nClasses; c2++) {
      const s2 = this.partialHead[c2]!
      if (s2 >= 0 && this.classSize[c2]! - n <= MAX_SLACK) return this.takeBlock(s2, c2, n)
    }
    return 0
  }

  private allocLarge (n: number): number {
    if (n > this.managedBytes) return 0
    const k = (n + this.granule - 1) >>> this.gShift
    let addr = this.allocGranules(k, n)
    if (addr === 0 && this.cachedSlabs > 0) {
      this.trim()
      addr = this.allocGranules(k, n)
    }
    return addr
  }

  /** A LARGE block of `k` granules for a request of `n` bytes, or 0. */
  private allocGranules (k: number, n: number): number {
    const h = this.heap.alloc(k, BlockState.LARGE)
    if (h < 0) return 0
    this.heap.next[h] = n
    this.largeRegions++
    const addr = this.start + h * this.granule
    this.noteAlloc(addr, k * this.granule, n)
    return addr
  }

  private freeBlock (s: number, addr: number): void {
    const c = this.sClass[s]!
    const size = this.classSize[c]!
    const nb = this.classBlocks[c]!
    const mem = this.sMem[s]!
    const b = ((addr - this.sAddr[s]!) / size) | 0
    this.requestedBytes -= size - mem[nb + b]!
    this.inUseBytes -= size
    const top = this.sTop[s]!
    mem[top] = b
    this.sTop[s] = top + 1
    const f = this.sFree[s]! + 1
    this.sFree[s] = f
    this.classInUse[c]!--
    if (f === nb) {
      if (this.emptySlab[c]! < 0) {
        // keep it as the class's cached empty slab, still in the partial list, so that the next
        // alloc of this class takes the hot path (no thrash when one size ping-pongs)
        if (f === 1) this.linkPartial(c, s)
        this.emptySlab[c] = s
        this.cachedSlabs++
      } else {
        if (f !== 1) this.unlinkPartial(c, s)
        this.releaseSlab(c, s)
      }
    } else if (f === 1) {
      this.linkPartial(c, s)
    }
  }

  private freeLarge (h: number): void {
    const heap = this.heap
    this.inUseBytes -= heap.tag[h]! * this.granule
    this.requestedBytes -= heap.next[h]!
    this.largeRegions--
    heap.free(h)
  }

  /** Carves a new slab for class `c` from the coalescing allocator; -1 when there is no room. */
  private createSlab (c: number): number {
    const k = this.classGranules[c]!
    const h = this.heap.alloc(k, BlockState.SLAB)
    if (h < 0) return -1
    const nb = this.classBlocks[c]!
    let s = this.idFreeHead[c]!
    if (s >= 0) {
      this.idFreeHead[c] = this.sNext[s]!
    } else {
      s = this.newSlabId()
      this.sMem[s] = new Uint16Array(2 * nb)
    }
    this.sClass[s] = c
    this.sHead[s] = h
    this.sAddr[s] = this.start + h * this.granule
    this.sFree[s] = nb
    this.sTop[s] = 0
    this.sBump[s] = 0
    this.slabOf.fill(s, h, h + k)
    this.classSlabs[c]!++
    return s
  }

  /** Gives an empty slab back to the coalescing allocator and retires its id to its class. */
  private releaseSlab (c: number, s: number): void {
    const h = this.sHead[s]!
    this.slabOf.fill(-1, h, h + this.classGranules[c]!)
    this.heap.free(h)
    this.sNext[s] = this.idFreeHead[c]!
    this.idFreeHead[c] = s
    this.classSlabs[c]!--
  }

  private newSlabId (): number {
    const s = this.slabIds++
    if (s === this.sClass.length) {
      const cap = 2 * s
      this.sClass = growI32(this.sClass, cap)
      this.sAddr = growI32(this.sAddr, cap)
      this.sHead = growI32(this.sHead, cap)
      this.sFree = growI32(this.sFree, cap)
      this.sTop = growI32(this.sTop, cap)
      this.sBump = growI32(this.sBump, cap)
      this.sNext = growI32(this.sNext, cap)
      this.sPrev = growI32(this.sPrev, cap)
    }
    return s
  }

  private linkPartial (c: number, s: number): void {
    const first = this.partialHead[c]!
    this.sNext[s] = first
    this.sPrev[s] = -1
    if (first >= 0) this.sPrev[first] = s
    this.partialHead[c] = s
  }

  private unlinkPartial (c: number, s: number): void {
    const nx = this.sNext[s]!
    const pv = this.sPrev[s]!
    if (pv >= 0) this.sNext[pv] = nx
    else this.partialHead[c] = nx
    if (nx >= 0) this.sPrev[nx] = pv
  }

  private badSize (nbytes: unknown): BufMgrError {
    return new BufMgrError(BufMgrErrorCode.BAD_SIZE,
      `bufmgr: size must be a non-negative safe integer number of bytes, got ${String(nbytes)}`)
  }

  /** The error for an address that is not a live region start (slow path: error reports only). */
  private misuse (addr: unknown, op: string): BufMgrError {
    const NA = BufMgrErrorCode.NOT_ALLOCATED
    if (typeof addr !== 'number' || !Number.isSafeInteger(addr)) {
      return new BufMgrError(NA, `bufmgr: ${op}(${String(addr)}): not an address`)
    }
    if (addr === 0) return new BufMgrError(NA, `bufmgr: ${op}(0): 0 is NULL, never handed out`)
    const off = addr - this.start
    if (off < 0 || off >= this.managedBytes) {
      return new BufMgrError(NA, `bufmgr: ${op}(${addr}): outside the managed range [${this.start}, ${this.end})`)
    }
    const g = off >>> this.gShift
    const s = this.slabOf[g]!
    let regionStart = -1
    let regionSize = 0
    if (s >= 0) {
      const size = this.classSize[this.sClass[s]!]!
      const b = Math.floor((addr - this.sAddr[s]!) / size)
      const bs = this.sAddr[s]! + b * size
      if (b < this.classBlocks[this.sClass[s]!]! && bs !== addr && this.liveUnit(bs) >= 0) {
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
    if (u << ALIGN_SHIFT === off && (this.everBits[u >>> 5]! & (1 << (u & 31))) !== 0) {
      return new BufMgrError(BufMgrErrorCode.DOUBLE_FREE, `bufmgr: ${op}(${addr}): the region was already freed`)
    }
    return new BufMgrError(NA, `bufmgr: ${op}(${addr}): no region was handed out at this address`)
  }
}
