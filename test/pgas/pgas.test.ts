/**
 * @amlapi/pgas on every placement: all tasks in one process (shared memory: the direct paths),
 * and split over processes on tcp and udp (LAPI's one-sided operations and active messages). The
 * programs check themselves: basic.mjs every part of the API and its bad input, flat.mjs the flat
 * face's calls and status codes, collectives.mjs
 * seeded random collectives against a sequential reference and mismatched calls. Also: the
 * package uses only the public APIs of lapi and am2. `npm test` runs each program on one placement
 * (tcp, udp, shared memory: one each); `npm run test:full` on all six.
 */
import { readFileSync, readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { PGAS_PLACEMENTS, SHM3, TCP4IN2, UDP4IN2, runPlaced, type Placement } from '../helpers/placements.js'
import { runNode } from '../helpers/run.js'
import { matrix } from '../helpers/tier.js'

const PLACEMENTS: Placement[] = [...PGAS_PLACEMENTS, { name: 'udp, 3 processes', tasks: 3, procs: 3, transport: 'udp' }]

async function run(file: string, pl: Placement, args: string[], ok: string): Promise<void> {
  await runPlaced(file, pl, { args, ok })
}

describe('pgas: the API on every placement', () => {
  for (const pl of matrix(PLACEMENTS, [TCP4IN2])) {
    it(`basic: ${pl.name}`, async () => {
      await run('pgas/basic.mjs', pl, [], 'pgas basic ok')
    }, 90_000)
  }
  for (const pl of matrix(PLACEMENTS, [UDP4IN2])) {
    it(`flat face: ${pl.name}`, async () => {
      await run('pgas/flat.mjs', pl, [], 'pgas flat ok')
    }, 90_000)
  }
  for (const pl of matrix(PLACEMENTS, [SHM3])) {
    it(`collectives (seed ${pl.tasks + pl.procs}): ${pl.name}`, async () => {
      await run('pgas/collectives.mjs', pl, ['60', String(pl.tasks + pl.procs)], 'pgas collectives ok')
    }, 90_000)
  }
})

describe('pgas: built on the public APIs only', () => {
  it('imports nothing but @amlapi/lapi, @amlapi/am2 (and their compat faces), msgpackr/pack, node: and its own files', () => {
    const dir = fileURLToPath(new URL('../../packages/pgas/src/', import.meta.url))
    const allowed = /^(\.\/[\w-]+\.js|@amlapi\/lapi|@amlapi\/lapi\/compat|@amlapi\/am2|@amlapi\/am2\/compat|msgpackr\/pack|node:[\w/]+)$/
    const bad: string[] = []
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.ts'))) {
      // (comments left out: the examples in the docs import the package itself)
      const src = readFileSync(dir + f, 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '')
      for (const m of src.matchAll(/(?:import|export)\s[^'"]*?from\s+'([^']+)'|import\('([^']+)'\)/g)) {
        const spec = m[1] ?? m[2]!
        if (!allowed.test(spec)) bad.push(`${f}: ${spec}`)
      }
    }
    expect(bad).toEqual([])
  })

  it("loads no native addon, with lapi and am2 (msgpackr's main entry would load msgpackr-extract)", async () => {
    const probe =
      "import '@amlapi/pgas'; import '@amlapi/pgas/flat'; import '@amlapi/lapi'; import '@amlapi/lapi/compat'; import '@amlapi/am2'; import '@amlapi/am2/compat'; " +
      "import { createRequire } from 'node:module'; process.stdout.write(JSON.stringify(Object.keys(createRequire(import.meta.url).cache).filter((k) => k.endsWith('.node'))))"
    const r = await runNode(['--input-type=module', '-e', probe])
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual([])
  })
})
