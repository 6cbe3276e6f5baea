/**
 * @amlapi/pgas remote atomics on every placement: every operation on 8-, 16-, 32- and 64-bit
 * integers and 32- and 64-bit floats, fetching and non-fetching, all tasks at once on the same
 * words of a co-located and a remote task (atomics.mjs checks the exact final values, the answers,
 * `quiet`, and the status codes of bad input in both faces).
 */
import { describe, expect, it } from 'vitest'
import { runFixture } from '../helpers/job.js'

interface Placement {
  name: string, tasks: number, procs: number, transport?: 'tcp' | 'udp'
  /** Iterations of the concurrent phase: across processes one takes some 100 (tcp) to 200 (udp) ms on 2 vCPUs. */
  iter: number
}
const PLACEMENTS: Placement[] = [
  { name: 'shm, 4 tasks', tasks: 4, procs: 1, iter: 16 },
  { name: 'tcp, 4 tasks in 2 processes', tasks: 4, procs: 2, iter: 8, transport: 'tcp' },
  { name: 'tcp, 4 tasks in 3 processes', tasks: 4, procs: 3, iter: 8, transport: 'tcp' },
  { name: 'udp, 4 tasks in 2 processes', tasks: 4, procs: 2, iter: 8, transport: 'udp' },
]

describe('pgas: atomics on every placement', () => {
  for (const pl of PLACEMENTS) {
    it(pl.name, async () => {
      const r = await runFixture('pgas/atomics.mjs', pl.tasks, { args: [String(pl.iter)], timeoutMs: 60_000, procs: pl.procs, ...(pl.transport !== undefined ? { transport: pl.transport } : {}) })
      if (r.exitCode !== 0) throw new Error(`job failed (${r.exitCode}): ${r.failure?.reason ?? ''}\n${r.stderr}\n${r.stdout}`)
      for (let t = 0; t < pl.tasks; t++) expect(r.stdout).toContain(`task ${t} pgas atomics ok`)
    }, 90_000)
  }
})
