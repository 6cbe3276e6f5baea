/**
 * NPB CG of examples/pgas (cg.mjs), class S, on the placements of apps.test.ts, on 3 tasks
 * (rows in blocks of 467, the last one 466: the padded all-gather) and with the product in
 * JavaScript (--js) rather than WebAssembly: each run checks its zeta against NPB's published
 * value (relative error at most 1e-10) and prints "verified". `npm test` runs it on 3 tasks and
 * with the product in JavaScript; `npm run test:full` on every placement.
 */
import { describe, expect, it } from 'vitest'
import { runFixture } from '../helpers/job.js'
import { EX } from '../helpers/programs.js'
import { APP_PLACEMENTS, SHM3, runPlaced, type Placement } from '../helpers/placements.js'
import { matrix } from '../helpers/tier.js'

const JS: Placement & { js: boolean } = { name: 'shm, 2 tasks, the product in JavaScript', tasks: 2, procs: 1, js: true }
const PLACEMENTS: Array<Placement & { js?: boolean }> = [...APP_PLACEMENTS, SHM3, JS]

describe('pgas application: NPB CG', () => {
  for (const pl of matrix(PLACEMENTS, [SHM3, JS])) {
    it(`CG class S: ${pl.name}`, async () => {
      const out = await runPlaced(EX + 'pgas/cg.mjs', pl, { args: ['S', ...(pl.js === true ? ['--js'] : [])] })
      expect(out).toMatch(new RegExp(`^ Tasks +=  +${pl.tasks}$`, 'm'))
      expect(out).toContain(`Matrix-vector product: ${pl.js === true ? 'JavaScript' : 'WebAssembly'}`)
      expect(out).toMatch(/^ Mop\/s total += +\d+\.\d\d$/m)
      expect(out).toMatch(/^ Zeta += +8\.59717750786\d*e\+0$/m)
      expect(out).toMatch(/^CG class S verified$/m)
    }, 90_000)
  }

  it('refuses a class it does not know (exit code 2)', async () => {
    const r = await runFixture(EX + 'pgas/cg.mjs', 1, { args: ['Q'], timeoutMs: 30_000 })
    expect(r.exitCode).not.toBe(0)
    expect(r.stderr).toContain("CG: unknown class 'Q'")
  })
})
