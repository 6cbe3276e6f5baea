/**
 * The distributed hash table of examples/pgas (dht.mjs) at a small size, both implementations
 * (remote procedure calls; remote atomics with puts and gets), on the placements of apps.test.ts:
 * each run checks itself against its key stream (sampled lookups of every task's keys and of keys
 * never inserted, every task's own part, the entries equal to the distinct keys) and prints
 * "verified". `npm test` runs the remote procedure calls over udp, the atomics in one process of 4
 * tasks and the full batches in one process; `npm run test:full` each on every placement.
 */
import { describe, expect, it } from 'vitest'
import { EX } from '../helpers/programs.js'
import { APP_PLACEMENTS, SHM4, TCP2, UDP4IN2, runPlaced, type Placement } from '../helpers/placements.js'
import { matrix } from '../helpers/tier.js'

const PLACEMENTS = APP_PLACEMENTS
const SHM2: Placement = { name: 'shm, 2 tasks', tasks: 2, procs: 1 }

async function dht(pl: Placement, logK: number, impl: string): Promise<void> {
  const out = await runPlaced(EX + 'pgas/dht.mjs', pl, { args: [String(logK), impl] })
  expect(out).toMatch(/million lookups per second/)
  expect(out).toMatch(new RegExp(`^DHT 2\\^${logK} ${impl} verified$`, 'm'))
}

describe('pgas application: distributed hash table', () => {
  for (const [impl, fast] of [
    ['rpc', UDP4IN2],
    ['atomic', SHM4],
  ] as const) {
    for (const pl of matrix(PLACEMENTS, [fast])) {
      it(`DHT 2^10 keys per task, ${impl}: ${pl.name}`, () => dht(pl, 10, impl), 90_000)
    }
  }
  // (2^15 keys on 2 tasks: the remote procedure calls go in full batches of 2048 keys, and more of
  // them than the 4 lookups in flight)
  for (const pl of matrix([SHM2, TCP2], [SHM2])) {
    it(`DHT 2^15 keys per task, rpc, full batches: ${pl.name}`, () => dht(pl, 15, 'rpc'), 90_000)
  }
})
