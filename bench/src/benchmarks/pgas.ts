/**
 * `@amlapi/pgas` collectives in a job of 2 tasks and in one of 4 (worker threads, one process):
 * barrier and 8 B all-reduce latency, broadcast and all-to-all bandwidth. The 2-task job also
 * measures AM-2's Short round trip (`@amlapi/am2/compat` on the same LAPI contexts), so the
 * barrier and all-reduce are compared with a round trip of the same job; the bandwidths are
 * compared with the same run's Uint8Array.set into a SAB and with bare worker threads doing only
 * the copies and counting (`baseline.threads`, the floor of the machine). The task program is
 * workers/pgas-task.ts.
 *
 * Each job starts when one of its series is first run (the interleaved goal check then starts
 * only the job it needs) and stays up until the session closes; between runs its tasks sleep
 * in Atomics.wait. The 4-task job on a machine with fewer CPUs is crowded: its figures say so.
 *
 * The broadcast and all-to-all buffers lie in the tasks' segments (as a PGAS program keeps shared
 * data, and OpenSHMEM requires); the `-private` series use buffers of the tasks' own heaps.
 *
 * Bandwidth (MB/s) is the bytes delivered into each task's buffer per second: `size` (the
 * broadcast buffer; for an all-to-all, each task's receive buffer, size / P bytes from each task,
 * its own block a local copy) × the operations ÷ the time until every task has done them all.
 */
import { openPgasJob, PgasJobs } from '../lib/pgas-job.js'
import { PgasOp } from '../lib/pgas-layout.js'
import type { Benchmark, Session } from '../types.js'

const MiB = 1 << 20
/** Sizes of the bandwidth series. */
const BW_SIZES: readonly number[] = [64 << 10, MiB]

/** Which job runs a series (its number of tasks) and with which op code. */
const SERIES: Record<string, { tasks: 2 | 4; op: number }> = {
  'pgas.am2-short-rtt': { tasks: 2, op: PgasOp.AM2_SHORT_RTT },
  'pgas.barrier-2': { tasks: 2, op: PgasOp.BARRIER },
  'pgas.barrier-4': { tasks: 4, op: PgasOp.BARRIER },
  'pgas.allreduce-2': { tasks: 2, op: PgasOp.ALLREDUCE },
  'pgas.allreduce-4': { tasks: 4, op: PgasOp.ALLREDUCE },
  'pgas.bcast-bw-2': { tasks: 2, op: PgasOp.BCAST },
  'pgas.bcast-bw-4': { tasks: 4, op: PgasOp.BCAST },
  'pgas.alltoall-bw-2': { tasks: 2, op: PgasOp.ALLTOALL },
  'pgas.alltoall-bw-4': { tasks: 4, op: PgasOp.ALLTOALL },
  'pgas.bcast-bw-2-private': { tasks: 2, op: PgasOp.BCAST_PRIVATE },
  'pgas.alltoall-bw-2-private': { tasks: 2, op: PgasOp.ALLTOALL_PRIVATE },
}

const bench: Benchmark = {
  name: 'pgas',
  description:
    '@amlapi/pgas collectives in jobs of 2 and 4 tasks (worker threads): barrier and 8 B all-reduce latency beside an AM-2 Short round trip of the same job, broadcast and all-to-all bandwidth (bytes into each task per second)',
  placements: ['all'],
  minCpus: 2,
  series: [
    {
      id: 'pgas.am2-short-rtt',
      title: 'AM-2 Short round trip (AM_Request0 + AM_Reply0), 2 tasks',
      kind: 'latency',
      unit: 'us',
      group: 'pgas-barrier',
      groupTitle: 'PGAS barrier (µs per barrier), beside an AM-2 Short round trip of the same 2-task job (µs)',
      xLabel: 'payload bytes',
      sizes: [0],
    },
    {
      id: 'pgas.barrier-2',
      title: 'pg.barrier(), 2 tasks',
      kind: 'latency',
      unit: 'us',
      group: 'pgas-barrier',
      sizes: [0],
      compareTo: [{ series: 'pgas.am2-short-rtt', label: '÷ AM-2 Short RTT', baselineSize: 0 }],
    },
    {
      id: 'pgas.barrier-4',
      title: 'pg.barrier(), 4 tasks',
      kind: 'latency',
      unit: 'us',
      group: 'pgas-barrier',
      sizes: [0],
      compareTo: [{ series: 'pgas.am2-short-rtt', label: '÷ AM-2 Short RTT (2 tasks)', baselineSize: 0 }],
    },
    {
      id: 'pgas.allreduce-2',
      title: 'pg.allreduce (Float64, SUM), 2 tasks',
      kind: 'latency',
      unit: 'us',
      group: 'pgas-allreduce',
      groupTitle: 'PGAS all-reduce latency (µs per all-reduce), ratios to the AM-2 Short round trip of the 2-task job',
      xLabel: 'bytes per task (Float64 elements × 8)',
      sizes: [8],
      compareTo: [{ series: 'pgas.am2-short-rtt', label: '÷ AM-2 Short RTT', baselineSize: 0 }],
    },
    {
      id: 'pgas.allreduce-4',
      title: 'pg.allreduce (Float64, SUM), 4 tasks',
      kind: 'latency',
      unit: 'us',
      group: 'pgas-allreduce',
      sizes: [8],
      compareTo: [{ series: 'pgas.am2-short-rtt', label: '÷ AM-2 Short RTT (2 tasks)', baselineSize: 0 }],
    },
    {
      id: 'pgas.bcast-bw-2',
      title: 'pg.bcast from task 0, 2 tasks',
      kind: 'bandwidth',
      unit: 'MB/s',
      group: 'pgas-bw',
      groupTitle: "PGAS broadcast and all-to-all bandwidth: bytes into each task's buffer per second (MB/s)",
      xLabel: 'buffer bytes per task (all-to-all: size / P from each task)',
      sizes: BW_SIZES,
      compareTo: [
        { series: 'baseline.memcpy.set-to-sab', label: '÷ memcpy→SAB' },
        { series: 'baseline.threads.bcast-2', label: '÷ bare threads' },
      ],
    },
    {
      id: 'pgas.bcast-bw-4',
      title: 'pg.bcast from task 0, 4 tasks',
      kind: 'bandwidth',
      unit: 'MB/s',
      group: 'pgas-bw',
      sizes: BW_SIZES,
      compareTo: [
        { series: 'baseline.memcpy.set-to-sab', label: '÷ memcpy→SAB' },
        { series: 'baseline.threads.bcast-4', label: '÷ bare threads' },
      ],
    },
    {
      id: 'pgas.alltoall-bw-2',
      title: 'pg.alltoall, 2 tasks',
      kind: 'bandwidth',
      unit: 'MB/s',
      group: 'pgas-bw',
      sizes: BW_SIZES,
      compareTo: [
        { series: 'baseline.memcpy.set-to-sab', label: '÷ memcpy→SAB' },
        { series: 'baseline.threads.alltoall-2', label: '÷ bare threads' },
      ],
    },
    {
      id: 'pgas.alltoall-bw-4',
      title: 'pg.alltoall, 4 tasks',
      kind: 'bandwidth',
      unit: 'MB/s',
      group: 'pgas-bw',
      sizes: BW_SIZES,
      compareTo: [
        { series: 'baseline.memcpy.set-to-sab', label: '÷ memcpy→SAB' },
        { series: 'baseline.threads.alltoall-4', label: '÷ bare threads' },
      ],
    },
    {
      id: 'pgas.bcast-bw-2-private',
      title: 'pg.bcast from task 0, 2 tasks, private buffers',
      kind: 'bandwidth',
      unit: 'MB/s',
      group: 'pgas-bw',
      sizes: BW_SIZES,
      compareTo: [{ series: 'baseline.memcpy.set-to-sab', label: '÷ memcpy→SAB' }],
    },
    {
      id: 'pgas.alltoall-bw-2-private',
      title: 'pg.alltoall, 2 tasks, private buffers',
      kind: 'bandwidth',
      unit: 'MB/s',
      group: 'pgas-bw',
      sizes: BW_SIZES,
      compareTo: [{ series: 'baseline.memcpy.set-to-sab', label: '÷ memcpy→SAB' }],
    },
  ],
  goals: [
    {
      name: 'PGAS barrier, 2 tasks ≤ 1.5 × AM-2 Short round trip (same job)',
      series: 'pgas.barrier-2',
      size: 0,
      baseline: 'pgas.am2-short-rtt',
      baselineSize: 0,
      op: '<=',
      target: 1.5,
    },
    {
      name: 'PGAS 8 B all-reduce (Float64 SUM), 2 tasks ≤ 2 × AM-2 Short round trip (same job)',
      series: 'pgas.allreduce-2',
      size: 8,
      baseline: 'pgas.am2-short-rtt',
      baselineSize: 0,
      op: '<=',
      target: 2,
    },
    {
      name: 'PGAS 1 MiB broadcast, 2 tasks ≥ 0.5 × Uint8Array.set into a SAB',
      series: 'pgas.bcast-bw-2',
      size: MiB,
      baseline: 'baseline.memcpy.set-to-sab',
      op: '>=',
      target: 0.5,
      pair: false,
    },
    {
      name: 'PGAS 1 MiB broadcast, 4 tasks ≥ 0.5 × Uint8Array.set into a SAB',
      series: 'pgas.bcast-bw-4',
      size: MiB,
      baseline: 'baseline.memcpy.set-to-sab',
      op: '>=',
      target: 0.5,
      pair: false,
    },
    {
      name: 'PGAS 1 MiB all-to-all, 2 tasks ≥ 0.5 × Uint8Array.set into a SAB',
      series: 'pgas.alltoall-bw-2',
      size: MiB,
      baseline: 'baseline.memcpy.set-to-sab',
      op: '>=',
      target: 0.5,
      pair: false,
    },
    {
      name: 'PGAS 1 MiB all-to-all, 4 tasks ≥ 0.5 × Uint8Array.set into a SAB',
      series: 'pgas.alltoall-bw-4',
      size: MiB,
      baseline: 'baseline.memcpy.set-to-sab',
      op: '>=',
      target: 0.5,
      pair: false,
    },
  ],
  open: (ctx) => {
    const maxSize = Math.max(64, ctx.maxSize)
    for (const id of ['pgas.allreduce-2', 'pgas.allreduce-4']) {
      for (const size of ctx.sizes.get(id) ?? []) {
        if (size < 8 || size % 8 !== 0) throw new Error(`${id}: size ${size} is not a whole number of Float64`)
      }
    }
    for (const id of ['pgas.alltoall-bw-2', 'pgas.alltoall-bw-4', 'pgas.alltoall-bw-2-private']) {
      const p = SERIES[id]!.tasks
      for (const size of ctx.sizes.get(id) ?? []) {
        if (size % p !== 0) throw new Error(`${id}: size ${size} is not a multiple of ${p} tasks`)
      }
    }
    const warm = ctx.quick ? 0.005 : 0.06
    const jobs = new PgasJobs((tasks) =>
      openPgasJob(
        ctx,
        tasks,
        tasks === 2,
        maxSize,
        Object.entries(SERIES)
          .filter(([, s]) => s.tasks === tasks)
          .map(([id, s]) => ({ op: s.op, sizes: ctx.sizes.get(id) ?? [] })),
        warm,
      ),
    )
    const session: Session = {
      async run(series, size, iterations) {
        const s = SERIES[series]
        if (s === undefined) throw new Error(`unknown series ${series}`)
        const job = await jobs.of(s.tasks)
        return await job.run(s.op, size, iterations, `${series} at ${size} B`)
      },
      close: () => jobs.close(),
    }
    return session
  },
}

export default bench
