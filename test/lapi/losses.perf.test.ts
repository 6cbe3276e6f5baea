/**
 * How soon a job ends when it loses a task or a process (`npm run test:perf`): within the bound
 * docs/transports.md gives for a loss across processes, the abort's grace (2 s) and the process
 * grace (3 s) with a margin, 12 s; in one process within 10 s; a silent udp peer after its timeout
 * (1 s here), the grace and the launcher's kill within 15 s. Also 16 tasks crowded on the CPUs
 * complete a ring of Puts and Gfences within 30 s. The cases are test/helpers/loss-cases.ts's,
 * which test/lapi/part1.test.ts, processes.test.ts and udp.test.ts run for what happens; here each
 * bound holds in one of three tries (test/helpers/perf.ts).
 */
import { describe, expect, it } from 'vitest'
import { crowdedRing, pastDeadline, processDies, processKilled, silentUdpProcess, taskThrows } from '../helpers/loss-cases.js'
import { bestOf } from '../helpers/perf.js'

/** The bound docs/transports.md gives for ending a job after a loss: grace (2 s) + process grace (3 s), with margin. */
const LOSS_BOUND_MS = 12_000

describe('losses end the job promptly', () => {
  it('16 tasks on 2 cores complete a ring of signalled Puts and Gfences within 30 s', async () => {
    await bestOf(3, async () => {
      expect(await crowdedRing()).toBeLessThan(30_000)
    })
  }, 200_000)

  it('one process: a task that throws ends the job within 10 s', async () => {
    await bestOf(3, async () => {
      expect(await taskThrows(1)).toBeLessThan(10_000)
    })
  }, 100_000)

  it('one process: a job past its deadline (1.5 s) is stopped within 10 s', async () => {
    await bestOf(3, async () => {
      expect(await pastDeadline()).toBeLessThan(10_000)
    })
  }, 100_000)

  for (const procs of [2, 3]) {
    it(`3 tasks in ${procs} processes: a task that throws ends the job within ${LOSS_BOUND_MS / 1000} s`, async () => {
      await bestOf(3, async () => {
        expect(await taskThrows(procs)).toBeLessThan(LOSS_BOUND_MS)
      })
    }, 100_000)

    it(`3 tasks in ${procs} processes: a process that dies at once ends the job within ${LOSS_BOUND_MS / 1000} s`, async () => {
      await bestOf(3, async () => {
        expect(await processDies(procs)).toBeLessThan(LOSS_BOUND_MS)
      })
    }, 100_000)

    it(`3 tasks in ${procs} processes: a process killed with kill -9 ends the job within ${LOSS_BOUND_MS / 1000 + 5} s`, async () => {
      await bestOf(3, async () => {
        expect(await processKilled(procs)).toBeLessThan(LOSS_BOUND_MS + 5_000)
      })
    }, 150_000)
  }

  it('udp: a process that goes silent is lost after the peer timeout, and the job ends within 15 s', async () => {
    await bestOf(3, async () => {
      expect(await silentUdpProcess()).toBeLessThan(15_000)
    })
  }, 150_000)
})
