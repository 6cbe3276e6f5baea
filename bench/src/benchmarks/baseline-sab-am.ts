import { sabBenchmark } from '../lib/sab-pair.js'

/**
 * The floor under a one-packet active message: the least a ping-pong of active messages needs,
 * written directly on a SharedArrayBuffer, with none of LAPI's checks or bookkeeping. Each worker
 * has an inbox ring of 16 one-line slots; a message is four header words (source, length, handler
 * index, counter index) and the payload copied in by words, published by the slot's STAMP with
 * `Atomics.store`. The receiver spins on the STAMP (`Atomics.load`), calls the handler the header
 * names from a table (it copies the payload out with `Uint8Array.set`, as the ring baseline's
 * receiver and the LAPI benchmark's header handler do), bumps the named counter (a plain local
 * word) and gives the slot back with `Atomics.store` of its TAIL; the waiter spins on the counter,
 * polling. No argument checks, no counters in shared memory, no fence accounting, no duplicate
 * window, no doorbells: what `lapi.am.hdr-rtt` costs above this is the library's work per
 * message (docs/benchmarks.md: the baselines table, and the reference ratios).
 */
export default sabBenchmark({
  name: 'baseline.sab-am',
  mode: 'am',
  title: 'SAB minimal active message',
  description: 'the floor of a one-packet active message: stamped one-line slots, handler table, local counter',
  placements: ['all'],
  minCpus: 2,
  rttSizes: [8, 16, 32],
  bandwidth: false,
  rttCompareTo: [{ series: 'baseline.sab-spin.rtt', label: '÷ SAB spin' }],
  references: [{ name: 'minimal active message RTT (8 B) ÷ SAB spin ring RTT', series: 'baseline.sab-am.rtt', size: 8, baseline: 'baseline.sab-spin.rtt' }],
})
