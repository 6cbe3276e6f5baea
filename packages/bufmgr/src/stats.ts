/**
 * A manager's figures: the {@link BufMgrStats} snapshot and how it is derived. The hot paths keep
 * only bytes in use and its high water mark (in `meta`) and the free count; the rest is counted
 * here from the coalescing allocator's blocks and the slab records, off every hot path.
 */
import { ALIGN_SHIFT, M_HEADS, M_HIGH, M_INUSE, M_REQ, S_HSLOT, S_LIVE, S_NB, S_SIZE, S_SLOTS, S_TOP, S_UNIT, SLAB_STRIDE } from './layout.js'
import type { SlabTable } from './slabs.js'
import { BlockState } from './tlsf.js'

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

/**
 * The snapshot. Allocates, and walks the TLSF blocks, the slab records and the blocks of the
 * non-empty slabs: O(blocks + slab blocks + classes).
 * @param slabs        [in] the manager's slab table (with `meta` and the coalescing allocator)
 * @param managedBytes [in] bytes under management
 * @param frees        [in] successful frees since creation
 * @param largeRegions [in] live regions of the coalescing allocator
 * @param failed       [in] allocations that returned 0
 */
export function collectStats(slabs: SlabTable, managedBytes: number, frees: number, largeRegions: number, failed: number): BufMgrStats {
  const heap = slabs.heap
  const m = slabs.meta
  const G = slabs.granule
  let largestRun = 0
  let run = 0
  for (let h = 0; h < heap.count; h += heap.tag[h]!) {
    const st = heap.state[h]
    let free = st === BlockState.FREE
    if (st === BlockState.SLAB) {
      const o = m[slabs.slabOf + h]!
      free = slabs.cachedEmpty(m[o + S_HSLOT]! - M_HEADS) === o
    }
    if (free) {
      run += heap.tag[h]!
      if (run > largestRun) largestRun = run
    } else {
      run = 0
    }
  }
  // blocks in use per class, from the slab records (the hot path keeps no per-class counts)
  const nc = slabs.nClasses
  const inUseOf = new Array<number>(nc).fill(0)
  let regions = largeRegions
  for (let o = slabs.recBase; o < slabs.recEnd; o += SLAB_STRIDE + m[o + S_SLOTS]!) {
    if (m[o + S_LIVE] !== 1) continue
    const used = m[o + S_NB]! - m[o + S_TOP]!
    inUseOf[m[o + S_HSLOT]! - M_HEADS] += used
    regions += used
  }
  let largest = largestRun * G
  let freeBytes = heap.freeGranules * G
  const classes: BufMgrClassStats[] = []
  for (let c = 0; c < nc; c++) {
    const size = slabs.classSize[c]!
    const nb = slabs.classBlocks[c]!
    const slabCount = slabs.classSlabs[c]!
    const inUse = inUseOf[c]!
    let partialFree = slabCount * nb - inUse
    if (slabs.cachedEmpty(c) !== 0) {
      partialFree -= nb
      freeBytes += slabs.classGranules[c]! * G
    }
    freeBytes += partialFree * size
    if (m[M_HEADS + c]! !== 0 && size > largest) largest = size
    classes.push({ size, inUse, free: slabCount * nb - inUse, slabs: slabCount, slabBytes: slabs.classGranules[c]! * G })
  }
  return {
    managedBytes,
    bytesInUse: m[M_INUSE]!,
    requestedBytesInUse: m[M_REQ]! + requestedInSlabs(slabs),
    regionsInUse: regions,
    highWaterBytes: m[M_HIGH]!,
    freeBytes,
    largestFreeRegion: largest,
    allocCount: frees + regions,
    freeCount: frees,
    failedAllocs: failed,
    largeRegionsInUse: largeRegions,
    classes,
  }
}

/** Requested bytes of the live slab blocks: their sizes less their recorded slacks. O(slab blocks). */
function requestedInSlabs(slabs: SlabTable): number {
  const m = slabs.meta
  const bits = slabs.bits
  let total = 0
  for (let o = slabs.recBase; o < slabs.recEnd; o += SLAB_STRIDE + m[o + S_SLOTS]!) {
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
