#!/usr/bin/env node
// The goal tables of several `npm start` runs side by side, as markdown: one column per run, headed
// by the Node it ran on (`npm start` on each Node line writes bench/results/<date>.json).
//   node scripts/goals-side-by-side.mjs bench/results/A.json bench/results/B.json
import { readFileSync } from 'node:fs'

const files = process.argv.slice(2)
if (files.length === 0) {
  process.stderr.write('usage: node scripts/goals-side-by-side.mjs RESULTS.json …  (the JSON files npm start wrote in bench/results/)\n')
  process.exit(2)
}
const runs = files.map((f) => JSON.parse(readFileSync(f, 'utf8')))

/** A figure with 3 significant digits, or with thousands separators from 1000 up. */
const fig = (v) =>
  typeof v !== 'number' || !Number.isFinite(v) ? '–' : Math.abs(v) >= 1000 ? Math.round(v).toLocaleString('en-US') : Number(v.toPrecision(3)).toString()
const size = (g) => {
  const b = (n) => (n >= 1 << 20 ? `${n / (1 << 20)} MiB` : n >= 1024 ? `${n / 1024} KiB` : `${n} B`)
  if (typeof g.size !== 'number') return ''
  // (an application's goal: its size is a number of tasks)
  if (String(g.series).startsWith('pgas.apps'))
    return g.baselineSize !== undefined && g.baselineSize !== null && g.baselineSize !== g.size ? `${g.size} vs ${g.baselineSize} tasks` : `${g.size} tasks`
  if (g.baselineSize !== undefined && g.baselineSize !== null && g.baselineSize !== g.size) return `${b(g.size)} vs ${b(g.baselineSize)}`
  return b(g.size)
}

const key = (g) => `${g.name}\u0000${g.size}`
const rows = new Map()
for (const [i, r] of runs.entries()) {
  for (const g of r.goals ?? []) {
    const k = key(g)
    if (!rows.has(k)) rows.set(k, { g, cells: new Array(runs.length).fill('–') })
    rows.get(k).cells[i] = `${g.status ?? '?'} ${fig(g.ratio)}`
  }
}
const head = runs.map((r) => `Node ${String(r.environment?.node ?? '?').replace(/^v/, '')}`)
const out = [`| goal | size | target | ${head.join(' | ')} |`, `|---|---:|---|${head.map(() => '---:').join('|')}|`]
for (const { g, cells } of rows.values()) out.push(`| ${g.name} | ${size(g)} | ${g.op} ${fig(g.target)} | ${cells.join(' | ')} |`)
const tally = runs.map((r, i) => {
  const gs = r.goals ?? []
  return `${head[i]}: ${gs.filter((g) => g.status === 'PASS').length} PASS, ${gs.filter((g) => g.status === 'MISS').length} MISS`
})
process.stdout.write(`${out.join('\n')}\n\n${tally.join('; ')}\n`)
