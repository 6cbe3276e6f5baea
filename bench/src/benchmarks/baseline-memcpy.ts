/**
 * `Uint8Array.prototype.set` from an ordinary ArrayBuffer into a SharedArrayBuffer, one thread:
 * the cost of one copy into shared memory, which every SAB transport pays at least once per
 * message. GB/s = 10^9 bytes copied per second, one copy counted once.
 */
import type { Benchmark } from '../types.js'

const benchmark: Benchmark = {
  name: 'baseline.memcpy',
  description: 'Uint8Array.prototype.set from an ArrayBuffer into a SharedArrayBuffer (one thread)',
  series: [
    {
      id: 'baseline.memcpy.set-to-sab',
      title: 'Uint8Array.set → SAB',
      kind: 'bandwidth',
      unit: 'GB/s',
      group: 'memcpy',
      groupTitle: 'Copy bandwidth into a SharedArrayBuffer, one thread (GB/s)',
      sizes: 'copy',
    },
  ],
  open(ctx) {
    const src = new Uint8Array(ctx.maxSize)
    for (let i = 0; i < src.length; i += 4096) src[i] = i & 0xff
    const sab = new SharedArrayBuffer(ctx.maxSize)
    return {
      run(_series, size, iterations) {
        const from = src.subarray(0, size)
        const to = new Uint8Array(sab, 0, size)
        const t0 = performance.now()
        for (let i = 0; i < iterations; i++) to.set(from)
        return (performance.now() - t0) / 1e3
      },
      close() {},
    }
  },
}

export default benchmark
