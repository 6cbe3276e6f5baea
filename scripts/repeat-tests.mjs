#!/usr/bin/env node
// Runs the README's test command (`npm test`) N times in a row and reports every failure by name:
// a check that the suite is green every time, not just once.
//
//   node scripts/repeat-tests.mjs [N] [--hog K] [--out DIR] [-- extra vitest arguments]
//   npm run test:repeat -- 20
//   npm run test:repeat -- 5 --hog 1        (with K busy processes beside it, as `yes > /dev/null`)
//
// Each run's whole output goes to DIR/run-<i>.log and vitest's JSON report to DIR/run-<i>.json
// (DIR: a new temporary folder unless given). Prints a line per run and, at the end, each failed
// test with the runs it failed in and the first line of its error. Exits 1 when any run failed.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, existsSync, mkdirSync, createWriteStream } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const argv = process.argv.slice(2)
const dash = argv.indexOf('--')
const own = dash < 0 ? argv : argv.slice(0, dash)
const extra = dash < 0 ? [] : argv.slice(dash + 1)
let runs = 10
let hogs = 0
let out = null
for (let i = 0; i < own.length; i++) {
  const a = own[i]
  if (a === '--hog') hogs = Number(own[++i])
  else if (a === '--out') out = own[++i]
  else if (/^\d+$/.test(a)) runs = Number(a)
  else {
    process.stderr.write(`repeat-tests: unknown argument '${a}'\n`)
    process.exit(2)
  }
}
if (!(runs >= 1) || !(hogs >= 0) || !Number.isInteger(hogs)) {
  process.stderr.write('repeat-tests: N ≥ 1 and --hog K ≥ 0 (whole numbers)\n')
  process.exit(2)
}
if (out === null) out = mkdtempSync(join(tmpdir(), 'amlapi-repeat-'))
else mkdirSync(out, { recursive: true })

// busy processes beside the suite, stopped however this script ends
const hogProcs = []
for (let i = 0; i < hogs; i++) hogProcs.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }))
const stopHogs = () => {
  for (const p of hogProcs) p.kill('SIGKILL')
}
process.on('exit', stopHogs)
for (const sig of ['SIGINT', 'SIGTERM'])
  process.on(sig, () => {
    stopHogs()
    process.exit(130)
  })

/** Records that `name` failed in run `i`, with the first line of its error. */
function note(here, i, name, error) {
  here.push(name)
  const f = failures.get(name) ?? { runs: [], first: String(error ?? '').split('\n')[0] }
  f.runs.push(i)
  failures.set(name, f)
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
/** failed test name → { runs: [i…], first: first line of its first error } */
const failures = new Map()
let failedRuns = 0
const t0 = performance.now()
process.stdout.write(`repeat-tests: ${runs} runs of npm test${hogs > 0 ? ` beside ${hogs} busy process${hogs === 1 ? '' : 'es'}` : ''}; logs in ${out}\n`)

for (let i = 1; i <= runs; i++) {
  const json = join(out, `run-${i}.json`)
  const log = createWriteStream(join(out, `run-${i}.log`))
  const started = performance.now()
  const code = await new Promise((resolve) => {
    const p = spawn(npm, ['test', '--', '--reporter=default', '--reporter=json', `--outputFile.json=${json}`, ...extra], { stdio: ['ignore', 'pipe', 'pipe'] })
    p.stdout.pipe(log, { end: false })
    p.stderr.pipe(log, { end: false })
    p.on('close', (c) => resolve(c ?? 1))
  })
  log.end()
  const secs = ((performance.now() - started) / 1000).toFixed(0)
  let line = `run ${i}/${runs}: exit ${code} in ${secs} s`
  const failedHere = []
  if (existsSync(json)) {
    const report = JSON.parse(readFileSync(json, 'utf8'))
    line += `: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${report.numPendingTests + (report.numTodoTests ?? 0)} skipped`
    for (const file of report.testResults ?? []) {
      const fileName = String(file.name).replace(process.cwd() + '/', '')
      const tests = file.assertionResults ?? []
      for (const t of tests) if (t.status === 'failed') note(failedHere, i, `${fileName} › ${t.fullName}`, t.failureMessages?.[0])
      // a file that failed as a whole (an error outside its tests)
      if (file.status === 'failed' && tests.every((t) => t.status !== 'failed')) note(failedHere, i, `${fileName} (the file itself)`, file.message)
    }
  } else line += ': no test report (the build or the type check failed; see the log)'
  if (code !== 0) {
    failedRuns++
    if (failedHere.length === 0) note(failedHere, i, `a run that failed without a failed test (exit ${code})`, 'see its log')
  }
  process.stdout.write(line + '\n')
  for (const f of failedHere) process.stdout.write(`  FAILED ${f}\n`)
}

const mins = ((performance.now() - t0) / 60000).toFixed(1)
process.stdout.write(`\n${runs - failedRuns} of ${runs} runs green in ${mins} min\n`)
for (const [name, f] of failures) process.stdout.write(`- ${name}: failed in run${f.runs.length === 1 ? '' : 's'} ${f.runs.join(', ')}\n    ${f.first}\n`)
stopHogs()
process.exit(failedRuns === 0 ? 0 : 1)
