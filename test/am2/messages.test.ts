/**
 * AM-2 errors a user can cause name the values involved (the translation index and what is
 * mapped, the handler index and its range, lengths, offsets and the segment, the tag), a BigInt
 * where a number goes is AM_ERR_BAD_ARG with words (idiomatic) or the code (C-style), never a raw
 * TypeError; a request to an unregistered handler comes back to handler 0, whose report names it.
 */
import { describe, expect, it } from 'vitest'
import { FIXTURES, expectOk, runFixture } from '../helpers/job.js'
import { LAPIRUN, runNode } from '../helpers/run.js'

describe('am2 errors name the values involved', () => {
  for (const procs of [1, 2]) {
    it(`both faces, BigInts included (${procs} process${procs === 1 ? '' : 'es'})`, async () => {
      expectOk(await runFixture('am2/messages.mjs', 2, { procs, timeoutMs: 20_000 }), 2, 'am2 messages ok')
    })
  }

  it('a request to an unregistered handler: handler 0 names the index and the endpoint', async () => {
    const r = await runNode([LAPIRUN, '-n', '2', FIXTURES + 'am2/messages.mjs', 'unregistered'], { deadlineMs: 20_000 })
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(
      /AM-2 returned message: EBADHANDLER \(4\) for AM_REQUEST_M to endpoint 65536 \(task 1\), handler 9, .*: no handler is registered at index 9 of endpoint 65536 \(task 1\)/,
    )
  })
})
