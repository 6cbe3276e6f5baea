import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

interface HotPathReport {
  mode: string
  pairs: number
  heapGrowth: number
  gcs: number
}

const fixture = fileURLToPath(new URL('./fixtures/hot-path.mjs', import.meta.url))

/** Runs the fixture in a fresh process with a 64 MB young generation, so garbage is not scavenged away. */
function measure(mode: 'bufmgr' | 'control', pairs: number): HotPathReport {
  const out = execFileSync(process.execPath, ['--expose-gc', '--min-semi-space-size=64', '--max-semi-space-size=64', fixture, mode, String(pairs)], {
    encoding: 'utf8',
    timeout: 60_000,
  })
  return JSON.parse(out.trim().split('\n').at(-1)!) as HotPathReport
}

describe('hot path', () => {
  it('200k alloc/free pairs (small, medium and large, with zero fill) create no garbage', () => {
    const pairs = 200_000
    const r = measure('bufmgr', pairs)
    expect(r.pairs).toBe(pairs)
    expect(r.gcs).toBe(0)
    // 400k calls; one 16-byte object per call would be 6.4 MB. Allow 256 KiB of noise (JIT, IC).
    expect(r.heapGrowth).toBeLessThan(256 * 1024)
    // the same loop with one small object per pair shows up clearly: the measurement works
    const c = measure('control', pairs)
    expect(c.heapGrowth > 2 * 1024 * 1024 || c.gcs > 0).toBe(true)
  })
})
