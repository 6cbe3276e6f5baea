#!/usr/bin/env node
// Start-up time of a job: from the launcher's start to the moment every task has returned from
// LAPI_Init (scripts/startup/init-time.mjs), for P = 1, 2, 4, 8 processes of one task, under
// `lapirun --procs` and under each launcher found (mpirun, mpiexec, srun with SLURM_CONF or a
// Slurm that answers), beside what the same launcher takes to run `node -e 0` P times. Prints a
// table of medians over RUNS runs (default 5). Usage: node scripts/startup-times.mjs [RUNS]
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const RUNS = Number(process.argv[2] ?? 5)
const LAPIRUN = fileURLToPath(new URL('../packages/lapi/bin/lapirun.js', import.meta.url))
const PROG = fileURLToPath(new URL('./startup/init-time.mjs', import.meta.url))
const NODE = process.execPath
const has = (c) => spawnSync('sh', ['-c', `command -v ${c}`]).status === 0
const root = { OMPI_ALLOW_RUN_AS_ROOT: '1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM: '1' }

const rows = [{ name: 'lapirun --procs P', cmd: (p) => [NODE, LAPIRUN, '-n', String(p), '--procs', String(p), PROG], base: null }]
if (has('mpirun.openmpi'))
  rows.push({
    name: 'mpirun (Open MPI)',
    cmd: (p) => ['mpirun.openmpi', '--oversubscribe', '-n', String(p), NODE, LAPIRUN, '--join', PROG],
    base: (p) => ['mpirun.openmpi', '--oversubscribe', '-n', String(p), NODE, '-e', '0'],
  })
if (has('mpiexec.hydra'))
  rows.push({
    name: 'mpiexec (MPICH Hydra)',
    cmd: (p) => ['mpiexec.hydra', '-n', String(p), NODE, LAPIRUN, '--join', PROG],
    base: (p) => ['mpiexec.hydra', '-n', String(p), NODE, '-e', '0'],
  })
if (has('srun') && /idle|mix/.test(spawnSync('sinfo', ['-h', '-o', '%t'], { encoding: 'utf8' }).stdout ?? '')) {
  rows.push({
    name: 'srun --mpi=pmi2',
    cmd: (p) => ['srun', '--mpi=pmi2', '--overcommit', '-n', String(p), NODE, LAPIRUN, '--join', PROG],
    base: (p) => ['srun', '--overcommit', '-n', String(p), NODE, '-e', '0'],
  })
}

/** Milliseconds from start to the last task's init (or to the end, without `init` lines). */
function once(argv, tasks) {
  const t0 = Date.now()
  const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', env: { ...process.env, ...root }, timeout: 120_000 })
  if (r.status !== 0) throw new Error(`${argv.join(' ')}: status ${r.status}\n${r.stderr}`)
  if (tasks === 0) return Date.now() - t0
  const at = [...r.stdout.matchAll(/^init (\d+) ([\d.]+)$/gm)].map((m) => Number(m[2]))
  if (at.length !== tasks) throw new Error(`${argv.join(' ')}: ${at.length} of ${tasks} tasks reported\n${r.stdout}${r.stderr}`)
  return Math.max(...at) - t0
}
const median = (a) => {
  const s = [...a].sort((x, y) => x - y)
  return s[s.length >> 1]
}

const PS = [1, 2, 4, 8]
console.log(`| launcher | ${PS.map((p) => `P = ${p}`).join(' | ')} |`)
console.log(`|---|${PS.map(() => '---:').join('|')}|`)
for (const row of rows) {
  const cells = []
  const base = []
  for (const p of PS) {
    cells.push(median(Array.from({ length: RUNS }, () => once(row.cmd(p), p))))
    if (row.base !== null) base.push(median(Array.from({ length: RUNS }, () => once(row.base(p), 0))))
  }
  console.log(`| ${row.name}: to every task's LAPI_Init | ${cells.map((c) => `${c.toFixed(0)} ms`).join(' | ')} |`)
  if (row.base !== null) console.log(`| ${row.name}: \`node -e 0\` | ${base.map((c) => `${c.toFixed(0)} ms`).join(' | ')} |`)
}
