/**
 * Two tasks that flood each other with rendezvous and multi-packet active messages while both
 * rings are full: the PULLED (and CTS) a target owes from inside its dispatcher waits for room
 * without holding the dispatcher, so neither task waits on the other for ever (crossing.mjs).
 */
import { describe, it } from 'vitest'
import { expectOk, runFixture } from '../helpers/job.js'

describe('active messages crossing with full rings', () => {
  it('2 tasks of one process', async () => {
    expectOk(await runFixture('lapi/crossing.mjs', 2, { timeoutMs: 40_000 }), 2, 'crossing ok')
  }, 60_000)
  it('4 tasks of one process, in pairs, small rings', async () => {
    expectOk(await runFixture('lapi/crossing.mjs', 4, { timeoutMs: 40_000, config: { ringSlots: 8 } }), 4, 'crossing ok')
  }, 60_000)
  it('2 processes over tcp', async () => {
    expectOk(await runFixture('lapi/crossing.mjs', 2, { timeoutMs: 40_000, procs: 2, transport: 'tcp' }), 2, 'crossing ok')
  }, 60_000)
})
