/**
 * The reporter: everything the harness prints goes through here. Progress on stderr while it runs
 * (one `\r`-updated status line on a terminal outside CI, otherwise one line per finished
 * benchmark), then tables, goals and file names on stdout.
 */
import type { Writable } from 'node:stream'
import { formatEnvironment, formatExtrasTable, formatGoals, formatGroupTable, formatReferences, formatSize } from './format.js'
import type { RegistryEntry } from './registry.js'
import type { Emit, RunReport } from './runner.js'
import { groupSeries } from './stats.js'
import type { BenchmarkStatus, Placement } from './types.js'

const placementText = (p: Placement): string => (p === '1core' ? ' [1 core]' : '')

function statusLine(st: BenchmarkStatus): string {
  const mark = st.status === 'ok' ? 'ok  ' : st.status === 'skipped' ? 'skip' : 'FAIL'
  return `${mark} ${st.name}${placementText(st.placement)}  ${st.seconds.toFixed(1)} s${st.note ? `  (${st.note})` : ''}`
}

export interface Progress {
  emit: Emit
  /** Clear the status line. */
  finish(): void
}

/** `live`: redraw one status line (terminals); otherwise print a line per finished benchmark. */
export function createProgress(stream: Writable & { columns?: number }, live: boolean): Progress {
  const t0 = performance.now()
  let jobs = 0
  let done = 0
  let current = ''
  let lastDraw = 0
  let drawn = false
  const elapsed = (): string => `${((performance.now() - t0) / 1e3).toFixed(0)} s`
  const clear = (): void => {
    if (drawn) stream.write('\r\x1b[K')
    drawn = false
  }
  const draw = (text: string, force = false): void => {
    const now = performance.now()
    if (!force && now - lastDraw < 80) return
    lastDraw = now
    const cols = stream.columns !== undefined && stream.columns >= 40 ? stream.columns : 100
    const max = cols - 1
    const line = text.length > max ? text.slice(0, max - 1) + '…' : text
    stream.write(`\r\x1b[K${line}`)
    drawn = true
  }
  const emit: Emit = (e) => {
    switch (e.type) {
      case 'begin':
        jobs = e.jobs
        break
      case 'note':
        clear()
        stream.write(`note: ${e.text}\n`)
        break
      case 'bench-start':
        current = `[${done + 1}/${jobs}] ${e.name}${placementText(e.placement)}`
        if (live) draw(`${current}  starting  ${elapsed()}`, true)
        break
      case 'step':
        if (live) draw(`${current}  ${e.series.slice(e.name.length + 1)} ${formatSize(e.size)}  ${e.phase}  ${elapsed()}`)
        break
      case 'bench-end':
        done++
        if (live) clear()
        stream.write(`${statusLine(e.status)}\n`)
        break
    }
  }
  return { emit, finish: clear }
}

export function printReport(report: RunReport, files: readonly string[], out: Writable = process.stdout): void {
  const parts: string[] = []
  parts.push(`## Benchmarks\n\n${formatEnvironment(report.environment)}\n`)
  for (const g of groupSeries(report.series)) {
    parts.push(formatGroupTable(g, report.config.repeats))
    const extras = formatExtrasTable(g)
    if (extras) parts.push(extras)
  }
  if (report.goals.length > 0) parts.push(formatGoals(report.goals))
  if (report.references.length > 0) parts.push(formatReferences(report.references))
  const bad = report.benchmarks.filter((b) => b.status !== 'ok')
  if (bad.length > 0) parts.push(`### Not run or failed\n\n${bad.map((b) => `- ${statusLine(b)}`).join('\n')}\n`)
  parts.push(`Total ${report.seconds.toFixed(1)} s. Written:\n${files.map((f) => `  ${f}`).join('\n')}\n`)
  out.write(parts.join('\n'))
}

export async function printList(registry: readonly RegistryEntry[], out: Writable = process.stdout): Promise<void> {
  const lines: string[] = []
  for (const e of registry) {
    try {
      const b = (await e.load()).default
      const pl = (b.placements ?? ['all']).join(', ')
      lines.push(`${e.name}  [${pl}]  ${b.description}`)
      for (const s of b.series) lines.push(`    ${s.id}  (${s.kind}, ${s.unit}, group ${s.group})`)
    } catch (err) {
      lines.push(`${e.name}  (cannot load: ${(err as Error).message})`)
    }
  }
  out.write(lines.join('\n') + '\n')
}

export function printError(message: string): void {
  process.stderr.write(`bench: ${message}\n`)
}

export function printUsage(out: Writable = process.stdout): void {
  out.write(`Usage: node bench/dist/main.js [options]

  --quick           tiny budgets, 2 repeats, few sizes (smoke runs and tests; a few seconds)
  --repeats N       samples per size (default 5)
  --budget-ms N     target duration of one sample in ms (default 50)
  --filter REGEX    only benchmarks whose name matches (plus those they compare with)
  --no-deps         do not add the benchmarks that the selected ones compare with
  --no-pairs        skip the interleaved goal check (each goal's series and baseline run back to back)
  --out DIR         where the JSON and SVG files go (default bench/results)
  --no-1core        skip the re-runs with the whole process on one CPU
  --strict-goals    exit with status 1 when a goal is missed
  --list            list the benchmarks and their series
  --help            this text
`)
}
