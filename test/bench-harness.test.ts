/**
 * The benchmark harness (bench/): `--quick` smoke runs of the real CLI (one of everything but the
 * network benchmarks, and one of those on two cores without the paired goal checks: `npm run
 * test:full` only, a minute and a half of processes), and unit tests of its pure parts (statistics,
 * ratios, goals, tables, SVG), in the README's suite. Runs against the build in bench/dist.
 */
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { formatGoals, formatGroupTable, formatNumber, formatReferences, formatSize, formatTable } from '../bench/dist/format.js'
import { registry } from '../bench/dist/registry.js'
import { calibrate, checked, defaultConfig, QUICK_SIZES, runPlacement, selectBenchmarks, validateBenchmark } from '../bench/dist/runner.js'
import { warmUp } from '../bench/dist/lib/net-job.js'
import type { RegistryEntry } from '../bench/dist/registry.js'
import { computeRatios, evaluateGoal, evaluateReference, groupSeries, median, ratio, summarize, toValue } from '../bench/dist/stats.js'
import { renderChart } from '../bench/dist/svg.js'
import type { Benchmark, Goal, Reference, SeriesResult } from '../bench/dist/types.js'
import { FULL } from './helpers/tier.js'

const MAIN = fileURLToPath(new URL('../bench/dist/main.js', import.meta.url))

function series(id: string, unit: SeriesResult['unit'], medians: Record<number, number>, group = 'g'): SeriesResult {
  const kind = unit === 'us' ? 'latency' : unit === 'ops/s' ? 'rate' : 'bandwidth'
  return {
    id,
    title: id,
    kind,
    unit,
    group,
    benchmark: id.split('.').slice(0, -1).join('.'),
    placement: 'all',
    points: Object.entries(medians).map(([size, m]) => ({
      size: Number(size),
      samples: [m],
      median: m,
      min: m,
      max: m,
      iterations: 1,
    })),
    ratios: [],
  }
}

describe.runIf(FULL)('bench --quick (the real CLI)', () => {
  let dir = ''
  let code: number | null = null
  let stdout = ''
  let stderr = ''
  let report: any

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'amlapi-bench-'))
    await new Promise<void>((resolve) => {
      const child = execFile(
        process.execPath,
        // (the network and application benchmarks start processes and take most of a whole run: the next describe runs them apart, lighter)
        [MAIN, '--quick', '--filter', '^(baseline|bufmgr|lapi|am2|pgas$)', '--out', dir],
        { timeout: 100_000, maxBuffer: 16 << 20, env: { ...process.env, CI: '1' } },
        (_err, out, errOut) => {
          stdout = out
          stderr = errOut
          resolve()
        },
      )
      child.on('exit', (c) => {
        code = c
      })
    })
    const latest = join(dir, 'latest.json')
    if (existsSync(latest)) report = JSON.parse(readFileSync(latest, 'utf8'))
  }, 120_000)

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('exits 0 and prints tables and goals', () => {
    expect(code, stderr).toBe(0)
    expect(stdout).toContain('### Round-trip latency')
    expect(stdout.split('\n')[0]).toBe(`amlapi benchmarks on Node ${process.version} (V8 ${process.versions.v8}), ${process.platform}-${process.arch}`)
    expect(stdout).toContain('### Goals')
    expect(stdout).toMatch(/\| size +\|/)
    // not a TTY here: one progress line per finished benchmark
    expect(stderr).toMatch(/^(ok|skip) +baseline\.sab-spin/m)
    expect(stderr).toMatch(/^ok +bufmgr\.alloc-free/m)
  })

  it('writes a timestamped JSON and latest.json with the environment', () => {
    const files = readdirSync(dir)
    expect(files).toContain('latest.json')
    expect(files.some((f) => /^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z\.json$/.test(f))).toBe(true)
    const env = report.environment
    for (const k of ['node', 'v8', 'cpuModel', 'cores', 'cpusAllowed', 'pinning', 'os', 'date', 'jit']) {
      expect(env[k], k).toBeTruthy()
    }
    expect(env.node).toBe(process.version)
    expect(env.v8).toBe(process.versions.v8)
    expect(env.jit).toEqual(process.env['AMLAPI_JIT'] === 'tuned' ? expect.stringMatching(/^raised \(--max-inlined/) : "node's")
    expect('taskset' in env).toBe(true)
    expect(env).not.toHaveProperty('hostname')
    if (hostname().length >= 6) expect(JSON.stringify(report)).not.toContain(hostname())
    expect(['ran', 'skipped', 'none']).toContain(env.oneCore.status)
    expect(report.config.repeats).toBe(2)
    expect(report.benchmarks.every((b: any) => b.status !== 'error')).toBe(true)
  })

  it('has every baseline series, with a median > 0 at each size', () => {
    const byId = new Map<string, any>(report.series.map((s: any) => [s.id, s]))
    const want: [string, readonly number[]][] = [
      ['baseline.msgport.rtt', QUICK_SIZES.message],
      ['baseline.msgport.bw', QUICK_SIZES.message],
      ['baseline.sab-wait.rtt', QUICK_SIZES.message],
      ['baseline.sab-wait.bw', QUICK_SIZES.message],
      ['baseline.memcpy.set-to-sab', QUICK_SIZES.copy],
    ]
    if (report.environment.cpusAllowedCount >= 2) {
      want.push(['baseline.sab-spin.rtt', QUICK_SIZES.message], ['baseline.sab-spin.bw', QUICK_SIZES.message], ['baseline.sab-am.rtt', [8, 16, 32]])
      // the bare-thread floor of the pgas broadcast and all-to-all, and the pgas series' ratios to it
      for (const id of ['bcast-2', 'bcast-4', 'alltoall-2', 'alltoall-4']) want.push([`baseline.threads.${id}`, [65536, 1048576]])
      expect(byId.get('pgas.bcast-bw-4')?.ratios.map((r: any) => r.series)).toContain('baseline.threads.bcast-4')
    }
    if (report.environment.oneCore.status === 'ran') {
      want.push(
        ['baseline.msgport.rtt@1core', QUICK_SIZES.message],
        ['baseline.sab-wait.rtt@1core', QUICK_SIZES.message],
        ['baseline.sab-wait.bw@1core', QUICK_SIZES.message],
      )
    } else {
      expect(report.environment.oneCore.note).toMatch(/skipped/)
    }
    for (const [id, sizes] of want) {
      const s = byId.get(id)
      expect(s, id).toBeDefined()
      expect(
        s.points.map((p: any) => p.size),
        id,
      ).toEqual([...sizes])
      for (const p of s.points) {
        expect(p.median, `${id} @ ${p.size}`).toBeGreaterThan(0)
        expect(p.samples).toHaveLength(2)
        expect(p.min).toBeLessThanOrEqual(p.median)
        expect(p.max).toBeGreaterThanOrEqual(p.median)
      }
    }
    const msg = byId.get('baseline.msgport.rtt')
    expect(msg.ratios[0].series).toBe('baseline.sab-spin.rtt')
    // the minimal active message: a round trip only, compared with the ring, and the floor that the
    // Amsend and AM-2 Short round trips are compared with
    expect(byId.has('baseline.sab-am.bw')).toBe(false)
    if (report.environment.cpusAllowedCount >= 2) {
      expect(byId.get('baseline.sab-am.rtt').ratios[0].series).toBe('baseline.sab-spin.rtt')
      for (const id of ['lapi.am.hdr-rtt', 'am2.short-rtt']) {
        const s = byId.get(id)
        if (s !== undefined)
          expect(
            s.ratios.map((r: any) => r.series),
            id,
          ).toContain('baseline.sab-am.rtt')
      }
      // and the reference ratios, paired as the goals are (3 pairs with --quick)
      expect(report.references.map((r: any) => [r.series, r.baseline])).toEqual([
        ['baseline.sab-am.rtt', 'baseline.sab-spin.rtt'],
        ['lapi.am.hdr-rtt', 'baseline.sab-am.rtt'],
        ['am2.short-rtt', 'baseline.sab-am.rtt'],
      ])
      for (const r of report.references) {
        expect(r.ratio, r.name).toBeGreaterThan(0)
        expect(r.paired?.ratios, r.name).toHaveLength(3)
        expect(r).not.toHaveProperty('status')
      }
      expect(stdout).toContain('### Reference ratios')
    } else {
      for (const r of report.references) expect(r.ratio, r.name).toBeNull()
    }
  })

  it('has the bufmgr series with garbage figures, and the goals', () => {
    const ids = ['bufmgr.alloc-free.bufmgr', 'bufmgr.alloc-free.uint8array', 'bufmgr.alloc-free.buffer']
    for (const id of ids) {
      const s = report.series.find((x: any) => x.id === id)
      expect(s, id).toBeDefined()
      expect(s.unit).toBe('ops/s')
      expect(s.points.map((p: any) => p.size)).toEqual([...QUICK_SIZES.alloc])
      for (const p of s.points) {
        expect(p.median).toBeGreaterThan(0)
        expect(typeof p.extra['heap B/op']).toBe('number')
        expect(typeof p.extra['GCs/1M ops']).toBe('number')
      }
    }
    const goals = report.goals.filter((g: any) => g.series === 'bufmgr.alloc-free.bufmgr')
    expect(goals.length).toBe(9)
    for (const g of goals) {
      expect(g.baseline).toBe('bufmgr.alloc-free.uint8array')
      expect(g.op).toBe('>=')
      expect(g.target).toBe(5)
      expect(g.size).toBeLessThanOrEqual(4096)
      const measured = QUICK_SIZES.alloc.includes(g.size)
      expect(g.status).toBe(measured ? (g.ratio >= 5 ? 'PASS' : 'MISS') : 'n/a')
    }
  })

  it('has the am2 series (Short, Medium, Long round trips, rate, bandwidth) and its four goals', () => {
    const am2 = report.benchmarks.find((b: any) => b.name === 'am2')
    expect(am2, 'am2 ran or was skipped').toBeDefined()
    if (report.environment.cpusAllowedCount < 2) {
      expect(am2.status).toBe('skipped')
      return
    }
    expect(am2.status, am2.note).toBe('ok')
    const want: [string, readonly number[], string][] = [
      ['am2.short-rtt', QUICK_SIZES['am2-short'], 'us'],
      ['am2.medium-rtt', QUICK_SIZES.am2, 'us'],
      ['am2.long-rtt', QUICK_SIZES.am2, 'us'],
      ['am2.rate', QUICK_SIZES['am2-short'], 'ops/s'],
      ['am2.long-bw', QUICK_SIZES['am2-bw'], 'MB/s'],
      ['am2.medium-bw', QUICK_SIZES['am2-bw'], 'MB/s'],
    ]
    for (const [id, sizes, unit] of want) {
      const s = report.series.find((x: any) => x.id === id)
      expect(s, id).toBeDefined()
      expect(s.unit, id).toBe(unit)
      expect(
        s.points.map((p: any) => p.size),
        id,
      ).toEqual([...sizes])
      for (const p of s.points) expect(p.median, `${id} @ ${p.size}`).toBeGreaterThan(0)
    }
    // the packing boundary is in the quick sizes too, so every goal is measured
    expect(QUICK_SIZES.am2).toEqual(expect.arrayContaining([992, 993]))
    const goals = report.goals.filter((g: any) => g.series.startsWith('am2.'))
    expect(goals.map((g: any) => [g.series, g.size, g.baseline ?? null, g.baselineSize ?? null])).toEqual([
      ['am2.short-rtt', 0, 'baseline.sab-spin.rtt', 8],
      ['am2.medium-rtt', 993, 'am2.medium-rtt', 992],
      ['am2.rate', 0, null, null],
      ['am2.long-bw', 1 << 20, 'baseline.memcpy.set-to-sab', null],
    ])
    for (const g of goals) expect(['PASS', 'MISS'], g.name).toContain(g.status)
    // the goals with a baseline went through the interleaved check (3 pairs with --quick)
    for (const g of [goals[0], goals[1]]) {
      expect(g.paired.ratios.length, g.name).toBe(3)
      expect(g.ratio).toBe(median(g.paired.ratios))
    }
    // an absolute goal is decided on runs of its series alone (3 with --quick), the main repeats'
    // median kept beside them; a two-thread bandwidth against a one-thread copy (pair: false) is not checked
    const rate = report.series.find((x: any) => x.id === 'am2.rate')
    expect(goals[2].paired.ratios.length).toBe(3)
    for (const v of goals[2].paired.ratios) expect(v).toBeGreaterThan(0)
    expect(goals[2].ratio).toBe(median(goals[2].paired.ratios))
    expect(goals[2].unpairedRatio).toBe(rate.points.find((p: any) => p.size === 0).median)
    expect(goals[3].paired).toBeUndefined()
    expect(goals[3].ratio).toBe(goals[3].unpairedRatio)
    expect(existsSync(join(dir, 'latest-am2-rtt.svg'))).toBe(true)
    expect(readFileSync(join(dir, 'latest-am2-rtt.svg'), 'utf8')).toContain('>0 B</text>')
  })

  it('writes an SVG per series group', () => {
    for (const group of ['rtt', 'bandwidth', 'memcpy', 'bufmgr']) {
      for (const name of [`latest-${group}.svg`]) {
        const p = join(dir, name)
        expect(existsSync(p), name).toBe(true)
        const svg = readFileSync(p, 'utf8')
        expect(svg.startsWith('<svg')).toBe(true)
        expect(svg.trimEnd().endsWith('</svg>')).toBe(true)
      }
      expect(readdirSync(dir).some((f) => f.endsWith(`Z-${group}.svg`))).toBe(true)
    }
  })
})

describe('bench --quick, the network and application benchmarks (two cores, goals unpaired)', () => {
  it.runIf(FULL)(
    'runs net, net.udp and pgas.apps: every series measured, every goal judged',
    async () => {
      const out = mkdtempSync(join(tmpdir(), 'amlapi-bench-net-'))
      try {
        const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
          const child = execFile(
            process.execPath,
            [MAIN, '--quick', '--filter', '^(net|pgas\\.apps)', '--no-1core', '--no-pairs', '--out', out],
            { timeout: 200_000, maxBuffer: 16 << 20, env: { ...process.env, CI: '1' } },
            (_err, _out, errOut) => resolve({ code: child.exitCode, stderr: errOut }),
          )
        })
        expect(r.code, r.stderr).toBe(0)
        const rep = JSON.parse(readFileSync(join(out, 'latest.json'), 'utf8'))
        expect(rep.benchmarks.filter((b: any) => b.name.startsWith('net')).map((b: any) => [b.name, b.status])).toEqual([
          ['net', 'ok'],
          ['net.udp', 'ok'],
          ['net', 'skipped'],
        ])
        const ids = new Set(rep.series.map((x: any) => x.id))
        for (const id of [
          'net.poll.rtt',
          'net.am2.short-rtt',
          'net.stream.bw',
          'net.udp.poll.rtt',
          'net.udp.am2.short-rtt',
          'net.udp.am2.rate',
          'net.udp.am2.rate-drop',
          'net.udp.am2.long-bw-mac',
        ])
          expect(ids.has(id), id).toBe(true)
        for (const x of rep.series.filter((x: any) => x.id.startsWith('net')))
          for (const p of x.points) expect(p.median, `${x.id} @ ${p.size}`).toBeGreaterThan(0)
        // the applications: one whole run a point (--quick), each verified, sizes in tasks
        expect(rep.benchmarks.find((b: any) => b.name === 'pgas.apps')?.status).toBe('ok')
        const apps = rep.series.filter((x: any) => x.benchmark === 'pgas.apps')
        expect(apps.map((x: any) => [x.id, x.points.map((p: any) => p.size)])).toEqual([
          ['pgas.apps.is', [1, 2, 4]],
          ['pgas.apps.is-tcp', [2]],
          ['pgas.apps.is-udp', [2]],
          ['pgas.apps.cg', [1, 2, 4]],
          ['pgas.apps.cg-tcp', [2]],
          ['pgas.apps.cg-udp', [2]],
          ['pgas.apps.gups', [1, 2, 4]],
          ['pgas.apps.gups-tcp', [2]],
          ['pgas.apps.gups-udp', [2]],
          ['pgas.apps.jacobi', [1, 2]],
          ['pgas.apps.jacobi-js', [1, 2]],
          ['pgas.apps.dht', [1, 2, 4]],
          ['pgas.apps.dht-atomic', [1, 2, 4]],
          ['pgas.apps.dht-tcp', [2]],
          ['pgas.apps.dht-udp', [2]],
          ['pgas.apps.dht-atomic-tcp', [2]],
        ])
        for (const x of apps)
          for (const p of x.points) {
            expect(p.samples, x.id).toHaveLength(1)
            expect(p.median, x.id).toBeGreaterThan(0)
          }
        const appGoals = rep.goals.filter((g: any) => g.series.startsWith('pgas.apps'))
        expect(appGoals.map((g: any) => g.sizeUnit)).toEqual(['tasks', 'tasks', 'tasks', 'tasks'])
        for (const g of appGoals) expect(['PASS', 'MISS'], g.name).toContain(g.status)
        const goals = rep.goals.filter((g: any) => g.series.startsWith('net'))
        expect(goals.length).toBeGreaterThanOrEqual(10)
        // (the one-core goals are not measured: no such placement here)
        for (const g of goals) expect(g.name.startsWith('one core') ? ['n/a'] : ['PASS', 'MISS'], g.name).toContain(g.status)
      } finally {
        rmSync(out, { recursive: true, force: true })
      }
    },
    220_000,
  )
})

describe('statistics', () => {
  it('median and min–max over repeats', () => {
    expect(summarize([3, 1, 2])).toEqual({ median: 2, min: 1, max: 3 })
    expect(summarize([4, 1, 3, 2])).toEqual({ median: 2.5, min: 1, max: 4 })
    expect(median([7])).toBe(7)
    expect(() => summarize([])).toThrow(RangeError)
  })

  it('turns time and iterations into the series unit', () => {
    expect(toValue('latency', 'us', 8, 1000, 0.001)).toBeCloseTo(1)
    expect(toValue('bandwidth', 'MB/s', 1_000_000, 1000, 1)).toBeCloseTo(1000)
    expect(toValue('bandwidth', 'GB/s', 1_000_000, 1000, 1)).toBeCloseTo(1)
    expect(toValue('rate', 'ops/s', 16, 5000, 0.5)).toBeCloseTo(10_000)
  })

  it('computes unit-normalised ratios, null when not comparable', () => {
    expect(ratio(8000, 'MB/s', 16, 'GB/s')).toBeCloseTo(0.5)
    expect(ratio(3, 'us', 1.5, 'us')).toBeCloseTo(2)
    expect(ratio(3, 'us', 1.5, 'MB/s')).toBeNull()
    expect(ratio(undefined, 'us', 1, 'us')).toBeNull()
    expect(ratio(1, 'us', 0, 'us')).toBeNull()
  })

  it('ratio columns from medians, per size, with a fixed baseline size', () => {
    const ours = series('x.put.rtt', 'us', { 8: 4, 64: 6, 128: 9 })
    const base = series('baseline.sab-spin.rtt', 'us', { 8: 2, 64: 3 })
    const all = new Map([ours, base].map((s) => [s.id, s] as const))
    const [col] = computeRatios(ours, [{ series: base.id, label: '÷ SAB spin' }], all)
    expect(col!.values).toEqual([
      { size: 8, ratio: 2 },
      { size: 64, ratio: 2 },
      { size: 128, ratio: null },
    ])
    const [fixed] = computeRatios(ours, [{ series: base.id, label: '÷ 8 B', baselineSize: 8 }], all)
    expect(fixed!.values.map((v) => v.ratio)).toEqual([2, 3, 4.5])
    const [absent] = computeRatios(ours, [{ series: 'nope.rtt', label: '÷ nope' }], all)
    expect(absent!.values.every((v) => v.ratio === null)).toBe(true)
  })

  it('evaluates goals: PASS, MISS, n/a, both operators, baselineSize', () => {
    const ours = series('bufmgr.alloc-free.bufmgr', 'ops/s', { 16: 50e6, 4096: 20e6 })
    const base = series('bufmgr.alloc-free.uint8array', 'ops/s', { 16: 5e6, 4096: 5e6 })
    const lat = series('x.put.rtt', 'us', { 8: 3 })
    const spin = series('baseline.sab-spin.rtt', 'us', { 8: 1 })
    const all = new Map([ours, base, lat, spin].map((s) => [s.id, s] as const))
    const g = (size: number, target: number): Goal => ({
      name: 'g',
      series: ours.id,
      size,
      baseline: base.id,
      op: '>=',
      target,
    })
    expect(evaluateGoal(g(16, 5), all)).toMatchObject({ status: 'PASS', ratio: 10 })
    expect(evaluateGoal(g(4096, 5), all)).toMatchObject({ status: 'MISS', ratio: 4 })
    expect(evaluateGoal(g(256, 5), all)).toMatchObject({ status: 'n/a', ratio: null })
    const le: Goal = { name: 'rtt', series: lat.id, size: 8, baseline: spin.id, op: '<=', target: 4 }
    expect(evaluateGoal(le, all).status).toBe('PASS')
    expect(evaluateGoal({ ...le, target: 2 }, all).status).toBe('MISS')
    const cross: Goal = { ...g(4096, 2), baselineSize: 16 }
    expect(evaluateGoal(cross, all)).toMatchObject({ status: 'PASS', ratio: 4 })
  })

  it('decides a goal on the median of its paired ratios when pairs ran, and keeps the unpaired ratio', () => {
    const lat = series('x.put.rtt', 'us', { 8: 3 })
    const spin = series('baseline.sab-spin.rtt', 'us', { 8: 1 })
    const all = new Map([lat, spin].map((s) => [s.id, s] as const))
    const le: Goal = { name: 'rtt', series: lat.id, size: 8, baseline: spin.id, op: '<=', target: 1 }
    expect(evaluateGoal(le, all)).toMatchObject({ status: 'MISS', ratio: 3, unpairedRatio: 3 })
    const r = evaluateGoal(le, all, { ratios: [0.9, 40, 0.8, 0.95, 1.1] })
    expect(r).toMatchObject({ status: 'PASS', ratio: 0.95, unpairedRatio: 3, paired: { ratio: 0.95, ratios: [0.9, 40, 0.8, 0.95, 1.1] } })
    expect(evaluateGoal(le, all, { ratios: [] }).paired).toBeUndefined()
    const table = formatGoals([r])
    expect(table).toContain('| PASS ')
    expect(table).toContain('5: 0.800–40.0')
    expect(table).toContain('pair medians')
    // (pairs given without their values: no medians to show)
    expect(table).toMatch(/5: 0\.800–40\.0 \| +– \|/)
    expect(table).toContain('3.00')
  })

  it('evaluates a reference ratio like a goal, without a status, and prints it in its own table', () => {
    const lat = series('x.put.rtt', 'us', { 8: 3 })
    const spin = series('baseline.sab-spin.rtt', 'us', { 8: 1.5 })
    const all = new Map([lat, spin].map((s) => [s.id, s] as const))
    const ref: Reference = { name: 'put ÷ ring', series: lat.id, size: 8, baseline: spin.id }
    expect(evaluateReference(ref, all)).toEqual({ ...ref, ratio: 2, unpairedRatio: 2 })
    const r = evaluateReference(ref, all, {
      ratios: [2.5, 1.5, 3],
      values: [
        [2.5, 1],
        [1.5, 1],
        [3, 1],
      ],
    })
    expect(r).toMatchObject({ ratio: 2.5, unpairedRatio: 2, paired: { ratio: 2.5, ratios: [2.5, 1.5, 3] } })
    expect(r).not.toHaveProperty('status')
    expect(evaluateReference({ ...ref, baseline: 'nope.rtt' }, all)).toMatchObject({ ratio: null, unpairedRatio: null })
    const table = formatReferences([r])
    expect(table).toMatch(/^### Reference ratios/)
    expect(table).toContain('| put ÷ ring ')
    expect(table).toContain('3: 1.50–3.00')
    // the medians of the pairs' own values, series / baseline
    expect(table).toContain(' 2.50 / 1.00 |')
    expect(table).not.toMatch(/PASS|MISS/)
  })

  it('evaluates absolute goals (no baseline): the median itself against the target', () => {
    const rate = series('am2.rate', 'ops/s', { 0: 600_000, 4: 400_000 })
    const all = new Map([[rate.id, rate] as const])
    const g: Goal = { name: 'rate', series: rate.id, size: 0, op: '>=', target: 500_000 }
    expect(evaluateGoal(g, all)).toMatchObject({ status: 'PASS', ratio: 600_000 })
    expect(evaluateGoal({ ...g, size: 4 }, all)).toMatchObject({ status: 'MISS', ratio: 400_000 })
    expect(evaluateGoal({ ...g, size: 64 }, all)).toMatchObject({ status: 'n/a', ratio: null })
    expect(evaluateGoal({ ...g, series: 'nope.rate' }, all).status).toBe('n/a')
  })

  it('checks goals again after the main repeats: paired, or alone without a baseline, but not whole application runs', () => {
    const bench: Benchmark = {
      name: 'fake.check',
      description: 'a rate and a whole-run series',
      series: [
        { id: 'fake.check.rate', title: 'rate', kind: 'rate', unit: 'ops/s', group: 'fake', sizes: [0] },
        { id: 'fake.check.app', title: 'app', kind: 'latency', unit: 'us', group: 'fake', sizes: [2], sizeUnit: 'tasks', wholeRuns: true },
      ],
      async open() {
        return {
          async run() {
            return 1
          },
          async close() {},
        }
      },
    }
    const entry: RegistryEntry = { name: 'fake.check', load: async () => ({ default: bench }) }
    const entries = [entry]
    const loaded = new Map([[entry, bench] as const])
    const goal = { name: 'g', series: 'fake.check.rate', size: 0 }
    expect(checked(goal, entries, loaded)).toBe(true)
    expect(checked({ ...goal, pair: false }, entries, loaded)).toBe(false)
    expect(checked({ ...goal, series: 'fake.check.app', size: 2 }, entries, loaded)).toBe(false)
    expect(checked({ ...goal, baseline: 'fake.check.rate', baselineSize: 4 }, entries, loaded)).toBe(true)
    expect(checked({ ...goal, baseline: 'other.rate' }, entries, loaded)).toBe(false)
    expect(checked({ ...goal, series: 'other.rate' }, entries, loaded)).toBe(false)
  })

  it('warms up for at least the time given, and on while the rate climbs, at most the longest time', async () => {
    const runs: number[] = []
    // a rate that doubles run by run (code being compiled) until the 5th run, then holds
    const climbing = async (n: number): Promise<number> => {
      runs.push(n)
      return n / (1e5 * 2 ** Math.min(runs.length - 1, 4))
    }
    await warmUp({ n: 16 }, 0, climbing, 100)
    expect(runs.length).toBe(6)
    runs.length = 0
    await warmUp(
      { n: 16 },
      0,
      async (n) => {
        runs.push(n)
        return n / 1e5
      },
      100,
    )
    expect(runs.length).toBe(2) // the second run did not beat the first
    runs.length = 0
    await warmUp({ n: 16 }, 0, climbing, 0.0005)
    expect(runs.length).toBeLessThan(6) // the longest time ends it
    runs.length = 0
    // the count doubles until a run takes 0.1 s, then holds
    await warmUp(
      { n: 1 },
      1,
      async (n) => {
        runs.push(n)
        return Math.min(n, 1 << 14) * 1e-5
      },
      1,
    )
    expect(Math.max(...runs)).toBe(1 << 14)
  })

  it('groups series in order of first appearance', () => {
    const a = series('a.x.rtt', 'us', { 8: 1 }, 'rtt')
    const b = series('a.x.bw', 'MB/s', { 8: 1 }, 'bw')
    const c = series('b.y.rtt', 'us', { 8: 1 }, 'rtt')
    const groups = groupSeries([a, b, c])
    expect(groups.map((g) => g.id)).toEqual(['rtt', 'bw'])
    expect(groups[0]!.series.map((s) => s.id)).toEqual(['a.x.rtt', 'b.y.rtt'])
  })

  it('calibrates the iteration count to the time budget', async () => {
    const calls: number[] = []
    const n = await calibrate((k) => {
      calls.push(k)
      return k * 1e-6 // 1 µs per operation
    }, 0.05)
    expect(n).toBeGreaterThan(45_000)
    expect(n).toBeLessThan(55_000)
    expect(calls[calls.length - 1]).toBe(n) // the warm-up run at the final count
  })

  it('scales the count again when the warm-up ran much faster than the calibration (code optimized late)', async () => {
    const calls: number[] = []
    let fast = false
    const n = await calibrate((k) => {
      calls.push(k)
      const t = k * (fast ? 1e-6 : 20e-6)
      if (k >= 500) fast = true // from here on the "optimized" speed
      return t
    }, 0.05)
    expect(n).toBeGreaterThan(45_000)
    expect(n).toBeLessThan(55_000)
    expect(calls[calls.length - 1]).toBe(n)
  })

  it('adds the benchmarks a selection compares with', async () => {
    const { entries, added } = await selectBenchmarks(registry, { filter: 'msgport', deps: true })
    // msgport compares with sab-spin, whose bandwidth compares with memcpy
    expect(entries.map((e) => e.name)).toEqual(['baseline.memcpy', 'baseline.sab-spin', 'baseline.msgport'])
    expect(added).toEqual(['baseline.sab-spin', 'baseline.memcpy'])
    const alone = await selectBenchmarks(registry, { filter: 'msgport', deps: false })
    expect(alone.entries.map((e) => e.name)).toEqual(['baseline.msgport'])
  })

  it('the scaling benchmarks need 8 CPUs; their points count tasks, each beside its smallest', async () => {
    const { entries } = await selectBenchmarks(registry, { filter: '^pgas\\.scaling', deps: true })
    expect(entries.map((e) => e.name)).toEqual(['pgas.scaling', 'pgas.scaling.apps', 'pgas.scaling.procs'])
    for (const e of entries) {
      const b = (await e.load()).default
      expect(validateBenchmark(b)).toBeNull()
      expect(b.minCpus).toBe(8)
      for (const s of b.series) {
        expect(s.sizeUnit).toBe('tasks')
        const sizes = s.sizes as readonly number[]
        expect(Math.max(...sizes)).toBeLessThanOrEqual(s.id.endsWith('-x4') ? 64 : 16)
        expect(s.compareTo).toEqual([expect.objectContaining({ series: s.id, baselineSize: sizes[0] })])
      }
    }
    // on fewer CPUs each is skipped, saying why
    const out = await runPlacement(entries, 'all', { ...defaultConfig(true), repeats: 1 }, '0-3', () => {})
    expect(out.series).toEqual([])
    expect(out.statuses.map((st) => [st.status, st.note])).toEqual(entries.map(() => ['skipped', 'needs 8 CPUs, 4 allowed']))
  })

  it('a benchmark whose series fails keeps the series it measured before', async () => {
    const bench: Benchmark = {
      name: 'fake.partial',
      description: 'a first series that works, a second that throws',
      series: [
        { id: 'fake.partial.ok', title: 'ok', kind: 'latency', unit: 'us', group: 'fake', sizes: [1, 2], sizeUnit: 'tasks', wholeRuns: true },
        { id: 'fake.partial.bad', title: 'bad', kind: 'latency', unit: 'us', group: 'fake', sizes: [1], sizeUnit: 'tasks', wholeRuns: true },
      ],
      open: () => ({
        run: async (series, size, iterations) => {
          if (series === 'fake.partial.bad') throw new Error('it broke')
          return size * iterations * 1e-6
        },
        close() {},
      }),
    }
    const entry: RegistryEntry = { name: 'fake.partial', load: async () => ({ default: bench }) }
    const out = await runPlacement([entry], 'all', { ...defaultConfig(true), repeats: 1 }, '0', () => {})
    expect(out.statuses).toEqual([expect.objectContaining({ name: 'fake.partial', status: 'error', note: 'it broke' })])
    expect(out.series.map((s) => s.id)).toEqual(['fake.partial.ok'])
    expect(out.series[0]!.points.map((p) => p.median)).toEqual([1, 2])
  })

  it('--filter am2 selects the AM-2 benchmark and the baselines it compares with', async () => {
    const { entries, added } = await selectBenchmarks(registry, { filter: 'am2', deps: true })
    expect(entries.map((e) => e.name)).toEqual(['baseline.memcpy', 'baseline.sab-spin', 'baseline.sab-am', 'am2'])
    expect(added.sort()).toEqual(['baseline.memcpy', 'baseline.sab-am', 'baseline.sab-spin'])
    const bench = (await registry.find((e) => e.name === 'am2')!.load()).default
    expect(bench.series.map((s) => s.id)).toEqual(['am2.short-rtt', 'am2.medium-rtt', 'am2.long-rtt', 'am2.rate', 'am2.long-bw', 'am2.medium-bw'])
    expect(bench.goals).toHaveLength(4)
    expect(bench.references?.map((r) => r.baseline)).toEqual(['baseline.sab-am.rtt'])
    // the full sizes straddle the packed fast path (32 B header + 992 B ≤ MAX_UHDR_SZ 1024)
    const { FULL_SIZES } = await import('../bench/dist/runner.js')
    expect(FULL_SIZES.am2).toEqual(expect.arrayContaining([0, 992, 993, 65536]))
  })
})

describe('tables', () => {
  it('formats numbers and sizes', () => {
    expect(formatNumber(84.83)).toBe('84.8')
    expect(formatNumber(1.6234)).toBe('1.62')
    expect(formatNumber(0.03712)).toBe('0.0371')
    expect(formatNumber(1031.4)).toBe('1031')
    expect(formatNumber(25_123_456)).toBe('25.1M')
    expect(formatNumber(0)).toBe('0')
    expect(formatNumber(null)).toBe('–')
    expect(formatSize(8)).toBe('8 B')
    expect(formatSize(4096)).toBe('4 KiB')
    expect(formatSize(1 << 20)).toBe('1 MiB')
    expect(formatSize(1536)).toBe('1.5 KiB')
  })

  it('pads a fixed-width, Markdown-compatible table', () => {
    const t = formatTable(
      ['size', 'µs'],
      [
        ['8 B', '1.62 (1.01–1.65)'],
        ['1 MiB', '525 (401–569)'],
      ],
    )
    const lines = t.split('\n')
    expect(lines).toHaveLength(4)
    const widths = lines.map((l) => [...l].length)
    expect(new Set(widths).size).toBe(1)
    expect(lines[1]).toMatch(/^\|:-+\|-+:\|$/)
    expect(lines[3]).toBe('| 1 MiB |    525 (401–569) |')
  })

  it('prints a group table with median (min–max) and ratio columns', () => {
    const ours = series('x.put.rtt', 'us', { 8: 4, 64: 6 }, 'rtt')
    ours.points[0]!.min = 3
    ours.points[0]!.max = 5
    const base = series('baseline.sab-spin.rtt', 'us', { 8: 2, 64: 3 }, 'rtt')
    const all = new Map([ours, base].map((s) => [s.id, s] as const))
    ours.ratios = computeRatios(ours, [{ series: base.id, label: '÷ SAB spin' }], all)
    const [group] = groupSeries([base, ours])
    const text = formatGroupTable(group!, 5)
    expect(text).toContain('median of 5 repeats')
    expect(text).toContain('4.00 (3.00–5.00)')
    expect(text).toContain('x.put.rtt ÷ SAB spin')
    expect(text).toMatch(/\| 8 B +\| +2\.00 \|/)
  })

  it('counts tasks, not bytes, where the series say so (a run of whole applications: its own repeats)', () => {
    const one = series('app.x', 'ops/s', { 1: 100, 2: 180 }, 'apps')
    const two = series('app.y', 'ops/s', { 1: 50, 2: 90 }, 'apps')
    for (const s of [one, two]) {
      s.sizeUnit = 'tasks'
      s.repeats = 3
    }
    const all = new Map([one, two].map((s) => [s.id, s] as const))
    two.ratios = computeRatios(two, [{ series: one.id, label: '÷ x', baselineSize: 1 }], all)
    const text = formatGroupTable(groupSeries([one, two])[0]!, 5)
    expect(text).toContain('median of 3 repeats')
    expect(text).toMatch(/^\| tasks +\|/m)
    expect(text).toMatch(/^\| 2 +\| 180 \(180–180\) \| 90\.0 \(90\.0–90\.0\) \|/m)
    expect(text).toMatch(/^\| 2 +\| +0\.900 \|/m)
    expect(text).toContain('app.y ÷ x @ 1')
    expect(text).not.toMatch(/\d B\b/)
  })
})

describe('svg', () => {
  const opts = {
    title: 'RTT <test> & co',
    yLabel: 'µs',
    series: [
      {
        title: 'a & b',
        points: [
          { size: 8, median: 1.5, min: 1, max: 2 },
          { size: 1024, median: 3, min: 2.5, max: 4 },
          { size: 1 << 20, median: 500, min: 400, max: 600 },
        ],
      },
      { title: 'single', points: [{ size: 64, median: 80, min: 80, max: 80 }] },
    ],
  }

  it('renders axes, ticks, labels, legend, one line per series, escaped text', () => {
    const svg = renderChart(opts)
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true)
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true)
    expect(svg).toContain('RTT &lt;test&gt; &amp; co')
    expect(svg).toContain('>a &amp; b</text>')
    expect(svg).toContain('>single</text>')
    expect(svg).toContain('>1 MiB</text>')
    expect(svg).toContain('>1k</text>') // y decade label
    expect(svg.match(/<polyline /g)).toHaveLength(1) // the one-point series has markers only
    expect(svg.match(/<circle /g)).toHaveLength(4 + 2) // points + legend markers
    expect(svg.split('<g ').length).toBe(svg.split('</g>').length)
    expect(svg).not.toMatch(/NaN|undefined|Infinity/)
  })

  it('is byte-stable', () => {
    expect(renderChart(opts)).toBe(renderChart(opts))
  })

  it('places size 0 one step left of the smallest power of two, behind an axis break', () => {
    const svg = renderChart({
      title: 'zero',
      yLabel: 'µs',
      series: [
        {
          title: 'with 0',
          points: [
            { size: 0, median: 2, min: 2, max: 2 },
            { size: 8, median: 3, min: 3, max: 3 },
          ],
        },
        { title: 'only 0', points: [{ size: 0, median: 5, min: 5, max: 5 }] },
      ],
    })
    expect(svg).toContain('>0 B</text>')
    expect(svg.match(/<circle /g)).toHaveLength(3 + 2)
    expect(svg.match(/<polyline /g)).toHaveLength(1)
    expect(svg).not.toMatch(/NaN|undefined|Infinity/)
    const xs = [...svg.matchAll(/<circle cx="([\d.]+)" cy="[\d.]+" r="3"\/>/g)].map((m) => Number(m[1]))
    expect(xs[0]).toBeLessThan(xs[1]!) // 0 B left of 8 B
    const only = renderChart({ title: 'rate', yLabel: 'ops/s', series: [{ title: 'r', points: [{ size: 0, median: 9e5, min: 8e5, max: 1e6 }] }] })
    expect(only).toContain('>0 B</text>')
    expect(only).not.toContain('no data')
    expect(only).not.toMatch(/NaN|undefined|Infinity/)
  })

  it('copes with no data', () => {
    expect(renderChart({ title: 't', yLabel: 'x', series: [] })).toContain('no data')
  })
})
