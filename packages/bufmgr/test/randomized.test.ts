import { describe, expect, it } from 'vitest'
import { BufferManager } from '@amlapi/bufmgr'
import { churn, drawSize, mulberry32 } from './churn.js'

describe('randomized', () => {
  it('1,000,000 mixed operations: no overlap, contents survive, everything comes back', () => {
    // (how long it takes is randomized.perf.test.ts's)
    churn()
  })

  it('stats match a shadow count after every step of 100,000 mixed operations', () => {
    // The hot path keeps few counters; stats() derives regions, allocs, requested bytes and the
    // per-class figures from the slab records. Check them against an independent count.
    const rnd = mulberry32(0x5eed)
    const m = new BufferManager({ size: 2 * 1024 * 1024, slabSize: 4096 })
    const live: Array<{ a: number; n: number; size: number }> = []
    let allocs = 0
    let frees = 0
    let failed = 0
    let high = 0
    let inUse = 0
    const check = (): void => {
      const st = m.stats()
      let requested = 0
      const perClass = new Map<number, number>()
      for (const r of live) {
        requested += r.n
        if (r.size <= m.maxClassSize && r.size === m.usableSizeFor(r.n)) perClass.set(r.size, (perClass.get(r.size) ?? 0) + 1)
      }
      expect(st.regionsInUse).toBe(live.length)
      expect(st.bytesInUse).toBe(inUse)
      expect(st.requestedBytesInUse).toBe(requested)
      expect(st.highWaterBytes).toBe(high)
      expect(st.allocCount).toBe(allocs)
      expect(st.freeCount).toBe(frees)
      expect(st.failedAllocs).toBe(failed)
      let classBlocks = 0
      for (const c of st.classes) {
        classBlocks += c.inUse
        // regions served by their own class (not by a fallback) are counted in that class
        expect(c.inUse).toBeGreaterThanOrEqual(perClass.get(c.size) ?? 0)
      }
      expect(classBlocks + st.largeRegionsInUse).toBe(live.length)
    }
    for (let op = 0; op < 100_000; op++) {
      if (live.length === 0 || rnd() % 100 < (live.length < 300 ? 60 : 40)) {
        const r = rnd() % 1000
        const n = r < 700 ? rnd() % 300 : r < 950 ? rnd() % 9000 : rnd() % 70_000
        const a = m.alloc(n)
        if (a === 0) {
          failed++
        } else {
          const size = m.sizeOf(a)
          live.push({ a, n, size })
          allocs++
          inUse += size
          if (inUse > high) high = inUse
        }
      } else {
        const i = rnd() % live.length
        const r = live[i]!
        m.free(r.a)
        frees++
        inUse -= r.size
        live[i] = live[live.length - 1]!
        live.pop()
      }
      if (op % 97 === 0) check()
    }
    check()
    for (const r of live) m.free(r.a)
    m.trim()
    expect(m.stats().freeBytes).toBe(m.managedBytes)
  })

  it('zero fill: every region reads as zeros, per manager and per call', () => {
    for (const perManager of [true, false]) {
      const rnd = mulberry32(perManager ? 7 : 8)
      const m = new BufferManager({ size: 1024 * 1024, zeroFill: perManager })
      const f64 = new Float64Array(m.buffer)
      const live: number[] = []
      let zeroed = 0
      for (let op = 0; op < 60_000; op++) {
        if (live.length < 150 && (live.length === 0 || rnd() % 100 < 55)) {
          const n = drawSize(rnd) >>> (rnd() % 4) // mostly smaller: more churn per byte
          const zero = perManager || (rnd() & 1) === 1
          const a = m.alloc(n, zero ? true : undefined)
          if (a === 0) continue
          const size = m.sizeOf(a)
          if (zero) {
            zeroed++
            for (let w = a >>> 3, e = (a + size) >>> 3; w < e; w++) {
              if (f64[w] !== 0) throw new Error(`alloc(${n}) at ${a} not zeroed at byte ${(w << 3) - a}`)
            }
          }
          f64.fill(-1.5, a >>> 3, (a + size) >>> 3) // dirty it for the next user
          live.push(a)
        } else {
          const i = rnd() % live.length
          m.free(live[i]!)
          live[i] = live[live.length - 1]!
          live.pop()
        }
      }
      expect(zeroed).toBeGreaterThan(10_000)
      for (const a of live) m.free(a)
      m.trim()
      expect(m.stats().freeBytes).toBe(m.managedBytes)
    }
  })
})
