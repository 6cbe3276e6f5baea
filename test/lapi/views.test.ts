/**
 * ViewCache (the sub-range views of lapi's and am2's copy paths): the right bytes, the same view
 * for the same range (so a steady state allocates nothing), and arrays that view one buffer at
 * different offsets kept apart, also past the arrays and ranges it remembers.
 */
import { describe, expect, it } from 'vitest'
import { ViewCache } from '@amlapi/bufmgr'

describe('ViewCache', () => {
  it('answers views of the asked range, the same view again for the same range, the array itself for all of it', () => {
    const vc = new ViewCache()
    const sab = new SharedArrayBuffer(4096)
    const all = new Uint8Array(sab)
    for (let i = 0; i < all.length; i++) all[i] = i & 0xff
    const a = vc.get(all, 100, 50)
    expect([a.byteOffset, a.length, a[0], a[49]]).toEqual([100, 50, 100, 149])
    expect(vc.get(all, 100, 50)).toBe(a)
    expect(vc.get(all, 100, 51)).not.toBe(a)
    expect(vc.get(all, 0, all.length)).toBe(all)
    // an array at an offset of the same buffer: indices are its own
    const sub = all.subarray(1000, 3000)
    const b = vc.get(sub, 100, 50)
    expect([b.byteOffset, b.length, b[0]]).toEqual([1100, 50, 1100 & 0xff])
    expect(vc.get(all, 100, 50)).toBe(a)
  })

  it('stays right over more arrays and ranges than it remembers', () => {
    const vc = new ViewCache()
    const bufs = Array.from({ length: 70 }, (_, k) => {
      const u = new Uint8Array(256)
      u.fill(k)
      return u
    })
    const subs = bufs.map((u, k) => u.subarray(k % 7, 200))
    for (let round = 0; round < 3; round++) {
      for (let k = 0; k < subs.length; k++) {
        for (let off = 0; off < 40; off += 8) {
          const v = vc.get(subs[k]!, off, 16)
          expect(v.byteOffset).toBe((k % 7) + off)
          expect(v.length).toBe(16)
          expect(v.buffer).toBe(bufs[k]!.buffer)
          expect(v[0]).toBe(k)
        }
      }
    }
    // more ranges of one buffer than a table keeps: still right
    const big = new Uint8Array(1 << 16)
    for (let off = 0; off < 5000; off++) expect(vc.get(big, off, 3).byteOffset).toBe(off)
  })
})
