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
