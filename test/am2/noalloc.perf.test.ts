/**
 * AM-2's per-message paths allocate nothing (`npm run test:perf`): the fixture's rounds spin both
 * tasks for seconds, several attempts of thousands of round trips each (am2/noalloc.mjs), so it
 * runs beside the claims about time rather than in the README's suite, with a deadline for a loaded
 * machine. (LAPI's hot paths, a quicker count, are test/lapi/garbage.test.ts's, in the suite.)
 */
import { describe, it } from 'vitest'
import { expectOk, runFixture } from '../helpers/job.js'

describe('am2 over lapi', () => {
  it('allocates nothing per message on the Short and Medium paths (packed and unpacked)', async () => {
    // (the rounds spin both tasks: a loaded 2-CPU machine has taken more than 55 s)
    const r = await runFixture('am2/noalloc.mjs', 2, { args: ['2000'], timeoutMs: 150_000 })
    expectOk(r, 2, 'am2 noalloc ok')
  }, 160_000)
})
