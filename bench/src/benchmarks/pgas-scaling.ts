/**
 * How `@amlapi/pgas` collectives scale with the number of tasks of one process (worker threads):
 * barrier, 8 B all-reduce, 1 MiB broadcast and 1 MiB all-to-all on 2, 4, 8 and 16 tasks, each
 * beside its own 2-task figure. A point's size is its number of tasks; each is µs per collective
 * (for the 1 MiB ones, MB/s into each task = 1.048576 / µs × 10^6). Needs 8 CPUs: on fewer, the
 * tasks wait for each other to be scheduled and the curve measures the scheduler (the 2- and
 * 4-task figures of the `pgas` benchmark are the ones for small machines).
 */
import { openPgasJob, PgasJobs } from '../lib/pgas-job.js'
import { PgasOp } from '../lib/pgas-layout.js'
import { scalingSeries } from '../lib/scaling.js'
import type { Benchmark, SeriesSpec, Session } from '../types.js'

const MiB = 1 << 20
const TASKS = [2, 4, 8, 16] as const

/** Each series' op and the bytes it moves per task. */
const SERIES: Record<string, { op: number; bytes: number }> = {
  'pgas.scaling.barrier': { op: PgasOp.BARRIER, bytes: 0 },
  'pgas.scaling.allreduce': { op: PgasOp.ALLREDUCE, bytes: 8 },
  'pgas.scaling.bcast': { op: PgasOp.BCAST, bytes: MiB },
  'pgas.scaling.alltoall': { op: PgasOp.ALLTOALL, bytes: MiB },
}

const series = (id: string, title: string, groupTitle: string): SeriesSpec =>
  scalingSeries({ id, title, kind: 'latency', sizes: TASKS, groupTitle, xLabel: 'tasks (one process)' })

const bench: Benchmark = {
  name: 'pgas.scaling',
  description:
    '@amlapi/pgas collectives on 2 to 16 tasks of one process: barrier, 8 B all-reduce, 1 MiB broadcast and all-to-all (µs each), each beside its 2-task figure (needs 8 CPUs)',
  placements: ['all'],
  minCpus: 8,
  series: [
    series('pgas.scaling.barrier', 'pg.barrier()', 'PGAS barrier by number of tasks (µs per barrier)'),
    series('pgas.scaling.allreduce', 'pg.allreduce, one Float64, SUM', 'PGAS 8 B all-reduce by number of tasks (µs per all-reduce)'),
    series('pgas.scaling.bcast', 'pg.bcast of 1 MiB from task 0', 'PGAS 1 MiB broadcast by number of tasks (µs per broadcast; buffers in the segment)'),
    series(
      'pgas.scaling.alltoall',
      'pg.alltoall of 1 MiB per task',
      'PGAS 1 MiB all-to-all by number of tasks (µs per all-to-all; 1 MiB / P per pair, buffers in the segment)',
    ),
  ],
  open: (ctx) => {
    const warm = ctx.quick ? 0.005 : 0.06
    const kinds = Object.values(SERIES).map((s) => ({ op: s.op, sizes: [s.bytes] }))
    const jobs = new PgasJobs((tasks) => openPgasJob(ctx, tasks, false, MiB, kinds, warm))
    const session: Session = {
      async run(id, tasks, iterations) {
        const s = SERIES[id]
        if (s === undefined) throw new Error(`unknown series ${id}`)
        return await (await jobs.of(tasks)).run(s.op, s.bytes, iterations, `${id} on ${tasks} tasks`)
      },
      close: () => jobs.close(),
    }
    return session
  },
}

export default bench
