/**
 * IdTable (lapi's records by message id: messages in reassembly, rendezvous sends): lookups by
 * id, ids that share a slot kept apart by growing, removal, and set/delete cycles that never grow
 * it (so a steady state allocates nothing).
 */
import { describe, expect, it } from 'vitest'
import { IdTable } from '@amlapi/lapi'

interface Rec { id: number, v: string }

describe('IdTable', () => {
  it('finds records by id, replaces one of the same id, removes them, counts them', () => {
    const t = new IdTable<Rec>()
    const a = { id: 3, v: 'a' }
    t.set(3, a)
    expect(t.get(3)).toBe(a)
    expect(t.get(4)).toBeUndefined()
    expect(t.get(3 + 16)).toBeUndefined()   // the same slot, another id
    const a2 = { id: 3, v: 'a2' }
    t.set(3, a2)
    expect(t.get(3)).toBe(a2)
    expect(t.size).toBe(1)
    t.delete(4)                               // not there: nothing changes
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
