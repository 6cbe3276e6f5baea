/**
 * amlapi used from a project of one's own, as docs/getting-started.md tells it: `npm pack` the
 * four workspaces, `npm install` the tarballs into a new folder outside the clone, and run the
 * first programs of examples/first-steps there (and a first PGAS program) with
 * `node_modules/.bin/lapirun`, with `npx --no -- lapirun` and with plain `node`. Also: the README and getting-started.md show the
 * code of examples/first-steps, and their commands never let npx fetch a package.
 *
 * Needs the build (`npm run build`, which `npm test` runs first) and npm on PATH, not the network: the
 * new project's package-lock.json is seeded with the clone's lockfile entries of the packages'
 * dependencies (pino and its own), so `npm install --offline` takes them from npm's cache, which the
 * clone's `npm ci` filled. (npm 11's `npm install` asks for full registry metadata, which `npm ci`
 * does not cache; with the entries in the lockfile it needs none.)
 */
import { spawn } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const ROOT = realpathSync(fileURLToPath(new URL('..', import.meta.url)))
const FIRST = join(ROOT, 'examples', 'first-steps')
const WORKSPACES = ['bufmgr', 'lapi', 'am2', 'pgas']
/** A first PGAS program, written into the new project (the README of packages/pgas shows its like). */
const FIRST_PGAS = `import { Pgas, ReduceOp } from '@amlapi/pgas'
const pg = Pgas.init()
const a = pg.sharedArray(Float64Array, 1000, { kind: 'cyclic' })
for (let i = pg.rank; i < a.length; i += pg.size) a.set(i, i)
pg.barrier()
const sum = new Float64Array([a.localView().reduce((s, x) => s + x, 0)])
pg.allreduce(sum, sum, ReduceOp.SUM)
console.log(\`task \${pg.rank} of \${pg.size}: sum \${sum[0]}\`)
pg.finalize()
`

interface Run { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

/** Child processes still running (process-group ids), killed at the end whatever happened. */
const running = new Set<number>()

/**
 * The environment of the children: npm's per-run variables of an `npm test` left out (they name the
 * clone as the project), and the clone's node_modules/.bin off PATH, so that only the new project's
 * lapirun can be found.
 */
function childEnv (): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    const key = k.toLowerCase()
    if (key === 'init_cwd' || /^npm_(package_|lifecycle_|command$|execpath$|node_execpath$)/.test(key)) continue
    if (/^npm_config_(local_prefix|prefix|global_prefix|call|workspaces?|include_workspace_root|offline|prefer_online|yes)$/.test(key)) continue
    env[k] = v
  }
  const pathKey = Object.keys(env).find((k) => k.toUpperCase() === 'PATH') ?? 'PATH'
  env[pathKey] = (env[pathKey] ?? '').split(delimiter).filter((p) => p !== '' && !(p + sep).startsWith(ROOT + sep)).join(delimiter)
  return env
}

/**
 * Runs `cmd args` in `cwd` with a deadline: past it the whole process group (npx, lapirun and the
 * job) is killed and the run rejects.
 */
function run (cmd: string, args: string[], cwd: string, deadlineMs: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { cwd, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    let stdout = ''; let stderr = ''
    p.stdout.on('data', (d: Buffer) => { stdout += d.toString() })
    p.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
    const pid = p.pid
    if (pid !== undefined) running.add(pid)
    const kill = setTimeout(() => {
      killGroup(pid)
      reject(new Error(`deadline (${deadlineMs} ms) passed: ${cmd} ${args.join(' ')}\n${stdout}\n${stderr}`))
    }, deadlineMs)
    p.on('error', (e) => { clearTimeout(kill); if (pid !== undefined) running.delete(pid); reject(e) })
    p.on('close', (code, signal) => {
      clearTimeout(kill)
      if (pid !== undefined) running.delete(pid)
      resolve({ code, signal, stdout, stderr })
    })
  })
}

function killGroup (pid: number | undefined): void {
  if (pid === undefined) return
  running.delete(pid)
  try { process.kill(-pid, 'SIGKILL') } catch { /* gone already */ }
}

function ok (r: Run, what: string): Run {
  if (r.code !== 0) throw new Error(`${what} exited ${r.code ?? r.signal}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`)
  return r
}

const sorted = (s: string): string[] => s.trim().split('\n').filter((l) => l !== '').sort()

/** What first-lapi.mjs and first-lapi-c.mjs print with n tasks (in any order). */
function lapiLines (n: number): string[] {
  const l = Array.from({ length: n }, (_, t) => `task ${t} of ${n}: my inbox says "hello from task ${(t + n - 1) % n}"`)
  return [...l, `task 0: ${n} of ${n} tasks checked in`].sort()
}

/** What first-am2.mjs and first-am2-c.mjs print with n tasks (in any order). */
function am2Lines (n: number): string[] {
  return Array.from({ length: n }, (_, t) => `task ${t} of ${n}: task ${(t + 1) % n} squared 1..10 for me (sum 385); I served 10 requests`).sort()
}

describe('amlapi from a project of one\'s own', () => {
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
    const pack = ok(await run('npm', ['pack', ...WORKSPACES.flatMap((w) => ['-w', `packages/${w}`]), '--pack-destination', tmp, '--json'], ROOT, 60_000), 'npm pack')
    const packed = JSON.parse(pack.stdout) as Array<{ name: string; version: string; filename: string; files: Array<{ path: string }> }>
    expect(packed.map((p) => p.name).sort()).toEqual(['@amlapi/am2', '@amlapi/bufmgr', '@amlapi/lapi', '@amlapi/pgas'])
    for (const p of packed) {
      const files = p.files.map((f) => f.path)
      expect(files, p.name).toContain('lib/index.js')
      expect(files, p.name).toContain('dist/index.d.ts')
      expect(files, p.name).toContain('package.json')
      if (p.name === '@amlapi/lapi' || p.name === '@amlapi/am2') expect(files, p.name).toContain('lib/compat.js')
      if (p.name === '@amlapi/pgas') expect(files, p.name).toContain('lib/flat.js')
      if (p.name === '@amlapi/lapi') expect(files).toEqual(expect.arrayContaining(['bin/lapirun.js', 'lib/launcher/cli.js', 'lib/job/child.js', expect.stringMatching(/^lib\/chunks\/.+\.js$/)]))
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
    for (const f of ['first-lapi.mjs', 'first-lapi-c.mjs', 'first-am2.mjs', 'first-am2-c.mjs']) copyFileSync(join(FIRST, f), join(app, f))
    writeFileSync(join(app, 'first-pgas.mjs'), FIRST_PGAS)
  }, 150_000)

  afterAll(() => {
    for (const pid of [...running]) killGroup(pid)
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

  it('runs the first LAPI program with node_modules/.bin/lapirun -n 4', async () => {
    const r = ok(await run(join(app, 'node_modules', '.bin', 'lapirun'), ['-n', '4', '--timeout', '30', 'first-lapi.mjs'], app, 45_000), 'lapirun first-lapi.mjs')
    expect(sorted(r.stdout)).toEqual(lapiLines(4))
  }, 60_000)

  it('runs the first AM-2 program (C-style) with node_modules/.bin/lapirun -n 4', async () => {
    const r = ok(await run(join(app, 'node_modules', '.bin', 'lapirun'), ['-n', '4', '--timeout', '30', 'first-am2-c.mjs'], app, 45_000), 'lapirun first-am2-c.mjs')
    expect(sorted(r.stdout)).toEqual(am2Lines(4))
  }, 60_000)

  it('runs the first AM-2 program with npx --no -- lapirun -n 2', async () => {
    const r = ok(await run('npx', ['--no', '--', 'lapirun', '-n', '2', '--timeout', '30', 'first-am2.mjs'], app, 45_000), 'npx --no -- lapirun first-am2.mjs')
    expect(sorted(r.stdout)).toEqual(am2Lines(2))
  }, 60_000)

  it('runs a first PGAS program with node_modules/.bin/lapirun -n 4', async () => {
    const r = ok(await run(join(app, 'node_modules', '.bin', 'lapirun'), ['-n', '4', '--timeout', '30', 'first-pgas.mjs'], app, 45_000), 'lapirun first-pgas.mjs')
    expect(sorted(r.stdout)).toEqual(Array.from({ length: 4 }, (_, t) => `task ${t} of 4: sum 499500`))
  }, 60_000)

  it('runs the first LAPI program (C-style) with plain node as a job of one task', async () => {
    const r = ok(await run(process.execPath, ['first-lapi-c.mjs'], app, 45_000), 'node first-lapi-c.mjs')
    expect(sorted(r.stdout)).toEqual(lapiLines(1))
  }, 60_000)
})

describe('the README and docs/getting-started.md', () => {
  const docs = ['README.md', join('docs', 'getting-started.md')].map((f) => ({ f, text: readFileSync(join(ROOT, f), 'utf8') }))
  /** The files of examples/first-steps without their leading comment lines. */
  const bodies = new Map(readdirSync(FIRST).filter((f) => f.endsWith('.mjs')).map((f) => {
    const lines = readFileSync(join(FIRST, f), 'utf8').split('\n')
    let i = 0
    while (i < lines.length && lines[i]!.startsWith('//')) i++
    return [f, lines.slice(i).join('\n').trim()] as const
  }))
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
    for (const f of ['first-lapi.mjs', 'first-lapi-c.mjs', 'first-am2.mjs', 'first-am2-c.mjs']) expect(guide, f).toContain(bodies.get(f))
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
