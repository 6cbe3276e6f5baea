/**
 * AM-2 (`@amlapi/am2/compat`) between the two tasks of one job: round trips of Short, Medium and
 * Long requests answered by a Short reply, across the packed fast path's boundary; the pipelined
 * request rate (testping); bulk bandwidth (testbulk). Ratios and goals are to the same run's
 * baselines (SAB spin ring, Uint8Array.set into a SAB). The task program is workers/am2-task.ts.
 *
 * The packed fast path: a message whose header (32 B + 4 B per argument, padded to 8) and payload
 * fit in one LAPI user header (MAX_UHDR_SZ, 1024 B; the job pins it so the boundary stays put)
 * travels as one packet and its handler is ready as soon as the header handler ran. With 0
 * arguments that is a payload of up to 992 B; at 993 B the payload becomes LAPI data.
 */
import { fileURLToPath } from 'node:url'
import { Am2Op, SHORT_ARGS, type Am2BenchData } from '../lib/am2-layout.js'
import { openLapiJob } from './lapi-rma.js'
import type { Benchmark, Session } from '../types.js'

const TASK = fileURLToPath(new URL('../workers/am2-task.js', import.meta.url))
const MiB = 1 << 20
/** LAPI MAX_UHDR_SZ the job runs with (the default). */
const MAX_UHDR = 1024
/** Largest Medium/Long payload with 0 arguments that still travels packed. */
export const LAST_PACKED = MAX_UHDR - 32

/**
 * Runs every pattern for about `seconds` before the runner starts: the first few hundred
 * milliseconds of a fresh job are slower (code still being compiled), and without this they would
 * fall on whichever series the runner measures first.
 */
async function warmUp(session: Session, seconds: number, maxSize: number): Promise<void> {
  const patterns: [string, number][] = [
    ['am2.short-rtt', 0],
    ['am2.medium-rtt', 8],
    ['am2.medium-rtt', 4096],
    ['am2.long-rtt', 8],
    ['am2.long-rtt', 4096],
    ['am2.rate', 0],
    ['am2.long-bw', 64 << 10],
    ['am2.medium-bw', 64 << 10],
  ]
  for (const [series, size] of patterns) {
    if (size > maxSize) continue
    let n = 16
    for (let spent = 0; spent < seconds; n *= 2) spent += await session.run(series, size, n)
  }
}

const bench: Benchmark = {
  name: 'am2',
  description: 'AM-2 requests and replies between two tasks (worker threads): Short/Medium/Long round trips, pipelined rate, bulk bandwidth',
  placements: ['all'],
  minCpus: 2,
  series: [
    {
      id: 'am2.short-rtt',
      title: 'Short (size = 4 B × args)',
      kind: 'latency',
      unit: 'us',
      group: 'am2-rtt',
      groupTitle: `AM-2 round trip: request + Short reply (µs); packed ≤ ${LAST_PACKED} B`,
      xLabel: 'payload bytes; Short: 4 B per argument (log₂ scale)',
      sizes: 'am2-short',
      compareTo: [
        { series: 'baseline.sab-spin.rtt', label: '÷ SAB spin', baselineSize: 8 },
        { series: 'baseline.sab-am.rtt', label: '÷ minimal AM', baselineSize: 8 },
      ],
    },
    {
      id: 'am2.medium-rtt',
      title: 'Medium (AM_RequestI0)',
      kind: 'latency',
      unit: 'us',
      group: 'am2-rtt',
      sizes: 'am2',
      compareTo: [{ series: 'am2.short-rtt', label: '÷ Short', baselineSize: 0 }],
    },
    {
      id: 'am2.long-rtt',
      title: 'Long (AM_RequestXfer0)',
      kind: 'latency',
      unit: 'us',
      group: 'am2-rtt',
      sizes: 'am2',
      compareTo: [{ series: 'am2.short-rtt', label: '÷ Short', baselineSize: 0 }],
    },
    {
      id: 'am2.rate',
      title: 'Short requests (size = 4 B × args), AM_Reply0',
      kind: 'rate',
      unit: 'ops/s',
      group: 'am2-rate',
      groupTitle: 'AM-2 pipelined request rate, up to 128 in flight (requests/s)',
      sizes: 'am2-short',
      xLabel: 'arguments × 4 B (log₂ scale; 0 = AM_Request0)',
    },
    {
      id: 'am2.long-bw',
      title: 'Long (AM_RequestXfer0 from the segment)',
      kind: 'bandwidth',
      unit: 'MB/s',
      group: 'am2-bw',
      groupTitle: 'AM-2 bulk bandwidth, AM_MaxLong / AM_MaxMedium chunks (MB/s)',
      sizes: 'am2-bw',
      xLabel: 'message size, bytes (log₂ scale)',
      compareTo: [{ series: 'baseline.memcpy.set-to-sab', label: '÷ memcpy→SAB' }],
    },
    {
      id: 'am2.medium-bw',
      title: 'Medium (AM_RequestI0 from a Uint8Array)',
      kind: 'bandwidth',
      unit: 'MB/s',
      group: 'am2-bw',
      sizes: 'am2-bw',
      compareTo: [{ series: 'baseline.memcpy.set-to-sab', label: '÷ memcpy→SAB' }],
    },
  ],
  goals: [
    {
      name: 'AM-2 Short round trip (0 args) ≤ 2 × SAB spin ring RTT (8 B)',
      series: 'am2.short-rtt',
      size: 0,
      baseline: 'baseline.sab-spin.rtt',
      baselineSize: 8,
      op: '<=',
      target: 2,
    },
    {
      name: 'AM-2 Medium RTT step at the packing boundary (first unpacked ÷ last packed) ≤ 1.3',
      series: 'am2.medium-rtt',
      size: LAST_PACKED + 1,
      baseline: 'am2.medium-rtt',
      baselineSize: LAST_PACKED,
      op: '<=',
      target: 1.3,
    },
    { name: 'AM-2 pipelined AM_Request0 rate (0 args) ≥ 500,000 requests/s', series: 'am2.rate', size: 0, op: '>=', target: 500_000 },
    {
      name: 'AM-2 1 MiB Long bandwidth ≥ 0.6 × Uint8Array.set into a SAB',
      series: 'am2.long-bw',
      size: MiB,
      baseline: 'baseline.memcpy.set-to-sab',
      op: '>=',
      target: 0.6,
      pair: false,
    },
  ],
  references: [
    {
      name: 'AM-2 Short round trip (0 args) ÷ minimal active message RTT (8 B)',
      series: 'am2.short-rtt',
      size: 0,
      baseline: 'baseline.sab-am.rtt',
      baselineSize: 8,
    },
  ],
  open: async (ctx) => {
    for (const id of ['am2.short-rtt', 'am2.rate']) {
      for (const size of ctx.sizes.get(id) ?? []) {
        if (size % 4 !== 0 || !SHORT_ARGS.includes(size / 4)) throw new Error(`${id}: size ${size} is not 4 B × ${SHORT_ARGS.join(', ')} arguments`)
      }
    }
    const maxSize = Math.max(64, ctx.maxSize)
    const data: Omit<Am2BenchData, 'cmd' | 'maxSize'> = { timeoutMs: ctx.timeoutMs }
    const session = await openLapiJob(
      ctx,
      {
        'am2.short-rtt': Am2Op.SHORT_RTT,
        'am2.medium-rtt': Am2Op.MEDIUM_RTT,
        'am2.long-rtt': Am2Op.LONG_RTT,
        'am2.rate': Am2Op.RATE,
        'am2.long-bw': Am2Op.LONG_BW,
        'am2.medium-bw': Am2Op.MEDIUM_BW,
      },
      {
        program: TASK,
        data,
        // each task: its endpoint segment and the Long source (maxSize each), LAPI's staging copy of
        // a rendezvous Medium, am2's counters
        config: { segmentSize: Math.max(32 * MiB, 4 * maxSize + 8 * MiB), maxUhdrSz: MAX_UHDR },
      },
    )
    try {
      await warmUp(session, ctx.quick ? 0.005 : 0.06, maxSize)
    } catch (err) {
      await session.close()
      throw err
    }
    return session
  },
}

export default bench
