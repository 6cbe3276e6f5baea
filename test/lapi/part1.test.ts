/**
 * LAPI part 1 over shared memory, with real worker threads: setup and query, counters, Put/Get,
 * vectors, Rmw, Xfer, synchronization, bad input, one-sidedness, oversubscription, job failures.
 * Each job has a deadline (runFixture's timeoutMs) so a hang fails the test instead of the suite.
 * How soon the crowded ring and the failures end is test/lapi/losses.perf.test.ts's
 * (`npm run test:perf`), for the cases of test/helpers/loss-cases.ts.
 */
import { describe, expect, it } from 'vitest'
import { expectOk, runFixture, type FixtureRun } from '../helpers/job.js'
import { crowdedRing, pastDeadline, taskThrows } from '../helpers/loss-cases.js'

/** expectOk, and every task's line is there. */
function expectTasksOk(r: FixtureRun, n: number, word: string): void {
  expectOk(r, n, word)
  for (let t = 0; t < n; t++) expect(r.stdout).toContain(`task ${t}`)
}

describe('LAPI part 1 (shm, worker threads)', () => {
  it('Init, Qenv 0-14 and 20, Senv, Msg_string, Term', async () => {
    const r = await runFixture('lapi/env.mjs', 3, { env: { ...process.env, EXPECT_TASKS: '3' } })
    expectTasksOk(r, 3, 'env ok')
  })

  it('Put and Get with target, origin and completion counters; client patterns', async () => {
    expectTasksOk(await runFixture('lapi/putget.mjs', 4), 4, 'putget ok')
  })

  it('a single task job works (Put/Get to itself)', async () => {
    expectTasksOk(await runFixture('lapi/putget.mjs', 1), 1, 'putget ok')
  })

  it('Rmw and Rmw64: NXTVAL by FETCH_AND_ADD from every task, OR, SWAP, CAS', async () => {
    expectTasksOk(await runFixture('lapi/rmw.mjs', 4), 4, 'rmw ok')
  })

  it('Putv/Getv: strided 2-D, iovector, GENERIC seed examples, mismatch codes', async () => {
    expectTasksOk(await runFixture('lapi/vector.mjs', 3), 3, 'vector ok')
  })

  it('Xfer PUT/GET/PUTV/GETV/RMW with send-completion and completion handlers', async () => {
    expectTasksOk(await runFixture('lapi/xfer.mjs', 3), 3, 'xfer ok')
  })

  it('every bad argument returns its code and changes nothing', async () => {
    expectTasksOk(await runFixture('lapi/errors.mjs', 2), 2, 'errors ok')
  })

  it('Address_init with functions and numbers, Address_init64, Addr_set/Addr_get', async () => {
    expectTasksOk(await runFixture('lapi/handlers.mjs', 3), 3, 'handlers ok')
  })

  it('Put, Get and Rmw complete while the target spins in a busy loop', async () => {
    const r = await runFixture('lapi/busy.mjs', 2, { timeoutMs: 30_000 })
    if (r.exitCode !== 0) throw new Error(r.stderr)
    expect(r.stdout).toContain('put/get/rmw to a busy task done')
    expect(r.stdout).toContain('target released')
  })

  it('16 tasks on 2 cores complete a ring of signalled Puts and Gfences', async () => {
    await crowdedRing()
  })

  it('the idiomatic face: Lapi, Counter, async waits, thrown LapiErrors', async () => {
    expectTasksOk(await runFixture('lapi/idiomatic.mjs', 3), 3, 'idiomatic ok')
  })

  describe('job failures end the job with the task named', () => {
    it('a task that throws', async () => {
      await taskThrows(1)
    })

    it('a task that exits with a non-zero code', async () => {
      const r = await runFixture('lapi/fail.mjs', 3, { args: ['exit'] })
      expect(r.exitCode).toBe(3)
      expect(r.stderr).toContain('task 1 failed: exited with code 3')
    })

    it('a task that leaves while the others wait in Gfence', async () => {
      const r = await runFixture('lapi/fail.mjs', 3, { args: ['early'] })
      expect(r.exitCode).not.toBe(0)
      expect(r.stderr).toMatch(/task 1 left the job/)
    })

    it('a task sending to a task that has left fails instead of waiting forever for ring space', async () => {
      const r = await runFixture('lapi/fail.mjs', 2, { args: ['flood'] })
      expect(r.exitCode).not.toBe(0)
      expect(r.stderr).toMatch(/task 0 failed: uncaught error: Error: task 1 has left the job/)
    })

    it('a job that runs past its deadline is stopped', async () => {
      await pastDeadline()
    })
  })
})
