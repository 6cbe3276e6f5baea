/**
 * A crowded host (more tasks than CPUs: here the whole job on one CPU with `taskset -c 0`), where a
 * poll that spins only keeps the task it waits for off the CPU: AM_Poll loops nap, so round trips
 * take a wake-up, not a scheduler time slice (several milliseconds each), in one process over
 * shared memory and in two over tcp. The claim is about time (`npm run test:perf`): the bound,
 * 2.5 ms per round trip on average, is far above a wake-up and below a time slice, and holds in one
 * of three tries (test/helpers/perf.ts). Where the tasks sleep is test/am2/crowded.test.ts's.
 */
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { bestOf } from '../helpers/perf.js'
import { LAPIRUN, runCommand } from '../helpers/run.js'

const PROGRAM = fileURLToPath(new URL('../fixtures/am2/pollpong.mjs', import.meta.url))
const ITERS = 2000

function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['-c', '0', 'true'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

describe.skipIf(!hasTaskset())('AM_Poll loops on one CPU', () => {
  for (const procs of [1, 2]) {
    it(`round trips take a wake-up, not a time slice (${procs === 1 ? 'shm, 1 process' : 'tcp, 2 processes'})`, async () => {
      await bestOf(3, async () => {
        const r = await runCommand('taskset', ['-c', '0', process.execPath, LAPIRUN, '-n', '2', '--procs', String(procs), PROGRAM, String(ITERS)], {
          deadlineMs: 60_000,
        })
        expect(r.code, r.stderr).toBe(0)
        const rtt = Number(/rtt ([\d.]+)/.exec(r.stdout)?.[1])
        expect(rtt).toBeGreaterThan(0)
        expect(rtt, r.stdout).toBeLessThan(2500)
      })
    }, 200_000)
  }
})
