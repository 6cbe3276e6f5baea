/**
 * `npm start` / `node bench/dist/main.js [options]`: runs the registered benchmarks, prints the
 * tables and goals, writes JSON and SVG charts to bench/results/ (or --out). `--help` for options.
 * `--child 1core --only a,b` is internal: the runner starts it under `taskset` for 1-core runs.
 */
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { resolveConfig } from '@amlapi/lapi'
import { tuneJit } from '#lapi-internal'
import { registry } from './registry.js'
import { createProgress, printError, printList, printReport, printUsage } from './report.js'
import { writeResults } from './results.js'
import { childMain, defaultConfig, runAll, type RunConfig } from './runner.js'

export interface Cli {
  config: RunConfig
  out: string
  list: boolean
  help: boolean
  strictGoals: boolean
  child: string | null
  only: string[]
}

function positiveInt(name: string, v: string | undefined, dflt: number): number {
  if (v === undefined) return dflt
  const n = Number(v)
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} wants a positive whole number, got ${JSON.stringify(v)}`)
  return n
}

export function parseCli(argv: readonly string[]): Cli {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    options: {
      quick: { type: 'boolean', default: false },
      repeats: { type: 'string' },
      'budget-ms': { type: 'string' },
      filter: { type: 'string' },
      out: { type: 'string' },
      'no-1core': { type: 'boolean', default: false },
      'no-deps': { type: 'boolean', default: false },
      'no-pairs': { type: 'boolean', default: false },
      'strict-goals': { type: 'boolean', default: false },
      list: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
      child: { type: 'string' },
      only: { type: 'string' },
    },
  })
  const base = defaultConfig(values.quick)
  const budgetMs = positiveInt('--budget-ms', values['budget-ms'], base.budgetMs)
  if (values.filter !== undefined) new RegExp(values.filter) // throws on a bad pattern
  const config: RunConfig = {
    ...base,
    repeats: positiveInt('--repeats', values.repeats, base.repeats),
    budgetMs,
    timeoutMs: 10_000 + 20 * budgetMs,
    filter: values.filter ?? null,
    oneCore: !values['no-1core'],
    deps: !values['no-deps'],
    pairGoals: !values['no-pairs'],
  }
  return {
    config,
    out: values.out ?? fileURLToPath(new URL('../results', import.meta.url)),
    list: values.list,
    help: values.help,
    strictGoals: values['strict-goals'],
    child: values.child ?? null,
    only: values.only ? values.only.split(',') : [],
  }
}

async function main(): Promise<number> {
  let cli: Cli
  try {
    cli = parseCli(process.argv.slice(2))
  } catch (err) {
    printError((err as Error).message)
    printUsage(process.stderr)
    return 2
  }
  if (cli.help) {
    printUsage()
    return 0
  }
  // Every measurement of the run (baselines included, and the 1-core child's, which inherits
  // AMLAPI_JIT) under the V8 inlining budgets the jobs run with: runJob would set them at the
  // first LAPI benchmark, and what ran before it would have had others.
  tuneJit(resolveConfig({}, process.env).jit)
  if (cli.list) {
    await printList(registry)
    return 0
  }
  if (cli.child !== null) {
    if (cli.child !== '1core') throw new Error(`unknown child placement ${cli.child}`)
    await childMain(registry, cli.only, cli.config)
    return 0
  }
  // (first, so that a run's output says which Node it measured: timings differ by Node line; the
  // JSON has it in environment.node and environment.v8)
  process.stdout.write(`amlapi benchmarks on Node ${process.version} (V8 ${process.versions.v8}), ${process.platform}-${process.arch}\n`)
  const progress = createProgress(process.stderr, process.stderr.isTTY === true && !process.env['CI'])
  let report: Awaited<ReturnType<typeof runAll>>
  try {
    report = await runAll(registry, cli.config, progress.emit)
  } finally {
    progress.finish()
  }
  const files = writeResults(report, cli.out)
  printReport(report, files)
  const failed = report.benchmarks.some((b) => b.status === 'error')
  const missed = cli.strictGoals && report.goals.some((g) => g.status === 'MISS')
  return failed || missed ? 1 : 0
}

main().then(
  (code) => {
    process.exitCode = code
  },
  (err: unknown) => {
    printError(process.env['BENCH_STACK'] ? String((err as Error)?.stack ?? err) : String((err as Error)?.message ?? err))
    process.exitCode = 1
  },
)
