/**
 * LAPI one-sided operations between two tasks of one process (a real job started with runJob):
 * Put ping-pong round trip, Get latency, Put and Get bandwidth, Rmw rate. Every figure is compared
 * with the baselines of the same run; the goals are listed in docs/benchmarks.md ("Goals").
 */
import { fileURLToPath } from 'node:url'
import type { JobConfig } from '@amlapi/lapi'
import { startCommandJob } from '../lib/command-job.js'
import { LapiOp, type LapiBenchData } from '../lib/lapi-layout.js'
import type { Benchmark, BenchContext, Session } from '../types.js'

const TASK = fileURLToPath(new URL('../workers/lapi-task.js', import.meta.url))
const MiB = 1 << 20

const OPS: Record<string, number> = {
  'lapi.rma.put-rtt': LapiOp.PUT_RTT,
  'lapi.rma.get-lat': LapiOp.GET_LAT,
  'lapi.rma.put-bw': LapiOp.PUT_BW,
  'lapi.rma.get-bw': LapiOp.GET_BW,
  'lapi.rma.rmw-rate': LapiOp.RMW_RATE,
}

/** Options of {@link openLapiJob} for another task program (the AM-2 benchmark's). */
export interface LapiJobOptions {
  /** Compiled task program (default workers/lapi-task.js). */
  program?: string
  /** More job data beside `cmd` and `maxSize`. */
  data?: Record<string, unknown>
  /** Job settings (default: a segment of max(16 MiB, 2 × maxSize + 1 MiB), the rest from the environment). */
  config?: Partial<JobConfig>
}

/**
 * Starts the two-task LAPI job and returns a session running the given series (id → op code).
 * The tasks share the command block `C` (lib/lapi-layout.ts); whichever task times a run writes
 * the result and DONE.
 */
export async function openLapiJob(ctx: BenchContext, ops: Record<string, number>, opts: LapiJobOptions = {}): Promise<Session> {
  const maxSize = Math.max(8, ctx.maxSize)
  const job = await startCommandJob(ctx, {
    program: opts.program ?? TASK,
    numTasks: 2,
    config: { segmentSize: Math.max(16 * MiB, 2 * maxSize + MiB), ...opts.config },
    data: { ...opts.data, maxSize } satisfies Omit<LapiBenchData, 'cmd'>,
    label: 'the LAPI job',
  })
  return {
    run(series: string, size: number, iterations: number): Promise<number> {
      const op = ops[series]
      if (op === undefined) throw new Error(`unknown series ${series}`)
      return job.run(op, size, iterations, `${series} at ${size} B`)
    },
    close: () => job.close(),
  }
}

const bench: Benchmark = {
  name: 'lapi.rma',
  description: 'LAPI Put/Get/Rmw between two tasks (worker threads) of one job, origin thread copies into the target segment',
  placements: ['all'],
  minCpus: 2,
  series: [
    {
      id: 'lapi.rma.put-rtt',
      title: 'LAPI Put ping-pong',
      kind: 'latency',
      unit: 'us',
      group: 'lapi-rtt',
      groupTitle: 'LAPI round trip and latency between two tasks (µs)',
      sizes: 'rma',
      compareTo: [
        { series: 'baseline.sab-spin.rtt', label: '÷ SAB spin' },
        { series: 'baseline.msgport.rtt', label: '÷ postMessage' },
      ],
    },
    {
      id: 'lapi.rma.get-lat',
      title: 'LAPI Get (blocking)',
      kind: 'latency',
      unit: 'us',
      group: 'lapi-rtt',
      sizes: 'rma',
      compareTo: [{ series: 'baseline.sab-spin.rtt', label: '÷ SAB spin' }],
    },
    {
      id: 'lapi.rma.put-bw',
      title: 'LAPI Put',
      kind: 'bandwidth',
      unit: 'MB/s',
      group: 'lapi-bw',
      groupTitle: 'LAPI one-way bandwidth between two tasks (MB/s)',
      sizes: 'rma',
      compareTo: [
        { series: 'baseline.memcpy.set-to-sab', label: '÷ memcpy→SAB' },
        { series: 'baseline.sab-spin.bw', label: '÷ SAB spin' },
      ],
    },
    {
      id: 'lapi.rma.get-bw',
      title: 'LAPI Get',
      kind: 'bandwidth',
      unit: 'MB/s',
      group: 'lapi-bw',
      sizes: 'rma',
      compareTo: [{ series: 'baseline.memcpy.set-to-sab', label: '÷ memcpy→SAB' }],
    },
    {
      id: 'lapi.rma.rmw-rate',
      title: 'LAPI Rmw FETCH_AND_ADD (blocking)',
      kind: 'rate',
      unit: 'ops/s',
      group: 'lapi-rmw',
      groupTitle: 'LAPI read-modify-write rate (operations/s)',
      sizes: [4],
    },
  ],
  goals: [
    {
      name: 'LAPI 8 B Put ping-pong RTT ≤ 1.0 × SAB spin ring RTT',
      series: 'lapi.rma.put-rtt',
      size: 8,
      baseline: 'baseline.sab-spin.rtt',
      op: '<=',
      target: 1.0,
    },
    {
      name: 'LAPI 1 MiB Put bandwidth ≥ 0.8 × Uint8Array.set into a SAB',
      series: 'lapi.rma.put-bw',
      size: MiB,
      baseline: 'baseline.memcpy.set-to-sab',
      op: '>=',
      target: 0.8,
      pair: false,
    },
    {
      name: 'LAPI 8 B Put ping-pong RTT ≤ 1/50 × postMessage RTT (2 cores)',
      series: 'lapi.rma.put-rtt',
      size: 8,
      baseline: 'baseline.msgport.rtt',
      op: '<=',
      target: 0.02,
    },
  ],
  open: (ctx) => openLapiJob(ctx, OPS),
}

export default bench
