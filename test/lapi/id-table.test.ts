/**
 * IdTable (lapi's records by message id: messages in reassembly, rendezvous sends): lookups by
 * id, ids that share a slot kept apart by growing, removal, and set/delete cycles that never grow
 * it (so a steady state allocates nothing). DoneIds (the finished ids of one source, for dropping
 * duplicates): in-order and out-of-order marking against a Set's answers, and a window that grows.
 */
import { describe, expect, it } from 'vitest'
import { DoneIds, IdTable } from '#lapi-internal'

interface Rec {
  id: number
  v: string
}

describe('IdTable', () => {
  it('finds records by id, replaces one of the same id, removes them, counts them', () => {
    const t = new IdTable<Rec>()
    const a = { id: 3, v: 'a' }
    t.set(3, a)
    expect(t.get(3)).toBe(a)
    expect(t.get(4)).toBeUndefined()
    expect(t.get(3 + 16)).toBeUndefined() // the same slot, another id
    const a2 = { id: 3, v: 'a2' }
    t.set(3, a2)
    expect(t.get(3)).toBe(a2)
    expect(t.size).toBe(1)
    t.delete(4) // not there: nothing changes
    t.delete(19)
    expect(t.size).toBe(1)
    t.delete(3)
    expect(t.get(3)).toBeUndefined()
    expect(t.size).toBe(0)
  })

  it('keeps live records whose ids share a slot apart by growing, and keeps every record across growth', () => {
    const t = new IdTable<Rec>()
    const recs: Rec[] = []
    // ids 0, 16, 32, … 16 · 63 all start in slot 0; the odd ids 1 … 79 in between
    for (let k = 0; k < 64; k++) recs.push({ id: 16 * k, v: `s${k}` })
    for (let i = 0; i < 40; i++) recs.push({ id: 2 * i + 1, v: `o${i}` })
    for (const r of recs) t.set(r.id, r)
    expect(t.size).toBe(recs.length)
    for (const r of recs) expect(t.get(r.id)).toBe(r)
    // large ids (beyond the small-integer range) work the same
    const big = { id: 2 ** 32 - 1, v: 'big' }
    t.set(big.id, big)
    expect(t.get(big.id)).toBe(big)
    for (const r of recs) t.delete(r.id)
    t.delete(big.id)
    expect(t.size).toBe(0)
    for (const r of recs) expect(t.get(r.id)).toBeUndefined()
  })

  it('does not grow when consecutive ids come and go (a window of live records smaller than the table)', () => {
    const t = new IdTable<Rec>()
    const pool: Rec[] = Array.from({ length: 8 }, () => ({ id: 0, v: '' }))
    // up to 8 live records of consecutive ids at a time, 100,000 ids in all
    for (let id = 0; id < 100_000; id++) {
      const r = pool[id & 7]!
      if (id >= 8) t.delete(id - 8)
      r.id = id
      t.set(id, r)
    }
    expect(t.size).toBe(8)
    // the table is still 16 slots: ids 16 apart would clash in it, so a record 16 below a live one is not found
    expect(t.get(100_000 - 1 - 16)).toBeUndefined()
    expect((t as unknown as { slots: unknown[] }).slots.length).toBe(16)
  })
})

describe('DoneIds', () => {
  it('answers like a set of ids, in order and out of order, and moves its floor past what is done', () => {
    const d = new DoneIds()
    expect(d.has(0)).toBe(false)
    d.add(0)
    d.add(1)
    expect(d.below).toBe(2)
    expect(d.has(1)).toBe(true)
    d.add(5)
    expect(d.has(5)).toBe(true)
    expect(d.has(4)).toBe(false)
    expect(d.below).toBe(2)
    d.add(5) // again: nothing changes
    expect(d.above).toBe(1)
    d.add(3)
    d.add(2)
    expect(d.below).toBe(4)
    d.add(4)
    expect(d.below).toBe(6) // 5 was done already
    expect(d.above).toBe(0)
    d.add(1) // below the floor: nothing changes
    expect(d.below).toBe(6)
  })

  it('keeps the answers of a Set through seeded shuffles, including gaps wider than the window', () => {
    let seed = 12345
    const rand = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0
      return (seed >>> 8) % n
    }
    for (const span of [8, 100, 1000]) {
      const d = new DoneIds()
      const ref = new Set<number>()
      const order = Array.from({ length: 3000 }, (_, i) => i)
      // shuffle within blocks of `span`, so ids finish up to `span` out of order
      for (let b = 0; b < order.length; b += span) {
        for (let i = Math.min(b + span, order.length) - 1; i > b; i--) {
          const j = b + rand(i - b + 1)
          const t = order[i]!
          order[i] = order[j]!
          order[j] = t
        }
      }
      for (const id of order) {
        d.add(id)
        ref.add(id)
        const probe = rand(3100)
        expect(d.has(probe)).toBe(ref.has(probe))
      }
      expect(d.below).toBe(3000)
      expect(d.above).toBe(0)
    }
  })

  it('keeps an id further ahead than the widest window apart, and still moves its floor past it', () => {
    const d = new DoneIds()
    const far = DoneIds.MAX_WINDOW + 10
    d.add(far)
    expect(d.has(far)).toBe(true)
    expect(d.has(far - 1)).toBe(false)
    d.add(3)
    for (let id = 0; id < far; id++) d.add(id)
    expect(d.below).toBe(far + 1)
    expect(d.above).toBe(0)
    expect(d.has(far + 1)).toBe(false)
  })

  it('compares ids as 32-bit serial numbers: the ids wrap, the 2^31 before the floor are done', () => {
    const d = new DoneIds()
    d.below = 2 ** 32 - 3
    expect(d.has(2 ** 32 - 4)).toBe(true) // behind the floor
    expect(d.has(2 ** 32 - 3)).toBe(false)
    expect(d.has(0)).toBe(false)
    expect(d.has(2 ** 31 - 10)).toBe(false) // ahead by less than 2^31
    expect(d.has(2 ** 31)).toBe(true) // 2^31 + 3 ahead: taken as behind
    d.add(1)
    d.add(2 ** 32 - 1)
    expect(d.has(1)).toBe(true)
    expect(d.has(0)).toBe(false)
    d.add(2 ** 32 - 3)
    d.add(2 ** 32 - 2)
    expect(d.below).toBe(0) // past the wrap, 1 still in the window
    d.add(0)
    expect(d.below).toBe(2)
    expect(d.above).toBe(0)
    expect(d.has(2 ** 32 - 2)).toBe(true)
    expect(d.has(2)).toBe(false)
    // a window that grows across the wrap keeps its marks
    d.below = 2 ** 32 - 10
    for (let k = 1; k <= 200; k += 3) d.add((2 ** 32 - 10 + k) >>> 0)
    for (let k = 1; k <= 200; k++) expect(d.has((2 ** 32 - 10 + k) >>> 0)).toBe(k % 3 === 1)
    for (let k = 0; k <= 200; k++) d.add((2 ** 32 - 10 + k) >>> 0)
    expect(d.below).toBe(191)
    expect(d.above).toBe(0)
  })
})
