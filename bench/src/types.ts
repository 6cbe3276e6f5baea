/**
 * The plug-in interface of the benchmark harness.
 *
 * A benchmark is one module under `src/benchmarks/` whose default export is a {@link Benchmark}, plus
 * one line in `src/registry.ts`. It declares the series it produces (what is measured, in which unit,
 * at which sizes, and which other series it is compared with) and opens a {@link Session} that runs
 * a given number of operations and says how long they took. Everything else (warm-up, calibration,
 * repeats, statistics, ratios, goals, tables, charts, JSON, placements) is the runner's job.
 */

/** What a value means, which decides how `seconds` and `iterations` turn into a figure. */
export type SeriesKind = 'latency' | 'bandwidth' | 'rate'

/** `us`: µs per operation; `MB/s`: 10^6 B/s; `GB/s`: 10^9 B/s; `ops/s`: operations per second. */
export type Unit = 'us' | 'MB/s' | 'GB/s' | 'ops/s'

/**
 * Where the process runs. `all`: all the CPUs the runner was given (the default, in-process run;
 * "2 cores" on the reference machine);
 * `1core`: the whole Node process restricted to one CPU with `taskset`, run in a child process.
 */
export type Placement = 'all' | '1core'

/**
 * Named size sets, resolved by the runner (`--quick` uses shorter ones). `am2`: AM-2 Medium/Long
 * round trips, with 992/993 B straddling the packed fast path; `am2-short`: Short round trips,
 * 4 B per argument; `am2-bw`: AM-2 bulk transfers.
 */
export type SizeSet = 'message' | 'alloc' | 'copy' | 'rma' | 'am' | 'am2' | 'am2-short' | 'am2-bw'

/** A ratio column: this series' median ÷ another series' median at the same (or a fixed) size. */
export interface CompareTo {
  /** Full id of the baseline series, e.g. `baseline.sab-spin.rtt` or `baseline.sab-wait.rtt@1core`. */
  series: string
  /** Column label, e.g. `÷ SAB spin`. */
  label: string
  /** Compare every size with this one size of the baseline (default: the same size). */
  baselineSize?: number
}

/**
 * A named goal: `median(series @ size) / median(baseline @ baselineSize ?? size)` compared with
 * `target`. Units are normalised first (µs, MB/s, GB/s → seconds or B/s), so a MB/s series can be
 * divided by a GB/s one. Without `baseline` the goal is absolute: the median itself, in the
 * series' unit, is compared with `target` (e.g. ≥ 500000 ops/s).
 */
export interface Goal {
  name: string
  series: string
  size: number
  baseline?: string
  baselineSize?: number
  op: '<=' | '>='
  target: number
  /**
   * Whether the interleaved goal check pairs this goal (default true). Pairing cancels what the
   * series and its baseline share over time: right for two two-thread figures (both move with
   * where the host runs the vCPUs) or two one-thread figures; wrong for a two-thread bandwidth
   * against a one-thread copy, where one 50 ms run is only noisier than the median of the repeats.
   */
  pair?: boolean
}

/**
 * A reference ratio: `median(series @ size) / median(baseline @ baselineSize ?? size)`, measured
 * as a goal is (paired in the interleaved check) but with no target: a figure to read the goals
 * by, say how far a library path is above the floor of what it does.
 */
export interface Reference {
  name: string
  series: string
  size: number
  baseline: string
  baselineSize?: number
}

export interface SeriesSpec {
  /** Full id, `<benchmark name>.<short>`, e.g. `baseline.sab-spin.rtt`. A 1-core re-run adds `@1core`. */
  id: string
  /** Legend / column title, e.g. `SAB spin`. The runner appends the placement, e.g. ` (2 cores)`. */
  title: string
  kind: SeriesKind
  unit: Unit
  /** Series of one group share one table and one chart (and must share one unit). */
  group: string
  /** Heading of the group's table and chart (the first series of the group that sets it wins). */
  groupTitle?: string
  /** X axis label of the group's chart (the first series that sets it wins; default from the kind). */
  xLabel?: string
  sizes: SizeSet | readonly number[]
  compareTo?: readonly CompareTo[]
  /**
   * Also measure the garbage of one extra run per size (in-process benchmarks only): JS heap bytes
   * allocated per operation and garbage collections per million operations, using `v8.GCProfiler`.
   */
  garbage?: boolean
  /**
   * Each `run` is one whole program run that times itself (an application benchmark, seconds
   * long): no calibration or warm-up run, one iteration a sample, at most 5 repeats (1 with --quick).
   */
  wholeRuns?: boolean
  /** What a size counts (default bytes): `tasks` for a series over the number of tasks. */
  sizeUnit?: SizeUnit
}

/** What the size of a point counts. */
export type SizeUnit = 'bytes' | 'tasks'

/** What the runner tells a benchmark when it opens a session. */
export interface BenchContext {
  placement: Placement
  /** Number of CPUs this process may run on (from `Cpus_allowed_list`). */
  cpus: number
  /** The sizes the runner will ask for, per series id as declared (without an `@1core` suffix). */
  sizes: ReadonlyMap<string, readonly number[]>
  /** Largest size of any series of this benchmark. */
  maxSize: number
  /** A single `run` call must give up (throw) after this long; workers must honour it. */
  timeoutMs: number
  quick: boolean
}

export interface Session {
  /**
   * Run `iterations` operations of `series` at `size` bytes and return the elapsed time in seconds.
   * One operation is: a round trip (latency), one message of `size` bytes (bandwidth: the runner
   * divides `size × iterations` by the time), or one operation (rate).
   */
  run(series: string, size: number, iterations: number): number | Promise<number>
  /** Release everything (terminate workers). Always called, also after a failure. */
  close(): void | Promise<void>
}

export interface Benchmark {
  /** Registry name, matched by `--filter`, e.g. `baseline.sab-spin`. */
  name: string
  /** One line: what it measures. */
  description: string
  /** Default `['all']`. `1core` re-runs it in a child process under `taskset -c <cpu>`. */
  placements?: readonly Placement[]
  /** Skip (with a note) when the process may use fewer CPUs, e.g. 2 for busy-spinning peers. */
  minCpus?: number
  series: readonly SeriesSpec[]
  goals?: readonly Goal[]
  references?: readonly Reference[]
  open(ctx: BenchContext): Session | Promise<Session>
}

/** One size of one series: a sample per repeat, in the series unit. */
export interface Point {
  size: number
  samples: number[]
  median: number
  min: number
  max: number
  /** Operations per sample, after calibration. */
  iterations: number
  /** Extra per-size figures, e.g. `{ 'heap B/op': 0, 'GCs/1M ops': 0 }`. */
  extra?: Record<string, number>
}

export interface RatioColumn {
  series: string
  label: string
  baselineSize?: number
  /** Ratio per size; `null` where either side was not measured. */
  values: { size: number; ratio: number | null }[]
}

export interface SeriesResult {
  id: string
  title: string
  kind: SeriesKind
  unit: Unit
  group: string
  groupTitle?: string
  xLabel?: string
  sizeUnit?: SizeUnit
  /** Repeats taken where fewer than the run's (a `wholeRuns` series). */
  repeats?: number
  benchmark: string
  placement: Placement
  points: Point[]
  compareTo?: readonly CompareTo[]
  ratios: RatioColumn[]
}

/** What was measured for a goal or a reference. */
export interface RatioResult {
  /** The paired median when pairs ran, else `unpairedRatio`; a goal's `status` is decided on it. */
  ratio: number | null
  /** Median of the series ÷ median of the baseline, from the main repeats. */
  unpairedRatio: number | null
  /**
   * The interleaved check: runs of the measured series and the baseline back to back (the order
   * alternating), one ratio per pair; `ratio` is their median, `values` the pairs' [series,
   * baseline] values in their units. Absent when it did not run.
   */
  paired?: { ratio: number; ratios: number[]; values?: Array<[number, number]> }
}

export interface GoalResult extends Goal, RatioResult {
  status: 'PASS' | 'MISS' | 'n/a'
  /** What the goal's sizes count (the series'; absent: bytes). */
  sizeUnit?: SizeUnit
}

export interface ReferenceResult extends Reference, RatioResult {}

export interface BenchmarkStatus {
  name: string
  placement: Placement
  status: 'ok' | 'skipped' | 'error'
  note?: string
  seconds: number
}
