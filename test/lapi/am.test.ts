/**
 * LAPI part 2, active messages, with real worker threads. Every test runs twice: over the plain
 * shared-memory rings, and through the test transport that holds back, shuffles and duplicates
 * packets (seeded), so nothing may depend on packet order.
 */
import { describe, expect, it } from 'vitest'
import type { ChaosConfig } from '@amlapi/lapi'
import { expectOk, runFixture } from '../helpers/job.js'



const transports: Array<[string, ChaosConfig | null]> = [['in-order rings', null], ['reordering + duplicating transport', { seed: 11, dup: 0.15, hold: 0.5 }]]

for (const [name, chaos] of transports) {
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
    it.skipIf(chaos !== null)('polling mode: a task tells senders their messages landed at its next step in LAPI (a Put, a send, a dispatcher round, the end of its program)', async () => {
      expectOk(await runFixture('am/held.mjs', 2, { config }), 2, 'am held ok')
      // …and a LAPI_Term from a completion handler inline in a drain ends the holding for that drain
      expectOk(await runFixture('am/held-term.mjs', 2, { config }), 2, 'am held-term ok')
    })

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
