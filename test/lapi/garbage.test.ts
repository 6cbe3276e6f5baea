/** The hot paths allocate nothing: heap growth per Put, Get, Rmw and one-packet Amsend round. */
import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { FIXTURES } from '../helpers/job.js'

describe('hot paths', () => {
  it('allocate no object per operation (heap growth under 8 bytes per operation; the smallest heap object is 16)', () => {
    // the young generation starts at 64 MB, so no collection runs during a loop and hides what it allocated
    const r = spawnSync(process.execPath, ['--expose-gc', '--min-semi-space-size=64', '--max-semi-space-size=64', FIXTURES + 'lapi/garbage.mjs'], {
      encoding: 'utf8',
      timeout: 60_000,
    })
    expect(r.status, r.stderr).toBe(0)
    const [json, ran, gcs] = r.stdout.trim().split(' ')
    expect(ran).toBe('true')
    expect(gcs, 'collections during the measured loops').toBe('0')
    const perOp = JSON.parse(json!) as Record<string, number>
    for (const [op, bytes] of Object.entries(perOp)) expect(bytes, `${op}: ${bytes} bytes/op`).toBeLessThan(8)
  })
})
