/** Writes a run's JSON and one SVG chart per series group: timestamped files plus `latest*` copies. */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { unitLabel } from './format.js'
import type { RunReport } from './runner.js'
import { groupSeries } from './stats.js'
import { renderChart } from './svg.js'

/** File-name form of an ISO date: `2026-01-02T03-04-05.678Z`. */
export function fileStamp(iso: string): string {
  return iso.replace(/:/g, '-')
}

export function chartsOf(report: RunReport): { group: string; svg: string }[] {
  return groupSeries(report.series).map((g) => ({
    group: g.id,
    svg: renderChart({
      title: g.title,
      yLabel: unitLabel(g.unit),
      xLabel: g.xLabel ?? (g.kind === 'rate' ? 'allocation size, bytes (log₂ scale)' : 'size, bytes (log₂ scale)'),
      ...(g.sizeUnit !== undefined ? { sizeUnit: g.sizeUnit } : {}),
      series: g.series.map((s) => ({ title: s.title, points: s.points, dashed: s.placement === '1core' })),
    }),
  }))
}

/** Returns the paths written. */
export function writeResults(report: RunReport, dir: string): string[] {
  mkdirSync(dir, { recursive: true })
  const stamp = fileStamp(report.environment.date)
  const json = JSON.stringify(report, null, 2) + '\n'
  const files: string[] = []
  const write = (name: string, text: string): void => {
    const p = join(dir, name)
    writeFileSync(p, text)
    files.push(p)
  }
  write(`${stamp}.json`, json)
  write('latest.json', json)
  for (const { group, svg } of chartsOf(report)) {
    const safe = group.replace(/[^A-Za-z0-9._-]/g, '_')
    write(`${stamp}-${safe}.svg`, svg)
    write(`latest-${safe}.svg`, svg)
  }
  return files
}
