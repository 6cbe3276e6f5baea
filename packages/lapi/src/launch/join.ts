/**
 * `lapirun --join`: this process is one of P processes of a job that another launcher started
 * (`mpirun`, `mpiexec`, `srun`, a script, `ip netns exec`, by hand; docs/launching.md). Every
 * process runs the same command; rank r holds tasks r·K … r·K+K−1 of N = P·K (K =
 * `--tasks-per-proc`). Rank and size come from the environment (`placementFromEnv`); process 0
 * serves the rendezvous (launch/rendezvous.ts), which the others find as launch/meeting.ts says
 * (AMLAPI_RENDEZVOUS host:port or file:DIR, the launcher's PMI, a one-host default), with the job
 * key from AMLAPI_JOB_KEY or made by process 0 and shared through the file or PMI. Each process
 * exits 0 when its tasks finished normally; a lost process or task ends the others (the agents
 * tell each other: agent/agent.ts) with a message naming it.
 */
import { resolveConfig, type JobConfig } from '../base/config.js'
import { logger } from '../base/log.js'
import { makeKey, parseKey } from '../transport/auth.js'
import { ABORT_GRACE_MS, checkProgram, failureLine, seconds, type JobReports } from './options.js'
import { envTransport, wholeEnv } from './net-settings.js'
import { runMember } from './member.js'
import {
  JoinError,
  NOTE_SLACK_S,
  awaitLiveNote,
  hostPort,
  jobIdFromEnv,
  launcherAgent,
  meetingFile,
  meetingFromEnv,
  pmiOpen,
  publishNote,
  removeNote,
  rendezvousHost,
} from './meeting.js'
import { Pmi1 } from './pmi.js'
import { serveRendezvous, type Rendezvous } from './rendezvous.js'
import { runJob } from './run-job.js'
import { checkJobFits } from './create-job.js'

export { JoinError } from './meeting.js'

/** How long process 0 waits for every process to join, ms. */
const START_TIMEOUT_MS = 30_000

/** Where this process stands in its job, and which variables said so. */
export interface EnvPlacement {
  rank: number
  size: number
  /** The variables it was read from ("" when none: a job of one process). */
  source: string
  /** Other launchers' variables that disagree with it. */
  warnings: string[]
}

/** The sources of rank and size, first found wins (API.md, "Processes and hosts"). */
const SOURCES: Array<{ rank: string; size: string[] }> = [
  { rank: 'AMLAPI_RANK', size: ['AMLAPI_SIZE'] },
  { rank: 'PMI_RANK', size: ['PMI_SIZE'] },
  { rank: 'OMPI_COMM_WORLD_RANK', size: ['OMPI_COMM_WORLD_SIZE'] },
  { rank: 'PMIX_RANK', size: ['OMPI_COMM_WORLD_SIZE', 'SLURM_NTASKS'] },
  { rank: 'SLURM_PROCID', size: ['SLURM_NTASKS'] },
]

/**
 * Rank and size of this process from `env`: the first source whose rank and size are both set.
 * Throws RangeError for a value that is not a whole number, or a rank not below the size.
 */
export function placementFromEnv(env: NodeJS.ProcessEnv): EnvPlacement {
  const found: Array<{ rank: number; size: number; source: string }> = []
  for (const s of SOURCES) {
    const rank = wholeEnv(env, s.rank, 0)
    if (rank === undefined) continue
    const sizeVar = s.size.find((v) => env[v] !== undefined && env[v]!.trim() !== '')
    if (sizeVar === undefined) continue
    const size = wholeEnv(env, sizeVar, 1)!
    if (rank >= size) throw new RangeError(`${s.rank}=${rank} is not below ${sizeVar}=${size}`)
    found.push({ rank, size, source: `${s.rank}/${sizeVar}` })
  }
  if (found.length === 0) return { rank: 0, size: 1, source: '', warnings: [] }
  const first = found[0]!
  const warnings = found
    .slice(1)
    .filter((f) => f.rank !== first.rank || f.size !== first.size)
    .map((f) => `${f.source} say rank ${f.rank} of ${f.size}, but ${first.source} (used) say rank ${first.rank} of ${first.size}`)
  return { ...first, warnings }
}

export interface JoinOptions {
  program: string
  args: string[]
  tasksPerProc: number
  config: Partial<JobConfig>
  label: boolean
  timeoutMs?: number
  env: NodeJS.ProcessEnv
  /** Network settings from lapirun's options (else the environment's); `transport` a name of transport/registry.ts. */
  transport?: string
  bind?: string
  faults?: string
  mac?: boolean
  /** Called once this process's tasks have ended, as it starts to leave the job (MemberOptions.onLeave). */
  onLeave?: () => void
  /** Aborts a start that waits (for the note, for PMI): a signal before the job began. */
  signal?: AbortSignal
  /** Set while the job runs (lapirun's SIGUSR1): process 0 prints the report of the whole job. */
  reports?: JobReports
}

/** Runs this process's part of the job; resolves with its exit code. */
export async function joinJob(o: JoinOptions): Promise<number> {
  const env = o.env
  let at: EnvPlacement
  try {
    at = placementFromEnv(env)
  } catch (e) {
    throw new JoinError((e as Error).message)
  }
  for (const w of at.warnings) process.stderr.write(`lapirun: warning: ${w}\n`)
  const K = o.tasksPerProc
  const numTasks = at.size * K
  const net: Record<string, string> = {}
  if (o.transport !== undefined) net['AMLAPI_TRANSPORT'] = o.transport
  if (o.faults !== undefined) net['AMLAPI_FAULTS'] = o.faults
  if (o.mac === true) net['AMLAPI_UDP_MAC'] = '1'
  if (o.bind !== undefined) net['AMLAPI_BIND'] = o.bind
  const whole = { ...env, ...net }
  const keyText = (env['AMLAPI_JOB_KEY'] ?? '').trim()
  // (read once: the tasks, and whatever they spawn, do not inherit the key)
  delete process.env['AMLAPI_JOB_KEY']
  delete whole['AMLAPI_JOB_KEY']
  if (at.size === 1) {
    // a job of one process: its tasks share memory, nothing to meet (a rendezvous given is not needed)
    const r = await runJob({
      program: o.program,
      numTasks: K,
      args: o.args,
      config: o.config,
      label: o.label,
      env: whole,
      stderr: process.stderr,
      ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
      ...(o.reports !== undefined ? { reports: o.reports } : {}),
    })
    return r.exitCode
  }
  const how = meetingFromEnv(env, at.size, at.source, pmiOpen(env))
  if (how.kind === 'address' && keyText === '') {
    throw new JoinError(
      'a host:port rendezvous needs AMLAPI_JOB_KEY, the same for every process of the job and known to nobody else ' +
        '(other users of a host can reach its ports, loopback too): for example export AMLAPI_JOB_KEY=$(openssl rand -hex 32)',
    )
  }
  let key: Uint8Array | null = null
  if (keyText !== '')
    try {
      key = parseKey(keyText)
    } catch (e) {
      throw new JoinError((e as Error).message)
    }
  const config = resolveConfig(o.config, env)
  checkJobFits(numTasks, config, at.size, [at.rank], undefined, o.transport ?? envTransport(env))
  const log = logger('lapi:join', { rank: at.rank })
  const started = Date.now() - process.uptime() * 1000
  const deadline = Date.now() + START_TIMEOUT_MS
  const pmi = how.kind === 'pmi' ? Pmi1.fromEnv(env) : null
  let jobId = jobIdFromEnv(env)
  // (a launcher that names no job, Hydra: its agent on this host, which every process here shares)
  if (jobId === 'job') {
    const a = launcherAgent()
    if (a > 0) jobId = `agent-${a}`
  }
  const notePath = how.kind === 'file' ? meetingFile(how.dir, jobId) : ''
  let server: Rendezvous | null = null
  let startTimer: NodeJS.Timeout | undefined
  let jobTimer: NodeJS.Timeout | undefined
  // (process 0 reports the whole job: asked by a process's SIGUSR1, the job goes on; by its Ctrl-C
  // or the time-out, the report is process 0's failure and the others are told where it is)
  let reporting = false
  let ending = false
  const reported = new Set<string>()
  const report = async (end: string | null): Promise<void> => {
    const s = server
    if (s === null) return
    if (end === null) {
      if (reporting) return
      reporting = true
      try {
        process.stderr.write(`lapirun: what each task was doing (the job goes on):\n${await s.report()}\n`)
      } finally {
        reporting = false
      }
      return
    }
    if (ending) return
    ending = true
    const whole = `${end}:\n${await s.report()}`
    const short = `${end} (process 0 reported what each task was doing)`
    // (printed here at once, not when this process's tasks have ended)
    process.stderr.write(failureLine({ task: -1, reason: whole }))
    reported.add(whole)
    s.abort(-1, short, (r) => (r === 0 ? whole : short))
  }
  // (process 0's note holds the key: removed once every process has joined, and on every way out —
  // an exit, a signal that would end the process without one)
  let noted = false
  const unnote = (): void => {
    if (noted) {
      noted = false
      removeNote(notePath)
    }
  }
  const onHangup = (sig: NodeJS.Signals): void => {
    unnote()
    process.off(sig, onHangup)
    process.kill(process.pid, sig)
  }
  try {
    if (pmi !== null) await withDeadline(pmi.init(), deadline, 'the launcher did not answer PMI init', o.signal)
    let rendezvous: string
    if (at.rank === 0) {
      // process 0 serves the rendezvous: at the given address, or at one of its own it then tells
      key ??= makeKey()
      const listen = how.kind === 'address' ? how : { host: await rendezvousHost(whole), port: 0 }
      server = await serveRendezvous({
        key,
        procs: at.size,
        host: listen.host,
        port: listen.port,
        log,
        job: { numTasks, config, label: o.label, graceMs: ABORT_GRACE_MS, data: undefined, ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}) },
        onFail: (task, reason) => server?.abort(task, reason),
        onDone: () => {},
        onComplete: () => {
          unnote()
          const ms = o.timeoutMs
          if (ms !== undefined)
            jobTimer = setTimeout(() => {
              void report(`the job timed out after ${seconds(ms)}`)
            }, ms)
        },
        onAsk: (why) => {
          void report(why === 'interrupt' ? 'the job was interrupted' : null)
        },
      }).catch((e: NodeJS.ErrnoException) => {
        if (how.kind === 'address' && (e.code === 'EADDRNOTAVAIL' || e.code === 'EADDRINUSE')) {
          throw new JoinError(
            `process 0 cannot listen at AMLAPI_RENDEZVOUS=${hostPort(how.host, how.port)}: ` +
              (e.code === 'EADDRINUSE'
                ? 'the port is in use (pick a free one)'
                : `${how.host} is not an address of this host (process 0 listens there: give one of its own)`),
          )
        }
        throw e
      })
      const address = (rendezvous = hostPort(listen.host, server.port))
      if (how.kind === 'file') {
        process.once('exit', unnote)
        process.once('SIGHUP', onHangup)
        publishNote(notePath, { rendezvous: address, key: Buffer.from(key).toString('hex') })
        // (only once it is written: a refused directory — a planted link — is never unlinked through)
        noted = true
      }
      if (pmi !== null) {
        await pmi.put(PMI_RV, address)
        if (keyText === '') await pmi.put(PMI_KEY, Buffer.from(key).toString('hex'))
        await withDeadline(pmi.barrier(), deadline, 'the PMI barrier did not complete', o.signal)
      }
      log.debug({ rendezvous: address, by: how.kind, procs: at.size, numTasks }, 'rendezvous listening')
      const s = server
      startTimer = setTimeout(() => {
        if (!s.complete)
          s.abort(
            -1,
            `the ${at.size} processes did not all join within ${START_TIMEOUT_MS / 1000} s: ${s.waitingFor()} (a process with a wrong AMLAPI_JOB_KEY is refused at the rendezvous: this process's log, AMLAPI_LOG_LEVEL=warn, names each refusal)`,
          )
      }, START_TIMEOUT_MS)
    } else if (how.kind === 'address') {
      rendezvous = hostPort(how.host, how.port)
    } else {
      let address: string
      let hex: string
      if (pmi !== null) {
        await withDeadline(pmi.barrier(), deadline, 'the PMI barrier did not complete', o.signal)
        address = await pmi.get(PMI_RV)
        hex = keyText !== '' ? keyText : await pmi.get(PMI_KEY)
      } else {
        const n = await awaitLiveNote(notePath, started - NOTE_SLACK_MS, deadline, o.signal)
        address = n.rendezvous
        hex = keyText !== '' ? keyText : n.key
      }
      rendezvous = address
      key ??= parseKey(hex)
    }
    // (the program of this process's own command line: nothing the rendezvous says chooses it)
    return await runMember({
      program: checkProgram(o.program),
      args: o.args,
      numTasks,
      tasksPerProc: K,
      rank: at.rank,
      size: at.size,
      rendezvous,
      key: key!,
      env: whole,
      join: true,
      ...(o.onLeave !== undefined ? { onLeave: o.onLeave } : {}),
      ...(o.reports !== undefined ? { reports: o.reports } : {}),
      reported,
    })
  } finally {
    clearTimeout(startTimer)
    clearTimeout(jobTimer)
    server?.close()
    unnote()
    process.off('exit', unnote)
    process.off('SIGHUP', onHangup)
    if (pmi !== null) await pmi.finalize().catch(() => {})
  }
}

/** The keys of the rendezvous's address and the job key in a PMI key-value space. */
const PMI_RV = 'amlapi-rv'
const PMI_KEY = 'amlapi-key'
/** How much older than this process a `file:` note may be and still be its job's, ms. */
const NOTE_SLACK_MS = NOTE_SLACK_S * 1000

/** `p`, or a rejection once `deadline` (ms since the epoch) has passed or `signal` aborts (an interrupted start). */
async function withDeadline<T>(p: Promise<T>, deadline: number, what: string, signal?: AbortSignal): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  let onAbort = (): void => {}
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${START_TIMEOUT_MS / 1000} s`)), Math.max(0, deadline - Date.now()))
    onAbort = () => reject(new Error('the job was interrupted'))
    if (signal?.aborted === true) onAbort()
    signal?.addEventListener('abort', onAbort, { once: true })
  })
  try {
    return await Promise.race([p, late])
  } finally {
    clearTimeout(timer)
    signal?.removeEventListener('abort', onAbort)
  }
}
