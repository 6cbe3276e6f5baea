/**
 * The allocator's randomized churn (packages/bufmgr/test/randomized.test.ts runs it for what it
 * checks; randomized.perf.test.ts for how long it takes) and the seeded draws the randomized tests share.
 */
import { expect } from 'vitest'
import { BufferManager } from '@amlapi/bufmgr'

/** mulberry32: a small seeded PRNG returning uint32 values. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return (t ^ (t >>> 14)) >>> 0
  }
}

/** Request sizes: 60 % ≤ 256 B, 25 % ≤ 8 KiB, 12 % ≤ 64 KiB, 3 % up to 512 KiB. */
export function drawSize(rnd: () => number): number {
  const r = rnd() % 1000
  if (r < 600) return rnd() % 257
  if (r < 850) return 257 + (rnd() % (8192 - 256))
  if (r < 970) return 8193 + (rnd() % (65536 - 8192))
  return 65537 + (rnd() % (512 * 1024 - 65536))
}

/** A double whose bit pattern derives from (seed, id), never a NaN (so === compares bits). */
function patternOf(seed: number, id: number, scratch: Float64Array, words: Uint32Array): number {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(id + 1, 0xc2b2ae35)
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d)
  words[0] = h >>> 0
  words[1] = ((h >>> 7) & 0x3fefffff) | 0x40000000 // exponent away from all-ones: finite
  return scratch[0]!
}

/**
 * 1,000,000 mixed operations on a 3 MiB range with exhaustion, churn and large regions: no overlap,
 * contents survive, everything comes back (asserted here); returns how long the operations and
 * the checks took, ms.
 */
export function churn(): number {
  const SEED = 0xb0f3a11
  const OPS = 1_000_000
  const rnd = mulberry32(SEED)
  const total = 3 * 1024 * 1024 + 8192
  const offset = 4096 + 40
  const length = 3 * 1024 * 1024
  const buf = new SharedArrayBuffer(total)
  const u8 = new Uint8Array(buf)
  const f64 = new Float64Array(buf)
  u8.fill(0xc5)
  const m = new BufferManager({ buffer: buf, offset, length })
  const init = m.stats()
  expect(init.freeBytes).toBe(m.managedBytes)

  // owner of every 16-byte unit of the buffer (region id + 1), to detect overlaps exactly
  const owner = new Int32Array(total >>> 4)
  const MAX_LIVE = 4096
  const lAddr = new Int32Array(MAX_LIVE)
  const lReq = new Int32Array(MAX_LIVE)
  const lSize = new Int32Array(MAX_LIVE)
  const lId = new Int32Array(MAX_LIVE)
  const lPat = new Float64Array(MAX_LIVE)
  let live = 0
  let nextId = 0
  const scratch = new Float64Array(1)
  const words = new Uint32Array(scratch.buffer)
  const byteOf = new Uint8Array(scratch.buffer)
  let failures = 0
  let checkedFailures = 0
  let maxLive = 0
  let bytesChecked = 0

  const verify = (i: number): void => {
    const a = lAddr[i]!
    const n = lReq[i]!
    const p = lPat[i]!
    scratch[0] = p
    const w0 = a >>> 3
    const w1 = w0 + (n >>> 3)
    for (let w = w0; w < w1; w++) {
      if (f64[w] !== p) throw new Error(`region ${lId[i]} at ${a} (${n} bytes) corrupted at byte ${(w << 3) - a}`)
    }
    for (let b = w1 << 3, k = 0; b < a + n; b++, k++) {
      if (u8[b] !== byteOf[k]) throw new Error(`region ${lId[i]} at ${a} corrupted at tail byte ${b - a}`)
    }
    bytesChecked += n
  }

  const t0 = performance.now()
  let target = 200
  for (let op = 0; op < OPS; op++) {
    if (op % 25_000 === 0) target = rnd() % 700
    const doAlloc = live === 0 || (live < MAX_LIVE && rnd() % 100 < (live < target ? 70 : 30))
    if (doAlloc) {
      const n = drawSize(rnd)
      const a = m.alloc(n)
      if (a === 0) {
        failures++
        // exhaustion must be real: nothing of n bytes is available (checked every 8th time: stats walks)
        if ((failures & 7) === 0) {
          checkedFailures++
          const ls = m.stats().largestFreeRegion
          if (ls >= n) throw new Error(`alloc(${n}) failed with largestFreeRegion ${ls}`)
        }
        continue
      }
      const size = m.sizeOf(a)
      if (a % 16 !== 0 || a < m.start || a + size > m.end || size < n) {
        throw new Error(`bad region ${a} (${size} bytes) for ${n}`)
      }
      const id = nextId++
      const u0 = a >>> 4
      const u1 = (a + size) >>> 4
      for (let u = u0; u < u1; u++) {
        if (owner[u] !== 0) throw new Error(`region ${id} at ${a} (${size}) overlaps region ${owner[u]! - 1}`)
      }
      owner.fill(id + 1, u0, u1)
      const p = patternOf(SEED, id, scratch, words)
      f64.fill(p, a >>> 3, (a >>> 3) + (n >>> 3))
      for (let b = a + (n & ~7), k = 0; b < a + n; b++, k++) u8[b] = byteOf[k]!
      lAddr[live] = a
      lReq[live] = n
      lSize[live] = size
      lId[live] = id
      lPat[live] = p
      live++
      if (live > maxLive) maxLive = live
    } else {
      const i = rnd() % live
      verify(i)
      const a = lAddr[i]!
      m.free(a)
      owner.fill(0, a >>> 4, (a + lSize[i]!) >>> 4)
      live--
      lAddr[i] = lAddr[live]!
      lReq[i] = lReq[live]!
      lSize[i] = lSize[live]!
      lId[i] = lId[live]!
      lPat[i] = lPat[live]!
    }
  }
  const st = m.stats()
  expect(st.regionsInUse).toBe(live)
  expect(st.allocCount - st.freeCount).toBe(live)
  expect(st.failedAllocs).toBe(failures)
  expect(st.freeBytes).toBeLessThanOrEqual(m.managedBytes - st.bytesInUse)
  for (let i = 0; i < live; i++) verify(i)
  for (let i = 0; i < live; i++) m.free(lAddr[i]!)
  m.trim()
  const elapsed = performance.now() - t0
  const end = m.stats()
  expect(end.regionsInUse).toBe(0)
  expect(end.bytesInUse).toBe(0)
  expect(end.requestedBytesInUse).toBe(0)
  expect(end.freeBytes).toBe(init.freeBytes)
  expect(end.largestFreeRegion).toBe(init.largestFreeRegion)
  expect(end.classes.every((c) => c.slabs === 0 && c.inUse === 0)).toBe(true)
  // nothing outside the managed range was touched
  for (let i = 0; i < offset; i++) if (u8[i] !== 0xc5) throw new Error(`byte ${i} before the range changed`)
  for (let i = offset + length; i < total; i++) if (u8[i] !== 0xc5) throw new Error(`byte ${i} after the range changed`)
  // the run really covered exhaustion, churn and large regions
  expect(failures).toBeGreaterThan(1000)
  expect(checkedFailures).toBeGreaterThan(100)
  expect(st.allocCount).toBeGreaterThan(400_000)
  expect(maxLive).toBeGreaterThan(300)
  expect(bytesChecked).toBeGreaterThan(1e9)
  expect(st.highWaterBytes).toBeGreaterThan(0.7 * m.managedBytes)
  return elapsed
}
