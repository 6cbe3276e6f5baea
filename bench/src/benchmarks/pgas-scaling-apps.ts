/**
 * How the examples/pgas applications (lib/app-run.ts) scale with the number of tasks of one
 * process: NPB IS class A, RandomAccess on a table of 2^24 words and Jacobi 4096 × 4096 on 1, 2,
 * 4, 8 and 16 tasks, each run whole with lapirun and required to verify, each beside its one-task
 * figure (the speed-up). Needs 8 CPUs: on fewer, the curve measures the scheduler.
 */
import { appSession, gups, is, jacobi, shm, type AppRun } from '../lib/app-run.js'
import { scalingSeries } from '../lib/scaling.js'
import type { Benchmark, SeriesSpec } from '../types.js'

const TASKS = [1, 2, 4, 8, 16] as const

const RUNS: Readonly<Record<string, AppRun>> = {
  'pgas.scaling.apps.is': is(shm, 'A'),
  'pgas.scaling.apps.gups': gups(shm, 24),
  'pgas.scaling.apps.jacobi': jacobi(shm),
}

const series = (id: string, kind: 'rate' | 'latency', title: string, groupTitle: string): SeriesSpec =>
  scalingSeries({ id, title, kind, sizes: TASKS, groupTitle, xLabel: 'tasks (one process)', wholeRuns: true })

const bench: Benchmark = {
  name: 'pgas.scaling.apps',
  description:
    'the examples/pgas applications on 1 to 16 tasks of one process: NPB IS class A, RandomAccess 2^24, Jacobi 4096 × 4096, each beside its one-task figure (needs 8 CPUs)',
  placements: ['all'],
  minCpus: 8,
  series: [
    series('pgas.scaling.apps.is', 'rate', 'NPB IS class A (quick: S)', 'NPB Integer Sort by number of tasks: keys ranked per second (Mop/s × 10^6)'),
    series(
      'pgas.scaling.apps.gups',
      'rate',
      'RandomAccess 2^24 (quick: 2^18)',
      'HPC Challenge RandomAccess by number of tasks: updates per second (GUP/s × 10^9)',
    ),
    series('pgas.scaling.apps.jacobi', 'latency', 'Jacobi 4096 × 4096, 100 iterations (quick: 256, 20)', 'Jacobi stencil by number of tasks: µs per iteration'),
  ],
  open: (ctx) => appSession(ctx, RUNS),
}

export default bench
