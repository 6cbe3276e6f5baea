/**
 * Records by message id, for lapi's per-message bookkeeping (the messages of one source being
 * reassembled; the rendezvous sends to one target) and layered libraries': a table indexed by the
 * id's low bits (the ids of one pair of tasks are consecutive, so the records alive at once fall
 * in different slots), doubled when two live ids would share a slot. Adding and removing
 * allocates nothing, unlike a Map: a Map that empties shrinks its table and grows it again on the
 * next entry, allocating both times (about 150 bytes a message on the multi-packet path, measured
 * on Node 20).
 */
export class IdTable<T extends { id: number }> {
  private slots: Array<T | null> = new Array<T | null>(16).fill(null)
  private mask = 15
  /** Records in the table. */
  size = 0

  /**
   * The record with id `id` (an integer, ≥ 0; ids that differ by a multiple of the table's size
   * are told apart by the record's own `id`), or undefined.
   */
  get(id: number): T | undefined {
    const m = this.slots[id & this.mask]!
    return m !== null && m.id === id ? m : undefined
  }

  /** Adds `m`, whose `id` is `id` (a record of that id already there is replaced). */
  set(id: number, m: T): void {
    for (;;) {
      const i = id & this.mask
      const e = this.slots[i]!
      if (e === null) {
        this.slots[i] = m
        this.size++
        return
      }
      if (e.id === id) {
        this.slots[i] = m
        return
      }
      this.grow()
    }
  }

  /** Removes the record with id `id`, if there is one. */
  delete(id: number): void {
    const i = id & this.mask
    const e = this.slots[i]!
    if (e !== null && e.id === id) {
      this.slots[i] = null
      this.size--
    }
  }

  /** Doubles the table (again, until the live records fall in different slots). */
  private grow(): void {
    for (let n = this.slots.length * 2; ; n *= 2) {
      const slots = new Array<T | null>(n).fill(null)
      let clash = false
      for (const e of this.slots) {
        if (e === null) continue
        const i = e.id & (n - 1)
        if (slots[i] !== null) {
          clash = true
          break
        }
        slots[i] = e
      }
      if (!clash) {
        this.slots = slots
        this.mask = n - 1
        return
      }
    }
  }
}

/**
 * The ids of one source's finished messages, so that a duplicate of one is dropped. Ids are
 * 32-bit and wrap (2^32 messages between two tasks take 36 minutes at 2 million a second), so
 * they are compared as serial numbers: the 2^31 ids before `below` are done, as is every id
 * marked in the window of bits over the ids after it that finished out of order (a message whose
 * rendezvous fell back to CTS, packets the reordering test transport held back). Marking and
 * testing allocate nothing; the window doubles when an id lies beyond it, up to MAX_WINDOW ids (a
 * Set did this job and allocated on every out-of-order completion). An id further ahead than that
 * (no sender gets so far ahead; a corrupt packet could claim it) goes into a Set instead, so that
 * no packet can make the window grow without bound.
 */
export class DoneIds {
  /** The widest the window grows, in ids (128 KiB of bits). */
  static readonly MAX_WINDOW = 1 << 20
  /** The next id not known done (an unsigned 32-bit integer): the 2^31 ids before it are done. */
  below = 0
  /** Ids after `below` marked done in the window. */
  above = 0
  private bits = new Int32Array(2)
  /** The window's width in ids, less one (a power of two less one). */
  private mask = 63
  /** Ids marked done too far after `below` for the window, or null. */
  private far: Set<number> | null = null

  /** Whether message `id` (an unsigned 32-bit integer) is done. */
  has(id: number): boolean {
    const d = (id - this.below) >>> 0
    return d > 0x7fffffff || (this.above !== 0 && d <= this.mask && this.bit(id)) || (this.far !== null && this.far.has(id))
  }

  /** Marks message `id` (an unsigned 32-bit integer) done. */
  add(id: number): void {
    const d = (id - this.below) >>> 0
    if (d > 0x7fffffff) return
    if (d === 0) {
      this.below = (this.below + 1) >>> 0
      for (;;) {
        const next = this.below
        if (this.above !== 0 && this.bit(next)) {
          this.flip(next)
          this.above--
        } else if (this.far === null || !this.far.delete(next)) {
          return
        }
        this.below = (next + 1) >>> 0
      }
    }
    if (this.far !== null && this.far.has(id)) return
    if (d >= DoneIds.MAX_WINDOW) {
      ;(this.far ??= new Set()).add(id)
      return
    }
    while (d > this.mask) this.grow()
    if (!this.bit(id)) {
      this.flip(id)
      this.above++
    }
  }

  /** The window's bit for `id`, an id at most `mask` after `below` (bits of other ids are clear). */
  private bit(id: number): boolean {
    return (this.bits[(id & this.mask) >>> 5]! & (1 << (id & 31))) !== 0
  }

  private flip(id: number): void {
    this.bits[(id & this.mask) >>> 5]! ^= 1 << (id & 31)
  }

  /** Doubles the window, moving the set bits to their places in it. */
  private grow(): void {
    const old = this.bits
    const oldMask = this.mask
    this.mask = oldMask * 2 + 1
    this.bits = new Int32Array((this.mask + 1) >>> 5)
    for (let k = 1; k <= oldMask; k++) {
      const id = (this.below + k) >>> 0
      if ((old[(id & oldMask) >>> 5]! & (1 << (id & 31))) !== 0) this.flip(id)
    }
  }
}
