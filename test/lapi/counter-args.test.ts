/**
 * The idiomatic face takes a `Counter` wherever a counter goes, and an `Addr` still works: Put, Get,
 * Putv, Getv, Amsend, Amsendv, amsendCode and the Rmw methods with Counters in every counter
 * position move the counters exactly as with Addrs; `addressInit(counter)` gathers the addrs.
 * (Am2.rank and Am2.procs are checked by the am2 idiomatic fixture, test/am2/rules.test.ts.)
 */
import { describe, expect, it } from 'vitest'
import { expectOk, runFixture } from '../helpers/job.js'

describe('Counter or Addr in every counter position (idiomatic face)', () => {
  it('Put/Get/Putv/Getv/Amsend/Amsendv/amsendCode/Rmw move the same counters either way', async () => {
    const r = await runFixture('lapi/counter-args.mjs', 3)
    expectOk(r, 3, 'counter-args ok')
    for (let t = 0; t < 3; t++) expect(r.stdout).toContain(`task ${t} counter-args ok`)
  })

  it('works in a one-task job (every target is the task itself)', async () => {
    expectOk(await runFixture('lapi/counter-args.mjs', 1), 1, 'counter-args ok')
  })
})
