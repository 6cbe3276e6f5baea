/**
 * A job of several processes on this host (`lapirun --procs P`, `runJob({ procs })`): this process
 * is the launcher and the rendezvous. It makes the job key, listens on loopback (or `bind`), and
 * starts P processes (launch/child.ts), each told the program and its arguments (on its command line)
 * and its rank, the rendezvous address and the key (AMLAPI_RANK, AMLAPI_SIZE, AMLAPI_RENDEZVOUS,
 * AMLAPI_JOB_KEY in its environment, as `lapirun --join` reads them; the environment of a process
 * is readable by its user only).
 *
 * The rendezvous (launch/rendezvous.ts) runs here.
 *
 * The job ends when every process has exited. A process that exits without 'done' (killed,
 * crashed) is a failure naming its tasks; after the first failure the others get 'abort', and a
 * process still running `graceMs` + PROCESS_GRACE_MS later is killed, so none is left behind.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { makeKey } from '../transport/auth.js'
import { serveRendezvous, type Rendezvous } from './rendezvous.js'
import { envTransport, netSettings } from './net-settings.js'
import { resolveConfig } from '../base/config.js'
import { logger } from '../base/log.js'
import { ABORT_GRACE_MS, checkProgram, failureLine, forward, keepGoing, seconds, type JobResult, type RunJobOptions } from './options.js'
import { checkJobFits } from './create-job.js'
import { placement } from '../layout/job-spec.js'

/** Beyond the tasks' grace period, how long a process may take to end before it is killed. */
export const PROCESS_GRACE_MS = 3000
/** How long the processes may take to start and meet at the rendezvous. */
const START_TIMEOUT_MS = 30_000

/** Tasks of process `r`, in words. */
export function tasksOf(numTasks: number, procs: number, r: number): string {
  const { first, count } = placement(numTasks, procs, r)
  return count === 1 ? `task ${first}` : `tasks ${first}-${first + count - 1}`
}

export async function runProcesses(opts: RunJobOptions): Promise<JobResult> {
  const t0 = performance.now()
  const url = checkProgram(opts.program)
  const n = opts.numTasks
  const P = opts.procs!
  const config = resolveConfig(opts.config ?? {}, opts.env ?? process.env)
  const graceMs = opts.graceMs ?? ABORT_GRACE_MS
  // every process runs on this host
  checkJobFits(
    n,
    config,
    P,
    Array.from({ length: P }, (_, r) => r),
    undefined,
    opts.transport ?? envTransport(opts.env ?? process.env),
  )
  const key = makeKey()
  const log = logger('lapi:job', { procs: P })
  const out = keepGoing(opts.stdout ?? process.stdout)
  const errOut = keepGoing(opts.stderr ?? process.stderr)
  const bind = opts.bind ?? '127.0.0.1'

  const codes: Array<number | undefined> = new Array<number | undefined>(n).fill(undefined)
  let failure: { task: number; reason: string } | undefined
  const done: boolean[] = new Array<boolean>(P).fill(false)
  const children: ChildProcess[] = []
  let killTimer: NodeJS.Timeout | undefined
  let rv: Rendezvous | null = null

  const fail = (task: number, reason: string): void => {
    if (failure !== undefined) return
    failure = { task, reason }
    log.debug({ task, reason }, 'aborting the job')
    rv?.abort(task, reason)
    killTimer = setTimeout(() => {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
    }, graceMs + PROCESS_GRACE_MS)
  }

  rv = await serveRendezvous({
    key,
    procs: P,
    host: bind,
    port: 0,
    log,
    job: { numTasks: n, config, label: opts.label === true, graceMs, data: opts.data, ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}) },
    onFail: fail,
    onDone: (rank, c) => {
      const { first, count } = placement(n, P, rank)
      if (Array.isArray(c)) for (let i = 0; i < count; i++) codes[first + i] = typeof c[i] === 'number' ? (c[i] as number) : undefined
      done[rank] = true
    },
  })
  const port = rv.port
  log.debug({ program: fileURLToPath(url), numTasks: n, procs: P, rendezvous: `${bind}:${port}` }, 'job starting')

  const startTimer = setTimeout(() => {
    if (rv?.complete !== true) fail(-1, `the processes did not all start within ${START_TIMEOUT_MS / 1000} s${rv === null ? '' : `: ${rv.waitingFor()}`}`)
  }, START_TIMEOUT_MS)

  // none is left behind, even when this process ends before the job does (a second Ctrl-C)
  const killAll = (): void => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  }
  process.once('exit', killAll)
  // (launch/child.js beside this file as tsc builds it, or beside the chunk that holds it in the bundle)
  const childScript = fileURLToPath(new URL('../launch/child.js', import.meta.url))
  // (the processes read their network settings from the environment, as a process of `lapirun --join` does)
  const netEnv: Record<string, string> = {}
  if (opts.transport !== undefined) netEnv['AMLAPI_TRANSPORT'] = opts.transport
  if (opts.faults !== undefined) netEnv['AMLAPI_FAULTS'] = opts.faults
  if (opts.mac !== undefined) netEnv['AMLAPI_UDP_MAC'] = opts.mac ? '1' : '0'
  netSettings({ ...(opts.env ?? process.env), ...netEnv })
  const exits: Array<Promise<void>> = []
  const streams: Array<Promise<void>> = []
  for (let r = 0; r < P; r++) {
    const c = spawn(process.execPath, [...process.execArgv, childScript, url.href, ...(opts.args ?? [])], {
      env: {
        ...(opts.env ?? process.env),
        AMLAPI_RANK: String(r),
        AMLAPI_SIZE: String(P),
        AMLAPI_RENDEZVOUS: `${bind}:${port}`,
        AMLAPI_JOB_KEY: key.toString('hex'),
        ...netEnv,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    children.push(c)
    streams.push(forward(c.stdout!, out, '', true), forward(c.stderr!, errOut, '', true))
    exits.push(
      new Promise<void>((resolve) => {
        c.once('error', (e) => {
          fail(-1, `could not start process ${r}: ${e.message}`)
          resolve()
        })
        c.once('exit', (code, signal) => {
          log.debug({ process: r, code, signal }, 'process exited')
          if (!done[r]) {
            const { first, count } = placement(n, P, r)
            for (let t = first; t < first + count; t++) codes[t] ??= code ?? 1
            fail(
              first,
              `process ${r} (${tasksOf(n, P, r)}) ${signal !== null ? `was killed by ${signal}` : `exited with code ${String(code)}`} before its tasks ended`,
            )
          }
          resolve()
        })
      }),
    )
  }

  // (what each task is doing, asked of every process: for a time-out, Ctrl-C and lapirun's SIGUSR1)
  const report = async (): Promise<string> => (rv !== null && rv.complete ? await rv.report() : `  the job had not started: ${rv?.waitingFor() ?? ''}`)
  let printed = false
  const failWithReport = (what: string): void => {
    if (failure !== undefined) return
    // (printed at once, not after the tasks' grace period)
    const now = (reason: string): void => {
      if (failure !== undefined) return
      fail(-1, reason)
      if (opts.stderr !== undefined) {
        errOut.write(failureLine({ task: -1, reason }))
        printed = true
      }
    }
    void report().then(
      (r) => now(`${what}:\n${r}`),
      () => now(what),
    )
  }
  let timer: NodeJS.Timeout | undefined
  if (opts.timeoutMs !== undefined) {
    const ms = opts.timeoutMs
    timer = setTimeout(() => failWithReport(`the job timed out after ${seconds(ms)}`), ms)
  }
  if (opts.reports !== undefined) opts.reports.ask = report
  const onAbort = (): void => failWithReport('the job was interrupted')
  opts.signal?.addEventListener('abort', onAbort, { once: true })
  if (opts.signal?.aborted === true) onAbort()

  await Promise.all(exits)
  await Promise.all(streams)
  clearTimeout(startTimer)
  if (timer !== undefined) clearTimeout(timer)
  if (killTimer !== undefined) clearTimeout(killTimer)
  opts.signal?.removeEventListener('abort', onAbort)
  if (opts.reports !== undefined) opts.reports.ask = null
  process.off('exit', killAll)
  rv.close()

  let exitCode = 0
  const f = failure as { task: number; reason: string } | undefined
  if (f !== undefined) {
    if (opts.stderr !== undefined && !printed) errOut.write(failureLine(f))
    const c = f.task >= 0 ? codes[f.task] : undefined
    exitCode = c !== undefined && c !== 0 ? c : 1
  } else if (codes.some((c) => c !== 0)) {
    exitCode = 1
  }
  const result: JobResult = { exitCode, taskExitCodes: codes, durationMs: performance.now() - t0 }
  if (f !== undefined) result.failure = f
  log.debug({ exitCode, durationMs: Math.round(result.durationMs), failure: f }, 'job ended')
  return result
}
