/**
 * @amlapi/pgas memory on every placement (the programs check themselves): memory.mjs copies and
 * fills issued by any task, typed global pointers, freeing of locks; memory-arrays.mjs pointers
 * into shared arrays stepping along their layout and allocation and freeing by one task; both
 * with the status codes of both faces. `npm test` runs memory.mjs over tcp and memory-arrays.mjs in
 * one process; `npm run test:full` both on every placement.
 */
import { describe, it } from 'vitest'
import { SHM4, TCP3, TCP4IN2, UDP4IN2, runPlaced } from '../helpers/placements.js'
import { matrix } from '../helpers/tier.js'

const config = { segmentSize: 8 << 20 }

describe('pgas: memory on every placement', () => {
  const all = [SHM4, TCP4IN2, TCP3, UDP4IN2]
  for (const pl of matrix(all, [TCP4IN2])) {
    it(`copy, fill, global pointers, lock freeing: ${pl.name}`, async () => {
      await runPlaced('pgas/memory.mjs', pl, { config, ok: 'pgas memory ok' })
    }, 90_000)
  }
  for (const pl of matrix(all, [SHM4])) {
    it(`shared-array pointers, allocation by one task: ${pl.name}`, async () => {
      await runPlaced('pgas/memory-arrays.mjs', pl, { config, ok: 'pgas memory arrays ok' })
    }, 90_000)
  }
})
