/**
 * V8's inlining budgets for the process that runs a job: a knob, off by default (docs/architecture.md,
 * "Writing the per-message paths for V8").
 *
 * A message's path crosses a dozen small functions (LAPI_Amsend → amsend → sendShort; the counter
 * wait → dispatcher round → drain → onShort → onePacket → the header handler → the completion; in
 * AM-2 the request, the send, the LAPI packet, the poll and the handler call on top). TurboFan makes
 * one function of such a chain only while the bytecode it inlines stays within its budgets, and
 * Node's defaults (460 bytes for one function, 920 for all it inlines into one) cut these chains
 * into four to six separately compiled pieces. With the budgets below each chain compiles as one
 * piece. Measured on this project's 2-core machine (docs/benchmarks.md): once compiled, the
 * one-thread Amsend self cost is 7–12 % lower and AM-2's Short round trip 10–20 % shorter; but
 * TurboFan then also inlines the cold paths the program has run, and compiles took about three
 * times as long (4.2 s against 1.4 s of compiler time in the AM-2 benchmark, single compiles up to
 * 78 ms against 21 ms). With two CPUs and two spinning tasks a compile takes a CPU from them, so the
 * first rounds after a new path runs are much slower, and short jobs (the test suite) take longer.
 * Hence opt-in: for long runs whose steady state matters.
 *
 * The budgets are V8 flags, so they hold for the whole process (every worker thread included) and
 * for code compiled after they are set. `runJob` (and so `lapirun`) sets them before it starts the
 * tasks when the job's `jit` setting is `'tuned'` (`AMLAPI_JIT=tuned`, `lapirun --jit tuned`). A
 * flag given on node's command line is left as the user set it.
 */
import { lazyLoad } from './lazy.js'

/** What `runJob` does with V8's inlining budgets: raise them (`tuned`) or leave them as they are. */
export type JitMode = 'tuned' | 'default'

/** The inlining budgets a tuned process runs with, in bytes of bytecode (V8 flag → value). */
export const JIT_INLINING: Readonly<Record<string, number>> = Object.freeze({
  // one function inlined whole (V8's default 460: sendShort, onShort, onePacket and am2's send exceed it)
  'max-inlined-bytecode-size': 1000,
  // everything inlined into one compiled function (default 920)
  'max-inlined-bytecode-size-cumulative': 4000,
  // that function's own bytecode with what it inlines (default 4600)
  'max-inlined-bytecode-size-absolute': 8000,
})

/**
 * The V8 flags `tuneJit` would set, as `--name=value`: those of JIT_INLINING that `execArgv`
 * (node's own command-line options) does not already give (V8 accepts `_` for `-` in flag names).
 */
export function jitFlags(execArgv: readonly string[] = process.execArgv): string[] {
  const given = new Set(
    execArgv.map((a) =>
      a
        .replace(/^--(no-)?/, '')
        .split('=')[0]!
        .replace(/_/g, '-'),
    ),
  )
  return Object.entries(JIT_INLINING)
    .filter(([name]) => !given.has(name))
    .map(([name, v]) => `--${name}=${v}`)
}

let applied: readonly string[] | null = null

/**
 * With `mode` `'tuned'`, sets V8's inlining budgets for this process (JIT_INLINING; once per
 * process: later calls change nothing) and returns the flags set; with `'default'` sets nothing.
 * Call it before the code it should speed up gets hot: what V8 compiled before keeps its shape until
 * it is compiled again. There is no undoing it (V8 cannot report a flag's earlier value).
 */
export function tuneJit(mode: JitMode): readonly string[] {
  if (mode !== 'tuned') return []
  if (applied !== null) return applied
  const flags = jitFlags()
  // (node:v8 loaded here, not with the module, which every thread of a job loads)
  const v8 = lazyLoad<typeof import('node:v8')>('node:v8')
  for (const f of flags) v8.setFlagsFromString(f)
  applied = Object.freeze(flags)
  return applied
}

/** The flags tuneJit set in this process (empty when it never ran with `'tuned'`). */
export function jitApplied(): readonly string[] {
  return applied ?? []
}
