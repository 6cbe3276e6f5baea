import { sabBenchmark } from '../lib/sab-pair.js'

/**
 * Same ring as `baseline.sab-spin`, but a peer with nothing to do sleeps in `Atomics.wait` and every
 * store is followed by `Atomics.notify`. Also re-run with the whole process on one CPU (`@1core`).
 */
export default sabBenchmark({
  name: 'baseline.sab-wait',
  mode: 'wait',
  title: 'SAB wait/notify',
  description: 'SharedArrayBuffer ring, Atomics.wait / Atomics.notify (copy in + copy out)',
  placements: ['all', '1core'],
  rttCompareTo: [{ series: 'baseline.sab-spin.rtt', label: '÷ SAB spin' }],
})
