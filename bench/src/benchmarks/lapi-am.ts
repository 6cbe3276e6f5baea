/**
 * LAPI active messages between two tasks of one job: Amsend ping-pong on the header-handler path
 * (one-packet messages consumed in the header handler) and on the completion-handler path, Amsend
 * bandwidth, and Amsend to the sending task itself (the library's cost of a message without the
 * hop between cores, for reading the round trip: about the ring's round trip + 2 × this). Goals of
 * the project, as ratios to the same run's baselines (docs/benchmarks.md, "Goals").
 */
import { LapiOp } from '../lib/lapi-layout.js'
import { openLapiJob } from './lapi-rma.js'
import type { Benchmark } from '../types.js'

const MiB = 1 << 20

const bench: Benchmark = {
  name: 'lapi.am',
  description: 'LAPI_Amsend between two tasks (worker threads): inbox-ring packets, rendezvous above 16 KiB',
  placements: ['all'],
  minCpus: 2,
  series: [
    {
      id: 'lapi.am.hdr-rtt',
      title: 'Amsend, header-handler path',
      kind: 'latency',
      unit: 'us',
      group: 'lapi-am-rtt',
      groupTitle: 'LAPI Amsend ping-pong round trip (µs); one packet = 4096 B of data',
      sizes: 'am',
      compareTo: [
        { series: 'baseline.sab-spin.rtt', label: '÷ SAB spin', baselineSize: 8 },
        { series: 'baseline.sab-am.rtt', label: '÷ minimal AM', baselineSize: 8 },
      ],
    },
    {
      id: 'lapi.am.cmpl-rtt',
      title: 'Amsend, completion-handler path',
      kind: 'latency',
      unit: 'us',
      group: 'lapi-am-rtt',
      sizes: 'am',
      compareTo: [{ series: 'lapi.am.hdr-rtt', label: '÷ header path' }],
    },
    {
      id: 'lapi.am.self',
      title: 'Amsend to itself, one task',
      kind: 'latency',
      unit: 'us',
      group: 'lapi-am-self',
      groupTitle: "LAPI Amsend to the sending task itself (µs per message: the library's share of a one-way message, no hop between cores)",
      sizes: 'am',
      compareTo: [{ series: 'lapi.am.hdr-rtt', label: '÷ header-path round trip' }],
    },
    {
      id: 'lapi.am.bw',
      title: 'Amsend',
      kind: 'bandwidth',
      unit: 'MB/s',
      group: 'lapi-am-bw',
      groupTitle: 'LAPI Amsend one-way bandwidth (MB/s)',
      sizes: 'rma',
      compareTo: [{ series: 'baseline.memcpy.set-to-sab', label: '÷ memcpy→SAB' }],
    },
  ],
  goals: [
    {
      name: 'one-packet Amsend ping-pong (8 B) ≤ 1.5 × SAB spin ring RTT',
      series: 'lapi.am.hdr-rtt',
      size: 8,
      baseline: 'baseline.sab-spin.rtt',
      op: '<=',
      target: 1.5,
    },
    {
      name: 'completion-handler path at the packet boundary (4096 B) ≤ 1.3 × header-handler path',
      series: 'lapi.am.cmpl-rtt',
      size: 4096,
      baseline: 'lapi.am.hdr-rtt',
      op: '<=',
      target: 1.3,
    },
    {
      name: '1 MiB Amsend bandwidth ≥ 0.7 × Uint8Array.set into a SAB',
      series: 'lapi.am.bw',
      size: MiB,
      baseline: 'baseline.memcpy.set-to-sab',
      op: '>=',
      target: 0.7,
      pair: false,
    },
  ],
  references: [{ name: 'one-packet Amsend ping-pong (8 B) ÷ minimal active message RTT', series: 'lapi.am.hdr-rtt', size: 8, baseline: 'baseline.sab-am.rtt' }],
  open: (ctx) =>
    openLapiJob(ctx, {
      'lapi.am.hdr-rtt': LapiOp.AM_RTT_HDR,
      'lapi.am.cmpl-rtt': LapiOp.AM_RTT_CMPL,
      'lapi.am.bw': LapiOp.AM_BW,
      'lapi.am.self': LapiOp.AM_SELF,
    }),
}

export default bench
