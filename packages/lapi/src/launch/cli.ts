/**
 * `lapirun`: starts a LAPI job on this host.
 *
 *   lapirun -n N [--procs P] [--transport shm|tcp|udp] [--bind ADDR] [--faults SPEC] [--mac] [--segment-size BYTES] [--spin-us US]
 *   lapirun --join [--tasks-per-proc K] [--transport tcp|udp] [--bind ADDR] [--faults SPEC] [--mac] … program.mjs [args…]
 *           [--spin-max-us US] [--jit tuned|default] [--label] [--timeout SECONDS] [--] program.mjs [args…]
 *
 * Exits 0 when every task finished normally; otherwise prints which task failed and why and exits
 * non-zero (the task's exit code when it had one). Bad options exit 2 with lapirun's own message.
 * Ctrl-C stops every task and exits 130; a second Ctrl-C stops them without waiting for their output.
 */
import { createRequire } from 'node:module'
import { parseSize } from '../base/config.js'
import { MAX_TASKS } from '../layout/job-spec.js'
import { runJob } from './run-job.js'
import { checkProgram, type JobReports } from './options.js'
import { JoinError, joinJob } from './join.js'
import type { JitMode } from '../base/jit.js'
import { logger } from '../base/log.js'
import { parseFaults } from '../transport/faults.js'
import { DEFAULT_TRANSPORT, isTransport, transportKind, transportList, transportNames } from '../transport/registry.js'

const USAGE = `usage: lapirun -n N [options] [--] program.mjs [args...]
       lapirun --join [--tasks-per-proc K] [options] [--] program.mjs [args...]

Runs program.mjs as N LAPI tasks (task ids 0..N-1), one worker thread each, in P
processes on this host: process p holds tasks floor(p*N/P) .. floor((p+1)*N/P)-1.
Tasks of one process share memory; tasks of different processes talk over the
network transport.

options:
  -n, --tasks N          number of tasks (default 1); as many as the memory allows:
                         lapirun says at start when the job does not fit
  --procs P              processes to spread the tasks over, 1..N (default 1)
  --transport NAME       between processes: tcp (the default with --procs > 1) or udp;
                         shm: one process only (env AMLAPI_TRANSPORT)
  --bind ADDR            local address the job's sockets bind to (default 127.0.0.1)
  --faults SPEC          seeded fault injection, for tests (env AMLAPI_FAULTS), e.g.
                         drop=0.05,dup=0.01,reorder=0.25,corrupt=0.001,delay=100,seed=7:
                         probabilities per datagram, delay in µs; on tcp only corrupt
  --mac                  udp: every datagram carries a MAC (env AMLAPI_UDP_MAC=1)
  --join                 this process is one of P processes another launcher started
                         (mpirun, mpiexec, srun, a script, by hand): rank and size from
                         AMLAPI_RANK/AMLAPI_SIZE (or PMI_*, OMPI_COMM_WORLD_*, SLURM_*);
                         the rendezvous from AMLAPI_RENDEZVOUS=host:port (process 0
                         listens there; the key from AMLAPI_JOB_KEY, hex, >= 128 bits)
                         or file:DIR (process 0 makes the key), else the launcher's PMI
                         or a one-host default (docs/launching.md)
  --tasks-per-proc K     with --join: tasks of each process (default 1)
  --segment-size BYTES   bytes of each task's segment, e.g. 64M (env AMLAPI_SEGMENT_SIZE)
  --spin-us US           how long waits spin before sleeping, µs (env AMLAPI_SPIN_US)
  --spin-max-us US       longest spin the adaptive budget grows to, µs (env AMLAPI_SPIN_MAX_US)
  --jit MODE             default: V8's inlining budgets as node has them; tuned: raised for
                         the job's process (faster once compiled, longer to compile; env AMLAPI_JIT)
  --label                prefix each output line with [task]
  --timeout SECONDS      end the job as failed after this long, saying what each task waited for
  -h, --help             this text
  -V, --version          lapirun's version and the Node it runs on

Logs: AMLAPI_LOG_LEVEL=debug (or info, warn, error) writes JSON lines to stderr.
`

/** The options lapirun takes: name → whether it takes a value. Short forms map to these. */
const OPTIONS: Readonly<Record<string, boolean>> = {
  tasks: true,
  np: true,
  procs: true,
  transport: true,
  bind: true,
  faults: true,
  mac: false,
  join: false,
  'tasks-per-proc': true,
  'segment-size': true,
  'spin-us': true,
  'spin-max-us': true,
  jit: true,
  timeout: true,
  label: false,
  help: false,
  version: false,
}
const SHORT: Readonly<Record<string, string>> = { n: 'tasks', h: 'help', V: 'version' }

/** A usage error: lapirun prints its message and exits 2. */
class UsageError extends Error {}

interface Parsed {
  values: Map<string, string | true>
  program: string | undefined
  args: string[]
}

/**
 * Splits the command line at the program: lapirun's own options come before it (`--name value`,
 * `--name=value`, `-n value`, `-n4`), everything after it belongs to the program, even what looks
 * like an option; `--` ends lapirun's options. A value may begin with `-` (`-n -1` is a bad count,
 * not an unknown option).
 */
function parse(argv: string[]): Parsed {
  const values = new Map<string, string | true>()
  let i = 0
  while (i < argv.length) {
    const a = argv[i]!
    if (a === '--') {
      i++
      break
    }
    if (!a.startsWith('-') || a === '-') break
    let name: string
    let inline: string | undefined
    if (a.startsWith('--')) {
      const eq = a.indexOf('=')
      name = eq < 0 ? a.slice(2) : a.slice(2, eq)
      if (eq >= 0) inline = a.slice(eq + 1)
    } else {
      const long = SHORT[a[1]!]
      if (long === undefined) throw new UsageError(`unknown option '${a}'`)
      name = long
      if (a.length > 2) inline = a.slice(2)
    }
    const takes = OPTIONS[name]
    if (takes === undefined) throw new UsageError(`unknown option '${a}'`)
    const shown = a.startsWith('--') ? `--${name}` : a.slice(0, 2)
    if (!takes) {
      if (inline !== undefined) throw new UsageError(`${shown} takes no value`)
      values.set(name, true)
      i++
      continue
    }
    if (inline === undefined) {
      if (i + 1 >= argv.length) throw new UsageError(`${shown} needs a value`)
      inline = argv[i + 1]!
      // (another of lapirun's options where the value should be: the value is missing; `-n -1` is a bad count)
      if (isOption(inline)) throw new UsageError(`${shown} needs a value, but the next argument is the option ${inline}`)
      i += 2
      // (the last argument, a program's name, taken as an option's value: no program is left)
      if (i >= argv.length && /\.[cm]?[jt]s$/.test(inline))
        throw new UsageError(`${shown} needs a value: '${inline}' was taken as its value, and no program is left`)
    } else i++
    values.set(name, inline)
  }
  return { values, program: argv[i], args: argv.slice(i + 1) }
}

/** Whether `a` is one of lapirun's options as written on a command line (`--procs`, `--procs=2`, `-n4`, `-V`). */
function isOption(a: string): boolean {
  if (a.startsWith('--')) {
    const eq = a.indexOf('=')
    return OPTIONS[eq < 0 ? a.slice(2) : a.slice(2, eq)] !== undefined
  }
  return a.length >= 2 && a[0] === '-' && SHORT[a[1]!] !== undefined
}

function wholeNumber(text: string, min: number, max: number, what: string): number {
  const v = /^\s*\d+\s*$/.test(text) ? Number(text) : NaN
  if (!Number.isSafeInteger(v) || v < min || v > max) throw new UsageError(`${what} must be a whole number from ${min} to ${max}, not '${text}'`)
  return v
}

function microseconds(text: string, what: string): number {
  const v = /^\s*\d+(\.\d+)?\s*$/.test(text) ? Number(text) : NaN
  if (!(v >= 0 && v <= 1e7)) throw new UsageError(`${what} must be a number of microseconds from 0 to 10000000, not '${text}'`)
  return v
}

/** `--transport shm`: the tasks of one process, no network transport. */
const SHM = 'shm'

/** Runs lapirun with the given arguments; resolves with the exit code. */
export async function main(argv: string[]): Promise<number> {
  const log = logger('lapirun')
  let p: Parsed
  let n: number
  const config: { segmentSize?: number; spinUs?: number; spinMaxUs?: number; jit?: JitMode } = {}
  let timeoutMs: number | undefined
  let procs = 1
  let bind: string | undefined
  const net: { transport?: string; faults?: string; mac?: boolean } = {}
  /** With --join: the tasks per process (0: not joining). */
  let join = 0
  try {
    p = parse(argv)
    const v = p.values
    if (v.has('help')) {
      process.stdout.write(USAGE)
      return 0
    }
    if (v.has('version')) {
      process.stdout.write(`lapirun ${version()} (@amlapi/lapi, Node ${process.version})\n`)
      return 0
    }
    if (p.program === undefined) throw new UsageError('no program given')
    const str = (k: string): string | undefined => v.get(k) as string | undefined
    if (v.has('join')) {
      if (v.has('tasks') || v.has('np') || v.has('procs'))
        throw new UsageError('--join takes no -n or --procs: the job has P·K tasks, P from the launcher, K from --tasks-per-proc')
      if (str('transport') === SHM) throw new UsageError(`--join needs a network transport: ${transportList()}`)
      join = wholeNumber(str('tasks-per-proc') ?? '1', 1, MAX_TASKS, '--tasks-per-proc')
      n = join
    } else {
      if (v.has('tasks-per-proc')) throw new UsageError('--tasks-per-proc goes with --join')
      n = wholeNumber(str('tasks') ?? str('np') ?? '1', 1, MAX_TASKS, '-n (the number of tasks)')
    }
    const procsText = str('procs')
    procs = procsText === undefined ? 1 : wholeNumber(procsText, 1, n, `--procs (processes, at most the ${n} task${n === 1 ? '' : 's'} of -n)`)
    const envTransport = (process.env['AMLAPI_TRANSPORT'] ?? '').trim()
    const transport = str('transport') ?? (procs > 1 || join > 0 ? (envTransport !== '' ? envTransport : DEFAULT_TRANSPORT) : SHM)
    if (transport !== SHM && !isTransport(transport))
      throw new UsageError(`--transport must be ${transportList([SHM, ...transportNames()])}, not '${transport}'`)
    if (transport === SHM && procs > 1) throw new UsageError(`--transport shm joins the tasks of one process only; --procs ${procs} needs ${transportList()}`)
    if (transport !== SHM) net.transport = transport
    const faults = str('faults')
    if (faults !== undefined) {
      try {
        parseFaults(faults)
      } catch (e) {
        throw new UsageError(`--faults: ${(e as Error).message}`)
      }
      net.faults = faults
    }
    if (v.has('mac')) net.mac = true
    for (const w of idleOptions(transport, procs > 1 || join > 0, faults, v.has('mac'))) process.stderr.write(`lapirun: warning: ${w}\n`)
    bind = str('bind')
    if (bind !== undefined && bind.trim() === '') throw new UsageError('--bind needs an address, such as 127.0.0.1')
    const seg = str('segment-size')
    if (seg !== undefined) {
      const s = parseSize(seg)
      if (!Number.isFinite(s)) throw new UsageError(`--segment-size must be a size in bytes such as 65536, 64K or 16M, not '${seg}'`)
      config.segmentSize = s
    }
    const spin = str('spin-us')
    if (spin !== undefined) config.spinUs = microseconds(spin, '--spin-us')
    const spinMax = str('spin-max-us')
    if (spinMax !== undefined) config.spinMaxUs = microseconds(spinMax, '--spin-max-us')
    const jit = str('jit')
    if (jit !== undefined) {
      if (jit !== 'tuned' && jit !== 'default') throw new UsageError(`--jit must be tuned or default, not '${jit}'`)
      config.jit = jit
    }
    const to = str('timeout')
    if (to !== undefined) {
      const s = /^\s*\d+(\.\d+)?\s*$/.test(to) ? Number(to) : NaN
      if (!(s > 0)) throw new UsageError(`--timeout must be a positive number of seconds, not '${to}'`)
      timeoutMs = Math.round(s * 1000)
    }
  } catch (e) {
    if (!(e instanceof UsageError)) throw e
    process.stderr.write(`lapirun: ${e.message} (lapirun --help lists the options)\n`)
    return 2
  }

  // (a job of this launcher makes its own key: one in the environment is not passed to the tasks;
  // under --join, joinJob reads it and takes it out)
  if (join === 0) delete process.env['AMLAPI_JOB_KEY']
  // (a program that cannot run — no such file, TypeScript where Node does not strip types — is said
  // before anything starts, in every placement)
  try {
    checkProgram(p.program!)
  } catch (e) {
    process.stderr.write(`lapirun: ${(e as Error).message}\n`)
    return 2
  }
  const ac = new AbortController()
  // (the signal that stopped the job: lapirun then exits 128 + its number, 130 or 143, as a shell reports it)
  let interrupted: NodeJS.Signals | null = null
  const signalCode = (): number => (interrupted === 'SIGTERM' ? 143 : 130)
  // (under --join, once this process's tasks have ended: what is left is its leave, which waits
  // for its peers a few seconds at most; a signal then ends it at once)
  let leaving = false
  const onSig = (sig: NodeJS.Signals): void => {
    if (interrupted !== null) {
      log.debug({ signal: sig }, 'second signal: exiting without waiting for the tasks')
      process.exit(signalCode())
    }
    interrupted = sig
    if (leaving) {
      log.debug({ signal: sig }, 'signal while leaving the job: exiting without waiting for the peers')
      process.exit(signalCode())
    }
    log.debug({ signal: sig }, 'signal: stopping the job')
    ac.abort()
  }
  // (SIGUSR1: what each task is doing, the job going on; under --join process 0 prints it)
  const reports: JobReports = { ask: null }
  const onReport = (): void => {
    const ask = reports.ask
    if (ask !== null)
      void ask().then((r) => {
        if (r !== '') process.stderr.write(`lapirun: what each task was doing (the job goes on):\n${r}\n`)
      })
  }
  process.on('SIGINT', onSig)
  process.on('SIGTERM', onSig)
  process.on('SIGUSR1', onReport)
  if (join > 0) {
    try {
      const code = await joinJob({
        program: p.program!,
        args: p.args,
        tasksPerProc: join,
        config,
        label: p.values.has('label'),
        env: process.env,
        onLeave: () => {
          leaving = true
        },
        signal: ac.signal,
        reports,
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
        ...(bind !== undefined ? { bind } : {}),
        ...net,
      })
      return interrupted !== null ? signalCode() : code
    } catch (e) {
      process.stderr.write(`lapirun: ${(e as Error).message}\n`)
      return e instanceof JoinError ? 2 : interrupted !== null ? signalCode() : 1
    }
  }
  try {
    const r = await runJob({
      program: p.program!,
      numTasks: n,
      args: p.args,
      config,
      label: p.values.has('label'),
      signal: ac.signal,
      procs,
      reports,
      stderr: process.stderr,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      ...(bind !== undefined ? { bind } : {}),
      ...(procs > 1 ? net : {}),
    })
    return interrupted !== null ? signalCode() : r.exitCode
  } catch (e) {
    process.stderr.write(`lapirun: ${(e as Error).message}\n`)
    return 2
  } finally {
    process.off('SIGINT', onSig)
    process.off('SIGTERM', onSig)
    process.off('SIGUSR1', onReport)
  }
}

/** The version of @amlapi/lapi (its package.json, two folders up from this file in dist/ and lib/). */
function version(): string {
  try {
    return String((createRequire(import.meta.url)('../../package.json') as { version?: unknown }).version)
  } catch {
    return 'unknown'
  }
}

/**
 * What the options given do nothing for in this placement, a sentence each: no network in a job of
 * one process; over a network, what the transport's kind says it does not use (`unusedOptions`).
 */
function idleOptions(transport: string, network: boolean, faults: string | undefined, mac: boolean): string[] {
  const out: string[] = []
  if (!network) {
    if (transport !== SHM) out.push(`--transport ${transport} does nothing in a job of one process (its tasks share memory): add --procs 2 or more`)
    if (faults !== undefined) out.push('--faults does nothing in a job of one process (no network): add --procs 2 or more')
    if (mac) out.push('--mac does nothing in a job of one process (no network): add --procs 2 or more')
    return out
  }
  if (isTransport(transport)) out.push(...(transportKind(transport).unusedOptions?.({ faults: faults === undefined ? null : parseFaults(faults), mac }) ?? []))
  return out
}
