/**
 * amlapi used from a project of one's own, as docs/getting-started.md tells it: `npm pack` the
 * four workspaces, `npm install` the tarballs into a new folder outside the clone, and run the
 * first programs of examples/first-steps there (LAPI, AM-2 and PGAS) with
 * `node_modules/.bin/lapirun`, with `npx --no -- lapirun` and with plain `node`. Also: the README and getting-started.md show the
 * code of examples/first-steps, and their commands never let npx fetch a package.
 *
 * Needs the build (`npm run build`, which `npm test` runs first) and npm on PATH, not the network: the
 * new project's package-lock.json is seeded with the clone's lockfile entries of the packages'
 * dependencies (pino and its own), so `npm install --offline` takes them from npm's cache, which the
 * clone's `npm ci` filled. (npm 11's `npm install` asks for full registry metadata, which `npm ci`
 * does not cache; with the entries in the lockfile it needs none.)
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { killAll, ok, runIn, type Run } from './helpers/npm-project.js'

const ROOT = realpathSync(fileURLToPath(new URL('..', import.meta.url)))
const FIRST = join(ROOT, 'examples', 'first-steps')
const WORKSPACES = ['bufmgr', 'lapi', 'am2', 'pgas']

/** `cmd args` in `cwd` with a deadline, as a user of the packages runs it (test/helpers/npm-project.ts). */
const run = (cmd: string, args: string[], cwd: string, deadlineMs: number): Promise<Run> => runIn(ROOT, cmd, args, cwd, deadlineMs)

const sorted = (s: string): string[] =>
  s
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .sort()

/** What first-lapi.mjs and first-lapi-c.mjs print with n tasks (in any order). */
function lapiLines(n: number): string[] {
  const l = Array.from({ length: n }, (_, t) => `task ${t} of ${n}: my inbox says "hello from task ${(t + n - 1) % n}"`)
  return [...l, `task 0: ${n} of ${n} tasks checked in`].sort()
}

/** What first-am2.mjs and first-am2-c.mjs print with n tasks (in any order). */
function am2Lines(n: number): string[] {
  return Array.from({ length: n }, (_, t) => `task ${t} of ${n}: task ${(t + 1) % n} squared 1..10 for me (sum 385); I served 10 requests`).sort()
}

/** What first-pgas.mjs prints with n tasks (in any order). */
function pgasLines(n: number): string[] {
  const total = Array.from({ length: n }, (_, t) => 30 * t + 3 + 100 + t).reduce((a, b) => a + b, 0)
  return Array.from(
    { length: n },
    (_, t) =>
      `task ${t} of ${n}: got ${10 * ((t + 1) % n)} from task ${(t + 1) % n}; my block is ${10 * t} ${10 * t + 1} ${10 * t + 2} ${100 + ((t + n - 1) % n)}; the array adds up to ${total}`,
  ).sort()
}

describe("amlapi from a project of one's own", () => {
  let tmp = ''
  let app = ''
  let tarballs: string[] = []

  beforeAll(async () => {
    for (const w of WORKSPACES) {
      if (!existsSync(join(ROOT, 'packages', w, 'lib', 'index.js'))) throw new Error(`packages/${w}/lib is missing: build first (npm run build)`)
    }
    tmp = mkdtempSync(join(tmpdir(), 'amlapi-pack-'))
    app = join(tmp, 'my-app')

    // npm pack -w packages/bufmgr -w packages/lapi -w packages/am2 -w packages/pgas --pack-destination <tmp>
    const pack = ok(
      await run('npm', ['pack', ...WORKSPACES.flatMap((w) => ['-w', `packages/${w}`]), '--pack-destination', tmp, '--json'], ROOT, 60_000),
      'npm pack',
    )
    const packed = JSON.parse(pack.stdout) as Array<{ name: string; version: string; filename: string; files: Array<{ path: string }> }>
    expect(packed.map((p) => p.name).sort()).toEqual(['@amlapi/am2', '@amlapi/bufmgr', '@amlapi/lapi', '@amlapi/pgas'])
    for (const p of packed) {
      const files = p.files.map((f) => f.path)
      expect(files, p.name).toContain('lib/index.js')
      expect(files, p.name).toContain('dist/index.d.ts')
      expect(files, p.name).toContain('package.json')
      if (p.name === '@amlapi/lapi' || p.name === '@amlapi/am2') expect(files, p.name).toContain('lib/compat.js')
      if (p.name === '@amlapi/pgas') expect(files, p.name).toContain('lib/flat.js')
      if (p.name === '@amlapi/lapi')
        expect(files).toEqual(
          expect.arrayContaining(['bin/lapirun.js', 'lib/launch/cli.js', 'lib/launch/child.js', expect.stringMatching(/^lib\/chunks\/.+\.js$/)]),
        )
    }
    // every @amlapi dependency names a version that is packed beside it
    const versions = new Map(packed.map((p) => [p.name, p.version]))
    for (const w of WORKSPACES) {
      const pj = JSON.parse(readFileSync(join(ROOT, 'packages', w, 'package.json'), 'utf8')) as { name: string; dependencies?: Record<string, string> }
      for (const [dep, range] of Object.entries(pj.dependencies ?? {})) {
        if (dep.startsWith('@amlapi/')) expect(range, `${pj.name} → ${dep}`).toBe(versions.get(dep))
      }
    }
    tarballs = packed.map((p) => join(tmp, p.filename))

    // a project of one's own: package.json, and a lockfile seeded with the clone's entries of the
    // packages' third-party dependencies (so that the offline install needs no registry metadata)
    const rootLock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean; link?: boolean }> }
    const seeded: Record<string, unknown> = { '': { name: 'my-app' } }
    for (const [k, v] of Object.entries(rootLock.packages)) {
      if (k.startsWith('node_modules/') && v.dev !== true && v.link !== true) seeded[k] = v
    }
    mkdirSync(app)
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'my-app', private: true, type: 'module' }, null, 2) + '\n')
    writeFileSync(join(app, 'package-lock.json'), JSON.stringify({ name: 'my-app', lockfileVersion: 3, requires: true, packages: seeded }, null, 2) + '\n')

    // npm install <the four .tgz>
    ok(await run('npm', ['install', '--offline', '--no-audit', '--no-fund', ...tarballs], app, 90_000), 'npm install')
    for (const f of ['first-lapi.mjs', 'first-lapi-c.mjs', 'first-am2.mjs', 'first-am2-c.mjs', 'first-pgas.mjs']) copyFileSync(join(FIRST, f), join(app, f))
  }, 150_000)

  afterAll(() => {
    killAll()
    if (tmp !== '') rmSync(tmp, { recursive: true, force: true })
  })

  it('installs copies of the packages (not links into the clone), with lapirun in node_modules/.bin', () => {
    const deps = (JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies
    expect(Object.keys(deps).sort()).toEqual(['@amlapi/am2', '@amlapi/bufmgr', '@amlapi/lapi', '@amlapi/pgas'])
    for (const w of WORKSPACES) {
      const dir = realpathSync(join(app, 'node_modules', '@amlapi', w))
      expect(dir.startsWith(realpathSync(app) + sep), dir).toBe(true)
      expect(existsSync(join(dir, 'lib', 'index.js'))).toBe(true)
    }
    expect(existsSync(join(app, 'node_modules', 'pino', 'package.json'))).toBe(true)
    expect(existsSync(join(app, 'node_modules', '.bin', 'lapirun'))).toBe(true)
  })

  it('publishes no internal or test-only entry: no package exports ./internal', () => {
    for (const w of WORKSPACES) {
      const pj = JSON.parse(readFileSync(join(app, 'node_modules', '@amlapi', w, 'package.json'), 'utf8')) as { exports: Record<string, unknown> }
      const entries = Object.keys(pj.exports)
      expect(entries, `@amlapi/${w}`).not.toContain('./internal')
      expect(
        entries.filter((e) => /internal|test/i.test(e)),
        `@amlapi/${w}`,
      ).toEqual([])
    }
  })

  it('runs the first LAPI program with node_modules/.bin/lapirun -n 4', async () => {
    const r = ok(
      await run(join(app, 'node_modules', '.bin', 'lapirun'), ['-n', '4', '--timeout', '30', 'first-lapi.mjs'], app, 45_000),
      'lapirun first-lapi.mjs',
    )
    expect(sorted(r.stdout)).toEqual(lapiLines(4))
  }, 60_000)

  it('runs the first AM-2 program (C-style) with node_modules/.bin/lapirun -n 4', async () => {
    const r = ok(
      await run(join(app, 'node_modules', '.bin', 'lapirun'), ['-n', '4', '--timeout', '30', 'first-am2-c.mjs'], app, 45_000),
      'lapirun first-am2-c.mjs',
    )
    expect(sorted(r.stdout)).toEqual(am2Lines(4))
  }, 60_000)

  it('runs the first AM-2 program with npx --no -- lapirun -n 2', async () => {
    const r = ok(await run('npx', ['--no', '--', 'lapirun', '-n', '2', '--timeout', '30', 'first-am2.mjs'], app, 45_000), 'npx --no -- lapirun first-am2.mjs')
    expect(sorted(r.stdout)).toEqual(am2Lines(2))
  }, 60_000)

  it('runs the first PGAS program with node_modules/.bin/lapirun -n 4', async () => {
    const r = ok(
      await run(join(app, 'node_modules', '.bin', 'lapirun'), ['-n', '4', '--timeout', '30', 'first-pgas.mjs'], app, 45_000),
      'lapirun first-pgas.mjs',
    )
    expect(sorted(r.stdout)).toEqual(pgasLines(4))
  }, 60_000)

  it('runs the first LAPI program (C-style) with plain node as a job of one task', async () => {
    const r = ok(await run(process.execPath, ['first-lapi-c.mjs'], app, 45_000), 'node first-lapi-c.mjs')
    expect(sorted(r.stdout)).toEqual(lapiLines(1))
  }, 60_000)
})

describe('the README and docs/getting-started.md', () => {
  const docs = ['README.md', join('docs', 'getting-started.md')].map((f) => ({ f, text: readFileSync(join(ROOT, f), 'utf8') }))
  /** The files of examples/first-steps without their leading comment lines. */
  const bodies = new Map(
    readdirSync(FIRST)
      .filter((f) => f.endsWith('.mjs'))
      .map((f) => {
        const lines = readFileSync(join(FIRST, f), 'utf8').split('\n')
        let i = 0
        while (i < lines.length && lines[i]!.startsWith('//')) i++
        return [f, lines.slice(i).join('\n').trim()] as const
      }),
  )
  const blocks = (text: string, lang: string): string[] => [...text.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!.trim())

  it('show the programs of examples/first-steps, letter for letter', () => {
    for (const { f, text } of docs) {
      const js = blocks(text, 'js')
      expect(js.length, f).toBeGreaterThan(0)
      for (const b of js) {
        const same = [...bodies].find(([, body]) => body === b)
        expect(same, `${f}: a js block that is no file of examples/first-steps:\n${b.slice(0, 300)}`).toBeDefined()
      }
    }
    const guide = blocks(docs[1]!.text, 'js')
    for (const f of ['first-lapi.mjs', 'first-lapi-c.mjs', 'first-am2.mjs', 'first-am2-c.mjs', 'first-pgas.mjs']) expect(guide, f).toContain(bodies.get(f))
  })

  it('never run npx without --no (it would fetch an unknown package from the registry)', () => {
    const firstSteps = join('examples', 'first-steps', 'README.md')
    for (const { f, text } of [...docs, { f: firstSteps, text: readFileSync(join(ROOT, firstSteps), 'utf8') }]) {
      for (const b of blocks(text, 'sh')) {
        for (const line of b.split('\n')) {
          if (/\bnpx\b/.test(line)) expect(line, f).toMatch(/\bnpx --no -- /)
        }
      }
    }
  })
})
