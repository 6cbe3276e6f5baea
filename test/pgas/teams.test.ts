/**
 * Teams of @amlapi/pgas (split, splitStrided, nested splits, every collective on a team, teams
 * at the same time and interleaved with the world, mismatches, destroy) and the collectives into
 * shared arrays, on every placement: all tasks in one process (shared memory), and split over
 * processes on tcp and udp. The program checks itself (teams.mjs) against sequential references.
 */
import { describe, it } from 'vitest'
import { PGAS_PLACEMENTS, runPlaced } from '../helpers/placements.js'

describe('pgas: teams and collectives into shared arrays', () => {
  for (const pl of PGAS_PLACEMENTS) {
    it(pl.name, async () => { await runPlaced('pgas/teams.mjs', pl, { timeoutMs: 45_000, ok: 'pgas teams ok' }) }, 60_000)
  }
})
