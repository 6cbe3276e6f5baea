/**
 * Teams of @amlapi/pgas (split, splitStrided, nested splits, every collective on a team, teams
 * at the same time and interleaved with the world, mismatches, destroy) and the collectives into
 * shared arrays, on every placement: all tasks in one process (shared memory), and split over
 * processes on tcp and udp. The program checks itself (teams.mjs) against sequential references.
 */
import { describe, expect, it } from 'vitest'
import { runFixture } from '../helpers/job.js'

interface Placement { name: string, tasks: number, procs: number, transport?: 'tcp' | 'udp' }
const PLACEMENTS: Placement[] = [
  { name: 'shm, 4 tasks', tasks: 4, procs: 1 },
  { name: 'shm, 3 tasks', tasks: 3, procs: 1 },
  { name: 'tcp, 4 tasks in 2 processes', tasks: 4, procs: 2, transport: 'tcp' },
  { name: 'tcp, 3 processes', tasks: 3, procs: 3, transport: 'tcp' },
  { name: 'udp, 4 tasks in 2 processes', tasks: 4, procs: 2, transport: 'udp' },
]

describe('pgas: teams and collectives into shared arrays', () => {
  for (const pl of PLACEMENTS) {
    it(pl.name, async () => {
      const r = await runFixture('pgas/teams.mjs', pl.tasks, { timeoutMs: 45_000, procs: pl.procs, ...(pl.transport !== undefined ? { transport: pl.transport } : {}) })
      if (r.exitCode !== 0) throw new Error(`job failed (${r.exitCode}): ${r.failure?.reason ?? ''}\n${r.stderr}\n${r.stdout}`)
      for (let t = 0; t < pl.tasks; t++) expect(r.stdout).toContain(`task ${t} pgas teams ok`)
    }, 60_000)
  }
})
