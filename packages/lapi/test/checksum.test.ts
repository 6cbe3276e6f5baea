/**
 * The udp datagram checksum (transport/checksum.ts): WebAssembly's SIMD code and the plain code
 * give the same value for any bytes, offset and length, and the value changes when a bit flips or
 * two blocks trade places (what a damaged or reassembled datagram looks like).
 */
import { describe, expect, it } from 'vitest'
import { DatagramSum, FdIo, sharedMemory } from '@amlapi/lapi/transport'

const PAGES = 4
const STATE = 128
const mem = sharedMemory(PAGES)
const u8 = new Uint8Array(mem.buffer)
const simd = new DatagramSum(mem, new FdIo(mem, PAGES).sum4(), STATE)
const plain = new DatagramSum(mem, null, STATE)

/** A seeded generator (xorshift32): the same cases on every run. */
function rng(seed: number): () => number {
  let x = seed
  return () => {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    return (x >>> 0) / 2 ** 32
  }
}

/** The value of two pieces (a header of `hl` bytes at `h`, a payload of `len` at `at`). */
function value(s: DatagramSum, h: number, hl: number, at: number, len: number): number {
  s.reset()
  s.add(h, hl)
  s.add(at, len)
  return s.value()
}

describe('udp datagram checksum', () => {
  it('SIMD and plain code agree, at any offset and length', () => {
    const r = rng(7)
    for (let t = 0; t < 3000; t++) {
      const h = 4096 + Math.floor(r() * 64)
      const at = 8192 + Math.floor(r() * 64)
      const len = t < 40 ? t : Math.floor(r() * 70_000)
      for (let k = 0; k < 64; k++) u8[h + k] = r() * 256
      for (let k = 0; k < len; k++) u8[at + k] = r() * 256
      expect(value(simd, h, 48, at, len)).toBe(value(plain, h, 48, at, len))
    }
  })

  it('a flipped bit changes the value', () => {
    const r = rng(11)
    const h = 4096
    const at = 8192
    for (let t = 0; t < 3000; t++) {
      const len = 1 + Math.floor(r() * 4000)
      for (let k = 0; k < 48; k++) u8[h + k] = r() * 256
      for (let k = 0; k < len; k++) u8[at + k] = r() * 256
      const v = value(simd, h, 48, at, len)
      const k = Math.floor(r() * (48 + len))
      const where = k < 48 ? h + k : at + k - 48
      u8[where]! ^= 1 << Math.floor(r() * 8)
      expect(value(simd, h, 48, at, len)).not.toBe(v)
      expect(value(plain, h, 48, at, len)).not.toBe(v)
    }
  })

  it('blocks that trade places change the value', () => {
    const r = rng(5)
    const at = 8192
    for (let t = 0; t < 500; t++) {
      const blocks = 2 + Math.floor(r() * 100)
      for (let k = 0; k < 16 * blocks; k++) u8[at + k] = r() * 256
      const v = value(simd, 4096, 0, at, 16 * blocks)
      const i = Math.floor(r() * blocks)
      let j = Math.floor(r() * blocks)
      if (j === i) j = (i + 1) % blocks
      const a = u8.slice(at + 16 * i, at + 16 * i + 16)
      const b = u8.slice(at + 16 * j, at + 16 * j + 16)
      if (a.every((x, k) => x === b[k])) continue
      u8.set(b, at + 16 * i)
      u8.set(a, at + 16 * j)
      expect(value(simd, 4096, 0, at, 16 * blocks)).not.toBe(v)
    }
  })
})
