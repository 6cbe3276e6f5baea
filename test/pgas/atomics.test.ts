/**
 * @amlapi/pgas remote atomics on every placement: every operation on 8-, 16-, 32- and 64-bit
 * integers and 32- and 64-bit floats, fetching and non-fetching, all tasks at once on the same
 * words of a co-located and a remote task (atomics.mjs checks the exact final values, the answers,
 * `quiet`, and the status codes of bad input in both faces). `npm test` runs it over udp, 4 tasks
 * in 2 processes (a co-located and a remote task); `npm run test:full` on every placement.
 */
import { describe, it } from 'vitest'
import { SHM4, TCP4IN2, UDP4IN2, runPlaced, type Placement } from '../helpers/placements.js'
import { matrix } from '../helpers/tier.js'

/** Iterations of the concurrent phase: across processes one takes some 100 (tcp) to 200 (udp) ms on 2 vCPUs. */
const PLACEMENTS: Array<[Placement, number]> = [
  [SHM4, 16],
  [TCP4IN2, 8],
  [{ name: 'tcp, 4 tasks in 3 processes', tasks: 4, procs: 3, transport: 'tcp' }, 8],
  [UDP4IN2, 8],
]
const FAST = PLACEMENTS.filter(([pl]) => pl === UDP4IN2)

describe('pgas: atomics on every placement', () => {
  for (const [pl, iter] of matrix(PLACEMENTS, FAST)) {
    it(pl.name, async () => {
      await runPlaced('pgas/atomics.mjs', pl, { args: [String(iter)], ok: 'pgas atomics ok' })
    }, 90_000)
  }
})
