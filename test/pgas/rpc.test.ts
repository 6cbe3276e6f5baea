/**
 * @amlapi/pgas's remote procedure calls and public edge on every placement (rpc.mjs checks itself):
 * a backlog of 100 calls ahead of functions that wait on each other three deep and in a cycle,
 * calls by name, typed arguments and results, the flat face's handles, address 0, quiet and fence,
 * finalize, and bad input answered with codes.
 */
import { describe, it } from 'vitest'
import { SHM4, TCP3, TCP4IN2, UDP4IN2, runPlaced, type Placement } from '../helpers/placements.js'

const PLACEMENTS: Placement[] = [
  SHM4, { name: 'shm, 2 tasks', tasks: 2, procs: 1 }, TCP3, TCP4IN2,
  { ...UDP4IN2, name: 'udp with loss and reordering, 4 tasks in 2 processes', faults: 'drop=0.02,reorder=0.2,dup=0.01,seed=7' },
]

describe('pgas: remote procedure calls and the public edge', () => {
  for (const pl of PLACEMENTS) {
    it(pl.name, async () => { await runPlaced('pgas/rpc.mjs', pl, { ok: 'pgas rpc ok' }) }, 90_000)
  }
})
