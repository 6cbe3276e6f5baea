/**
 * A long stream of small active messages into a task that comes to it late (busy in its own code
 * while the stream backs up) is taken in at the pace of the wait loop, not of its sleeps: no round
 * of the fixture's four takes 1.5 s (a few hundred ms here; a wait that kept the slots it drained
 * unpublished took 5–7 s a round over tcp). The claim is about time, with a margin for a loaded
 * host. Two processes over tcp and udp, both CPUs (a wait spins only where the tasks have a CPU).
 */
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { LAPIRUN, runCommand } from '../helpers/run.js'

const PROGRAM = fileURLToPath(new URL('../fixtures/lapi/stream.mjs', import.meta.url))

describe('a stream into a task that comes to it late', () => {
  for (const transport of ['tcp', 'udp'] as const) {
    it(`${transport}, 2 processes`, async () => {
      const r = await runCommand(process.execPath, [LAPIRUN, '-n', '2', '--procs', '2', '--transport', transport, PROGRAM], { deadlineMs: 60_000 })
      expect(r.code, r.stderr).toBe(0)
      const m = /stream 4 rounds of 16384 messages, slowest ([\d.]+) ms/.exec(r.stdout)
      expect(m, r.stdout).not.toBeNull()
      expect(Number(m![1]), r.stdout).toBeLessThan(1500)
    }, 90_000)
  }
})
