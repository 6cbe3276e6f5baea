/**
 * How the processes of a `lapirun --join` job find the rendezvous and the job key (API.md,
 * "Processes and hosts"; docs/launching.md). Process 0 always serves the rendezvous
 * (job/rendezvous.ts); what differs is how the others learn where it is:
 *
 *   - `address`: AMLAPI_RENDEZVOUS=host:port, with AMLAPI_JOB_KEY given to every process;
 *   - `file`: AMLAPI_RENDEZVOUS=file:DIR — process 0 writes the rendezvous's address and the key
 *     into DIR/amlapi-<job id>.rv (mode 0600, by a rename: never seen half written), the others
 *     wait for it; the default on one host, in the temporary directory, under Open MPI's `mpirun`,
 *     Slurm's `srun` without PMI, and a PMI launcher whose socket did not reach this process
 *     (`npx lapirun` is a process of its own, without PMI_FD);
 *   - `pmi`: the launcher's PMI-1 key-value space (PMI_FD: MPICH's `mpiexec`, `srun --mpi=pmi2`;
 *     job/pmi.ts).
 *
 * With `file` and `pmi` process 0 makes the key (or takes AMLAPI_JOB_KEY) and shares it only
 * through them. Everything here but the file's reading and writing is a pure function of the
 * environment, for tests with each launcher's variables.
 */
import { lookup } from 'node:dns/promises'
import { fstatSync, mkdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import { hostname, networkInterfaces, tmpdir } from 'node:os'
import { join as joinPath } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

export type Meeting =
  | { kind: 'address', host: string, port: number }
  | { kind: 'file', dir: string, why: string }
  | { kind: 'pmi' }

/** `host:port` text of an address (an IPv6 host in brackets). */
export function hostPort (host: string, port: number): string { return `${host.includes(':') ? `[${host}]` : host}:${port}` }

/** The host and port of `host:port` text (brackets taken off; port NaN or host '' when it is none). */
export function splitHostPort (text: string): { host: string, port: number } {
  const colon = text.lastIndexOf(':')
  if (colon <= 0) return { host: '', port: NaN }
  return { host: text.slice(0, colon).replace(/^\[(.*)\]$/, '$1'), port: Number(text.slice(colon + 1)) }
}

/** What `--join` says to a usage error (lapirun prints it and exits 2). */
export class JoinError extends Error {}

/** Whether descriptor PMI_FD of `env` is a socket of this process (a launcher's PMI). */
export function pmiOpen (env: NodeJS.ProcessEnv): boolean {
  const fd = Number((env['PMI_FD'] ?? '').trim())
  if (!Number.isInteger(fd) || fd < 0) return false
  try { return fstatSync(fd).isSocket() } catch { return false }
}

/**
 * The pid of this process's nearest ancestor that is a launcher's per-host agent (Hydra's
 * `hydra_pmi_proxy`, Slurm's `slurmstepd`, Open MPI's `orted`/`prted`), read from /proc; -1 when
 * none is found. Every process of a job on one host has the same one: a job name where the
 * launcher gives none.
 */
export function launcherAgent (): number {
  let pid = process.ppid
  for (let k = 0; k < 16 && pid > 1; k++) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      if (/^(hydra_pmi_proxy|slurmstepd|orted|prted)/.test(name)) return pid
      pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    } catch { return -1 }
  }
  return -1
}

/** The name a launcher gives this job (the `file:` rendezvous's file name), or "job". */
export function jobIdFromEnv (env: NodeJS.ProcessEnv): string {
  const v = (k: string): string => (env[k] ?? '').trim()
  let id = v('AMLAPI_JOB_ID') || v('PMI_JOBID') || (v('SLURM_JOB_ID') !== '' ? `${v('SLURM_JOB_ID')}.${v('SLURM_STEP_ID') || '0'}` : '') ||
    v('OMPI_MCA_ess_base_jobid') || v('PMIX_NAMESPACE')
  if (id === '') id = 'job'
  return id.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100)
}

/**
 * Whether the job's processes are on more than one host, as the launcher says (local and world
 * sizes, Slurm's node count); undefined when it does not say.
 */
export function spansHosts (env: NodeJS.ProcessEnv): boolean | undefined {
  const n = (k: string): number | undefined => {
    const t = (env[k] ?? '').trim()
    if (!/^\d+$/.test(t)) return undefined
    return Number(t)
  }
  const pairs: Array<[string, string]> = [['OMPI_COMM_WORLD_LOCAL_SIZE', 'OMPI_COMM_WORLD_SIZE'], ['MPI_LOCALNRANKS', 'PMI_SIZE']]
  for (const [local, world] of pairs) {
    const l = n(local); const w = n(world)
    if (l !== undefined && w !== undefined) return l < w
  }
  const nodes = n('SLURM_STEP_NUM_NODES') ?? n('SLURM_NNODES') ?? n('SLURM_JOB_NUM_NODES')
  if (nodes !== undefined) return nodes > 1
  return undefined
}

/**
 * How this process finds the rendezvous (first found wins): AMLAPI_RENDEZVOUS (host:port or
 * file:DIR), PMI-1 (PMI_FD; `pmiOpen`: whether that descriptor is a socket in this process), the
 * temporary directory for a one-host job of Open MPI or Slurm (or of a PMI launcher whose socket
 * did not reach this process). Throws JoinError saying what to set when none fits.
 */
export function meetingFromEnv (env: NodeJS.ProcessEnv, size: number, source: string, pmiOpen = true): Meeting {
  const rv = (env['AMLAPI_RENDEZVOUS'] ?? '').trim()
  if (rv.startsWith('file:')) {
    const dir = rv.slice(5)
    if (dir === '') throw new JoinError('AMLAPI_RENDEZVOUS=file: needs a directory: file:DIR (one every process of the job can read and write)')
    return { kind: 'file', dir, why: 'AMLAPI_RENDEZVOUS' }
  }
  if (rv !== '') {
    const { host, port } = splitHostPort(rv)
    if (host === '' || !Number.isInteger(port) || port < 1 || port > 65535) throw new JoinError(`AMLAPI_RENDEZVOUS=${rv} is neither host:port nor file:DIR`)
    return { kind: 'address', host, port }
  }
  if ((env['PMI_FD'] ?? '').trim() !== '') {
    if (pmiOpen) return { kind: 'pmi' }
    // (the launcher's socket did not reach this process: a wrapper between them, such as npx, closed it)
    if (spansHosts(env) === false) return { kind: 'file', dir: tmpdir(), why: 'PMI_FD not open here, one host' }
    throw new JoinError(`PMI_FD=${env['PMI_FD']!} is not open in this process (a wrapper between the launcher and lapirun, such as npx, closes it): ` +
      'run lapirun itself (node_modules/.bin/lapirun), or set AMLAPI_RENDEZVOUS=file:DIR on a shared file system, or host:port with AMLAPI_JOB_KEY')
  }
  const launcher = env['OMPI_COMM_WORLD_SIZE'] !== undefined ? "Open MPI's mpirun" : env['SLURM_PROCID'] !== undefined ? "Slurm's srun" : null
  if (launcher !== null) {
    if (spansHosts(env) === false) return { kind: 'file', dir: tmpdir(), why: `${launcher}, one host` }
    const hint = launcher.startsWith('Slurm') ? ' (or run srun --mpi=pmi2, whose PMI lapirun speaks)' : ''
    throw new JoinError(`a job of ${size} processes started by ${launcher} on several hosts needs a rendezvous: set AMLAPI_RENDEZVOUS=file:DIR ` +
      `on a file system every host shares, or host:port with AMLAPI_JOB_KEY${hint}`)
  }
  throw new JoinError(`a job of ${size} processes (${source}) needs a rendezvous: set AMLAPI_RENDEZVOUS=host:port (process 0 listens there, ` +
    'the others connect) with AMLAPI_JOB_KEY, or AMLAPI_RENDEZVOUS=file:DIR')
}

/**
 * The address process 0 serves a `file` or `pmi` rendezvous on: AMLAPI_BIND; loopback for a job on
 * one host; else this host's address (its name's, or its first external IPv4 interface's).
 */
export async function rendezvousHost (env: NodeJS.ProcessEnv): Promise<string> {
  const bind = (env['AMLAPI_BIND'] ?? '').trim()
  if (bind !== '') return bind
  if (spansHosts(env) === false) return '127.0.0.1'
  try {
    const a = await lookup(hostname(), { family: 4 })
    if (!a.address.startsWith('127.')) return a.address
  } catch { /* a name without an address: the interfaces say */ }
  for (const list of Object.values(networkInterfaces())) {
    for (const i of list ?? []) if (i.family === 'IPv4' && !i.internal) return i.address
  }
  return '127.0.0.1'
}

/** What the `file` rendezvous's file holds. */
export interface MeetingNote { rendezvous: string, key: string }

/** The file of job `jobId` in `dir`. */
export function meetingFile (dir: string, jobId: string): string { return joinPath(dir, `amlapi-${jobId}.rv`) }

/** Process 0: writes the note (mode 0600; a rename, so a reader sees all of it or none). */
export function publishNote (dir: string, path: string, note: MeetingNote): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const tmp = `${path}.${process.pid}.tmp`
  writeFileSync(tmp, JSON.stringify(note), { mode: 0o600 })
  renameSync(tmp, path)
}

/** Process 0, at the end: removes the note (a crashed job leaves one; the next one of its id replaces it). */
export function removeNote (path: string): void {
  try { unlinkSync(path) } catch { /* gone already */ }
}

/**
 * The other processes: waits for a note written at `notBefore` (ms since the epoch) or later — an
 * older one is a finished job's — until `deadline`; rejects after it.
 */
export async function awaitNote (path: string, notBefore: number, deadline: number): Promise<MeetingNote> {
  for (;;) {
    try {
      if (statSync(path).mtimeMs >= notBefore) {
        const n = JSON.parse(readFileSync(path, 'utf8')) as Partial<MeetingNote>
        if (typeof n.rendezvous === 'string' && typeof n.key === 'string') return { rendezvous: n.rendezvous, key: n.key }
      }
    } catch { /* not there yet */ }
    if (Date.now() > deadline) throw new Error(`process 0 did not write ${path} in time (is the directory shared by every host of the job?)`)
    await sleep(20)
  }
}
