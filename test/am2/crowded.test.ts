/**
 * A crowded host (more tasks than CPUs: here the whole job on one CPU with `taskset -c 0`), where a
 * poll that spins only keeps the task it waits for off the CPU: AM_Poll loops nap, in one process
 * over shared memory and in two over tcp, where each process's only task sleeps in the kernel on
 * its connections (docs/transports.md, "Sleeping on the connections"). That the round trips then
 * take a wake-up, not a scheduler time slice, is a claim about time: test/am2/crowded.perf.test.ts
 * (`npm run test:perf`).
 */
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
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
    it(`nap instead of spinning out time slices (${procs === 1 ? 'shm, 1 process' : 'tcp, 2 processes'}): where they sleep`, async () => {
      const r = await runCommand('taskset', ['-c', '0', process.execPath, LAPIRUN, '-n', '2', '--procs', String(procs), PROGRAM, String(ITERS)], {
        deadlineMs: 60_000,
      })
      expect(r.code, r.stderr).toBe(0)
      const rtt = Number(/rtt ([\d.]+)/.exec(r.stdout)?.[1])
      expect(rtt).toBeGreaterThan(0)
      const sleeps = [...r.stdout.matchAll(/sleeps (\d) (\d+)/g)].map((m) => Number(m[2]))
      expect(sleeps).toHaveLength(2)
      // (a process of one task sleeps on its connections; shared memory has none)
      if (procs === 2) expect(sleeps.every((n) => n > 0)).toBe(true)
      else expect(sleeps).toEqual([0, 0])
    })
  }
})
