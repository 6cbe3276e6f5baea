/**
 * The end of a job whose ports strangers held while it started and keep trying since, a claim
 * about time (`npm run test:perf`): lapirun, or every --join process, exits within 2 s of the
 * program's last line (a process that waited for the strangers would take their 10 s of tries),
 * in one of three tries (test/helpers/perf.ts). What the strangers got, and that the job exits at
 * all, is rendezvous.test.ts's, in the README's suite.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { bestOf } from '../helpers/perf.js'
import type { HostileOptions } from './helpers/attack.js'
import { runWorkJob } from './helpers/jobs.js'
import { reapAll } from './helpers/procs.js'

// (no test leaves a process behind: what is left is killed, and must then be gone)
afterEach(async () => {
  expect(await reapAll(), 'processes left running after the test').toEqual([])
})

/** rendezvous.test.ts's holders: 30 per port, silent or half a hello, trying again 100 ms after each close, up to 3000 tries. */
const HOLDERS: HostileOptions = { perTarget: 30, kinds: ['idle', 'idle', 'half-hello'], reopenMs: 100, retryFailed: true, maxOpens: 3000 }

describe('the end of a job', () => {
  for (const shape of ['procs', 'join'] as const) {
    const who = shape === 'procs' ? 'lapirun --procs' : 'every lapirun --join process'
    it(`${who} exits within 2 s of the program's last line, whatever strangers that held its ports while it started try since`, async () => {
      await bestOf(3, async () => {
        const r = await runWorkJob(shape, { rounds: 100, pauseMs: 600, attack: HOLDERS })
        const after = r.exitsAt.map((at) => Math.round(at - r.lastLineAt))
        expect(r.ok, r.err).toBe(true)
        for (const ms of after) expect(ms, `exits ${after.join(', ')} ms after the last line`).toBeLessThan(2000)
      })
    }, 150_000)
  }
})
