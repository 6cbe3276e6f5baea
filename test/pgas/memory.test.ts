/**
 * @amlapi/pgas memory on every placement (the programs check themselves): memory.mjs copies and
 * fills issued by any task, typed global pointers, freeing of locks; memory-arrays.mjs pointers
 * into shared arrays stepping along their layout and allocation and freeing by one task; both
 * with the status codes of both faces.
 */
import { describe, expect, it } from 'vitest'
import { runFixture } from '../helpers/job.js'

interface Placement { name: string, tasks: number, procs: number, transport?: 'tcp' | 'udp' }
const PLACEMENTS: Placement[] = [
  { name: 'shm, 4 tasks', tasks: 4, procs: 1 },
  { name: 'tcp, 4 tasks in 2 processes', tasks: 4, procs: 2, transport: 'tcp' },
  { name: 'tcp, 3 processes', tasks: 3, procs: 3, transport: 'tcp' },
  { name: 'udp, 4 tasks in 2 processes', tasks: 4, procs: 2, transport: 'udp' },
]

async function run (file: string, pl: Placement, ok: string): Promise<void> {
  const r = await runFixture(file, pl.tasks, {
    timeoutMs: 60_000, procs: pl.procs, config: { segmentSize: 8 << 20 }, ...(pl.transport !== undefined ? { transport: pl.transport } : {}),
  })
  if (r.exitCode !== 0) throw new Error(`job failed (${r.exitCode}): ${r.failure?.reason ?? ''}\n${r.stderr}\n${r.stdout}`)
  for (let t = 0; t < pl.tasks; t++) expect(r.stdout).toContain(`task ${t} ${ok}`)
}

describe('pgas: memory on every placement', () => {
  for (const pl of PLACEMENTS) {
    it(`copy, fill, global pointers, lock freeing: ${pl.name}`, async () => { await run('pgas/memory.mjs', pl, 'pgas memory ok') }, 90_000)
    it(`shared-array pointers, allocation by one task: ${pl.name}`, async () => { await run('pgas/memory-arrays.mjs', pl, 'pgas memory arrays ok') }, 90_000)
  }
})
