/**
 * Whole runs of the examples/pgas applications under lapirun, as a user starts them, each read by
 * its own figure and required to verify: NPB IS and CG (Mop/s), HPC Challenge RandomAccess
 * (GUP/s), the Jacobi stencil (ms per iteration) and the distributed hash table (lookups per
 * second). A series' point size is its number of tasks; `place` turns it into lapirun's placement
 * options. Shared by `pgas.apps` and `pgas.scaling`.
 *
 * With --quick the problems are small (IS and CG class S, a 64th of the table, a 256 × 256 grid): a
 * smoke run of the programs, not figures to compare.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { BenchContext, Session } from '../types.js'

const LAPIRUN = fileURLToPath(new URL('../../../packages/lapi/bin/lapirun.js', import.meta.url))
const EXAMPLES = fileURLToPath(new URL('../../../examples/pgas/', import.meta.url))
const MiB = 1 << 20
/** Jacobi's grid and iterations, and the hash of its final grid (the same on any number of tasks). */
const JACOBI = { n: 4096, iterations: 100, hash: '39d527ff' }
const JACOBI_QUICK = { n: 256, iterations: 20, hash: null }

/** How one series runs its program: the lapirun options and arguments for `size` tasks. */
export interface AppRun {
  program: string
  /** lapirun's placement options for `size` tasks. */
  place: (size: number) => string[]
  args: (quick: boolean, size: number) => string[]
  /** The run's figure in the series' unit, from its output (throws when it did not verify). */
  read: (out: string, quick: boolean) => number
  /** Whether the figure is µs per operation (else operations per second). */
  perOp: boolean
}

/** `size` tasks in one process. */
export const shm = (size: number): string[] => ['-n', String(size)]
/** `size` tasks in processes of `perProc` tasks each, over `transport`. */
export const over =
  (transport: string, perProc = 1) =>
  (size: number): string[] => ['-n', String(size), '--procs', String(size / perProc), '--transport', transport]

function figure(out: string, re: RegExp, what: string): number {
  const m = re.exec(out)
  const v = m === null ? NaN : Number(m[1])
  if (!(v > 0)) throw new Error(`no ${what} in the output:\n${out.slice(-2000)}`)
  return v
}
function verified(out: string, re: RegExp): void {
  if (!re.test(out)) throw new Error(`the run did not verify:\n${out.slice(-2000)}`)
}

/** NPB IS of class `cls` (S with --quick). */
export const is = (place: (size: number) => string[], cls: string): AppRun => ({
  program: 'is.mjs',
  place,
  args: (quick) => [quick ? 'S' : cls],
  perOp: false,
  read: (out) => {
    verified(out, /^IS class \w verified$/m)
    return figure(out, /Mop\/s total\s*=\s*([\d.]+)/, 'Mop/s') * 1e6
  },
})

/** NPB CG of class `cls` (S with --quick): NPB's floating-point operations per second. */
export const cg = (place: (size: number) => string[], cls: string): AppRun => ({
  program: 'cg.mjs',
  place,
  args: (quick) => [quick ? 'S' : cls],
  perOp: false,
  read: (out) => {
    verified(out, /^CG class \w verified$/m)
    return figure(out, /Mop\/s total\s*=\s*([\d.]+)/, 'Mop/s') * 1e6
  },
})

/** RandomAccess on a table of 2^logN words (2^(logN-6) with --quick). */
export const gups = (place: (size: number) => string[], logN: number): AppRun => ({
  program: 'randomaccess.mjs',
  place: (size) => [...place(size), '--segment-size', `${Math.ceil((8 * 2 ** logN) / size / MiB) + 8}M`],
  args: (quick) => [String(quick ? logN - 6 : logN)],
  perOp: false,
  read: (out) => {
    verified(out, /^RandomAccess 2\^\d+ verified$/m)
    return figure(out, /([\d.]+) Billion\(10\^9\) Updates per second/, 'GUP/s') * 1e9
  },
})

/**
 * Jacobi 4096 × 4096, 100 iterations (256 × 256, 20 with --quick), its grid hash checked: the sweep
 * in WebAssembly SIMD on the segment (the program's default, segments of whole MiB), or with `js`
 * in JavaScript (`--js`).
 */
export const jacobi = (place: (size: number) => string[], js = false): AppRun => ({
  program: 'jacobi.mjs',
  place: (size) => [...place(size), '--segment-size', `${Math.ceil((2 * (Math.ceil(JACOBI.n / size) + 2) * JACOBI.n * 8) / MiB) + 4}M`],
  args: (quick) => {
    const j = quick ? JACOBI_QUICK : JACOBI
    return [String(j.n), String(j.iterations), ...(js ? ['--js'] : [])]
  },
  perOp: true,
  read: (out, quick) => {
    const j = quick ? JACOBI_QUICK : JACOBI
    verified(out, js ? /^sweep: JavaScript$/m : /^sweep: WebAssembly SIMD/m)
    if (j.hash === null) verified(out, /^Jacobi \d+ verified/m)
    else if (!out.includes(`grid hash ${j.hash}`)) throw new Error(`the final grid is not the one-task grid (hash ${j.hash}):\n${out.slice(-2000)}`)
    return figure(out, /: ([\d.]+) ms per iteration/, 'ms per iteration') * 1e3
  },
})

/**
 * The distributed hash table, 2^logK keys per task (2^(logK-6) with --quick), by remote procedure
 * calls or remote atomics (`impl`): lookups per second, all tasks together.
 */
export const dht = (place: (size: number) => string[], logK: number, impl: 'rpc' | 'atomic'): AppRun => ({
  program: 'dht.mjs',
  place: (size) => [...place(size), '--segment-size', `${Math.ceil((16 * 2 ** logK) / MiB) + 8}M`],
  args: (quick) => [String(quick ? logK - 6 : logK), impl],
  perOp: false,
  read: (out) => {
    verified(out, /^DHT 2\^\d+ (rpc|atomic) verified$/m)
    return figure(out, /([\d.]+) million lookups per second/, 'lookups per second') * 1e6
  },
})

/** Runs lapirun with `args`; resolves with its stdout once it exited 0 (else rejects with its output). */
function lapirun(args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [LAPIRUN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    p.stdout.on('data', (d: Buffer) => {
      out += d.toString()
    })
    p.stderr.on('data', (d: Buffer) => {
      err += d.toString()
    })
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs)
    p.once('error', (e) => {
      clearTimeout(timer)
      reject(e)
    })
    p.once('close', (code, signal) => {
      clearTimeout(timer)
      if (code === 0) resolve(out)
      else reject(new Error(`lapirun ${args.join(' ')}: ${signal ?? `exit ${code}`}\n${(err + out).slice(-2000)}`))
    })
  })
}

/** A session running series `runs[id]` whole, one lapirun per sample. */
export function appSession(ctx: BenchContext, runs: Readonly<Record<string, AppRun>>): Session {
  return {
    async run(series, size, iterations) {
      const r = runs[series]
      if (r === undefined) throw new Error(`unknown series ${series}`)
      // (a whole run is seconds long, over tcp up to tens: the harness's per-run limit is for short runs)
      const out = await lapirun([...r.place(size), EXAMPLES + r.program, ...r.args(ctx.quick, size)], Math.max(ctx.timeoutMs, 180_000))
      const v = r.read(out, ctx.quick)
      // the seconds that give the run's own figure for `iterations` operations (µs each, or per second)
      return r.perOp ? (v / 1e6) * iterations : iterations / v
    },
    close() {},
  }
}
