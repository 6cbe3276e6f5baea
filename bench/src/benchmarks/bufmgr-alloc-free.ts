/**
 * Allocation rate of `@amlapi/bufmgr` against the two JavaScript ways of getting a fresh byte
 * buffer. Each loop keeps a ring of 64 live regions: every operation allocates a new region of
 * `size` bytes, writes one byte into it, and lets go of the oldest (bufmgr: `free`; JS: drop the
 * reference, leaving it to the garbage collector). One operation = one alloc + one free.
 * The runner also counts the garbage of each loop (`garbage: true`): bufmgr should create none.
 */
import { BufferManager } from '@amlapi/bufmgr'
import type { Benchmark, Goal } from '../types.js'

const RING = 64
const POOL_BYTES = 64 << 20
/** Sizes the goal applies to: bufmgr at least 5× the rate of `new Uint8Array(n)` up to 4 KiB. */
const GOAL_SIZES = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096]

/** Keeps loop results observable so V8 cannot drop the allocations. */
export let sink = 0

// The rings are made once, so that a run allocates nothing but what it measures.
const u8Ring: Uint8Array[] = []
const bufferRing: Buffer[] = []
const offsetRing = new Int32Array(RING)

function u8Loop(size: number, iterations: number): number {
  const ring = u8Ring
  for (let k = 0; k < RING; k++) ring[k] = new Uint8Array(size)
  const t0 = performance.now()
  for (let i = 0; i < iterations; i++) {
    const b = new Uint8Array(size)
    b[0] = i
    ring[i & (RING - 1)] = b
  }
  const t1 = performance.now()
  for (let k = 0; k < RING; k++) sink += ring[k]![0]!
  return (t1 - t0) / 1e3
}

function bufferLoop(size: number, iterations: number): number {
  const ring = bufferRing
  for (let k = 0; k < RING; k++) ring[k] = Buffer.allocUnsafe(size)
  const t0 = performance.now()
  for (let i = 0; i < iterations; i++) {
    const b = Buffer.allocUnsafe(size)
    b[0] = i
    ring[i & (RING - 1)] = b
  }
  const t1 = performance.now()
  for (let k = 0; k < RING; k++) sink += ring[k]![0]!
  return (t1 - t0) / 1e3
}

function bufmgrLoop(bm: BufferManager, bytes: Uint8Array, size: number, iterations: number): number {
  const ring = offsetRing
  for (let k = 0; k < RING; k++) {
    ring[k] = bm.alloc(size)
    if (ring[k] === 0) throw new Error(`bufmgr exhausted while filling the ring (size ${size})`)
  }
  const t0 = performance.now()
  for (let i = 0; i < iterations; i++) {
    const k = i & (RING - 1)
    const a = bm.alloc(size)
    if (a === 0) throw new Error(`bufmgr exhausted (size ${size})`)
    bytes[a] = i
    bm.free(ring[k]!)
    ring[k] = a
  }
  const t1 = performance.now()
  for (let k = 0; k < RING; k++) {
    sink += bytes[ring[k]!]!
    bm.free(ring[k]!)
  }
  return (t1 - t0) / 1e3
}

const goals: Goal[] = GOAL_SIZES.map((size) => ({
  name: 'bufmgr alloc+free ≥ 5× new Uint8Array',
  series: 'bufmgr.alloc-free.bufmgr',
  size,
  baseline: 'bufmgr.alloc-free.uint8array',
  op: '>=',
  target: 5,
}))

const group = { kind: 'rate', unit: 'ops/s', group: 'bufmgr', sizes: 'alloc', garbage: true } as const

const benchmark: Benchmark = {
  name: 'bufmgr.alloc-free',
  description: 'alloc+free pairs per second, ring of 64 live regions: bufmgr vs new Uint8Array vs Buffer.allocUnsafe',
  series: [
    {
      id: 'bufmgr.alloc-free.bufmgr',
      title: 'bufmgr alloc/free',
      groupTitle: 'Allocate + free pairs per second, ring of 64 live regions (ops/s)',
      ...group,
      compareTo: [
        { series: 'bufmgr.alloc-free.uint8array', label: '÷ new Uint8Array' },
        { series: 'bufmgr.alloc-free.buffer', label: '÷ Buffer.allocUnsafe' },
      ],
    },
    { id: 'bufmgr.alloc-free.uint8array', title: 'new Uint8Array(n)', ...group },
    { id: 'bufmgr.alloc-free.buffer', title: 'Buffer.allocUnsafe(n)', ...group },
  ],
  goals,
  open() {
    const bm = new BufferManager({ size: POOL_BYTES })
    const probe = bm.alloc(1)
    if (probe === 0) throw new Error('bufmgr: cannot allocate one byte')
    // One view of the whole managed buffer, made once: a view per operation would be garbage.
    const bytes = new Uint8Array(bm.view(probe, 1).buffer)
    bm.free(probe)
    return {
      run(series, size, iterations) {
        if (series.endsWith('.bufmgr')) return bufmgrLoop(bm, bytes, size, iterations)
        if (series.endsWith('.uint8array')) return u8Loop(size, iterations)
        return bufferLoop(size, iterations)
      },
      close() {},
    }
  },
}

export default benchmark
