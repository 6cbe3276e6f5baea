/**
 * A series of the scaling benchmarks: points sized in tasks, each beside the series' own
 * smallest point (the speed-up, or for latencies the growth).
 */
import type { SeriesSpec } from '../types.js'

export interface ScalingSeries {
  id: string
  title: string
  kind: 'rate' | 'latency'
  sizes: readonly number[]
  /** The chart and table it goes in (default: its own). */
  group?: string
  groupTitle?: string
  xLabel: string
  /** Each sample a whole program run (lapirun), rather than a calibrated loop. */
  wholeRuns?: boolean
}

export function scalingSeries(s: ScalingSeries): SeriesSpec {
  return {
    id: s.id,
    title: s.title,
    kind: s.kind,
    unit: s.kind === 'rate' ? 'ops/s' : 'us',
    group: s.group ?? s.id,
    ...(s.groupTitle !== undefined ? { groupTitle: s.groupTitle } : {}),
    xLabel: s.xLabel,
    sizes: s.sizes,
    sizeUnit: 'tasks',
    ...(s.wholeRuns === true ? { wholeRuns: true } : {}),
    compareTo: [{ series: s.id, label: '÷ its figure', baselineSize: s.sizes[0]! }],
  }
}
