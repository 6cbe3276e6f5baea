/**
 * What a job is asked to do and what it comes to, shared by the two ways to run one (launch/run-job.ts
 * in this process, launch/processes.ts over several): the options, the result, the output forwarding,
 * the program check, and the launcher's wording of a failure.
 */
import { statSync, accessSync, constants as fsConstants } from 'node:fs'
import { resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { Readable, Writable } from 'node:stream'
import type { JobConfig } from '../base/config.js'
import type { TaskWatch } from '../agent/watch.js'

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
  /**
   * Where the tasks' stderr goes (default process.stderr), and the job's failure line (`lapirun:
   * task 3 failed: …`): that one only when `stderr` is given (lapirun gives its own); otherwise
   * runJob writes nothing of its own, and the failure is the result's `failure`.
   */
  stderr?: Writable
  /** Environment of the tasks (default: this process's). */
  env?: NodeJS.ProcessEnv
  /**
   * Ends the job (as a failure) after this many milliseconds; the failure says what each task was
   * doing then (which blocking call it waited in, and for what).
   */
  timeoutMs?: number
  /**
   * After the first failure, how long (ms) the other tasks may take to end by themselves, with all
   * they wrote forwarded, before they are terminated (default 2000). A task blocked in a LAPI or
   * AM-2 call ends at once (JobAbortedError); only one busy in its own code takes the whole grace.
   */
  graceMs?: number
  /**
   * Aborting it stops the job (as lapirun does on Ctrl-C); the failure then says what each task
   * was doing, as a time-out's does.
   */
  signal?: AbortSignal
  /** Filled in while the job runs: a way to ask what each task is doing (lapirun on SIGUSR1). */
  reports?: JobReports
  /**
   * Anything structured-clonable (SharedArrayBuffers are shared, not copied) that every task can
   * read with `jobData()`: how an embedding program talks to its tasks. (With `procs` > 1 each
   * process gets a copy: nothing is shared between processes.)
   */
  data?: unknown
  /**
   * Processes to spread the tasks over on this host (default 1): process p holds tasks
   * ⌊p·N/P⌋ … ⌊(p+1)·N/P⌋−1, which share memory; tasks of different processes talk over `transport`.
   */
  procs?: number
  /** The network transport between processes, by its name in transport/registry.ts: tcp (the default when `procs` > 1) or udp (AMLAPI_TRANSPORT). */
  transport?: string
  /** The local address the job's sockets bind to (default 127.0.0.1). */
  bind?: string
  /**
   * Seeded fault injection on the network path, for tests: "drop=0.05,dup=0.01,reorder=0.25,
   * corrupt=0.001,delay=0,seed=7" (AMLAPI_FAULTS; docs/transports.md, "Faults"). On tcp only
   * `corrupt` applies, and a corrupt frame ends the job.
   */
  faults?: string
  /** udp: every datagram carries a MAC, against an attacker who reads the traffic (AMLAPI_UDP_MAC=1). */
  mac?: boolean
}

/** RunJobOptions.reports: `ask` is set while the job runs, null before and after. */
export interface JobReports {
  /** What each task of the job is doing now, a line each (indented), as a time-out reports it. */
  ask: (() => Promise<string>) | null
}

/** What a process of a job of several processes adds to runTasks (launch/child.ts). */
export interface ProcessHooks {
  /**
   * Receives the function that ends this process's part of the job as failed (task, reason), and
   * the one that watches this process's tasks for a report (watch.ts).
   */
  bind: (fail: (task: number, reason: string) => void, watch: () => Promise<TaskWatch[]>) => void
  /** The first failure here (a task's, or one `fail` was given). */
  onFail: (task: number, reason: string) => void
  /** A task of this process ended (`failed`: not normally). */
  onTaskEnded: (task: number, failed: boolean) => void
  /** The state of this process's network, in words (for the report of a job that timed out). */
  describe: () => string
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

/** The destinations `forward` watches for errors. */
const watched = new WeakSet<Writable>()

/**
 * Makes an error of `dst` harmless: a reader that went away (`lapirun … | head -1`: EPIPE) leaves
 * the job running, and what the tasks write after it is dropped, as it is when nobody reads.
 */
export function keepGoing(dst: Writable): Writable {
  if (!watched.has(dst)) {
    watched.add(dst)
    dst.on('error', () => {})
  }
  return dst
}

/** Splits a stream into lines and writes each with a prefix (nothing once `dst` is gone). */
export function forward(src: Readable, dst: Writable, prefix: string, wholeLines = false): Promise<void> {
  keepGoing(dst)
  const write = (data: string | Buffer): void => {
    if (!dst.destroyed) dst.write(data)
  }
  const done = new Promise<void>((resolve) => {
    src.once('end', resolve)
    src.once('close', resolve)
  })
  if (prefix === '' && !wholeLines) {
    src.on('data', (chunk: Buffer) => {
      write(chunk)
    })
    return done
  }
  let rest = ''
  src.setEncoding('utf8')
  src.on('data', (chunk: string) => {
    const text = rest + chunk
    const lines = text.split('\n')
    rest = lines.pop() ?? ''
    if (lines.length > 0) write(lines.map((l) => prefix + l + '\n').join(''))
  })
  return done.then(() => {
    if (rest !== '') write(prefix + rest + '\n')
  })
}

/** Default of RunJobOptions.graceMs. */
export const ABORT_GRACE_MS = 2000

/** The program's file URL, once it is known to be a readable file; throws an Error saying what is wrong. */
export function checkProgram(program: string | URL): URL {
  const url = typeof program === 'string' ? pathToFileURL(resolve(program)) : program
  if (url.protocol !== 'file:') return url
  const path = fileURLToPath(url)
  let isFile: boolean
  try {
    isFile = statSync(path).isFile()
  } catch {
    throw new Error(`cannot run ${String(program)}: no such file`)
  }
  if (!isFile) throw new Error(`cannot run ${String(program)}: not a file`)
  try {
    accessSync(path, fsConstants.R_OK)
  } catch {
    throw new Error(`cannot run ${String(program)}: not readable`)
  }
  if (/\.[cm]?ts$/.test(path) && !stripsTypes()) {
    throw new Error(
      `cannot run ${String(program)}: Node ${process.versions.node} does not run TypeScript; use Node 22.18 or later, or compile it with tsc and run the .js`,
    )
  }
  return url
}

/** Whether this Node runs a `.ts` program by stripping its types (22.18 and later; earlier 22 lines with --experimental-strip-types). */
export function stripsTypes(): boolean {
  const ts = (process.features as { typescript?: string | false }).typescript
  return ts === 'strip' || ts === 'transform'
}

/** The line lapirun ends a failed job with. */
export function failureLine(f: { task: number; reason: string }): string {
  return `lapirun: ${f.task >= 0 ? `task ${f.task} failed: ` : ''}${f.reason}\n`
}

export function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`
}
