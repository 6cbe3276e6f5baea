/**
 * The agent: runs a job of N tasks as worker threads of this process (ARCHITECTURE.md §2). It owns
 * the segments and the control block, forwards each task's stdout/stderr (optionally labelled
 * `[t] `), and turns the first failure of a task (an uncaught error, a non-zero exit, a kill) into a
 * prompt end of the whole job: the control block's abort flag wakes every waiting task, which then
 * stops, and the remaining workers are terminated.
 */
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { Readable, Writable } from 'node:stream'
import { resolveConfig, type JobConfig } from '../config.js'
import { logger } from '../log.js'
import { tuneJit } from './jit.js'
import { T_STATE, TaskState, abortJob, taskWord, ringDoorbell } from './control.js'
import { DATA_KEY, SPEC_KEY, createJob, type JobSpec } from './spec.js'
import { isPageAligned } from '../transport/ring.js'

export interface RunJobOptions {
  /** The program every task runs (a path or file URL of an ES module or script). */
  program: string | URL
  /** Number of tasks (N ≥ 1). */
  numTasks: number
  /** Arguments: each task's `process.argv` is `[node, program, ...args]`. */
  args?: string[]
  /** Job settings; the rest come from the environment and the defaults (config.ts). */
  config?: Partial<JobConfig>
  /** Prefix every output line with `[task] `. */
  label?: boolean
  /** Where the tasks' stdout goes (default process.stdout). */
  stdout?: Writable
  /** Where the tasks' stderr and the job's failure message go (default process.stderr). */
  stderr?: Writable
  /** Environment of the tasks (default: this process's). */
  env?: NodeJS.ProcessEnv
  /** Ends the job (as a failure) after this many milliseconds. */
  timeoutMs?: number
  /** Aborting it stops the job (as lapirun does on Ctrl-C). */
  signal?: AbortSignal
  /**
   * Anything structured-clonable (SharedArrayBuffers are shared, not copied) that every task can
   * read with `jobData()`: how an embedding program talks to its tasks.
   */
  data?: unknown
}

export interface JobResult {
  /** 0 when every task finished normally, otherwise non-zero. */
  exitCode: number
  /** Exit code of each task's thread (undefined while it never ran). */
  taskExitCodes: Array<number | undefined>
  /** The first failure: which task and why; undefined on success. */
  failure?: { task: number; reason: string }
  durationMs: number
}

/** Splits a stream into lines and writes each with a prefix. */
function forward (src: Readable, dst: Writable, prefix: string): Promise<void> {
  const done = new Promise<void>((resolve) => { src.once('end', resolve); src.once('close', resolve) })
  if (prefix === '') {
    src.on('data', (chunk: Buffer) => { dst.write(chunk) })
    return done
  }
  let rest = ''
  src.setEncoding('utf8')
  src.on('data', (chunk: string) => {
    const text = rest + chunk
    const lines = text.split('\n')
    rest = lines.pop() ?? ''
    if (lines.length > 0) dst.write(lines.map((l) => prefix + l + '\n').join(''))
  })
  return done.then(() => { if (rest !== '') dst.write(prefix + rest + '\n') })
}

function describe (err: unknown): string {
  if (err instanceof Error) return err.stack ?? `${err.name}: ${err.message}`
  return String(err)
}

/**
 * Runs `program` as `numTasks` tasks and resolves when the job is over. Never rejects for a task's
 * failure: the result says what happened. Rejects only for bad options.
 */
export async function runJob (opts: RunJobOptions): Promise<JobResult> {
  const t0 = performance.now()
  const config = resolveConfig(opts.config ?? {}, opts.env ?? process.env)
  const job = createJob(opts.numTasks, config)
  const n = opts.numTasks
  const log = logger('lapi:job', { job: job.jobId })
  // before any task's code compiles (config.jit: V8's inlining budgets, for the whole process)
  const jit = tuneJit(config.jit)
  if (jit.length > 0) log.debug({ flags: jit }, 'V8 inlining budgets raised')
  // (pageAlignedShared falls back to plain buffers, 16-byte aligned, where WebAssembly.Memory is refused)
  if (![job.control, ...job.inboxes].every(isPageAligned)) {
    log.warn('inboxes or control block not page-aligned (shared WebAssembly.Memory refused): small packets may straddle cache lines')
  }
  const out = opts.stdout ?? process.stdout
  const errOut = opts.stderr ?? process.stderr
  const url = typeof opts.program === 'string' ? pathToFileURL(resolve(opts.program)) : opts.program
  const ctl = new Int32Array(job.control)
  const codes: Array<number | undefined> = new Array<number | undefined>(n).fill(undefined)
  let failure: { task: number; reason: string } | undefined
  const workers: Worker[] = []
  const streams: Array<Promise<void>> = []

  const fail = (task: number, reason: string): void => {
    if (failure !== undefined) return
    failure = { task, reason }
    log.debug({ task, reason }, 'task failed; aborting the job')
    abortJob(ctl, n, task)
    for (const w of workers) void w.terminate()
  }

  const exits = new Array<Promise<void>>(n)
  for (let t = 0; t < n; t++) {
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
      fail(t, `could not start: ${describe(e)}`)
      break
    }
    workers.push(w)
    const prefix = opts.label === true ? `[${t}] ` : ''
    streams.push(forward(w.stdout, out, prefix), forward(w.stderr, errOut, prefix))
    let threw: string | undefined
    w.on('error', (e) => { threw = describe(e) })
    exits[t] = new Promise<number>((resolve) => w.once('exit', resolve)).then((code) => {
      codes[t] = code
      const failed = threw !== undefined || code !== 0
      Atomics.store(ctl, taskWord(t, T_STATE), failed ? TaskState.FAILED : TaskState.EXITED)
      for (let i = 0; i < n; i++) if (i !== t) ringDoorbell(ctl, i)
      if (failure !== undefined) return
      if (threw !== undefined) fail(t, `uncaught error: ${threw}`)
      else if (code !== 0) fail(t, `exited with code ${String(code)}`)
    })
  }

  let timer: NodeJS.Timeout | undefined
  if (opts.timeoutMs !== undefined) {
    timer = setTimeout(() => fail(-1, `the job timed out after ${opts.timeoutMs} ms`), opts.timeoutMs)
  }
  const onAbort = (): void => fail(-1, 'the job was interrupted')
  opts.signal?.addEventListener('abort', onAbort, { once: true })
  if (opts.signal?.aborted === true) onAbort()

  await Promise.all(exits.filter((p) => p !== undefined))
  await Promise.all(streams)
  if (timer !== undefined) clearTimeout(timer)
  opts.signal?.removeEventListener('abort', onAbort)

  let exitCode = 0
  const f = failure as { task: number; reason: string } | undefined
  if (f !== undefined) {
    const who = f.task >= 0 ? `task ${f.task}` : 'lapirun'
    errOut.write(`lapirun: ${who} failed: ${f.reason}\n`)
    const c = f.task >= 0 ? codes[f.task] : undefined
    exitCode = c !== undefined && c !== 0 ? c : 1
  }
  const result: JobResult = { exitCode, taskExitCodes: codes, durationMs: performance.now() - t0 }
  if (f !== undefined) result.failure = f
  return result
}
