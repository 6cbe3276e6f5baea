/**
 * How the examples/pgas applications (lib/app-run.ts) scale across processes: NPB IS class W,
 * RandomAccess 2^20 and Jacobi 4096 × 4096 on 2, 4, 8 and 16 processes of one task over tcp and
 * udp, and IS class W on 8 to 64 tasks in processes of 4 tasks over udp; each run whole with
 * lapirun and required to verify, each beside its 2-task figure. Needs 8 CPUs.
 */
import { appSession, gups, is, jacobi, over, type AppRun } from '../lib/app-run.js'
import { scalingSeries } from '../lib/scaling.js'
import type { Benchmark, SeriesSpec } from '../types.js'

const PROCS = [2, 4, 8, 16] as const

const RUNS: Readonly<Record<string, AppRun>> = {
  'pgas.scaling.procs.is-tcp': is(over('tcp'), 'W'),
  'pgas.scaling.procs.is-udp': is(over('udp'), 'W'),
  'pgas.scaling.procs.is-udp-x4': is(over('udp', 4), 'W'),
  'pgas.scaling.procs.gups-tcp': gups(over('tcp'), 20),
  'pgas.scaling.procs.gups-udp': gups(over('udp'), 20),
  'pgas.scaling.procs.jacobi-udp': jacobi(over('udp')),
}

const series = (id: string, kind: 'rate' | 'latency', title: string, sizes: readonly number[], groupTitle?: string): SeriesSpec =>
  scalingSeries({ id, title, kind, sizes, group: id.replace(/-.*/, ''), ...(groupTitle !== undefined ? { groupTitle } : {}), xLabel: 'tasks', wholeRuns: true })

const bench: Benchmark = {
  name: 'pgas.scaling.procs',
  description:
    'the examples/pgas applications across 2 to 16 processes over tcp and udp (IS also on up to 64 tasks in processes of 4), each beside its smallest run (needs 8 CPUs)',
  placements: ['all'],
  minCpus: 8,
  series: [
    series(
      'pgas.scaling.procs.is-tcp',
      'rate',
      'NPB IS class W (quick: S), processes of one task over tcp',
      PROCS,
      'NPB Integer Sort across processes: keys ranked per second (Mop/s × 10^6)',
    ),
    series('pgas.scaling.procs.is-udp', 'rate', 'NPB IS class W (quick: S), processes of one task over udp', PROCS),
    series('pgas.scaling.procs.is-udp-x4', 'rate', 'NPB IS class W (quick: S), processes of 4 tasks over udp', [8, 16, 32, 64]),
    series(
      'pgas.scaling.procs.gups-tcp',
      'rate',
      'RandomAccess 2^20 (quick: 2^14), processes of one task over tcp',
      PROCS,
      'HPC Challenge RandomAccess across processes: updates per second (GUP/s × 10^9)',
    ),
    series('pgas.scaling.procs.gups-udp', 'rate', 'RandomAccess 2^20 (quick: 2^14), processes of one task over udp', PROCS),
    series(
      'pgas.scaling.procs.jacobi-udp',
      'latency',
      'Jacobi 4096 × 4096, 100 iterations (quick: 256, 20), processes of one task over udp',
      PROCS,
      'Jacobi stencil across processes: µs per iteration',
    ),
  ],
  open: (ctx) => appSession(ctx, RUNS),
}

export default bench
