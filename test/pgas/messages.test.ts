/**
 * @amlapi/pgas errors a user can cause name the values involved (the task and the job's range,
 * the address, length and segment size, the index and the shared array's length, the root, the
 * atomic's width and alignment), and a BigInt where a number goes (or a number where a 64-bit
 * atomic takes a BigInt) is a PgasError with words, never a raw TypeError.
 */
import { describe, it } from 'vitest'
import { expectOk, runFixture } from '../helpers/job.js'

describe('pgas errors name the values involved', () => {
  for (const procs of [1, 2]) {
    it(`idiomatic face, BigInts included; the flat face's codes (${procs} process${procs === 1 ? '' : 'es'})`, async () => {
      expectOk(await runFixture('pgas/messages.mjs', 2, { procs, timeoutMs: 20_000, config: { segmentSize: 1024 * 1024 } }), 2, 'pgas messages ok')
    })
  }
})
