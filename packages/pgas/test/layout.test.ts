/**
 * Layouts of shared arrays: for blocked, cyclic and block-cyclic layouts of many lengths over many
 * task counts, owner/localIndex and globalIndex are inverse, every element has exactly one place,
 * and localCount counts them.
 */
import { describe, expect, it } from 'vitest'
import { Layout } from '@amlapi/pgas'

describe('Layout', () => {
  it('places every element once, and the maps invert each other', () => {
    for (const tasks of [1, 2, 3, 4, 7, 16]) {
      for (const length of [0, 1, 5, 16, 17, 100, 101]) {
        for (const [kind, block] of [
          ['blocked', 1],
          ['cyclic', 1],
          ['block-cyclic', 1],
          ['block-cyclic', 3],
          ['block-cyclic', 8],
        ] as const) {
          const L = new Layout(kind, length, tasks, block)
          const seen = new Set<string>()
          const per = new Array<number>(tasks).fill(0)
          for (let i = 0; i < length; i++) {
            const t = L.owner(i)
            const j = L.localIndex(i)
            expect(t).toBeGreaterThanOrEqual(0)
            expect(t).toBeLessThan(tasks)
            expect(L.globalIndex(t, j)).toBe(i)
            const key = `${t}:${j}`
            expect(seen.has(key)).toBe(false)
            seen.add(key)
            per[t]!++
          }
          for (let t = 0; t < tasks; t++) {
            expect(L.localCount(t)).toBe(per[t])
            // (local indices are 0..count-1 with no holes)
            for (let j = 0; j < per[t]!; j++) expect(seen.has(`${t}:${j}`)).toBe(true)
          }
          expect(L.maxLocalCount()).toBe(Math.max(0, ...per))
        }
      }
    }
  })

  it('blocked gives each task one contiguous piece', () => {
    const L = new Layout('blocked', 10, 4)
    expect([...Array(10).keys()].map((i) => L.owner(i))).toEqual([0, 0, 0, 1, 1, 1, 2, 2, 2, 3])
  })

  it('refuses bad sizes', () => {
    expect(() => new Layout('cyclic', -1, 2)).toThrow(RangeError)
    expect(() => new Layout('cyclic', 4, 0)).toThrow(RangeError)
    expect(() => new Layout('block-cyclic', 4, 2, 0)).toThrow(RangeError)
  })
})
