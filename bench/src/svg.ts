/**
 * Hand-written SVG line charts, no dependencies: log₂ x axis (size in bytes; size 0 sits one step
 * left of the smallest power of two, behind an axis break), log₁₀ y axis, one line per series
 * through the medians, a whisker per point for min–max, ticks, labels, legend.
 * The output depends only on the data (byte-stable), so result files diff cleanly.
 */
import { formatSize } from './format.js'
import type { SizeUnit } from './types.js'

export interface ChartSeries {
  title: string
  /** Draw the line dashed (e.g. the 1-core re-run of a series). */
  dashed?: boolean
  points: readonly { size: number; median: number; min: number; max: number }[]
}

export interface ChartOptions {
  title: string
  /** Y axis label, e.g. `µs`. */
  yLabel: string
  xLabel?: string
  /** What the x values count (default bytes). */
  sizeUnit?: SizeUnit
  series: readonly ChartSeries[]
  width?: number
}

const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22']
const DASH = '6 3'

export function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}

/** Short axis label: 1, 2, 5, 10, …, 1k, 10k, 1M, 1G; 0.5, 0.01 below one. */
export function axisNumber(v: number): string {
  const units: [number, string][] = [
    [1e12, 'T'],
    [1e9, 'G'],
    [1e6, 'M'],
    [1e3, 'k'],
  ]
  for (const [f, u] of units) if (v >= f) return `${+(v / f).toPrecision(3)}${u}`
  return `${+v.toPrecision(3)}`
}

const r1 = (v: number): string => (Math.round(v * 10) / 10).toString()

export function renderChart(opts: ChartOptions): string {
  const width = opts.width ?? 760
  const left = 72
  const right = 24
  const top = 44
  const plotW = width - left - right
  const plotH = 300
  const legendCols = 2
  const legendRows = Math.ceil(opts.series.length / legendCols)
  const height = top + plotH + 56 + legendRows * 20 + 12

  const pts = opts.series.flatMap((s) => s.points).filter((p) => p.size >= 0 && p.median > 0)
  const out: string[] = []
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="DejaVu Sans, Arial, Helvetica, sans-serif" font-size="12">`,
  )
  out.push(`<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`)
  out.push(`<text x="${width / 2}" y="24" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(opts.title)}</text>`)
  if (pts.length === 0) {
    out.push(`<text x="${width / 2}" y="${top + plotH / 2}" text-anchor="middle">no data</text>`)
    out.push('</svg>')
    return out.join('\n') + '\n'
  }

  // X: log2 of size, half a step of margin on each side. Size 0 (a Short message, a request
  // without payload) gets its own place one step left of the smallest power of two, behind an
  // axis break.
  const lx = pts.filter((p) => p.size > 0).map((p) => Math.log2(p.size))
  const hasZero = pts.some((p) => p.size === 0)
  const firstPow = lx.length > 0 ? Math.floor(Math.min(...lx)) : 1
  const zeroAt = firstPow - 1
  const x0 = (hasZero ? zeroAt : firstPow) - 0.5
  const x1 = (lx.length > 0 ? Math.ceil(Math.max(...lx)) : zeroAt) + 0.5
  const XL = (l: number): number => left + ((l - x0) / (x1 - x0)) * plotW
  const X = (size: number): number => XL(size === 0 ? zeroAt : Math.log2(size))
  // Y: log10, whole decades.
  const lows = pts.map((p) => (p.min > 0 ? p.min : p.median))
  const highs = pts.map((p) => Math.max(p.max, p.median))
  let d0 = Math.floor(Math.log10(Math.min(...lows)))
  let d1 = Math.ceil(Math.log10(Math.max(...highs)))
  if (d1 <= d0) d1 = d0 + 1
  if (!Number.isFinite(d0) || !Number.isFinite(d1)) {
    d0 = 0
    d1 = 1
  }
  const Y = (v: number): number => top + plotH - ((Math.log10(v) - d0) / (d1 - d0)) * plotH

  // Grid and y ticks: every decade, plus 2 and 5 when there are few decades.
  const decades = d1 - d0
  const yTicks: { v: number; major: boolean }[] = []
  for (let d = d0; d <= d1; d++) {
    yTicks.push({ v: 10 ** d, major: true })
    if (decades <= 4 && d < d1) for (const m of [2, 5]) yTicks.push({ v: m * 10 ** d, major: false })
  }
  for (const t of yTicks) {
    const y = r1(Y(t.v))
    out.push(`<line x1="${left}" y1="${y}" x2="${left + plotW}" y2="${y}" stroke="${t.major ? '#cccccc' : '#eeeeee'}" stroke-width="1"/>`)
    out.push(`<line x1="${left - 5}" y1="${y}" x2="${left}" y2="${y}" stroke="#000000"/>`)
    out.push(`<text x="${left - 8}" y="${r1(Y(t.v) + 4)}" text-anchor="end"${t.major ? '' : ' fill="#666666"'}>${axisNumber(t.v)}</text>`)
  }
  // X ticks: every power of two in range; labels thinned to about ten.
  const first = hasZero ? firstPow : Math.ceil(x0)
  const last = lx.length > 0 ? Math.floor(x1) : first - 1
  if (hasZero) {
    const x = r1(XL(zeroAt))
    out.push(`<line x1="${x}" y1="${top}" x2="${x}" y2="${top + plotH}" stroke="#dddddd" stroke-width="1"/>`)
    out.push(`<line x1="${x}" y1="${top + plotH}" x2="${x}" y2="${top + plotH + 6}" stroke="#000000"/>`)
    out.push(`<text x="${x}" y="${top + plotH + 20}" text-anchor="middle">0 B</text>`)
  }
  const labelEvery = Math.max(1, Math.ceil((last - first + 1) / 10))
  for (let e = first; e <= last; e++) {
    const x = r1(X(2 ** e))
    const labelled = e % labelEvery === 0
    out.push(`<line x1="${x}" y1="${top}" x2="${x}" y2="${top + plotH}" stroke="${labelled ? '#dddddd' : '#f2f2f2'}" stroke-width="1"/>`)
    out.push(`<line x1="${x}" y1="${top + plotH}" x2="${x}" y2="${top + plotH + (labelled ? 6 : 3)}" stroke="#000000"/>`)
    if (labelled) out.push(`<text x="${x}" y="${top + plotH + 20}" text-anchor="middle">${escapeXml(formatSize(2 ** e, opts.sizeUnit))}</text>`)
  }
  out.push(`<rect x="${left}" y="${top}" width="${plotW}" height="${plotH}" fill="none" stroke="#000000"/>`)
  if (hasZero && lx.length > 0) {
    // axis break between 0 and the first power of two
    const xb = XL(zeroAt + 0.5)
    const yb = top + plotH
    out.push(`<rect x="${r1(xb - 4)}" y="${yb - 1}" width="8" height="3" fill="#ffffff"/>`)
    for (const dx of [-4, 1]) {
      out.push(`<line x1="${r1(xb + dx - 2)}" y1="${yb + 5}" x2="${r1(xb + dx + 2)}" y2="${yb - 5}" stroke="#000000"/>`)
    }
  }
  out.push(`<text x="${left + plotW / 2}" y="${top + plotH + 40}" text-anchor="middle">${escapeXml(opts.xLabel ?? 'size (log₂ scale)')}</text>`)
  out.push(
    `<text x="16" y="${top + plotH / 2}" text-anchor="middle" transform="rotate(-90 16 ${top + plotH / 2})">${escapeXml(opts.yLabel)} (log scale)</text>`,
  )

  // Series: whiskers, line, markers.
  opts.series.forEach((s, i) => {
    const color = PALETTE[i % PALETTE.length]!
    const dash = s.dashed ? DASH : ''
    const ps = s.points.filter((p) => p.size >= 0 && p.median > 0)
    out.push(`<g stroke="${color}" fill="${color}">`)
    for (const p of ps) {
      if (p.min > 0 && p.max > p.min) {
        const x = r1(X(p.size))
        out.push(`<line x1="${x}" y1="${r1(Y(p.max))}" x2="${x}" y2="${r1(Y(p.min))}" stroke-width="1" opacity="0.6"/>`)
      }
    }
    if (ps.length > 1) {
      const path = ps.map((p) => `${r1(X(p.size))},${r1(Y(p.median))}`).join(' ')
      out.push(`<polyline points="${path}" fill="none" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ''}/>`)
    }
    for (const p of ps) out.push(`<circle cx="${r1(X(p.size))}" cy="${r1(Y(p.median))}" r="3"/>`)
    out.push('</g>')
  })

  // Legend below the axis label, two columns.
  const ly = top + plotH + 58
  const colW = plotW / legendCols
  opts.series.forEach((s, i) => {
    const color = PALETTE[i % PALETTE.length]!
    const dash = s.dashed ? DASH : ''
    const x = left + (i % legendCols) * colW
    const y = ly + Math.floor(i / legendCols) * 20
    out.push(`<line x1="${x}" y1="${y}" x2="${x + 28}" y2="${y}" stroke="${color}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ''}/>`)
    out.push(`<circle cx="${x + 14}" cy="${y}" r="3" fill="${color}"/>`)
    out.push(`<text x="${x + 36}" y="${y + 4}">${escapeXml(s.title)}</text>`)
  })
  out.push('</svg>')
  return out.join('\n') + '\n'
}
