import { describe, expect, it } from 'vitest'
import { AmlapiError, BufferManager, BufMgrError, BufMgrErrorCode, classIndexOf, classSizeOf } from '@amlapi/bufmgr'
import type { BufMgrErrorCode as Code, BufMgrStats } from '@amlapi/bufmgr'

const KIB = 1024
const MIB = 1024 * KIB

function codeOf(fn: () => unknown): string {
  try {
    fn()
  } catch (e) {
    if (e instanceof BufMgrError) return e.code
    if (e instanceof RangeError) return 'RangeError'
    throw e
  }
  return 'no error'
}

function errorOf(fn: () => unknown): BufMgrError {
  try {
    fn()
  } catch (e) {
    if (e instanceof BufMgrError) return e
    throw e
  }
  throw new Error('expected a BufMgrError')
}

/** Every class size of a manager, smallest first. */
function classSizes(m: BufferManager): number[] {
  return m.stats().classes.map((c) => c.size)
}

function classStats(m: BufferManager, size: number): BufMgrStats['classes'][number] {
  const c = m.stats().classes.find((x) => x.size === size)
  if (c === undefined) throw new Error(`no class of ${size} bytes`)
  return c
}

describe('size classes', () => {
  it('16-byte steps up to 256, then 4 classes per power of two', () => {
    const sizes: number[] = []
    for (let i = 0; i <= classIndexOf(65536); i++) sizes.push(classSizeOf(i))
    expect(sizes.slice(0, 20)).toEqual([16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256, 320, 384, 448, 512])
    expect(sizes.slice(20, 24)).toEqual([640, 768, 896, 1024])
    expect(sizes.at(-1)).toBe(65536)
    for (let i = 0; i < sizes.length; i++) {
      expect(classIndexOf(sizes[i]!)).toBe(i)
      if (i > 0) expect(classIndexOf(sizes[i - 1]! + 1)).toBe(i)
    }
    expect(classIndexOf(0)).toBe(0)
    expect(classIndexOf(1)).toBe(0)
  })
})

describe('construction', () => {
  it('creates a 1 MiB SharedArrayBuffer by default, or an ArrayBuffer', () => {
    const m = new BufferManager()
    expect(m.buffer).toBeInstanceOf(SharedArrayBuffer)
    expect(m.buffer.byteLength).toBe(MIB)
    expect(m.alignment).toBe(16)
    expect(m.alignment).toBeGreaterThanOrEqual(8)
    expect(m.maxClassSize).toBe(8 * KIB)
    expect(m.granule).toBe(256)
    expect(m.slabSize).toBe(4 * KIB)
    expect(new BufferManager({ size: 64 * MIB }).slabSize).toBe(64 * KIB)
    expect(m.start).toBe(16)
    expect(m.managedBytes).toBe(MIB - 256)
    const a = new BufferManager({ size: 64 * KIB, shared: false })
    expect(a.buffer).toBeInstanceOf(ArrayBuffer)
    expect(a.buffer.byteLength).toBe(64 * KIB)
  })

  it('manages a given ArrayBuffer or SharedArrayBuffer in place', () => {
    for (const buf of [new ArrayBuffer(32 * KIB), new SharedArrayBuffer(32 * KIB)]) {
      const m = new BufferManager({ buffer: buf })
      expect(m.buffer).toBe(buf)
      const a = m.alloc(40)
      m.view(a).fill(0x5a)
      const raw = new Uint8Array(buf)
      expect(raw[a]).toBe(0x5a)
      expect(raw[a + 39]).toBe(0x5a)
      raw[a + 1] = 7
      expect(m.view(a)[1]).toBe(7)
    }
  })

  it('rejects bad options with BAD_OPTIONS', () => {
    const bad: Array<Record<string, unknown>> = [
      { buffer: new Uint8Array(16) },
      { buffer: 'x' },
      { size: 0 },
      { size: -1 },
      { size: 1.5 },
      { shared: 1 },
      { zeroFill: 'yes' },
      { size: 4096, offset: 5000 },
      { size: 4096, offset: 100, length: 4000 },
      { size: 4096, granule: 100 },
      { size: 4096, granule: 8 },
      { size: 4096, granule: 1 << 17 },
      { size: 64 * KIB, slabSize: 1000 },
      { size: 64 * KIB, slabSize: 2 * MIB },
      { maxClassSize: 8 },
      { maxClassSize: 65537 },
      { size: 200 },
      { size: 4096, offset: 4000 },
    ]
    for (const o of bad) {
      expect(
        codeOf(() => new BufferManager(o as never)),
        JSON.stringify(o),
      ).toBe('BAD_OPTIONS')
    }
  })

  it('rounds offset up to the alignment, and maxClassSize up to a class', () => {
    const m = new BufferManager({ size: 64 * KIB, offset: 1001, length: 40000, maxClassSize: 5000 })
    expect(m.start).toBe(1008)
    expect(m.end).toBe(1008 + Math.floor((41001 - 1008) / 256) * 256)
    expect(m.maxClassSize).toBe(5120)
  })
})

describe('alloc', () => {
  it('returns aligned, non-zero offsets and never 0 while space remains', () => {
    for (const offset of [0, 5, 16, 100]) {
      const m = new BufferManager({ size: 8 * MIB, offset })
      const seen = new Set<number>()
      for (let n = 0; n < 3000; n += 7) {
        const a = m.alloc(n)
        expect(a).toBeGreaterThan(0)
        expect(a % 16).toBe(0)
        expect(a).toBeGreaterThanOrEqual(m.start)
        expect(seen.has(a)).toBe(false)
        seen.add(a)
      }
    }
  })

  it('alloc(0) returns a unique 16-byte region', () => {
    const m = new BufferManager({ size: 64 * KIB })
    const a = m.alloc(0)
    const b = m.alloc(0)
    expect(a).not.toBe(0)
    expect(b).not.toBe(a)
    expect(m.sizeOf(a)).toBe(16)
    expect(m.stats().requestedBytesInUse).toBe(0)
    expect(m.stats().bytesInUse).toBe(32)
    m.free(a)
    m.free(b)
  })

  it('serves every class boundary and large sizes with the expected usable size', () => {
    const m = new BufferManager({ size: 8 * MIB })
    const sizes = classSizes(m)
    expect(sizes.at(-1)).toBe(m.maxClassSize)
    const live: number[] = []
    for (let i = 0; i < sizes.length; i++) {
      const s = sizes[i]!
      for (const n of [s - 1, s, s + 1]) {
        if (n < 0) continue
        const a = m.alloc(n)
        expect(a).not.toBe(0)
        const want = n <= m.maxClassSize ? sizes.find((x) => x >= Math.max(n, 1))! : Math.ceil(n / m.granule) * m.granule
        expect(m.sizeOf(a), `alloc(${n})`).toBe(want)
        expect(m.usableSizeFor(n)).toBe(want)
        expect(m.sizeOf(a)).toBeGreaterThanOrEqual(n)
        live.push(a)
      }
    }
    for (const n of [m.maxClassSize + 1, 10_000, 65_537, 300_000, 700_000]) {
      const a = m.alloc(n)
      expect(a).not.toBe(0)
      expect(m.sizeOf(a)).toBe(Math.ceil(n / 256) * 256)
      expect((a - m.start) % m.granule).toBe(0)
      live.push(a)
    }
    expect(m.stats().regionsInUse).toBe(live.length)
    for (const a of live) m.free(a)
    m.trim()
    expect(m.stats().freeBytes).toBe(m.managedBytes)
    expect(m.stats().largestFreeRegion).toBe(m.managedBytes)
  })

  it('supports maxClassSize up to 64 KiB', () => {
    const m = new BufferManager({ size: 4 * MIB, maxClassSize: 65536 })
    const a = m.alloc(65000)
    expect(m.sizeOf(a)).toBe(65536)
    expect(classStats(m, 65536).inUse).toBe(1)
    m.free(a)
  })

  it('throws BAD_SIZE for sizes that are not non-negative safe integers', () => {
    const m = new BufferManager({ size: 64 * KIB })
    for (const n of [-1, 1.5, NaN, Infinity, 2 ** 53, '10', null, undefined]) {
      expect(codeOf(() => m.alloc(n as number))).toBe('BAD_SIZE')
      expect(codeOf(() => m.allocOrThrow(n as number))).toBe('BAD_SIZE')
    }
    expect(m.stats().allocCount).toBe(0)
    expect(m.stats().failedAllocs).toBe(0)
  })

  it('a BigInt size or address is BAD_SIZE / NOT_ALLOCATED with words that say so, not a TypeError', () => {
    const m = new BufferManager({ size: 64 * KIB })
    for (const f of [
      () => m.alloc(64n as unknown as number),
      () => m.allocOrThrow(64n as unknown as number),
      () => m.usableSizeFor(64n as unknown as number),
    ]) {
      const e = errorOf(f)
      expect(e.code).toBe('BAD_SIZE')
      // (an AmlapiError like every package's, without a C number)
      expect(e).toBeInstanceOf(AmlapiError)
      expect(e.status).toBeUndefined()
      expect(e.message).toMatch(/size 64n is a BigInt, but a size is a number of bytes: pass 64/)
    }
    const a = m.alloc(64)
    for (const f of [
      () => m.free(BigInt(a) as unknown as number),
      () => m.sizeOf(BigInt(a) as unknown as number),
      () => m.view(BigInt(a) as unknown as number),
    ]) {
      const e = errorOf(f)
      expect(e.code).toBe('NOT_ALLOCATED')
      expect(e.message).toMatch(new RegExp(`\\(${a}n\\): a BigInt, but an address is a number`))
    }
    expect(m.isLive(BigInt(a) as unknown as number)).toBe(false)
    m.free(a)
  })

  it('keeps every region inside a sub-range and never touches bytes outside it', () => {
    const buf = new SharedArrayBuffer(128 * KIB)
    const raw = new Uint8Array(buf)
    raw.fill(0xee)
    const offset = 4096 + 8
    const length = 60_000
    const m = new BufferManager({ buffer: buf, offset, length, granule: 128, maxClassSize: 4096 })
    expect(m.start).toBeGreaterThanOrEqual(offset)
    expect(m.end).toBeLessThanOrEqual(offset + length)
    const live: number[] = []
    let n = 1
    for (let i = 0; i < 5000; i++) {
      n = (n * 1103515245 + 12345) & 0x7fffffff
      const size = n % 3 === 0 ? n % 9000 : n % 300
      const a = m.alloc(size)
      if (a === 0) continue
      expect(a).toBeGreaterThanOrEqual(offset)
      expect(a + m.sizeOf(a)).toBeLessThanOrEqual(offset + length)
      m.view(a).fill(0x11)
      live.push(a)
      if (live.length > 40) m.free(live.splice(n % live.length, 1)[0]!)
    }
    expect(m.stats().failedAllocs).toBeGreaterThan(0)
    for (let i = 0; i < offset; i++) expect(raw[i]).toBe(0xee)
    for (let i = offset + length; i < raw.length; i++) if (raw[i] !== 0xee) expect(i).toBe(-1)
    for (const a of live) m.free(a)
    m.trim()
    expect(m.stats().freeBytes).toBe(m.managedBytes)
  })
})

describe('zero fill', () => {
  it('zeroes on request, per call or per manager, and leaves memory alone otherwise', () => {
    const m = new BufferManager({ size: 64 * KIB })
    for (const n of [24, 3000, 20_000]) {
      const a = m.alloc(n)
      m.view(a).fill(0xff)
      m.free(a)
      const b = m.alloc(n)
      expect(b).toBe(a) // the freed region is reused first
      expect(m.view(b).every((x) => x === 0xff)).toBe(true)
      m.free(b)
      const c = m.alloc(n, true)
      expect(c).toBe(a)
      expect(m.view(c).every((x) => x === 0)).toBe(true)
      m.free(c)
    }
    const z = new BufferManager({ size: 64 * KIB, zeroFill: true })
    expect(z.zeroFill).toBe(true)
    for (const n of [0, 24, 3000, 20_000]) {
      const a = z.alloc(n)
      z.view(a).fill(0xff)
      z.free(a)
      const b = z.alloc(n)
      expect(b).toBe(a)
      expect(z.view(b).every((x) => x === 0)).toBe(true)
      z.free(b)
    }
  })
})

describe('zero fill of every size', () => {
  it('zeroes exactly the region, in an ArrayBuffer and in a SharedArrayBuffer', () => {
    // sizes hit the 8-byte store loop (≤ 512), the zero views of 2^k bytes (shared) or fill
    // (not shared), and their remainders; classes and large regions
    const sizes = [0, 16, 48, 500, 512, 513, 1000, 1536, 3000, 8192, 8193, 70_000, 200_016]
    for (const buffer of [new ArrayBuffer(MIB), new SharedArrayBuffer(MIB)]) {
      const m = new BufferManager({ buffer })
      const raw = new Uint8Array(buffer)
      for (const n of sizes) {
        const a = m.alloc(n)
        const size = m.sizeOf(a)
        m.free(a)
        raw.fill(0xff)
        const b = m.alloc(n, true)
        expect(b).toBe(a)
        for (let i = b; i < b + size; i++) if (raw[i] !== 0) expect(`byte ${i - b} of ${size}`).toBe('zero')
        expect(raw[b - 1]).toBe(0xff)
        if (b + size < raw.length) expect(raw[b + size]).toBe(0xff)
        m.free(b)
      }
    }
  })
})

describe('view, sizeOf, isLive', () => {
  it('views a live region without copying, within its bounds', () => {
    const m = new BufferManager({ size: 64 * KIB })
    const a = m.alloc(50)
    const v = m.view(a)
    expect(v.byteOffset).toBe(a)
    expect(v.length).toBe(m.sizeOf(a))
    expect(v.buffer).toBe(m.buffer)
    expect(m.view(a, 10).length).toBe(10)
    expect(m.view(a, 0).length).toBe(0)
    expect(m.view(a, 64).length).toBe(64)
    v[3] = 9
    expect(new Uint8Array(m.buffer)[a + 3]).toBe(9)
    expect(codeOf(() => m.view(a, 65))).toBe('RangeError')
    expect(codeOf(() => m.view(a, -1))).toBe('RangeError')
    expect(codeOf(() => m.view(a, 1.5))).toBe('RangeError')
    expect(codeOf(() => m.view(a + 16))).toBe('INTERIOR')
    expect(codeOf(() => m.view(0))).toBe('NOT_ALLOCATED')
    m.free(a)
    expect(codeOf(() => m.view(a))).toBe('DOUBLE_FREE')
  })

  it('sizeOf and isLive follow the region life cycle', () => {
    const m = new BufferManager({ size: 256 * KIB })
    const a = m.alloc(1000)
    const b = m.alloc(50_000)
    expect(m.sizeOf(a)).toBe(1024)
    expect(m.sizeOf(b)).toBe(50_176)
    expect(m.isLive(a)).toBe(true)
    expect(m.isLive(b)).toBe(true)
    expect(m.isLive(a + 16)).toBe(false)
    expect(m.isLive(0)).toBe(false)
    expect(m.isLive(-16)).toBe(false)
    expect(m.isLive(a + 0.5)).toBe(false)
    expect(m.isLive('16' as unknown as number)).toBe(false)
    expect(codeOf(() => m.sizeOf(b + 256))).toBe('INTERIOR')
    m.free(a)
    m.free(b)
    expect(m.isLive(a)).toBe(false)
    expect(m.isLive(b)).toBe(false)
    expect(codeOf(() => m.sizeOf(a))).toBe('DOUBLE_FREE')
    expect(codeOf(() => m.sizeOf(b))).toBe('DOUBLE_FREE')
  })
})

describe('misuse of free', () => {
  function setup(): { m: BufferManager; small: number[]; large: number[]; release: (a: number) => void; check: () => void } {
    const m = new BufferManager({ size: 512 * KIB })
    const small = [m.alloc(24), m.alloc(24), m.alloc(500), m.alloc(0)]
    const large = [m.alloc(20_000), m.alloc(100_000)]
    const live = new Map<number, number>()
    ;[...small, ...large].forEach((a, i) => {
      m.view(a).fill(i + 1)
      live.set(a, i + 1)
    })
    const release = (a: number): void => {
      m.free(a)
      live.delete(a)
    }
    const check = (): void => {
      for (const [a, p] of live) {
        expect(m.isLive(a)).toBe(true)
        expect(m.view(a).every((x) => x === p)).toBe(true)
      }
    }
    return { m, small, large, release, check }
  }

  function expectMisuse(m: BufferManager, addr: unknown, code: Code, check: () => void): void {
    const before = m.stats()
    const err = errorOf(() => m.free(addr as number))
    expect(err.code, `free(${String(addr)})`).toBe(code)
    expect(err.message).toContain(String(addr))
    expect(m.stats()).toEqual(before)
    check()
  }

  it('detects double frees of small and large regions', () => {
    const { m, small, large, release, check } = setup()
    release(small[0]!)
    release(large[0]!)
    expectMisuse(m, small[0], 'DOUBLE_FREE', check)
    expectMisuse(m, large[0], 'DOUBLE_FREE', check)
    // still detected after the freed space merged with its neighbours and was partly reused
    release(large[1]!)
    const c = m.alloc(4000)
    expect(c).not.toBe(0)
    expectMisuse(m, large[1], 'DOUBLE_FREE', check)
    // the freed small block's slab emptied, was cached, trimmed and merged
    release(small[1]!)
    release(small[2]!)
    release(small[3]!)
    m.trim()
    expectMisuse(m, small[0], 'DOUBLE_FREE', check)
    expectMisuse(m, small[3], 'DOUBLE_FREE', check)
  })

  it('rejects 0, out-of-range and never-handed-out addresses with NOT_ALLOCATED', () => {
    const { m, small, large, check } = setup()
    for (const a of [0, 8, -16, m.end, m.end + 16, 1 << 30, NaN, 1.5, small[0]! + 0.5, '32', null]) {
      expectMisuse(m, a, 'NOT_ALLOCATED', check)
    }
    // a free block of a live slab that was never handed out
    expectMisuse(m, small[1]! + 16 * 24, 'NOT_ALLOCATED', check)
    // free space of the coalescing allocator
    expectMisuse(m, m.end - 256, 'NOT_ALLOCATED', check)
    // unaligned, not inside a live region
    expectMisuse(m, m.end - 250, 'NOT_ALLOCATED', check)
    void large
  })

  it('rejects addresses inside a live region with INTERIOR', () => {
    const { m, small, large, check } = setup()
    expectMisuse(m, small[0]! + 16, 'INTERIOR', check)
    expectMisuse(m, small[0]! + 1, 'INTERIOR', check)
    expectMisuse(m, small[2]! + 256, 'INTERIOR', check)
    expectMisuse(m, large[0]! + 256, 'INTERIOR', check)
    expectMisuse(m, large[0]! + 16, 'INTERIOR', check)
    expectMisuse(m, large[1]! + 99_000, 'INTERIOR', check)
    expectMisuse(m, large[1]! + 3, 'INTERIOR', check)
  })

  it('leaves other regions usable after a failed free', () => {
    const { m, small, large, release, check } = setup()
    expect(codeOf(() => m.free(small[0]! + 16))).toBe('INTERIOR')
    for (const a of [...small, ...large]) release(a)
    check()
    m.trim()
    expect(m.stats().freeBytes).toBe(m.managedBytes)
    expect(m.stats().regionsInUse).toBe(0)
  })
})

describe('exhaustion', () => {
  it('returns 0, counts failures, and allocOrThrow reports the figures', () => {
    const m = new BufferManager({ size: 64 * KIB })
    const live: number[] = []
    for (;;) {
      const a = m.alloc(10_000)
      if (a === 0) break
      live.push(a)
    }
    expect(live.length).toBe(6)
    expect(m.stats().failedAllocs).toBe(1)
    expect(m.alloc(10_000)).toBe(0)
    expect(m.alloc(1 << 30)).toBe(0)
    expect(m.stats().failedAllocs).toBe(3)
    const st = m.stats()
    const err = errorOf(() => m.allocOrThrow(10_000))
    expect(err.code).toBe('EXHAUSTED')
    expect(err.message).toContain('10000')
    expect(err.message).toContain(`${st.freeBytes} bytes free`)
    expect(err.message).toContain(`largest free region ${st.largestFreeRegion}`)
    expect(m.stats().failedAllocs).toBe(4)
    // what is left can still be allocated exactly
    expect(st.largestFreeRegion).toBe(m.managedBytes - 6 * 10_240)
    const rest = m.allocOrThrow(st.largestFreeRegion)
    expect(m.stats().freeBytes).toBe(0)
    expect(m.stats().largestFreeRegion).toBe(0)
    expect(m.alloc(0)).toBe(0)
    m.free(rest)
    for (const a of live) m.free(a)
    expect(m.stats().freeBytes).toBe(m.managedBytes)
  })

  it('trims cached slabs before reporting exhaustion', () => {
    const m = new BufferManager({ size: 128 * KIB })
    // one slab each for several classes, then free everything: one empty slab per class is cached
    const sizes = [16, 100, 300, 1000, 3000]
    const live = sizes.map((n) => m.alloc(n))
    for (const a of live) m.free(a)
    const st = m.stats()
    const cachedBytes = st.classes.reduce((t, c) => t + c.slabs * c.slabBytes, 0)
    expect(cachedBytes).toBeGreaterThan(0)
    expect(st.freeBytes).toBe(m.managedBytes)
    expect(st.largestFreeRegion).toBe(m.managedBytes)
    // the whole range at once needs the cached slabs back
    const a = m.alloc(m.managedBytes)
    expect(a).toBe(m.start)
    expect(m.stats().classes.every((c) => c.slabs === 0)).toBe(true)
    m.free(a)
  })

  it('serves a class request from the coalescing allocator when no slab fits', () => {
    const m = new BufferManager({ size: 64 * KIB, slabSize: 16 * KIB })
    const big = m.alloc(m.managedBytes - 1024)
    expect(big).not.toBe(0)
    const a = m.alloc(40) // no room for a 16 KiB slab: one granule instead
    expect(a).not.toBe(0)
    expect(m.sizeOf(a)).toBe(256)
    expect(m.stats().largeRegionsInUse).toBe(2)
    m.free(a)
    m.free(big)
    expect(m.stats().freeBytes).toBe(m.managedBytes)
  })

  it('serves from a larger class as a last resort', () => {
    const m = new BufferManager({ size: 64 * KIB, slabSize: 4 * KIB })
    const a = m.alloc(1000) // a 4 KiB slab of 1024-byte blocks
    expect(m.stats().largestFreeRegion).toBe(m.managedBytes - 4096)
    const big = m.alloc(m.managedBytes - 4096)
    expect(big).not.toBe(0)
    expect(m.stats().largestFreeRegion).toBe(1024)
    const b = m.alloc(40)
    expect(b).not.toBe(0)
    expect(m.sizeOf(b)).toBe(1024)
    expect(m.stats().requestedBytesInUse).toBe(1000 + 40 + m.managedBytes - 4096)
    expect(classStats(m, 1024).inUse).toBe(2)
    m.free(b)
    m.free(a)
    m.free(big)
    m.trim()
    expect(m.stats().freeBytes).toBe(m.managedBytes)
    expect(m.stats().requestedBytesInUse).toBe(0)
  })
})

describe('stats', () => {
  it('tracks bytes, regions, high water, classes, free bytes and the largest free region', () => {
    const m = new BufferManager({ size: MIB, slabSize: 16 * KIB })
    const M = m.managedBytes
    let st = m.stats()
    expect(st).toMatchObject({
      managedBytes: M,
      bytesInUse: 0,
      requestedBytesInUse: 0,
      regionsInUse: 0,
      highWaterBytes: 0,
      freeBytes: M,
      largestFreeRegion: M,
      allocCount: 0,
      freeCount: 0,
      failedAllocs: 0,
    })
    expect(st.classes.length).toBe(36)
    const a = [m.alloc(100), m.alloc(100), m.alloc(100)]
    const L = m.alloc(100_000)
    st = m.stats()
    const c112 = classStats(m, 112)
    const nb = Math.floor((16 * KIB) / 112)
    expect(c112).toEqual({ size: 112, inUse: 3, free: nb - 3, slabs: 1, slabBytes: 16 * KIB })
    expect(st.bytesInUse).toBe(3 * 112 + 100_096)
    expect(st.requestedBytesInUse).toBe(300 + 100_000)
    expect(st.regionsInUse).toBe(4)
    expect(st.largeRegionsInUse).toBe(1)
    expect(st.highWaterBytes).toBe(st.bytesInUse)
    expect(st.freeBytes).toBe(M - 16 * KIB - 100_096 + (nb - 3) * 112)
    expect(st.largestFreeRegion).toBe(M - 16 * KIB - 100_096)
    expect(st.allocCount).toBe(4)
    m.free(L)
    m.free(a[0]!)
    st = m.stats()
    expect(st.bytesInUse).toBe(2 * 112)
    expect(st.highWaterBytes).toBe(3 * 112 + 100_096)
    expect(st.freeCount).toBe(2)
    expect(classStats(m, 112)).toMatchObject({ inUse: 2, free: nb - 2, slabs: 1 })
    m.free(a[1]!)
    m.free(a[2]!)
    st = m.stats()
    // the empty slab stays cached: still counted as free space
    expect(classStats(m, 112)).toMatchObject({ inUse: 0, free: nb, slabs: 1 })
    expect(st.freeBytes).toBe(M)
    expect(st.largestFreeRegion).toBe(M)
    expect(m.trim()).toBe(16 * KIB)
    expect(classStats(m, 112)).toMatchObject({ inUse: 0, free: 0, slabs: 0 })
    expect(m.trim()).toBe(0)
    st = m.stats()
    expect(st.freeBytes).toBe(M)
    expect(st.largestFreeRegion).toBe(M)
    expect(st.regionsInUse).toBe(0)
  })
})

describe('slabs', () => {
  it('caches at most one empty slab per class', () => {
    const m = new BufferManager({ size: MIB, slabSize: 16 * KIB })
    const nb = Math.floor((16 * KIB) / 64)
    const live: number[] = []
    for (let i = 0; i < 3 * nb; i++) live.push(m.alloc(64))
    expect(classStats(m, 64).slabs).toBe(3)
    for (const a of live) m.free(a)
    expect(classStats(m, 64)).toMatchObject({ slabs: 1, inUse: 0, free: nb })
    // ping-pong of one size reuses the cached slab
    for (let i = 0; i < 1000; i++) m.free(m.alloc(64))
    expect(classStats(m, 64).slabs).toBe(1)
    expect(m.trim()).toBe(16 * KIB)
  })

  it('grows its slab table for many slabs and gives everything back', () => {
    const m = new BufferManager({ size: 16 * MIB, slabSize: 4 * KIB })
    const live: number[] = []
    for (let i = 0; i < 20_000; i++) live.push(m.allocOrThrow(16 + (i % 48) * 16))
    const st = m.stats()
    expect(st.classes.reduce((t, c) => t + c.slabs, 0)).toBeGreaterThan(64)
    const seen = new Set(live)
    expect(seen.size).toBe(live.length)
    for (let i = live.length - 1; i >= 0; i -= 2) m.free(live[i]!)
    for (let i = 0; i < live.length; i += 2) m.free(live[i]!)
    m.trim()
    expect(m.stats().freeBytes).toBe(m.managedBytes)
    expect(m.stats().largestFreeRegion).toBe(m.managedBytes)
  })

  it('reports error codes as an as-const object', () => {
    expect(BufMgrErrorCode).toEqual({
      BAD_SIZE: 'BAD_SIZE',
      EXHAUSTED: 'EXHAUSTED',
      DOUBLE_FREE: 'DOUBLE_FREE',
      NOT_ALLOCATED: 'NOT_ALLOCATED',
      INTERIOR: 'INTERIOR',
      BAD_OPTIONS: 'BAD_OPTIONS',
    })
    const e = new BufMgrError('INTERIOR', 'x')
    expect(e).toBeInstanceOf(Error)
    expect(e.name).toBe('BufMgrError')
  })
})
