/** Pure text formatting: numbers, sizes, fixed-width (Markdown-compatible) tables. */
import type { Environment } from './env.js'
import { median, type SeriesGroup } from './stats.js'
import type { GoalResult, RatioResult, ReferenceResult, SizeUnit } from './types.js'

/** Three significant digits below 1000, whole numbers up to a million, then `12.3M`. `–` if missing. */
export function formatNumber(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–'
  if (v === 0) return '0'
  const a = Math.abs(v)
  if (a >= 1e9) return `${(v / 1e9).toPrecision(3)}G`
  if (a >= 1e6) return `${(v / 1e6).toPrecision(3)}M`
  if (a >= 1000) return Math.round(v).toString()
  return v.toPrecision(3)
}

/** `8 B`, `4 KiB`, `1 MiB`, `1.5 KiB`; a count of tasks as the number. */
export function formatSize(bytes: number, unit: SizeUnit = 'bytes'): string {
  if (unit === 'tasks') return String(bytes)
  const units: [number, string][] = [
    [2 ** 30, 'GiB'],
    [2 ** 20, 'MiB'],
    [2 ** 10, 'KiB'],
  ]
  for (const [f, u] of units) if (bytes >= f) return `${+(bytes / f).toFixed(2)} ${u}`
  return `${bytes} B`
}

export function unitLabel(unit: string): string {
  return unit === 'us' ? 'µs' : unit
}

/** `median (min–max)`. */
export function formatCell(p: { median: number; min: number; max: number } | undefined): string {
  if (!p) return '–'
  return `${formatNumber(p.median)} (${formatNumber(p.min)}–${formatNumber(p.max)})`
}

/** Display width, counting each code point once (enough for the µ, ÷, – and → used here). */
function width(s: string): number {
  return [...s].length
}

function pad(s: string, w: number, align: 'l' | 'r'): string {
  const fill = ' '.repeat(Math.max(0, w - width(s)))
  return align === 'l' ? s + fill : fill + s
}

/**
 * A fixed-width table that is also a Markdown table: `| a | b |`, an alignment row, the rows.
 * `align` defaults to left for the first column, right for the others.
 */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[], align?: readonly ('l' | 'r')[]): string {
  const al = header.map((_, i) => align?.[i] ?? (i === 0 ? 'l' : 'r'))
  const w = header.map((h, i) => Math.max(3, width(h), ...rows.map((r) => width(r[i] ?? ''))))
  const line = (cells: readonly string[]): string => `| ${cells.map((c, i) => pad(c, w[i]!, al[i]!)).join(' | ')} |`
  const rule = `|${w.map((n, i) => (al[i] === 'r' ? '-'.repeat(n + 1) + ':' : ':' + '-'.repeat(n + 1))).join('|')}|`
  return [line(header), rule, ...rows.map((r) => line(header.map((_, i) => r[i] ?? '')))].join('\n')
}

function sizesOf(group: SeriesGroup): number[] {
  return [...new Set(group.series.flatMap((s) => s.points.map((p) => p.size)))].sort((a, b) => a - b)
}

/**
 * One table per group: size and `median (min–max)` per series; then, when series of the group
 * declare `compareTo`, a second table with one column per ratio (median ÷ baseline median).
 */
export function formatGroupTable(group: SeriesGroup, repeats: number): string {
  const sizes = sizesOf(group)
  const header = [group.sizeUnit === 'tasks' ? 'tasks' : 'size', ...group.series.map((s) => s.title)]
  const rows = sizes.map((size) => [formatSize(size, group.sizeUnit), ...group.series.map((s) => formatCell(s.points.find((p) => p.size === size)))])
  const unit = unitLabel(group.unit)
  // (a series of whole application runs takes fewer repeats: it says how many)
  const n = group.series.find((s) => s.repeats !== undefined)?.repeats ?? repeats
  let text = `### ${group.title}\n\n${unit}; median of ${n} repeats (min–max)\n\n${formatTable(header, rows)}\n`
  const allRatios = group.series.flatMap((s) => s.ratios.map((r) => ({ s, r })))
  // A column whose baseline was not run at all (filtered out) is left out, and said so.
  const ratioCols = allRatios.filter(({ r }) => r.values.some((v) => v.ratio !== null))
  const missing = [...new Set(allRatios.filter((c) => !ratioCols.includes(c)).map(({ r }) => r.series))]
  if (ratioCols.length > 0) {
    const rHeader = [header[0]!]
    for (const { s, r } of ratioCols) {
      const at = r.baselineSize !== undefined ? ` @ ${formatSize(r.baselineSize, group.sizeUnit)}` : ''
      rHeader.push(`${s.title} ${r.label}${at}`)
    }
    const rRows = sizes.map((size) => [
      formatSize(size, group.sizeUnit),
      ...ratioCols.map(({ r }) => formatNumber(r.values.find((v) => v.size === size)?.ratio ?? null)),
    ])
    text += `\nRatios (median ÷ baseline median, units normalised)\n\n${formatTable(rHeader, rRows)}\n`
  }
  if (missing.length > 0) text += `\nNo ratios to ${missing.join(', ')}: not measured in this run.\n`
  return text
}

/** The extra per-point figures of a group (e.g. garbage per operation), or null when there are none. */
export function formatExtrasTable(group: SeriesGroup): string | null {
  const cols: { title: string; key: string; s: SeriesGroup['series'][number] }[] = []
  for (const s of group.series) {
    const keys = [...new Set(s.points.flatMap((p) => Object.keys(p.extra ?? {})))]
    for (const key of keys) cols.push({ title: `${s.title}: ${key}`, key, s })
  }
  if (cols.length === 0) return null
  const rows = sizesOf(group).map((size) => [
    formatSize(size, group.sizeUnit),
    ...cols.map((c) => {
      const v = c.s.points.find((p) => p.size === size)?.extra?.[c.key]
      return v === undefined ? '–' : v < 0.005 ? '0' : v < 1000 ? v.toFixed(v < 10 ? 2 : 1) : formatNumber(v)
    }),
  ])
  const header = [group.sizeUnit === 'tasks' ? 'tasks' : 'size', ...cols.map((c) => c.title)]
  return `### ${group.title}: garbage\n\nJS heap bytes allocated per operation and garbage collections per million operations, counted with v8.GCProfiler over one extra run per size, four samples long\n\n${formatTable(header, rows)}\n`
}

/**
 * The pair columns of a goal or reference: the count and range of the pair ratios, and the medians
 * of the pairs' two values (series / baseline, each in its own unit), which show the machine's
 * state when the pairs ran (on the reference VM a slow spell moves the ring's 8 B round trip from
 * about 0.18 to about 0.8 µs, and with it every ratio to it).
 */
function pairCells(r: RatioResult): [string, string] {
  const p = r.paired
  if (!p) return ['–', '–']
  const range = `${p.ratios.length}: ${formatNumber(Math.min(...p.ratios))}–${formatNumber(Math.max(...p.ratios))}`
  const v = p.values
  const values = v && v.length > 0 ? `${formatNumber(median(v.map((x) => x[0])))} / ${formatNumber(median(v.map((x) => x[1])))}` : '–'
  return [range, values]
}

const PAIR_LEGEND = '"pair medians" = the medians of the pairs\' own values, series / baseline, each in its unit.'

export function formatGoals(goals: readonly GoalResult[]): string {
  const rows = goals.map((g) => [
    g.status,
    g.name,
    formatSize(g.size, g.sizeUnit) + (g.baselineSize !== undefined ? ` vs ${formatSize(g.baselineSize, g.sizeUnit)}` : ''),
    formatNumber(g.ratio),
    ...pairCells(g),
    formatNumber(g.unpairedRatio),
    `${g.op} ${g.target}`,
  ])
  const pass = goals.filter((g) => g.status === 'PASS').length
  const miss = goals.filter((g) => g.status === 'MISS').length
  const na = goals.length - pass - miss
  const summary = `${pass} PASS, ${miss} MISS${na > 0 ? `, ${na} not measured` : ''}`
  const absolute = goals.some((g) => g.baseline === undefined)
    ? ' A goal without a baseline: the median of its series in its unit, of the check\'s runs of it alone where they ran (their count and range in the pairs column), else of the main repeats ("unpaired").'
    : ''
  const legend =
    'ratio = median of the paired ratios where pairs ran (each pair: one run of the series and one of its baseline, back to back), ' +
    `else median ÷ baseline median (the "unpaired" column). ${PAIR_LEGEND}${absolute}`
  return `### Goals\n\n${summary}; ${legend}\n\n${formatTable(['result', 'goal', 'size', 'ratio', 'pairs: min–max', 'pair medians', 'unpaired', 'target'], rows, ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'l'])}\n`
}

export function formatEnvironment(
  env: Environment & {
    oneCore?: { status: string; command?: string; note?: string; cpusAllowed?: string }
    load?: { loadavgStart: number; otherCpuPercent: number | null; stealPercent?: number | null }
  },
): string {
  const one = env.oneCore
  const oneText =
    !one || one.status === 'none'
      ? ''
      : one.status === 'ran'
        ? `; 1-core runs: ${one.command} (child allowed CPUs ${one.cpusAllowed})`
        : `; 1-core runs ${one.note}`
  const load = env.load
  const loadText = !load
    ? ''
    : `; load average ${load.loadavgStart.toFixed(2)} at start` +
      (load.otherCpuPercent === null ? '' : `, other processes used ${load.otherCpuPercent}% of the CPU time`) +
      (load.stealPercent === null || load.stealPercent === undefined ? '' : ` (the hypervisor's steal: ${load.stealPercent}%)`)
  return (
    `Node ${env.node} (V8 ${env.v8}), ${env.cpuModel}, ${env.cores} CPUs, allowed ${env.cpusAllowed} ` +
    `(${env.pinning})${oneText}; V8 inlining budgets: ${env.jit}; ${env.os}, ${env.arch}, ${env.memoryGiB} GiB; ${env.date}${loadText}`
  )
}

/** The reference ratios: measured like goals (paired where pairs ran), with no target. */
export function formatReferences(refs: readonly ReferenceResult[]): string {
  const rows = refs.map((r) => [
    r.name,
    formatSize(r.size) + (r.baselineSize !== undefined ? ` vs ${formatSize(r.baselineSize)}` : ''),
    formatNumber(r.ratio),
    ...pairCells(r),
    formatNumber(r.unpairedRatio),
  ])
  return `### Reference ratios\n\nNot goals: figures to read them by, measured as the goals are (ratio = median of the paired ratios where pairs ran). ${PAIR_LEGEND}\n\n${formatTable(['reference', 'size', 'ratio', 'pairs: min–max', 'pair medians', 'unpaired'], rows, ['l', 'r', 'r', 'r', 'r', 'r'])}\n`
}
