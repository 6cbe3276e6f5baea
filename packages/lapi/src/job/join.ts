/**
 * `lapirun --join`: this process is one of P processes of a job that another launcher started (a
 * script, `ip netns exec`, by hand; docs/launching.md). Every process runs the same command; rank
 * r holds tasks r·K … r·K+K−1 of N = P·K (K = `--tasks-per-proc`). Rank and size come from the
 * environment (`placementFromEnv`), the rendezvous from AMLAPI_RENDEZVOUS=host:port (process 0
 * listens there and serves it: job/rendezvous.ts; the others connect) and the job key from
 * AMLAPI_JOB_KEY. Each process exits 0 when its tasks finished normally; a lost process or task
 * ends the others (the agents tell each other: agent/agent.ts) with a message naming it.
 */
import { resolveConfig, type JobConfig } from '../config.js'
import { logger } from '../log.js'
import { parseKey } from '../transport/auth.js'
import { ABORT_GRACE_MS, checkProgram } from './options.js'
import { wholeEnv } from './net-settings.js'
import { runMember } from './member.js'
import { serveRendezvous } from './rendezvous.js'
import { runJob } from './run-job.js'
import { checkJobFits } from './spec.js'

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
const SOURCES: Array<{ rank: string, size: string[] }> = [
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
export function placementFromEnv (env: NodeJS.ProcessEnv): EnvPlacement {
  const found: Array<{ rank: number, size: number, source: string }> = []
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
  const warnings = found.slice(1).filter((f) => f.rank !== first.rank || f.size !== first.size)
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
  /** Network settings from lapirun's options (else the environment's). */
  transport?: 'tcp' | 'udp'
  bind?: string
  faults?: string
  mac?: boolean
}

/** What a usage error of `--join` says (lapirun prints it and exits 2). */
export class JoinError extends Error {}

/** Runs this process's part of the job; resolves with its exit code. */
export async function joinJob (o: JoinOptions): Promise<number> {
  const env = o.env
  const at = placementFromEnv(env)
  for (const w of at.warnings) process.stderr.write(`lapirun: warning: ${w}\n`)
  const K = o.tasksPerProc
  const numTasks = at.size * K
  const rv = (env['AMLAPI_RENDEZVOUS'] ?? '').trim()
  const net: Record<string, string> = {}
  if (o.transport !== undefined) net['AMLAPI_TRANSPORT'] = o.transport
  if (o.faults !== undefined) net['AMLAPI_FAULTS'] = o.faults
  if (o.mac === true) net['AMLAPI_UDP_MAC'] = '1'
  if (o.bind !== undefined) net['AMLAPI_BIND'] = o.bind
  if (at.size === 1 && rv === '') {
    // a job of one process: its tasks share memory, nothing to meet
    const r = await runJob({ program: o.program, numTasks: K, args: o.args, config: o.config, label: o.label, env, ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}) })
    return r.exitCode
  }
  if (rv === '') throw new JoinError(`a job of ${at.size} processes (${at.source}) needs a rendezvous: set AMLAPI_RENDEZVOUS=host:port (process 0 listens there, the others connect) and AMLAPI_JOB_KEY`)
  if (rv.startsWith('file:')) throw new JoinError('AMLAPI_RENDEZVOUS=file:DIR is not in this build yet: use host:port with AMLAPI_JOB_KEY')
  const colon = rv.lastIndexOf(':')
  const host = rv.slice(0, colon).replace(/^\[(.*)\]$/, '$1')
  const port = Number(rv.slice(colon + 1))
  if (colon <= 0 || !Number.isInteger(port) || port < 1 || port > 65535) throw new JoinError(`AMLAPI_RENDEZVOUS=${rv} is not host:port`)
  const keyText = env['AMLAPI_JOB_KEY'] ?? ''
  if (keyText.trim() === '') {
    throw new JoinError('a host:port rendezvous needs AMLAPI_JOB_KEY, the same for every process of the job and known to nobody else ' +
      '(other users of a host can reach its ports, loopback too): for example export AMLAPI_JOB_KEY=$(openssl rand -hex 32)')
  }
  let key: Uint8Array
  try { key = parseKey(keyText) } catch (e) { throw new JoinError((e as Error).message) }
  const config = resolveConfig(o.config, env)
  checkJobFits(numTasks, config, at.size, [at.rank], undefined, (o.transport ?? env['AMLAPI_TRANSPORT']) === 'udp')
  const log = logger('lapi:join', { rank: at.rank })
  let server: Awaited<ReturnType<typeof serveRendezvous>> | null = null
  let startTimer: NodeJS.Timeout | undefined
  if (at.rank === 0) {
    const url = checkProgram(o.program)
    server = await serveRendezvous({
      key, procs: at.size, host, port, log,
      job: { numTasks, program: url.href, args: o.args, config, label: o.label, graceMs: ABORT_GRACE_MS, data: undefined, ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}) },
      onFail: (task, reason) => server?.abort(task, reason),
      onDone: () => {},
    })
    log.debug({ rendezvous: `${host}:${server.port}`, procs: at.size, numTasks }, 'rendezvous listening')
    const s = server
    startTimer = setTimeout(() => {
      if (!s.complete) s.abort(-1, `the ${at.size} processes did not all join within ${START_TIMEOUT_MS / 1000} s (a wrong AMLAPI_JOB_KEY is refused at the rendezvous: its log says so)`)
    }, START_TIMEOUT_MS)
  }
  try {
    return await runMember({ rank: at.rank, size: at.size, rendezvous: `${host.includes(':') ? `[${host}]` : host}:${port}`, key, env: { ...env, ...net }, join: true })
  } finally {
    clearTimeout(startTimer)
    server?.close()
  }
}
