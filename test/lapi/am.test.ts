/**
 * LAPI part 2, active messages, with real worker threads. Every test runs twice: over the plain
 * shared-memory rings, and through the test transport that holds back, shuffles and duplicates
 * packets (seeded), so nothing may depend on packet order. `npm test` runs them over the rings (and
 * test/am2/amx.test.ts a program through the test transport); `npm run test:full` over both. How
 * often waits sleep, a claim about time, is test/lapi/spin.perf.test.ts's.
 */
import { describe, expect, it } from 'vitest'
import { resolveConfig, type ChaosConfig } from '@amlapi/lapi'
import { expectOk, runFixture } from '../helpers/job.js'
import { spin } from '../helpers/spin.js'
import { matrix } from '../helpers/tier.js'

const transports: Array<[string, ChaosConfig | null]> = [
  ['in-order rings', null],
  ['reordering + duplicating transport', { seed: 11, dup: 0.15, hold: 0.5 }],
]

for (const [name, chaos] of matrix(transports, [transports[0]!])) {
  describe(`active messages over ${name}`, () => {
    const config = { chaos }
    it('header and completion handlers, every size class, counters in order, SEND_REPLY, BURY', async () => {
      expectOk(await runFixture('am/basic.mjs', 3, { config }), 3, 'am basic ok')
    })

    it('Amsendv: IOVECTOR, STRIDED and the GENERIC examples of the LAPI_Amsendv page', async () => {
      expectOk(await runFixture('am/vector.mjs', 3, { config }), 3, 'am vector ok')
    })

    it('bad input codes, unregistered and throwing header handlers, malformed packets', async () => {
      const r = await runFixture('am/errors.mjs', 3, { config })
      expectOk(r, 3, 'am errors ok')
      // the test transport really duplicated packets (and the receivers dropped the copies)
      const dups = [...r.stdout.matchAll(/duplicates dropped (\d+)/g)].reduce((a, m) => a + Number(m[1]), 0)
      if (chaos !== null) expect(dups).toBeGreaterThan(0)
      else expect(dups).toBe(0)
    })

    it('Waitcntr while messages bump its counter: Getcntr, Setcntr and nested waits in handlers, mixed with Puts', async () => {
      expectOk(await runFixture('am/waits.mjs', 2, { config }), 2, 'am waits ok')
    })

    it('edge cases: sends from a drain into a filling ring, fences and waits in inline completion handlers, negative counters, Rmw on an awaited counter', async () => {
      expectOk(await runFixture('am/edges.mjs', 2, { config, args: [chaos ? 'chaos' : 'plain'] }), 2, 'am edges ok')
    })

    // (the test transport holds a task's packets back until its next dispatcher round: a send
    // followed by a wait outside LAPI would never arrive, so this one runs over the rings only)
    it.skipIf(chaos !== null)(
      'polling mode: a task tells senders their messages landed at its next step in LAPI (a Put, a send, a dispatcher round, the end of its program)',
      async () => {
        expectOk(await runFixture('am/held.mjs', 2, { config }), 2, 'am held ok')
        // …and a LAPI_Term from a completion handler inline in a drain ends the holding for that drain
        expectOk(await runFixture('am/held-term.mjs', 2, { config }), 2, 'am held-term ok')
      },
    )

    it('negotiated-payload sends (prepareShort/commitShort): contents, order, refusals, a preparation lost to a send in between, a full ring; in-place receivers (setLibraryShortHandler)', async () => {
      expectOk(await runFixture('am/prepared.mjs', 2, { config, args: [chaos ? 'chaos' : 'plain'] }), 2, 'am prepared ok')
    })

    it('completion handlers that send; a burst; a slow completion handler does not stall the others', async () => {
      expectOk(await runFixture('am/reply.mjs', 4, { config, args: [chaos ? '100' : '400'] }), 4, 'am reply ok')
    })

    it('all-to-all of 1 MiB among 4 tasks and a flood of small messages from 3 tasks into one', async () => {
      const flood = chaos ? '10000' : '100000'
      expectOk(await runFixture('am/stress.mjs', 4, { config: { ...config, segmentSize: 8 << 20 }, args: [flood], timeoutMs: 60_000 }), 4, 'am stress ok')
    })

    it('message ids (uint32) and ring packet counts (int32) wrap: every size class, completion handlers that send, and a flood cross the wraps', async () => {
      // every pair of tasks starts 40 messages before the ids' wrap, every ring 20 packets before
      // its count turns negative or wraps to 0 (test-transport settings)
      const base = chaos ?? { seed: 1, dup: 0, hold: 0 }
      const signFlip = { ...base, firstId: 2 ** 32 - 40, firstPacket: 2 ** 31 - 20 }
      const wrap = { ...base, firstId: 2 ** 32 - 40, firstPacket: -20 }
      expectOk(await runFixture('am/basic.mjs', 3, { config: { chaos: signFlip } }), 3, 'am basic ok')
      expectOk(await runFixture('am/basic.mjs', 3, { config: { chaos: wrap } }), 3, 'am basic ok')
      expectOk(await runFixture('am/reply.mjs', 4, { config: { chaos: wrap }, args: ['100'] }), 4, 'am reply ok')
      expectOk(
        await runFixture('am/stress.mjs', 4, { config: { chaos: signFlip, segmentSize: 8 << 20 }, args: ['3000'], timeoutMs: 60_000 }),
        4,
        'am stress ok',
      )
    })

    it('the accumulate example of the LAPI documentation, in both faces', async () => {
      for (const f of ['c-style.mjs', 'idiomatic.mjs']) {
        const r = await runFixture('../../examples/accumulate/' + f, 4, { config, args: ['5000'] })
        if (r.exitCode !== 0) throw new Error(r.stderr)
        expect(r.stdout).toContain('accumulate: D = sum of 4 vectors of 5000 doubles, verified')
      }
    })
  })
}

describe('polling and interrupt mode', () => {
  for (const mode of ['interrupt', 'polling', 'switch']) {
    it(`${mode}: handlers ${mode === 'polling' ? 'wait for a LAPI call' : 'run while the task awaits'}`, async () => {
      const r = await runFixture('am/interrupt.mjs', 2, { args: [mode] })
      if (r.exitCode !== 0) throw new Error(r.stderr)
      expect(r.stdout).toContain(`task 1 ${mode}: during await [${mode === 'polling' ? '' : 'hdr,cmpl'}]`)
    })
  }
})

describe('waiting: the spin budget', () => {
  it('the settings: AMLAPI_SPIN_MAX_US, defaults, bounds', () => {
    expect(resolveConfig({}, {}).spinMaxUs).toBe(2000)
    expect(resolveConfig({}, { AMLAPI_SPIN_MAX_US: '500' }).spinMaxUs).toBe(500)
    expect(() => resolveConfig({ spinMaxUs: -1 }, {})).toThrow(RangeError)
    expect(() => resolveConfig({}, { AMLAPI_SPIN_MAX_US: 'x' })).toThrow(RangeError)
  })

  it('a budget shorter than a wake-up stays within its bounds, and the rule grows it and brings it back', async () => {
    // (how seldom the waits then sleep is a claim about time: test/lapi/spin.perf.test.ts)
    for (const t of await spin({ spinUs: 2 }, 600)) {
      expect(t.spinUs).toBeGreaterThanOrEqual(2)
      expect(t.spinUs).toBeLessThanOrEqual(2000)
      // the rule, fed sleeps directly: back to spinUs, grown to spinUs + 2 × 50 µs, grown once more
      // to spinUs + 2 × (102 + 50) µs, back to spinUs
      expect(t.rule).toBe('2.000,102.000,306.000,2.000')
    }
  })

  it('spinMaxUs at most spinUs keeps the budget fixed; spinUs 0 never spins', async () => {
    for (const t of await spin({ spinUs: 3, spinMaxUs: 3 }, 300)) expect([t.spinUs, t.grown, t.rule]).toEqual([3, 0, '-'])
    for (const t of await spin({ spinUs: 0 }, 300)) expect([t.spinUs, t.grown, t.rule]).toEqual([0, 0, '-'])
  })
})
