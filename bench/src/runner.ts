/**
 * The runner: selects benchmarks, runs each in the wanted placements (in this process, and with the
 * whole process on one CPU in a `taskset` child), calibrates, warms up, repeats, and assembles the
 * report (ratios and goals included). It prints nothing: it emits progress events.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { captureEnvironment, parseCpuList, startLoadMeter, type Environment, type MachineLoad } from './env.js'
import { measureGarbage } from './garbage.js'
import type { RegistryEntry } from './registry.js'
import { computeRatios, evaluateGoal, evaluateReference, ratio, summarize, toValue } from './stats.js'
import type {
  BenchContext,
  Benchmark,
  BenchmarkStatus,
  Goal,
  GoalResult,
  Placement,
  Point,
  Reference,
  ReferenceResult,
  SeriesResult,
  SeriesSpec,
  Session,
  SizeSet,
} from './types.js'

export interface RunConfig {
  quick: boolean
  repeats: number
  /** Target duration of one sample (one timed `run` call), ms. */
  budgetMs: number
  /** Regular expression on benchmark names, or null for all. */
  filter: string | null
  /** Run the `1core` placements (in a `taskset` child). */
  oneCore: boolean
  /** Also run the benchmarks whose series the selected ones compare with. */
  deps: boolean
  /** Run the interleaved goal check (pairGoals) after the main repeats. */
  pairGoals: boolean
  sizes: Record<SizeSet, readonly number[]>
  /** A single `run` call fails after this long. */
  timeoutMs: number
}

export function doubling(from: number, to: number): number[] {
  const out: number[] = []
  for (let s = from; s <= to; s *= 2) out.push(s)
  return out
}

export const FULL_SIZES: Record<SizeSet, readonly number[]> = {
  message: doubling(8, 1 << 20),
  alloc: doubling(16, 64 << 10),
  copy: [...doubling(8, 1 << 20), 4 << 20, 64 << 20],
  rma: [8, 64, 512, 4096, 64 << 10, 1 << 20, 4 << 20],
  am: [0, 8, 64, 512, 4096, 4097, 16 << 10, 64 << 10],
  am2: [0, 8, 64, 256, 512, 768, 992, 993, 1024, 2048, 4096, 16 << 10, 64 << 10],
  'am2-short': [0, 4, 16, 64],
  'am2-bw': [4096, 64 << 10, 1 << 20, 4 << 20],
}

export const QUICK_SIZES: Record<SizeSet, readonly number[]> = {
  message: [8, 4096, 1 << 20],
  alloc: [16, 256, 4096, 64 << 10],
  copy: [8, 64 << 10, 1 << 20],
  rma: [8, 4096, 1 << 20],
  am: [8, 4096],
  am2: [0, 992, 993],
  'am2-short': [0],
  'am2-bw': [1 << 20],
}

export function defaultConfig(quick = false): RunConfig {
  const budgetMs = quick ? 4 : 50
  return {
    quick,
    repeats: quick ? 2 : 5,
    budgetMs,
    filter: null,
    oneCore: true,
    deps: true,
    pairGoals: true,
    sizes: quick ? QUICK_SIZES : FULL_SIZES,
    timeoutMs: 10_000 + 20 * budgetMs,
  }
}

export type ProgressEvent =
  | { type: 'begin'; jobs: number }
  | { type: 'bench-start'; name: string; placement: Placement }
  | { type: 'step'; name: string; placement: Placement; series: string; size: number; phase: string }
  | { type: 'bench-end'; status: BenchmarkStatus }
  | { type: 'note'; text: string }

export type Emit = (e: ProgressEvent) => void

export interface OneCoreInfo {
  status: 'ran' | 'skipped' | 'none'
  note?: string
  /** The command prefix used, e.g. `taskset -c 1`. */
  command?: string
  /** `Cpus_allowed_list` as reported by the child process. */
  cpusAllowed?: string
}

export interface RunReport {
  schema: 1
  environment: Environment & { oneCore: OneCoreInfo; load: MachineLoad }
  config: Omit<RunConfig, 'sizes'> & { sizes: Record<SizeSet, readonly number[]> }
  benchmarks: BenchmarkStatus[]
  series: SeriesResult[]
  goals: GoalResult[]
  /** Reference ratios (no targets), measured as the goals are. */
  references: ReferenceResult[]
  seconds: number
}

/** What one placement's run produces (also what a child process sends back). */
export interface PlacementOutput {
  series: SeriesResult[]
  statuses: BenchmarkStatus[]
  cpusAllowed: string
  /** CPU seconds the process used (a child reports its own, for the machine-load figure). */
  cpuSeconds?: number
}

/**
 * Title suffix naming the placement, for benchmarks where it matters (those with several placements
 * or a CPU minimum: the worker-pair ones); single-thread benchmarks get none.
 */
export function placementSuffix(bench: Benchmark, placement: Placement, cpus: number): string {
  const matters = (bench.placements?.length ?? 1) > 1 || (bench.minCpus ?? 1) > 1 || placement === '1core'
  if (!matters) return ''
  return placement === '1core' || cpus === 1 ? ' (1 core)' : ` (${cpus} cores)`
}

export function seriesId(spec: SeriesSpec, placement: Placement): string {
  return placement === '1core' ? `${spec.id}@1core` : spec.id
}

function resolveSizes(spec: SeriesSpec, cfg: RunConfig): readonly number[] {
  return typeof spec.sizes === 'string' ? cfg.sizes[spec.sizes] : spec.sizes
}

/** Checks a benchmark's declaration; returns a problem or null. */
export function validateBenchmark(b: Benchmark): string | null {
  const ids = new Set<string>()
  for (const s of b.series) {
    if (!s.id.startsWith(`${b.name}.`)) return `series id ${s.id} must start with "${b.name}."`
    if (s.id.includes('@')) return `series id ${s.id} must not contain "@" (reserved for placements)`
    if (ids.has(s.id)) return `duplicate series id ${s.id}`
    ids.add(s.id)
  }
  return null
}

/** Grow the iteration count until one run takes ≥ budget/4, scale it to the budget, warm up once. */
export async function calibrate(run: (iterations: number) => number | Promise<number>, budgetS: number, maxIterations = 1e9): Promise<number> {
  let n = 1
  let t = await run(n)
  for (let guard = 0; t < budgetS / 4 && n < maxIterations && guard < 60; guard++) {
    const grow = t > 0 ? Math.min(16, Math.max(2, budgetS / 4 / t)) : 16
    n = Math.min(maxIterations, Math.ceil(n * grow))
    t = await run(n)
  }
  n = Math.max(1, Math.min(maxIterations, Math.round((n * budgetS) / Math.max(t, 1e-9))))
  // warm-up at the final count, discarded. When it ran much faster than the last calibration step
  // (that step's code was not optimized yet, or a slow spell of the machine hit it), the count is
  // too small for the budget: scale it once more and warm up again.
  const tw = await run(n)
  if (tw > 0 && tw < budgetS / 2 && n < maxIterations) {
    n = Math.max(1, Math.min(maxIterations, Math.round((n * budgetS) / tw)))
    await run(n)
  }
  return n
}

/**
 * Repeats of a `wholeRuns` series (each a whole application run, seconds long; one with --quick):
 * five, as other series, since a slow spell of a VM can take two runs of three, and the goals
 * read the median.
 */
const WHOLE_RUN_REPEATS = 5

/** The garbage run of a `garbage: true` series is this many samples long. */
const GARBAGE_RUN_SAMPLES = 4

async function measureSeries(
  bench: Benchmark,
  spec: SeriesSpec,
  session: Session,
  placement: Placement,
  cpus: number,
  cfg: RunConfig,
  emit: Emit,
): Promise<SeriesResult> {
  const sizes = resolveSizes(spec, cfg)
  const budgetS = cfg.budgetMs / 1e3
  const step = (size: number, phase: string): void => emit({ type: 'step', name: bench.name, placement, series: spec.id, size, phase })
  const iterations: number[] = []
  for (const size of sizes) {
    if (spec.wholeRuns === true) {
      iterations.push(1)
      continue
    }
    step(size, 'calibrating')
    iterations.push(await calibrate((n) => session.run(spec.id, size, n), budgetS))
  }
  // Repeats go round the sizes, so a slow spell of the machine hits several sizes a little
  // rather than one size in every repeat.
  const samples: number[][] = sizes.map(() => [])
  const repeats = spec.wholeRuns === true ? Math.min(cfg.repeats, cfg.quick ? 1 : WHOLE_RUN_REPEATS) : cfg.repeats
  for (let r = 0; r < repeats; r++) {
    for (let i = 0; i < sizes.length; i++) {
      const size = sizes[i]!
      step(size, `repeat ${r + 1}/${repeats}`)
      const seconds = await session.run(spec.id, size, iterations[i]!)
      if (!(seconds > 0) || !Number.isFinite(seconds)) throw new Error(`${spec.id} @ ${size}: bad time ${seconds}`)
      samples[i]!.push(toValue(spec.kind, spec.unit, size, iterations[i]!, seconds))
    }
  }
  const points: Point[] = sizes.map((size, i) => ({
    size,
    samples: samples[i]!,
    ...summarize(samples[i]!),
    iterations: iterations[i]!,
  }))
  if (spec.garbage) {
    for (const p of points) {
      step(p.size, 'counting garbage')
      // Four samples' worth of operations: long enough for the young generation to fill up a
      // few times where a loop makes garbage, so the collection count means something.
      const ops = p.iterations * GARBAGE_RUN_SAMPLES
      let ret: unknown
      const g = measureGarbage(() => {
        ret = session.run(spec.id, p.size, ops)
      })
      if (typeof ret !== 'number') throw new Error(`${spec.id}: garbage: true needs a synchronous run()`)
      p.extra = {
        'heap B/op': g.bytes / ops,
        'GCs/1M ops': (g.gcs * 1e6) / ops,
      }
    }
  }
  return {
    id: seriesId(spec, placement),
    title: spec.title + placementSuffix(bench, placement, cpus),
    kind: spec.kind,
    unit: spec.unit,
    group: spec.group,
    ...(spec.groupTitle !== undefined ? { groupTitle: spec.groupTitle } : {}),
    ...(spec.xLabel !== undefined ? { xLabel: spec.xLabel } : {}),
    ...(spec.sizeUnit !== undefined ? { sizeUnit: spec.sizeUnit } : {}),
    ...(repeats !== cfg.repeats ? { repeats } : {}),
    benchmark: bench.name,
    placement,
    points,
    ...(spec.compareTo ? { compareTo: spec.compareTo } : {}),
    ratios: [],
  }
}

/** What a benchmark's `open` gets: its sizes, the largest of them, the limits. */
function benchContext(bench: Benchmark, placement: Placement, cpus: number, cfg: RunConfig): BenchContext {
  const sizes = new Map(bench.series.map((s) => [s.id, resolveSizes(s, cfg)] as const))
  return {
    placement,
    cpus,
    sizes,
    maxSize: Math.max(1, ...[...sizes.values()].flat()),
    timeoutMs: cfg.timeoutMs,
    quick: cfg.quick,
  }
}

/** What the interleaved check needs of a goal or a reference. */
export type PairSpec = Pick<Goal, 'name' | 'series' | 'size' | 'baseline' | 'baselineSize' | 'pair'>

/** What the interleaved check measured for one goal: the pair ratios and each pair's two values. */
export interface PairedRun {
  ratios: number[]
  values: Array<[number, number]>
}

/** Pairs of the interleaved goal check (`--quick`, full). */
export const GOAL_PAIRS = { quick: 3, full: 9 } as const
/** Unpaired warm-up runs of each side before the pairs. */
const PAIR_WARMUPS = 3
/**
 * In a pair, each side's timed run follows an untimed one of this fraction of its count: a side
 * otherwise starts while its threads have slept through the other side's run, and a thread that
 * slept runs slower for some milliseconds on a VM, where the main repeats' runs follow one another.
 */
const PAIR_REWARM = 1 / 4

/**
 * The interleaved goal check. The main repeats measure one benchmark after the other, so a goal's
 * series and its baseline are measured tens of seconds apart; on a machine whose speed changes
 * from one spell to the next (a VM's two vCPUs sharing a core or not, say) the ratio of their
 * medians then compares two different machines. Here every goal with a baseline measured in this
 * process gets `pairs` pairs: one run of the series and one of the baseline back to back (order
 * alternating, at the iteration counts the main repeats calibrated, grown where a warm-up run
 * shows them too small for the sample budget), one ratio per pair; the
 * goal is decided on their median. A goal without a baseline (a rate or a time held against a
 * published figure) gets `pairs` runs of its series alone, after the same warm-up, and is decided
 * on their median: the main repeats' few short samples, taken once, are what a slow spell of the
 * machine decides (a series of whole application runs keeps its main repeats). Returns the ratios
 * (for an absolute goal, the values) by goal index; a goal whose sessions fail to open or run is
 * left to its main repeats' figure, with a note. Reference ratios go through the same check
 * (`label` names it in the progress lines).
 */
export async function pairGoals(
  goals: readonly PairSpec[],
  entries: readonly RegistryEntry[],
  loaded: ReadonlyMap<RegistryEntry, Benchmark | null>,
  byId: ReadonlyMap<string, SeriesResult>,
  cfg: RunConfig,
  cpus: number,
  emit: Emit,
  label = 'goal check',
): Promise<Map<number, PairedRun>> {
  const out = new Map<number, PairedRun>()
  const pairs = cfg.quick ? GOAL_PAIRS.quick : GOAL_PAIRS.full
  for (let gi = 0; gi < goals.length; gi++) {
    const g = goals[gi]!
    if (!checked(g, entries, loaded)) continue
    const ours = byId.get(g.series)
    const base = g.baseline === undefined ? ours : byId.get(g.baseline)
    const alone = g.baseline === undefined
    const baseSize = g.baselineSize ?? g.size
    const po = ours?.points.find((p) => p.size === g.size)
    const pb = base?.points.find((p) => p.size === baseSize)
    const eo = ownerOf(g.series, entries)
    const eb = ownerOf(g.baseline ?? g.series, entries)
    const bo = eo ? loaded.get(eo) : undefined
    const bb = eb ? loaded.get(eb) : undefined
    if (!ours || !base || !po || !pb || !bo || !bb || ours.placement !== 'all' || base.placement !== 'all') continue
    emit({ type: 'bench-start', name: `${label}: ${g.name}`, placement: 'all' })
    const t0 = performance.now()
    const sessions: Session[] = []
    let note: string | undefined
    try {
      const so = await bo.open(benchContext(bo, 'all', cpus, cfg))
      sessions.push(so)
      let sb = so
      if (bb !== bo) {
        sb = await bb.open(benchContext(bb, 'all', cpus, cfg))
        sessions.push(sb)
      }
      const timed = async (session: Session, s: SeriesResult, size: number, iterations: number): Promise<number> => {
        const seconds = await session.run(s.id, size, iterations)
        if (!(seconds > 0) || !Number.isFinite(seconds)) throw new Error(`${s.id} @ ${size}: bad time ${seconds}`)
        return seconds
      }
      // the iteration counts of the main repeats, grown when a warm-up run takes less than half
      // the sample budget: a count calibrated in a slow moment (a fresh session's code not yet
      // optimized, a machine waking its CPUs) makes runs so short that their start decides them
      const budgetS = cfg.budgetMs / 1e3
      let itO = po.iterations
      let itB = pb.iterations
      const grown = (n: number, seconds: number): number => (seconds < budgetS / 2 ? Math.min(n * 1000, Math.max(n, Math.round((n * budgetS) / seconds))) : n)
      const one = async (session: Session, s: SeriesResult, size: number, iterations: number): Promise<number> =>
        toValue(s.kind, s.unit, size, iterations, await timed(session, s, size, iterations))
      // (a pair's side, after an untimed run of a fraction of its count: PAIR_REWARM)
      const warmed = async (session: Session, s: SeriesResult, size: number, iterations: number): Promise<number> => {
        await timed(session, s, size, Math.max(1, Math.round(iterations * PAIR_REWARM)))
        return await one(session, s, size, iterations)
      }
      // warm-up runs of each side (a fresh session's threads are still being compiled for), then the pairs
      for (let w = 0; w < PAIR_WARMUPS; w++) {
        itO = grown(itO, await timed(so, ours, g.size, itO))
        if (!alone) itB = grown(itB, await timed(sb, base, baseSize, itB))
      }
      const ratios: number[] = []
      const values: Array<[number, number]> = []
      for (let k = 0; k < pairs; k++) {
        emit({
          type: 'step',
          name: `${label}: ${g.name}`,
          placement: 'all',
          series: g.series,
          size: g.size,
          phase: `${alone ? 'run' : 'pair'} ${k + 1}/${pairs}`,
        })
        if (alone) {
          ratios.push(await one(so, ours, g.size, itO))
          continue
        }
        let vo: number, vb: number
        if (k % 2 === 0) {
          vo = await warmed(so, ours, g.size, itO)
          vb = await warmed(sb, base, baseSize, itB)
        } else {
          vb = await warmed(sb, base, baseSize, itB)
          vo = await warmed(so, ours, g.size, itO)
        }
        const r = ratio(vo, ours.unit, vb, base.unit)
        if (r !== null) {
          ratios.push(r)
          values.push([vo, vb])
        }
      }
      out.set(gi, { ratios, values })
    } catch (err) {
      note = (err as Error).message ?? String(err)
    } finally {
      for (const s of sessions) {
        try {
          await s.close()
        } catch {
          /* the note or the ratios say what happened */
        }
      }
    }
    emit({
      type: 'bench-end',
      status: {
        name: `${label}: ${g.name}`,
        placement: 'all',
        status: note === undefined ? 'ok' : 'error',
        ...(note !== undefined ? { note } : {}),
        seconds: Math.round(performance.now() - t0) / 1e3,
      },
    })
  }
  return out
}

/**
 * Whether `pairGoals` checks goal `g`: not one that opts out (`pair: false`); with a baseline,
 * both sides measured in this process; without, its series measured in this process and not a
 * series of whole application runs.
 */
export function checked(g: PairSpec, entries: readonly RegistryEntry[], loaded: ReadonlyMap<RegistryEntry, Benchmark | null>): boolean {
  if (g.pair === false) return false
  const eo = ownerOf(g.series, entries)
  if (eo === undefined) return false
  if (g.baseline !== undefined) return ownerOf(g.baseline, entries) !== undefined
  const spec = loaded.get(eo)?.series.find((x) => x.id === g.series)
  return spec !== undefined && spec.wholeRuns !== true
}

/** Run the given benchmarks one after the other in this process, for one placement. */
export async function runPlacement(
  entries: readonly RegistryEntry[],
  placement: Placement,
  cfg: RunConfig,
  cpusAllowed: string,
  emit: Emit,
): Promise<PlacementOutput> {
  const cpus = cpusAllowed === 'unknown' ? 1 : parseCpuList(cpusAllowed).length
  const series: SeriesResult[] = []
  const statuses: BenchmarkStatus[] = []
  for (const entry of entries) {
    emit({ type: 'bench-start', name: entry.name, placement })
    const t0 = performance.now()
    const status = (s: 'ok' | 'skipped' | 'error', note?: string): BenchmarkStatus => ({
      name: entry.name,
      placement,
      status: s,
      ...(note !== undefined ? { note } : {}),
      seconds: Math.round(performance.now() - t0) / 1e3,
    })
    let st: BenchmarkStatus
    let session: Session | undefined
    try {
      const bench = (await entry.load()).default
      const problem = validateBenchmark(bench)
      if (problem) throw new Error(problem)
      if (bench.minCpus !== undefined && cpus < bench.minCpus) {
        st = status('skipped', `needs ${bench.minCpus} CPUs, ${cpus} allowed`)
      } else {
        session = await bench.open(benchContext(bench, placement, cpus, cfg))
        // (a series that fails ends the benchmark; those measured before it stay in the report)
        for (const spec of bench.series) series.push(await measureSeries(bench, spec, session, placement, cpus, cfg, emit))
        st = status('ok')
      }
    } catch (err) {
      st = status('error', (err as Error).message ?? String(err))
    } finally {
      try {
        await session?.close()
      } catch {
        // closing a broken session: the status already says what went wrong
      }
    }
    statuses.push(st)
    emit({ type: 'bench-end', status: st })
  }
  return { series, statuses, cpusAllowed }
}

/** Registry entry that owns a series id (`baseline.sab-spin.rtt@1core` → `baseline.sab-spin`). */
export function ownerOf(id: string, registry: readonly RegistryEntry[]): RegistryEntry | undefined {
  const bare = id.split('@')[0]!
  let best: RegistryEntry | undefined
  for (const e of registry) {
    if (bare.startsWith(`${e.name}.`) && (!best || e.name.length > best.name.length)) best = e
  }
  return best
}

/** Benchmarks matching the filter, plus (with `deps`) those their ratios and goals refer to. */
export async function selectBenchmarks(
  registry: readonly RegistryEntry[],
  cfg: Pick<RunConfig, 'filter' | 'deps'>,
): Promise<{ entries: RegistryEntry[]; added: string[] }> {
  const re = cfg.filter === null ? null : new RegExp(cfg.filter)
  const chosen = new Set(registry.filter((e) => !re || re.test(e.name)))
  const added: string[] = []
  if (cfg.deps) {
    const seen = new Set<RegistryEntry>()
    let todo = [...chosen]
    while (todo.length > 0) {
      const next: RegistryEntry[] = []
      for (const e of todo) {
        if (seen.has(e)) continue
        seen.add(e)
        let bench: Benchmark
        try {
          bench = (await e.load()).default
        } catch {
          continue // reported when it runs
        }
        const refs = [
          ...bench.series.flatMap((s) => (s.compareTo ?? []).map((c) => c.series)),
          ...(bench.goals ?? []).flatMap((g) => (g.baseline === undefined ? [g.series] : [g.series, g.baseline])),
          ...(bench.references ?? []).flatMap((r) => [r.series, r.baseline]),
        ]
        for (const ref of refs) {
          const owner = ownerOf(ref, registry)
          if (owner && !chosen.has(owner)) {
            chosen.add(owner)
            added.push(owner.name)
            next.push(owner)
          }
        }
      }
      todo = next
    }
  }
  return { entries: registry.filter((e) => chosen.has(e)), added }
}

/** Flags that make a child process run with the same budgets as this one. */
function childArgs(cfg: RunConfig, names: readonly string[]): string[] {
  const args = ['--child', '1core', '--only', names.join(','), '--repeats', String(cfg.repeats)]
  args.push('--budget-ms', String(cfg.budgetMs))
  if (cfg.quick) args.push('--quick')
  return args
}

interface ChildMessage {
  type: 'event' | 'result'
  event?: ProgressEvent
  result?: PlacementOutput
}

/** Run `entries` in a child process restricted to CPU `cpu` with taskset; forwards its progress. */
export function runOneCoreChild(taskset: string, cpu: number, entries: readonly RegistryEntry[], cfg: RunConfig, emit: Emit): Promise<PlacementOutput> {
  const main = fileURLToPath(new URL('./main.js', import.meta.url))
  const args = [
    '-c',
    String(cpu),
    process.execPath,
    main,
    ...childArgs(
      cfg,
      entries.map((e) => e.name),
    ),
  ]
  return new Promise((resolve, reject) => {
    const child = spawn(taskset, args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
    let result: PlacementOutput | undefined
    // The child's own runs are bounded by their time limits; this is a last resort.
    const limitMs = 15 * 60_000
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
    }, limitMs)
    child.on('message', (m: ChildMessage) => {
      if (m.type === 'event' && m.event) emit(m.event)
      else if (m.type === 'result' && m.result) result = m.result
    })
    child.on('error', (err) => {
      clearTimeout(timer)
      reject(err)
    })
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      if (result) resolve(result)
      else reject(new Error(`1-core child exited (${signal ?? `code ${code}`}) without a result`))
    })
  })
}

/** Body of `main.js --child 1core`: run, report back over IPC, print nothing. */
export async function childMain(registry: readonly RegistryEntry[], names: readonly string[], cfg: RunConfig): Promise<void> {
  const send = (m: ChildMessage): Promise<void> =>
    new Promise((resolve) => {
      if (!process.send) return resolve()
      process.send(m, undefined, {}, () => resolve())
    })
  const entries = registry.filter((e) => names.includes(e.name))
  const env = captureEnvironment()
  const pending: Promise<void>[] = []
  const out = await runPlacement(entries, '1core', cfg, env.cpusAllowed, (event) => {
    pending.push(send({ type: 'event', event }))
  })
  await Promise.all(pending)
  const u = process.cpuUsage()
  await send({ type: 'result', result: { ...out, cpuSeconds: (u.user + u.system) / 1e6 } })
  process.disconnect?.()
}

/** Run everything the configuration selects and assemble the report. */
export async function runAll(registry: readonly RegistryEntry[], cfg: RunConfig, emit: Emit): Promise<RunReport> {
  const t0 = performance.now()
  const env = captureEnvironment()
  const stopLoad = startLoadMeter()
  let childCpu = 0
  const { entries, added } = await selectBenchmarks(registry, cfg)
  if (entries.length === 0) throw new Error(`no benchmark matches --filter ${cfg.filter}`)
  if (added.length > 0) emit({ type: 'note', text: `also running ${added.join(', ')} (compared with)` })

  const loaded = new Map<RegistryEntry, Benchmark | null>()
  for (const e of entries)
    loaded.set(
      e,
      await e.load().then(
        (m) => m.default,
        () => null,
      ),
    )
  const placementsOf = (e: RegistryEntry): readonly Placement[] => loaded.get(e)?.placements ?? ['all']
  const inProcess = entries.filter((e) => placementsOf(e).includes('all'))
  const oneCoreWanted = entries.filter((e) => loaded.get(e) && placementsOf(e).includes('1core'))

  let oneCore: OneCoreInfo = { status: 'none' }
  let childJobs = 0
  if (oneCoreWanted.length > 0) {
    if (!cfg.oneCore) oneCore = { status: 'skipped', note: 'skipped: --no-1core' }
    else if (env.taskset === null) oneCore = { status: 'skipped', note: 'skipped: no taskset' }
    else if (env.cpusAllowedCount < 2) oneCore = { status: 'skipped', note: 'skipped: the process already runs on one CPU' }
    else childJobs = oneCoreWanted.length
  }
  const pairable = !cfg.pairGoals
    ? 0
    : [...loaded.values()].flatMap((b): readonly PairSpec[] => [...(b?.goals ?? []), ...(b?.references ?? [])]).filter((g) => checked(g, inProcess, loaded))
        .length
  emit({ type: 'begin', jobs: inProcess.length + childJobs + pairable })

  const series: SeriesResult[] = []
  const statuses: BenchmarkStatus[] = []
  const main = await runPlacement(inProcess, 'all', cfg, env.cpusAllowed, emit)
  series.push(...main.series)
  statuses.push(...main.statuses)

  if (childJobs > 0) {
    const allowed = parseCpuList(env.cpusAllowed)
    const cpu = allowed[allowed.length - 1]!
    const command = `taskset -c ${cpu}`
    try {
      const out = await runOneCoreChild(env.taskset!, cpu, oneCoreWanted, cfg, emit)
      series.push(...out.series)
      statuses.push(...out.statuses)
      childCpu = out.cpuSeconds ?? 0
      oneCore = { status: 'ran', command, cpusAllowed: out.cpusAllowed }
    } catch (err) {
      oneCore = { status: 'skipped', command, note: `failed: ${(err as Error).message}` }
      for (const e of oneCoreWanted) {
        const st: BenchmarkStatus = { name: e.name, placement: '1core', status: 'error', note: oneCore.note!, seconds: 0 }
        statuses.push(st)
        emit({ type: 'bench-end', status: st })
      }
    }
  } else if (oneCore.status === 'skipped') {
    for (const e of oneCoreWanted) {
      statuses.push({ name: e.name, placement: '1core', status: 'skipped', note: oneCore.note!, seconds: 0 })
    }
  }

  const byId = new Map(series.map((s) => [s.id, s] as const))
  for (const s of series) s.ratios = computeRatios(s, s.compareTo ?? [], byId)
  const goals: Goal[] = [...loaded.values()].flatMap((b) => b?.goals ?? [])
  const references: Reference[] = [...loaded.values()].flatMap((b) => b?.references ?? [])
  const cpus = env.cpusAllowed === 'unknown' ? 1 : parseCpuList(env.cpusAllowed).length
  const none = new Map<number, PairedRun>()
  const paired = cfg.pairGoals ? await pairGoals(goals, inProcess, loaded, byId, cfg, cpus, emit) : none
  const pairedRefs = cfg.pairGoals ? await pairGoals(references, inProcess, loaded, byId, cfg, cpus, emit, 'reference check') : none
  const load = stopLoad(childCpu)
  if (load.otherCpuPercent !== null && load.otherCpuPercent > 5) {
    emit({
      type: 'note',
      text: `other processes used ${load.otherCpuPercent}% of the CPU time during the run${load.stealPercent ? ` (the hypervisor's steal: ${load.stealPercent}%)` : ''}: figures are disturbed`,
    })
  }
  return {
    schema: 1,
    environment: { ...env, oneCore, load },
    config: { ...cfg },
    benchmarks: statuses,
    series,
    goals: goals.map((g, i) => evaluateGoal(g, byId, paired.get(i))),
    references: references.map((r, i) => evaluateReference(r, byId, pairedRefs.get(i))),
    seconds: Math.round(performance.now() - t0) / 1e3,
  }
}
