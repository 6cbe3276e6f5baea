/**
 * TypeScript programs: lapirun runs a `.ts` program where Node strips types (22.18 and later), in
 * one process, over processes and under --join; where Node cannot, it says so in one line.
 */
import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { FIXTURES } from '../helpers/job.js'
import { LAPIRUN, runNode } from '../helpers/run.js'
import { freePort, member } from '../helpers/join.js'

const TYPED = FIXTURES + 'lapi/typed.ts'
const strips = ((process.features as { typescript?: string | false }).typescript ?? false) !== false

describe('TypeScript programs', () => {
  it.skipIf(strips)(`on Node ${process.versions.node}, which does not strip types, lapirun says what to do in one line and starts nothing`, async () => {
    for (const place of [[], ['--procs', '2']]) {
      const r = await runNode([LAPIRUN, '-n', '2', ...place, TYPED])
      expect(r.code).toBe(2)
      expect(r.stderr).toBe(
        `lapirun: cannot run ${TYPED}: Node ${process.versions.node} does not run TypeScript; use Node 22.18 or later, or compile it with tsc and run the .js\n`,
      )
    }
  })

  for (const place of [[], ['--procs', '2'], ['--procs', '2', '--transport', 'udp']]) {
    it.skipIf(!strips)(`runs a .ts program (${place.length === 0 ? 'one process' : place.join(' ')})`, async () => {
      const r = await runNode([LAPIRUN, '-n', '4', ...place, TYPED])
      expect(r.code, r.stderr).toBe(0)
      for (let t = 0; t < 4; t++) expect(r.stdout).toContain(`typed ${t} of 4 got ${(t + 3) % 4} from ${(t + 3) % 4}`)
    })
  }

  it.skipIf(!strips)('runs a .ts program under --join', async () => {
    const env = { AMLAPI_RENDEZVOUS: `127.0.0.1:${await freePort()}`, AMLAPI_JOB_KEY: randomBytes(32).toString('hex') }
    const ps = [member(0, 2, env, ['--tasks-per-proc', '2', TYPED]), member(1, 2, env, ['--tasks-per-proc', '2', TYPED])]
    expect(await Promise.all(ps.map((p) => p.code)), ps.map((p) => p.err).join('\n')).toEqual([0, 0])
    const out = ps[0]!.out + ps[1]!.out
    for (let t = 0; t < 4; t++) expect(out).toContain(`typed ${t} of 4 got ${(t + 3) % 4} from ${(t + 3) % 4}`)
  })
})
