/**
 * The coalescing allocator: TLSF (two-level segregated fit) over granules, with all of its
 * bookkeeping off-band in typed arrays indexed by granule number.
 *
 * Block layout (g = granule index, 0 ≤ g < count):
 * - the managed granules are tiled by blocks; a block is `tag[h]` granules starting at its head h;
 * - `tag[h]` and `tag[h + size - 1]` (its tail) both hold the size, so the block before h is found
 *   from `tag[h - 1]` (boundary tags, as in dlmalloc, but outside the managed buffer);
 * - `state[h]` is FREE, LARGE or SLAB at a head and 0 at every other granule, so a walk back from
 *   any granule to the nearest non-zero state finds the block that contains it;
 * - free blocks sit in one of 16 × FL doubly linked lists (`next`/`prev` at the head), chosen by
 *   (first level = log2(size), second level = the next 4 bits); two bitmaps say which lists are
 *   non-empty, so a fitting list is found with two `Math.clz32` calls;
 * - the manager keeps the requested byte count of a LARGE block in `next[h]` (unused while the
 *   block is not free).
 *
 * alloc and free are O(1): a bitmap search, a list unlink, a split or up to two merges.
 */

/** Block states, as stored in `state[head]`. */
export const BlockState = {
  /** In a free list. */
  FREE: 1,
  /** A large region handed out to a user. */
  LARGE: 2,
  /** A slab of a size class. */
  SLAB: 3,
} as const

/** One of the {@link BlockState} values. */
export type BlockState = (typeof BlockState)[keyof typeof BlockState]

const SL_BITS = 4
const SL_COUNT = 1 << SL_BITS
const FL_COUNT = 32

/** List index (first level × 16 + second level) of a block of `s` granules (s ≥ 1). */
function listIndexOf(s: number): number {
  if (s < SL_COUNT) return s
  const log = 31 - Math.clz32(s)
  return ((log - 3) << SL_BITS) | ((s >>> (log - SL_BITS)) & (SL_COUNT - 1))
}

/** Index of the lowest set bit of a non-zero 32-bit word. */
function lowestBit(x: number): number {
  return 31 - Math.clz32(x & -x)
}

/** TLSF over `count` granules. Internal to the package. */
export class GranuleHeap {
  // `declare`d fields, all set in the constructor: V8 then knows their exact types (a field
  // without initializer would first hold undefined). See BufferManager.
  /** Number of granules managed. */
  declare readonly count: number
  /** Block size in granules, at each block's head and tail. */
  declare readonly tag: Int32Array
  /** {@link BlockState} at each block's head; 0 elsewhere. */
  declare readonly state: Uint8Array
  /** Free-list successor at a free head (-1: none); requested bytes at a LARGE head. */
  declare readonly next: Int32Array
  /** Free-list predecessor at a free head (-1: none). */
  declare readonly prev: Int32Array
  /** Granules currently in free blocks. */
  declare freeGranules: number

  declare private readonly heads: Int32Array
  declare private readonly slMap: Int32Array
  private flMap = 0

  /** @param count [in] granules to manage (≥ 1, < 2^31) */
  constructor(count: number) {
    this.count = count
    this.tag = new Int32Array(count)
    this.state = new Uint8Array(count)
    this.next = new Int32Array(count)
    this.prev = new Int32Array(count)
    this.heads = new Int32Array(FL_COUNT * SL_COUNT).fill(-1)
    this.slMap = new Int32Array(FL_COUNT)
    this.tag[0] = count
    this.tag[count - 1] = count
    this.state[0] = BlockState.FREE
    this.freeGranules = count
    this.link(0, count)
  }

  /**
   * Takes a block of exactly `n` granules (splitting a larger free block). O(1), except that when
   * no list above `n`'s own list can serve, `n`'s own list is scanned for a fitting block (so a
   * request for exactly the largest free block succeeds).
   * @param n  [in] granules wanted, ≥ 1
   * @param st [in] state of the new block (LARGE or SLAB)
   * @retval the head granule, or -1 when no free block is large enough
   */
  alloc(n: number, st: BlockState): number {
    if (n > this.freeGranules) return -1
    const h = this.findFit(n)
    if (h < 0) return -1
    const tag = this.tag
    const s = tag[h]!
    this.unlink(h, s)
    if (s > n) {
      const r = h + n
      const rs = s - n
      tag[r] = rs
      tag[r + rs - 1] = rs
      this.state[r] = BlockState.FREE
      this.link(r, rs)
    }
    tag[h] = n
    tag[h + n - 1] = n
    this.state[h] = st
    this.freeGranules -= n
    return h
  }

  /**
   * Returns the block at head `h` (LARGE or SLAB) and merges it with free neighbours. O(1).
   * @param h [in] head granule of a used block
   */
  free(h: number): void {
    const tag = this.tag
    const state = this.state
    let s = tag[h]!
    this.freeGranules += s
    state[h] = 0
    const nx = h + s
    if (nx < this.count && state[nx] === BlockState.FREE) {
      const ns = tag[nx]!
      this.unlink(nx, ns)
      state[nx] = 0
      s += ns
    }
    if (h > 0) {
      const ps = tag[h - 1]!
      const ph = h - ps
      if (state[ph] === BlockState.FREE) {
        this.unlink(ph, ps)
        h = ph
        s += ps
      }
    }
    tag[h] = s
    tag[h + s - 1] = s
    state[h] = BlockState.FREE
    this.link(h, s)
  }

  /**
   * Head of the block that contains granule `g`. O(size of that block): for error reports only.
   * @param g [in] a granule index
   */
  headOf(g: number): number {
    const state = this.state
    while (state[g] === 0) g--
    return g
  }

  private findFit(n: number): number {
    let want = n
    if (n >= SL_COUNT) want = n + (1 << (31 - Math.clz32(n) - SL_BITS)) - 1
    const idx = listIndexOf(want)
    let fl = idx >>> SL_BITS
    let bits = this.slMap[fl]! & (~0 << (idx & (SL_COUNT - 1)))
    if (bits === 0) {
      const flBits = this.flMap & (~0 << (fl + 1))
      if (flBits === 0) return want === n ? -1 : this.scanList(n)
      fl = lowestBit(flBits)
      bits = this.slMap[fl]!
    }
    return this.heads[(fl << SL_BITS) | lowestBit(bits)]!
  }

  /** First block of at least `n` granules in `n`'s own list (which holds sizes around n). */
  private scanList(n: number): number {
    let h = this.heads[listIndexOf(n)]!
    while (h >= 0 && this.tag[h]! < n) h = this.next[h]!
    return h
  }

  private link(h: number, s: number): void {
    const idx = listIndexOf(s)
    const first = this.heads[idx]!
    this.next[h] = first
    this.prev[h] = -1
    if (first >= 0) this.prev[first] = h
    this.heads[idx] = h
    const fl = idx >>> SL_BITS
    this.slMap[fl] = this.slMap[fl]! | (1 << (idx & (SL_COUNT - 1)))
    this.flMap |= 1 << fl
  }

  private unlink(h: number, s: number): void {
    const nx = this.next[h]!
    const pv = this.prev[h]!
    if (nx >= 0) this.prev[nx] = pv
    if (pv >= 0) {
      this.next[pv] = nx
      return
    }
    const idx = listIndexOf(s)
    this.heads[idx] = nx
    if (nx < 0) {
      const fl = idx >>> SL_BITS
      const m = this.slMap[fl]! & ~(1 << (idx & (SL_COUNT - 1)))
      this.slMap[fl] = m
      if (m === 0) this.flMap &= ~(1 << fl)
    }
  }
}
