/**
 * The spin budget, a claim about time (`npm run test:perf`): a budget shorter than a wake-up grows,
 * so that tasks answering each other do not sleep on every message. Its rule and bounds are
 * test/lapi/am.test.ts's, in the README's suite.
 */
import { availableParallelism } from 'node:os'
import { describe, expect, it } from 'vitest'
import { withOtherLoad } from '../helpers/job.js'
import { spin, type SpinTask } from '../helpers/spin.js'

describe('waiting: the spin budget', () => {
  it.skipIf(availableParallelism() < 2)('a budget shorter than a wake-up grows, so that answering tasks do not sleep on every message', async (ctx) => {
    // 2 µs is less than waking a thread (tens of µs), so waits sleep and doorbells end the sleeps
    // soon (surely in the first round, while the code is still being compiled): the budget grows,
    // and the later rounds sleep in few of their waits. Judged by the best of the three: a
    // thread the test runner or V8 (compiler, GC) puts on a CPU makes a grown budget sleep too,
    // and the budget then starts again from spinUs, by design (see Idler.adaptSpin). (On the 2-vCPU
    // VM with adaptation the best round slept 0-3 times in 1000 waits; without it, spinMaxUs 2,
    // the rounds slept 0-954 times, and the best of three 0-255: the chain sometimes ends by
    // itself there, so this shows that the waits do not sleep on every message, and `grown` that
    // the budget grew.)
    // The sleeps are judged only on a run in which the two tasks had the CPUs: with another
    // process holding one (a busy-looping process beside the suite: the best round slept 370
    // and 663 times in two runs), the displaced task's waits sleep, as they should. Up to three runs; when every one
    // was disturbed, the rule and the bounds are still checked and the test is reported skipped.
    const n = 3000
    let ts: SpinTask[] = []
    let otherCpus = 0
    for (let attempt = 0; attempt < 3; attempt++) {
      ;({ result: ts, otherCpus } = await withOtherLoad(() => spin({ spinUs: 2 }, n)))
      if (otherCpus < 0.25) break
    }
    for (const t of ts) {
      expect(t.spinUs).toBeGreaterThanOrEqual(2)
      expect(t.spinUs).toBeLessThanOrEqual(2000)
      expect(t.rule).toBe('2.000,102.000,306.000,2.000')
    }
    if (otherCpus >= 0.25) ctx.skip(`other processes held ${otherCpus.toFixed(2)} of a CPU in each of three runs`)
    for (const t of ts) expect(Math.min(...t.sleeps), t.sleeps.join(',')).toBeLessThan(n / 3 / 10)
    expect(ts[0]!.grown + ts[1]!.grown).toBeGreaterThan(0)
  })
})
