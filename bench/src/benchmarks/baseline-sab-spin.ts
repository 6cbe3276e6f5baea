import { sabBenchmark } from '../lib/sab-pair.js'

/**
 * Two workers exchange messages through a SharedArrayBuffer, both busy-spinning on `Atomics.load`.
 * Round trip: one slot each way. Bandwidth: a ring of 8 slots. Copy in and copy out with
 * `Uint8Array.set`. Not run on one core: two spinning threads on one CPU only measure time slices.
 */
export default sabBenchmark({
  name: 'baseline.sab-spin',
  mode: 'spin',
  title: 'SAB spin',
  description: 'SharedArrayBuffer ring, both workers busy-spin on Atomics.load (copy in + copy out)',
  placements: ['all'],
  minCpus: 2,
  bwCompareTo: [{ series: 'baseline.memcpy.set-to-sab', label: '÷ memcpy' }],
})
