/**
 * @amlapi/pgas's remote procedure calls and public edge on every placement (rpc.mjs checks itself):
 * a backlog of 100 calls ahead of functions that wait on each other three deep and in a cycle,
 * calls by name, typed arguments and results, the flat face's handles, address 0, quiet and fence,
 * finalize, and bad input answered with codes. `npm test` runs it on 2 tasks in one process and
 * over lossy udp; `npm run test:full` on every placement.
 */
import { describe, it } from 'vitest'
import { SHM4, TCP3, TCP4IN2, UDP4IN2, runPlaced, type Placement } from '../helpers/placements.js'
import { matrix } from '../helpers/tier.js'

const SHM2: Placement = { name: 'shm, 2 tasks', tasks: 2, procs: 1 }
const LOSSY: Placement = { ...UDP4IN2, name: 'udp with loss and reordering, 4 tasks in 2 processes', faults: 'drop=0.02,reorder=0.2,dup=0.01,seed=7' }
const PLACEMENTS: Placement[] = [SHM4, SHM2, TCP3, TCP4IN2, LOSSY]

describe('pgas: remote procedure calls and the public edge', () => {
  for (const pl of matrix(PLACEMENTS, [SHM2, LOSSY])) {
    it(pl.name, async () => {
      await runPlaced('pgas/rpc.mjs', pl, { ok: 'pgas rpc ok' })
    }, 90_000)
  }
})
