/**
 * @amlapi/pgas's remote procedure calls and public edge on every placement (rpc.mjs checks itself):
 * a backlog of 100 calls ahead of functions that wait on each other three deep and in a cycle,
 * calls by name, typed arguments and results, the flat face's handles, address 0, quiet and fence,
 * finalize, and bad input answered with codes.
 */
import { describe, expect, it } from 'vitest'
import { runFixture } from '../helpers/job.js'

interface Placement { name: string, tasks: number, procs: number, transport?: 'tcp' | 'udp', faults?: string }
const PLACEMENTS: Placement[] = [
  { name: 'shm, 4 tasks', tasks: 4, procs: 1 },
  { name: 'shm, 2 tasks', tasks: 2, procs: 1 },
  { name: 'tcp, 3 processes', tasks: 3, procs: 3, transport: 'tcp' },
  { name: 'tcp, 4 tasks in 2 processes', tasks: 4, procs: 2, transport: 'tcp' },
  { name: 'udp with loss and reordering, 4 tasks in 2 processes', tasks: 4, procs: 2, transport: 'udp', faults: 'drop=0.02,reorder=0.2,dup=0.01,seed=7' },
]

describe('pgas: remote procedure calls and the public edge', () => {
  for (const pl of PLACEMENTS) {
    it(pl.name, async () => {
      const r = await runFixture('pgas/rpc.mjs', pl.tasks, {
        timeoutMs: 60_000, procs: pl.procs,
        ...(pl.transport !== undefined ? { transport: pl.transport } : {}), ...(pl.faults !== undefined ? { faults: pl.faults } : {}),
      })
      if (r.exitCode !== 0) throw new Error(`job failed (${r.exitCode}): ${r.failure?.reason ?? ''}\n${r.stderr}\n${r.stdout}`)
      for (let t = 0; t < pl.tasks; t++) expect(r.stdout).toContain(`task ${t} pgas rpc ok`)
    }, 90_000)
  }
})
