/**
 * The three PGAS applications of examples/pgas, each run whole with lapirun as a user runs it and
 * read by its own figure: NPB IS (Mop/s), HPC Challenge RandomAccess (GUP/s) and the Jacobi
 * stencil (ms per iteration), on 1, 2 and 4 tasks of one process (shared memory) and on 2
 * processes over tcp and udp. Each run must print its verification line; the size of a point is
 * its number of tasks (or processes).
 *
 * The goals hold the applications against native figures measured on the reference machine kind
 * (2 vCPUs; Open MPI 4.1 over shared memory, 2 ranks): NPB IS class A 307 Mop/s (1 rank 138),
 * RandomAccess 2^22 0.039 GUP/s, Jacobi 4096 × 4096 12.2 ms an iteration.
 *
 * With --quick the problems are small (IS class S, 2^16 and 2^14 words, a 256 × 256 grid): a smoke
 * run of the programs, not figures to compare.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { Benchmark, BenchContext, Session } from '../types.js'

const LAPIRUN = fileURLToPath(new URL('../../../packages/lapi/bin/lapirun.js', import.meta.url))
const EXAMPLES = fileURLToPath(new URL('../../../examples/pgas/', import.meta.url))
const MiB = 1 << 20
/** Jacobi's grid and iterations, and the hash of its final grid (the same on any number of tasks). */
const JACOBI = { n: 4096, iterations: 100, hash: '39d527ff' }
const JACOBI_QUICK = { n: 256, iterations: 20, hash: null }

/** How one series runs its program: the lapirun options and arguments for `size` tasks or processes. */
interface AppRun {
  program: string
  /** lapirun's placement options for `size`. */
  place: (size: number) => string[]
  args: (quick: boolean, size: number) => string[]
  /** The run's figure in the series' unit, from its output (throws when it did not verify). */
  read: (out: string, quick: boolean) => number
  /** Whether the figure is µs per operation (else operations per second). */
  perOp: boolean
}

const shm = (size: number): string[] => ['-n', String(size)]
const over = (transport: string) => (size: number): string[] => ['-n', String(size), '--procs', String(size), '--transport', transport]

function figure (out: string, re: RegExp, what: string): number {
  const m = re.exec(out)
  const v = m === null ? NaN : Number(m[1])
  if (!(v > 0)) throw new Error(`no ${what} in the output:\n${out.slice(-2000)}`)
  return v
}
function verified (out: string, re: RegExp): void {
  if (!re.test(out)) throw new Error(`the run did not verify:\n${out.slice(-2000)}`)
}

const is = (place: (size: number) => string[], cls: string): AppRun => ({
  program: 'is.mjs',
  place,
  args: (quick) => [quick ? 'S' : cls],
  perOp: false,
  read: (out) => { verified(out, /^IS class \w verified$/m); return figure(out, /Mop\/s total\s*=\s*([\d.]+)/, 'Mop/s') * 1e6 },
})
const gups = (place: (size: number) => string[], logN: number): AppRun => ({
  program: 'randomaccess.mjs',
  place: (size) => [...place(size), '--segment-size', `${Math.ceil((8 * 2 ** logN) / size / MiB) + 8}M`],
  args: (quick) => [String(quick ? logN - 6 : logN)],
  perOp: false,
  read: (out) => { verified(out, /^RandomAccess 2\^\d+ verified$/m); return figure(out, /([\d.]+) Billion\(10\^9\) Updates per second/, 'GUP/s') * 1e9 },
})
const jacobi: AppRun = {
  program: 'jacobi.mjs',
  place: (size) => [...shm(size), '--segment-size', `${Math.ceil((2 * (Math.ceil(JACOBI.n / size) + 2) * JACOBI.n * 8) / MiB) + 4}M`],
  args: (quick) => { const j = quick ? JACOBI_QUICK : JACOBI; return [String(j.n), String(j.iterations)] },
  perOp: true,
  read: (out, quick) => {
    const j = quick ? JACOBI_QUICK : JACOBI
    if (j.hash === null) verified(out, /^Jacobi \d+ verified/m)
    else if (!out.includes(`grid hash ${j.hash}`)) throw new Error(`the final grid is not the one-task grid (hash ${j.hash}):\n${out.slice(-2000)}`)
    return figure(out, /: ([\d.]+) ms per iteration/, 'ms per iteration') * 1e3
  },
}

const RUNS: Record<string, AppRun> = {
  'pgas.apps.is': is(shm, 'A'),
  'pgas.apps.is-tcp': is(over('tcp'), 'W'),
  'pgas.apps.is-udp': is(over('udp'), 'W'),
  'pgas.apps.gups': gups(shm, 22),
  'pgas.apps.gups-tcp': gups(over('tcp'), 20),
  'pgas.apps.gups-udp': gups(over('udp'), 20),
  'pgas.apps.jacobi': jacobi,
}

/** Runs lapirun with `args`; resolves with its stdout once it exited 0 (else rejects with its output). */
function lapirun (args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [LAPIRUN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''; let err = ''
    p.stdout.on('data', (d: Buffer) => { out += d.toString() })
    p.stderr.on('data', (d: Buffer) => { err += d.toString() })
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs)
    p.once('error', (e) => { clearTimeout(timer); reject(e) })
    p.once('close', (code, signal) => {
      clearTimeout(timer)
      if (code === 0) resolve(out)
      else reject(new Error(`lapirun ${args.join(' ')}: ${signal ?? `exit ${code}`}\n${(err + out).slice(-2000)}`))
    })
  })
}

const TASKS = [1, 2, 4] as const

const bench: Benchmark = {
  name: 'pgas.apps',
  description: 'the examples/pgas applications run whole with lapirun: NPB IS, HPC Challenge RandomAccess and a Jacobi stencil on 1, 2, 4 tasks of one process and on 2 processes over tcp and udp',
  placements: ['all'],
  series: [
    {
      id: 'pgas.apps.is', title: 'NPB IS class A (quick: S), tasks of one process', kind: 'rate', unit: 'ops/s', group: 'pgas-apps-is',
      groupTitle: 'NPB Integer Sort: keys ranked per second (Mop/s × 10^6)', xLabel: 'tasks (processes)', sizes: TASKS, sizeUnit: 'tasks', wholeRuns: true,
    },
    { id: 'pgas.apps.is-tcp', title: 'NPB IS class W (quick: S), processes over tcp', kind: 'rate', unit: 'ops/s', group: 'pgas-apps-is', sizes: [2], sizeUnit: 'tasks', wholeRuns: true },
    { id: 'pgas.apps.is-udp', title: 'NPB IS class W (quick: S), processes over udp', kind: 'rate', unit: 'ops/s', group: 'pgas-apps-is', sizes: [2], sizeUnit: 'tasks', wholeRuns: true },
    {
      id: 'pgas.apps.gups', title: 'RandomAccess 2^22 (quick: 2^16), tasks of one process', kind: 'rate', unit: 'ops/s', group: 'pgas-apps-gups',
      groupTitle: 'HPC Challenge RandomAccess: table updates per second (GUP/s × 10^9)', xLabel: 'tasks (processes)', sizes: TASKS, sizeUnit: 'tasks', wholeRuns: true,
    },
    { id: 'pgas.apps.gups-tcp', title: 'RandomAccess 2^20 (quick: 2^14), processes over tcp', kind: 'rate', unit: 'ops/s', group: 'pgas-apps-gups', sizes: [2], sizeUnit: 'tasks', wholeRuns: true },
    { id: 'pgas.apps.gups-udp', title: 'RandomAccess 2^20 (quick: 2^14), processes over udp', kind: 'rate', unit: 'ops/s', group: 'pgas-apps-gups', sizes: [2], sizeUnit: 'tasks', wholeRuns: true },
    {
      id: 'pgas.apps.jacobi', title: 'Jacobi 4096 × 4096, 100 iterations (quick: 256, 20), tasks of one process', kind: 'latency', unit: 'us', group: 'pgas-apps-jacobi',
      groupTitle: 'Jacobi stencil: µs per iteration', xLabel: 'tasks', sizes: [1, 2], sizeUnit: 'tasks', wholeRuns: true,
    },
  ],
  goals: [
    { name: 'NPB IS class A, 2 tasks ≥ 0.5 × MPI (307 Mop/s)', series: 'pgas.apps.is', size: 2, op: '>=', target: 153.5e6 },
    { name: 'NPB IS class A faster on 2 tasks than on 1', series: 'pgas.apps.is', size: 2, baseline: 'pgas.apps.is', baselineSize: 1, op: '>=', target: 1, pair: false },
    { name: 'RandomAccess 2^22, 2 tasks ≥ MPI (0.039 GUP/s)', series: 'pgas.apps.gups', size: 2, op: '>=', target: 0.039e9 },
    { name: 'Jacobi 4096 × 4096, 2 tasks ≤ 1.5 × MPI (12.2 ms an iteration)', series: 'pgas.apps.jacobi', size: 2, op: '<=', target: 18_300 },
  ],
  open: (ctx: BenchContext): Session => ({
    async run (series, size, iterations) {
      const r = RUNS[series]
      if (r === undefined) throw new Error(`unknown series ${series}`)
      // (a whole run is seconds long, over tcp up to tens: the harness's per-run limit is for short runs)
      const out = await lapirun([...r.place(size), EXAMPLES + r.program, ...r.args(ctx.quick, size)], Math.max(ctx.timeoutMs, 180_000))
      const v = r.read(out, ctx.quick)
      // the seconds that give the run's own figure for `iterations` operations (µs each, or per second)
      return r.perOp ? (v / 1e6) * iterations : iterations / v
    },
    close () {},
  }),
}

export default bench
