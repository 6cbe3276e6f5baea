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
  get (id: number): T | undefined {
    const m = this.slots[id & this.mask]!
    return m !== null && m.id === id ? m : undefined
  }

  /** Adds `m`, whose `id` is `id` (a record of that id already there is replaced). */
  set (id: number, m: T): void {
    for (;;) {
      const i = id & this.mask
      const e = this.slots[i]!
      if (e === null) { this.slots[i] = m; this.size++; return }
      if (e.id === id) { this.slots[i] = m; return }
      this.grow()
    }
  }

  /** Removes the record with id `id`, if there is one. */
  delete (id: number): void {
    const i = id & this.mask
    const e = this.slots[i]!
    if (e !== null && e.id === id) { this.slots[i] = null; this.size-- }
  }

  /** Doubles the table (again, until the live records fall in different slots). */
  private grow (): void {
    for (let n = this.slots.length * 2; ; n *= 2) {
      const slots = new Array<T | null>(n).fill(null)
      let clash = false
      for (const e of this.slots) {
        if (e === null) continue
        const i = e.id & (n - 1)
        if (slots[i] !== null) { clash = true; break }
        slots[i] = e
      }
      if (!clash) { this.slots = slots; this.mask = n - 1; return }
    }
  }
}

/**
 * The ids of one source's finished messages, so that a duplicate of one is dropped: every id below
 * `below`, and a window of bits over the ids above it that finished out of order (a message whose
 * rendezvous fell back to CTS, packets the reordering test transport held back). Marking and
 * testing allocate nothing; the window doubles when an id lies beyond it (a Set did this job and
 * allocated on every out-of-order completion).
 */
export class DoneIds {
  /** Every id below this one is done. */
  below = 0
  /** Ids above `below` marked done (bits set in the window). */
  above = 0
  private bits = new Int32Array(2)
  /** The window's width in ids, less one (a power of two less one). */
  private mask = 63

  /** Whether message `id` (an integer, ≥ 0) is done. */
  has (id: number): boolean {
    return id < this.below || (this.above !== 0 && this.inWindow(id))
  }

  /** Marks message `id` done. */
  add (id: number): void {
    if (id < this.below) return
    if (id === this.below) {
      this.below++
      while (this.above !== 0 && this.inWindow(this.below)) {
        this.flip(this.below)
        this.above--
        this.below++
      }
      return
    }
    while (id - this.below > this.mask) this.grow()
    if (!this.inWindow(id)) {
      this.flip(id)
      this.above++
    }
  }

  /** Whether the window's bit for `id` (an id above `below`, within the window) is set. */
  private inWindow (id: number): boolean {
    return id - this.below <= this.mask && (this.bits[(id & this.mask) >>> 5]! & (1 << (id & 31))) !== 0
  }

  private flip (id: number): void {
    this.bits[(id & this.mask) >>> 5]! ^= 1 << (id & 31)
  }

  /** Doubles the window, moving the set bits to their places in it. */
  private grow (): void {
    const old = this.bits
    const oldMask = this.mask
    this.mask = oldMask * 2 + 1
    this.bits = new Int32Array((this.mask + 1) >>> 5)
    for (let id = this.below + 1; id - this.below <= oldMask; id++) {
      if ((old[(id & oldMask) >>> 5]! & (1 << (id & 31))) !== 0) this.flip(id)
    }
  }
}
