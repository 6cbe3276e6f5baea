/**
 * The agent: runs a job of N tasks as worker threads of this process. It owns the segments and the
 * control block, forwards each task's stdout/stderr (optionally labelled `[t] `), and turns the
 * first failure of a task (an uncaught error, a non-zero exit, a kill, LAPI's default error
 * handling) into a prompt end of the whole job: the control block's abort flag wakes every waiting
 * task, whose blocking call then throws JobAbortedError; tasks that have not ended by themselves
 * after a grace period (`graceMs`) are terminated. Until then every task's output still flows, so
 * nothing a task wrote before the end is lost.
 */
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { resolveConfig } from '../base/config.js'
import { describeError } from '../base/errors.js'
import { logger } from '../base/log.js'
import type { Logger } from 'pino'
import { tuneJit } from '../base/jit.js'
import { TASK_STATE, TaskState, abortJob, taskWord, ringDoorbell } from '../layout/control.js'
import { formatReport, watchTasks, type TaskWatch } from '../agent/watch.js'
import { failureOf } from '../sync/failure.js'
import { DATA_KEY, SPEC_KEY, type JobSpec } from '../layout/job-spec.js'
import { checkJobFits, createJob } from './create-job.js'
import { isPageAligned } from '../layout/memory.js'
import { parseFaults } from '../transport/faults.js'
import { isTransport, transportList } from '../transport/registry.js'
import { ABORT_GRACE_MS, checkProgram, failureLine, forward, keepGoing, seconds, type JobResult, type ProcessHooks, type RunJobOptions } from './options.js'

export { ABORT_GRACE_MS, checkProgram, failureLine, forward, seconds, type JobResult, type ProcessHooks, type RunJobOptions }

/**
 * Runs `program` as `numTasks` tasks and resolves when the job is over. Never rejects for a task's
 * failure: the result says what happened. Rejects only for bad options.
 */
export async function runJob(opts: RunJobOptions): Promise<JobResult> {
  const procs = opts.procs ?? 1
  if (!Number.isInteger(procs) || procs < 1 || procs > opts.numTasks)
    throw new RangeError(`procs must be an integer from 1 to the number of tasks (${opts.numTasks}), not ${procs}`)
  if (opts.transport !== undefined && !isTransport(opts.transport)) throw new RangeError(`unknown transport ${String(opts.transport)}: ${transportList()}`)
  if (opts.faults !== undefined) parseFaults(opts.faults)
  if (procs > 1) {
    const { runProcesses } = await import('./processes.js')
    return await runProcesses(opts)
  }
  const config = resolveConfig(opts.config ?? {}, opts.env ?? process.env)
  checkJobFits(opts.numTasks, config, 1, [0])
  return await runTasks(opts, createJob(opts.numTasks, config), null)
}

/**
 * Runs the tasks of `job` (all of a job of one process, or this process's part of a larger one,
 * with `hooks`) as worker threads of this process.
 */
export async function runTasks(opts: RunJobOptions, job: Omit<JobSpec, 'taskId'>, hooks: ProcessHooks | null): Promise<JobResult> {
  const t0 = performance.now()
  const url = checkProgram(opts.program)
  const config = job.config
  const n = job.numTasks
  const lo = job.firstTask
  const nLocal = job.localTasks
  const graceMs = opts.graceMs ?? ABORT_GRACE_MS
  const log = logger('lapi:job', { job: job.jobId })
  log.debug(
    {
      program: fileURLToPath(url),
      args: opts.args ?? [],
      numTasks: n,
      placement: `process ${process.pid}: tasks ${lo}-${lo + nLocal - 1} of ${n} as worker threads`,
      config,
    },
    'job starting',
  )
  // before any task's code compiles (config.jit: V8's inlining budgets, for the whole process)
  const jit = tuneJit(config.jit)
  if (jit.length > 0) log.debug({ flags: jit }, 'V8 inlining budgets raised')
  // (pageAlignedShared falls back to plain buffers, 16-byte aligned, where WebAssembly.Memory is refused)
  if (![job.control, ...job.inboxes.filter((b) => b !== null)].every(isPageAligned)) {
    log.warn('inboxes or control block not page-aligned (shared WebAssembly.Memory refused): small packets may straddle cache lines')
  }
  const out = keepGoing(opts.stdout ?? process.stdout)
  const errOut = keepGoing(opts.stderr ?? process.stderr)
  const ctl = new Int32Array(job.control)
  const codes: Array<number | undefined> = new Array<number | undefined>(n).fill(undefined)
  const local = (t: number): boolean => t >= lo && t < lo + nLocal
  let failure: { task: number; reason: string } | undefined
  const workers: Worker[] = new Array<Worker>(n)
  const streams: Array<Promise<void>> = []

  let graceTimer: NodeJS.Timeout | undefined
  const fail = (task: number, reason: string): void => {
    if (failure !== undefined) return
    failure = { task, reason }
    log.debug({ task, reason, graceMs }, 'aborting the job')
    abortJob(ctl, n, task)
    hooks?.onFail(task, reason)
    graceTimer = setTimeout(() => {
      const left = codes.flatMap((c, t) => (c === undefined && workers[t] !== undefined ? [t] : []))
      if (left.length > 0) log.debug({ tasks: left }, 'grace period over: terminating the tasks still running')
      for (const t of left) void workers[t]!.terminate()
    }, graceMs)
  }
  const watch = (): Promise<TaskWatch[]> => watchTasks(ctl, n, job.segments, codes, local)
  hooks?.bind(fail, watch)

  const exits = new Array<Promise<void>>(n)
  for (let t = lo; t < lo + nLocal; t++) {
    const spec: JobSpec = { ...job, taskId: t }
    let w: Worker
    try {
      w = new Worker(url, {
        argv: opts.args ?? [],
        workerData: { [SPEC_KEY]: spec, [DATA_KEY]: opts.data },
        env: opts.env ?? process.env,
        stdout: true,
        stderr: true,
      })
    } catch (e) {
      fail(t, `could not start: ${describeError(e)}`)
      break
    }
    workers[t] = w
    const prefix = opts.label === true ? `[${t}] ` : ''
    streams.push(forward(w.stdout, out, prefix), forward(w.stderr, errOut, prefix))
    let threw: string | undefined
    let ended: string | undefined
    w.on('error', (e) => {
      threw = describeError(e)
    })
    w.on('message', (m) => {
      ended ??= failureOf(m)
    })
    exits[t] = new Promise<number>((resolve) => w.once('exit', resolve)).then((code) => {
      codes[t] = code
      const failed = threw !== undefined || code !== 0
      Atomics.store(ctl, taskWord(t, TASK_STATE), failed ? TaskState.FAILED : TaskState.EXITED)
      for (let i = lo; i < lo + nLocal; i++) if (i !== t) ringDoorbell(ctl, i)
      hooks?.onTaskEnded(t, failed)
      log.debug({ task: t, code, error: threw ?? ended }, 'task exited')
      if (failure !== undefined) return
      if (ended !== undefined) fail(t, ended)
      else if (threw !== undefined) fail(t, `uncaught error: ${threw}`)
      else if (code !== 0) fail(t, `exited with code ${String(code)}`)
    })
  }

  // (a time-out's or an interruption's report is printed at once, not after the tasks' grace period)
  let printed = false
  const failNow = (reason: string): void => {
    if (failure !== undefined) return
    fail(-1, reason)
    if (hooks === null && opts.stderr !== undefined) {
      errOut.write(failureLine({ task: -1, reason }))
      printed = true
    }
  }
  let timer: NodeJS.Timeout | undefined
  if (opts.timeoutMs !== undefined) {
    const ms = opts.timeoutMs
    timer = setTimeout(() => {
      void watch().then((recs) => {
        failNow(`the job timed out after ${seconds(ms)}:\n${formatReport(recs, n, hooks !== null ? [hooks.describe()] : [])}`)
      })
    }, ms)
  }
  // (the debug log of a job that waits: once a second, what each task in a blocking call waits for)
  const tick = log.isLevelEnabled('debug')
    ? setInterval(() => {
        void logWaits(log, watch, n)
      }, WAIT_LOG_MS)
    : undefined
  tick?.unref()
  // (a job of one process reports here; a process of a larger one, through the rendezvous)
  const report = async (): Promise<string> => formatReport(await watch(), n)
  if (hooks === null && opts.reports !== undefined) opts.reports.ask = report
  const onAbort = (): void => {
    if (hooks !== null) fail(-1, 'the job was interrupted')
    else void report().then((r) => failNow(`the job was interrupted:\n${r}`))
  }
  opts.signal?.addEventListener('abort', onAbort, { once: true })
  if (opts.signal?.aborted === true) onAbort()

  await Promise.all(exits.filter((p) => p !== undefined))
  await Promise.all(streams)
  if (timer !== undefined) clearTimeout(timer)
  if (graceTimer !== undefined) clearTimeout(graceTimer)
  clearInterval(tick)
  opts.signal?.removeEventListener('abort', onAbort)
  if (hooks === null && opts.reports !== undefined) opts.reports.ask = null

  let exitCode = 0
  const f = failure as { task: number; reason: string } | undefined
  if (f !== undefined) {
    // (the failure is in the result; its line only where the caller gave a stderr: lapirun does)
    if (hooks === null && opts.stderr !== undefined && !printed) errOut.write(failureLine(f))
    const c = f.task >= 0 ? codes[f.task] : undefined
    exitCode = c !== undefined && c !== 0 ? c : 1
  }
  const result: JobResult = { exitCode, taskExitCodes: codes, durationMs: performance.now() - t0 }
  log.debug({ exitCode, durationMs: Math.round(result.durationMs), failure: f }, 'job ended')
  if (f !== undefined) result.failure = f
  return result
}

/** How often the debug log says what the tasks wait for, ms. */
const WAIT_LOG_MS = 1000

/** Logs (debug) what this process's tasks are doing, when one of them is in a blocking call. */
async function logWaits(log: Logger, watch: () => Promise<TaskWatch[]>, n: number): Promise<void> {
  const recs = await watch()
  if (recs.some((w) => w.call !== 0 && w.code === null))
    log.debug(
      {
        tasks: formatReport(recs, n)
          .split('\n')
          .map((l) => l.trim()),
      },
      'what the tasks wait for',
    )
}
