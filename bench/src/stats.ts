/** Pure statistics: median and min–max over repeats, unit-normalised ratios, goal evaluation. */
import type { Goal, GoalResult, RatioColumn, RatioResult, Reference, ReferenceResult, SeriesKind, SeriesResult, SizeUnit, Unit } from './types.js'

export interface Summary {
  median: number
  min: number
  max: number
}

/** Median (mean of the two middle values for an even count), min and max. Throws on no samples. */
export function summarize(samples: readonly number[]): Summary {
  if (samples.length === 0) throw new RangeError('summarize: no samples')
  const s = [...samples].sort((a, b) => a - b)
  const mid = s.length >> 1
  const median = s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
  return { median, min: s[0]!, max: s[s.length - 1]! }
}

export function median(samples: readonly number[]): number {
  return summarize(samples).median
}

/** Factor that turns a value in `unit` into base units: seconds per operation, B/s or ops/s. */
export function unitScale(unit: Unit): number {
  switch (unit) {
    case 'us':
      return 1e-6
    case 'MB/s':
      return 1e6
    case 'GB/s':
      return 1e9
    case 'ops/s':
      return 1
  }
}

/** The kind of quantity a unit measures; ratios only make sense within one. */
export function unitDimension(unit: Unit): 'time' | 'bytes/s' | 'ops/s' {
  return unit === 'us' ? 'time' : unit === 'ops/s' ? 'ops/s' : 'bytes/s'
}

/** Value of one operation's measurement in `unit`, from the elapsed time of `iterations` operations. */
export function toValue(kind: SeriesKind, unit: Unit, size: number, iterations: number, seconds: number): number {
  const s = unitScale(unit)
  switch (kind) {
    case 'latency':
      return seconds / iterations / s
    case 'bandwidth':
      return (size * iterations) / seconds / s
    case 'rate':
      return iterations / seconds / s
  }
}

/**
 * `ours / baseline`, both converted to base units first (so 1 MiB at 8000 MB/s ÷ 16 GB/s = 0.5).
 * `null` when either is missing or not positive, or the units measure different things.
 */
export function ratio(ours: number | undefined, oursUnit: Unit, base: number | undefined, baseUnit: Unit): number | null {
  if (ours === undefined || base === undefined) return null
  if (unitDimension(oursUnit) !== unitDimension(baseUnit)) return null
  if (!(ours > 0) || !(base > 0) || !Number.isFinite(ours) || !Number.isFinite(base)) return null
  return (ours * unitScale(oursUnit)) / (base * unitScale(baseUnit))
}

function medianAt(series: SeriesResult | undefined, size: number): number | undefined {
  return series?.points.find((p) => p.size === size)?.median
}

/** Ratio columns of `series` against the baselines named by its `compareTo`, from medians. */
export function computeRatios(
  series: SeriesResult,
  compareTo: readonly { series: string; label: string; baselineSize?: number }[],
  all: ReadonlyMap<string, SeriesResult>,
): RatioColumn[] {
  return compareTo.map((c) => {
    const base = all.get(c.series)
    return {
      series: c.series,
      label: c.label,
      ...(c.baselineSize !== undefined ? { baselineSize: c.baselineSize } : {}),
      values: series.points.map((p) => ({
        size: p.size,
        ratio: base ? ratio(p.median, series.unit, medianAt(base, c.baselineSize ?? p.size), base.unit) : null,
      })),
    }
  })
}

/** The pairs of the interleaved check for one goal or reference. */
export interface Pairs {
  ratios: readonly number[]
  values?: ReadonlyArray<readonly [number, number]>
}

/**
 * The ratio of a goal or reference: the paired median where pairs ran, else the medians' ratio
 * (null when a side was not measured). Without `baseline`, the median itself.
 */
function measureRatio(
  spec: { series: string; size: number; baseline?: string; baselineSize?: number },
  all: ReadonlyMap<string, SeriesResult>,
  pairs?: Pairs,
): RatioResult {
  const ours = all.get(spec.series)
  let r: number | null
  if (spec.baseline === undefined) {
    // absolute: the median itself, in the series' unit
    const m = ours ? medianAt(ours, spec.size) : undefined
    r = m !== undefined && Number.isFinite(m) ? m : null
  } else {
    const base = all.get(spec.baseline)
    r = ours && base ? ratio(medianAt(ours, spec.size), ours.unit, medianAt(base, spec.baselineSize ?? spec.size), base.unit) : null
  }
  const paired =
    pairs !== undefined && pairs.ratios.length > 0
      ? {
          ratio: median(pairs.ratios),
          ratios: [...pairs.ratios],
          ...(pairs.values ? { values: pairs.values.map((v) => [v[0], v[1]] as [number, number]) } : {}),
        }
      : undefined
  return { ratio: paired !== undefined ? paired.ratio : r, unpairedRatio: r, ...(paired ? { paired } : {}) }
}

/**
 * Evaluate one goal against the measured series: PASS / MISS, or `n/a` when a side was not measured.
 * An absolute goal (no `baseline`) reports the median itself as its `ratio`.
 */
export function evaluateGoal(goal: Goal, all: ReadonlyMap<string, SeriesResult>, pairs?: Pairs): GoalResult {
  const m = measureRatio(goal, all, pairs)
  const unit = all.get(goal.series)?.sizeUnit
  const sized = unit !== undefined ? { sizeUnit: unit } : {}
  if (m.ratio === null) return { ...goal, ...m, ...sized, status: 'n/a' }
  const ok = goal.op === '<=' ? m.ratio <= goal.target : m.ratio >= goal.target
  return { ...goal, ...m, ...sized, status: ok ? 'PASS' : 'MISS' }
}

/** Evaluate one reference ratio (a goal without a target). */
export function evaluateReference(ref: Reference, all: ReadonlyMap<string, SeriesResult>, pairs?: Pairs): ReferenceResult {
  return { ...ref, ...measureRatio(ref, all, pairs) }
}

export interface SeriesGroup {
  id: string
  title: string
  /** X axis label: the first series' `xLabel` that is set. */
  xLabel?: string
  /** What the sizes count: the first series' `sizeUnit` (default bytes). */
  sizeUnit?: SizeUnit
  unit: Unit
  kind: SeriesKind
  series: SeriesResult[]
}

/** Series grouped by `group`, in order of first appearance; the title is the first `groupTitle` given. */
export function groupSeries(series: readonly SeriesResult[]): SeriesGroup[] {
  const groups = new Map<string, SeriesGroup>()
  for (const s of series) {
    let g = groups.get(s.group)
    if (!g) {
      g = { id: s.group, title: s.groupTitle ?? s.group, unit: s.unit, kind: s.kind, series: [] }
      groups.set(s.group, g)
    } else if (g.title === g.id && s.groupTitle !== undefined) {
      g.title = s.groupTitle
    }
    if (g.xLabel === undefined && s.xLabel !== undefined) g.xLabel = s.xLabel
    if (g.sizeUnit === undefined && s.sizeUnit !== undefined) g.sizeUnit = s.sizeUnit
    g.series.push(s)
  }
  return [...groups.values()]
}
