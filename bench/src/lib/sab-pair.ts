/**
 * Main-thread side of the SharedArrayBuffer ring baselines: two workers, one buffer, one factory
 * for the busy-spinning and the wait/notify variant and the minimal active message.
 */
import { pageAlignedShared } from '@amlapi/lapi/transport'
import type { Benchmark, BenchContext, Placement, Session } from '../types.js'
import { Peer } from './peer.js'
import { ABORT, ACK_AB, CTL_INTS, SEQ_AB, SEQ_BA, sabBytesFor, type SabCommand, type SabReply, type SabWorkerData, type SyncMode } from './sab-layout.js'

const WORKER = new URL('../workers/sab-peer.js', import.meta.url)

/**
 * The buffer of a pair. The minimal active message's is page-aligned, as LAPI's inboxes are
 * (`pageAlignedShared`): it lays its slots out as whole cache lines, and in a plain
 * SharedArrayBuffer (16-byte aligned on Node 20) one slot could straddle two lines. Its 8 B round
 * trip came out 0.18 µs in some sessions and 0.29–0.30 µs in others that way, and steadily
 * 0.18–0.24 µs page-aligned. The rings' slots and sequence words fit a line at any 16-byte offset
 * at the sizes the goals use, and keep the plain buffer they were measured with.
 */
function pairBuffer(mode: SyncMode, bytes: number): SharedArrayBuffer {
  return mode === 'am' ? pageAlignedShared(bytes) : new SharedArrayBuffer(bytes)
}

export async function openSabPair(mode: SyncMode, ctx: BenchContext): Promise<Session> {
  const sab = pairBuffer(mode, sabBytesFor(mode, ctx.maxSize))
  const ctl = new Int32Array(sab, 0, CTL_INTS)
  const peers: Peer[] = []
  const close = async (): Promise<void> => {
    Atomics.store(ctl, ABORT, 1)
    for (let i = 0; i < CTL_INTS; i++) Atomics.notify(ctl, i)
    await Promise.all(peers.map((p) => p.terminate()))
  }
  try {
    for (const role of ['a', 'b'] as const) {
      const wd: SabWorkerData = { sab, role, mode, maxSize: ctx.maxSize }
      peers.push(new Peer(WORKER, wd))
    }
    await Promise.all(peers.map((p) => p.ready(10_000)))
  } catch (err) {
    await close()
    throw err
  }
  const [a, b] = peers as [Peer, Peer]
  let gen = 0
  return {
    async run(series: string, size: number, iterations: number): Promise<number> {
      if (size > ctx.maxSize) throw new RangeError(`size ${size} > ${ctx.maxSize}`)
      for (const idx of [SEQ_AB, ACK_AB, SEQ_BA]) Atomics.store(ctl, idx, 0)
      const op = series.endsWith('.rtt') ? 'rtt' : 'bw'
      const cmd: SabCommand = { op, size, iterations, gen: ++gen, deadline: Date.now() + ctx.timeoutMs }
      try {
        const [ra] = await Promise.all([a.request<SabReply>(cmd, ctx.timeoutMs + 2000), b.request<SabReply>(cmd, ctx.timeoutMs + 2000)])
        if (ra.seconds === undefined) throw new Error('peer a sent no time')
        return ra.seconds
      } catch (err) {
        // Make both loops give up now, whichever failed first; close() terminates them.
        Atomics.store(ctl, ABORT, 1)
        for (const idx of [SEQ_AB, ACK_AB, SEQ_BA]) Atomics.notify(ctl, idx)
        throw err
      }
    },
    close,
  }
}

/**
 * The series of a SAB ring baseline: round-trip latency (at `rttSizes`, by default the message
 * sizes) and, unless `bandwidth` is false, one-way bandwidth.
 */
export function sabBenchmark(opts: {
  name: string
  mode: SyncMode
  title: string
  description: string
  placements: readonly Placement[]
  minCpus?: number
  rttSizes?: readonly number[]
  bandwidth?: boolean
  rttCompareTo?: Benchmark['series'][number]['compareTo']
  bwCompareTo?: Benchmark['series'][number]['compareTo']
  references?: Benchmark['references']
}): Benchmark {
  return {
    name: opts.name,
    description: opts.description,
    placements: opts.placements,
    ...(opts.minCpus !== undefined ? { minCpus: opts.minCpus } : {}),
    series: [
      {
        id: `${opts.name}.rtt`,
        title: opts.title,
        kind: 'latency',
        unit: 'us',
        group: 'rtt',
        groupTitle: 'Round-trip latency between two worker threads (µs)',
        sizes: opts.rttSizes ?? 'message',
        ...(opts.rttCompareTo ? { compareTo: opts.rttCompareTo } : {}),
      },
      ...(opts.bandwidth === false
        ? []
        : [
            {
              id: `${opts.name}.bw`,
              title: opts.title,
              kind: 'bandwidth',
              unit: 'MB/s',
              group: 'bandwidth',
              groupTitle: 'One-way bandwidth between two worker threads (MB/s)',
              sizes: 'message',
              ...(opts.bwCompareTo ? { compareTo: opts.bwCompareTo } : {}),
            } as const,
          ]),
    ],
    ...(opts.references ? { references: opts.references } : {}),
    open: (ctx) => openSabPair(opts.mode, ctx),
  }
}
