/**
 * Teams of @amlapi/pgas (split, splitStrided, nested splits, every collective on a team, teams
 * at the same time and interleaved with the world, mismatches, destroy) and the collectives into
 * shared arrays, on every placement: all tasks in one process (shared memory), and split over
 * processes on tcp and udp. The program checks itself (teams.mjs) against sequential references.
 * `npm test` runs it over tcp, 4 tasks in 2 processes; `npm run test:full` on every placement.
 */
import { describe, it } from 'vitest'
import { PGAS_PLACEMENTS, TCP4IN2, runPlaced } from '../helpers/placements.js'
import { matrix } from '../helpers/tier.js'

describe('pgas: teams and collectives into shared arrays', () => {
  for (const pl of matrix(PGAS_PLACEMENTS, [TCP4IN2])) {
    it(pl.name, async () => {
      await runPlaced('pgas/teams.mjs', pl, { timeoutMs: 45_000, ok: 'pgas teams ok' })
    }, 60_000)
  }
})
