/**
 * How the processes of a `lapirun --join` job find the rendezvous and the job key (API.md,
 * "Processes and hosts"; docs/launching.md). Process 0 always serves the rendezvous
 * (job/rendezvous.ts); what differs is how the others learn where it is:
 *
 *   - `address`: AMLAPI_RENDEZVOUS=host:port, with AMLAPI_JOB_KEY given to every process;
 *   - `file`: AMLAPI_RENDEZVOUS=file:DIR — process 0 writes the rendezvous's address and the key
 *     into DIR/amlapi-<job id>.rv (mode 0600, by a rename: never seen half written), the others
 *     wait for it; under Open MPI's `mpirun` and Slurm's `srun` without PMI, on one host, the
 *     default, in the temporary directory;
 *   - `pmi`: the launcher's PMI-1 key-value space (PMI_FD: MPICH's `mpiexec`, `srun --mpi=pmi2`;
 *     job/pmi.ts).
 *
 * With `file` and `pmi` process 0 makes the key (or takes AMLAPI_JOB_KEY) and shares it only
 * through them. Everything here but the file's reading and writing is a pure function of the
 * environment, for tests with each launcher's variables.
 */
import { lookup } from 'node:dns/promises'
import { mkdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import { hostname, networkInterfaces, tmpdir } from 'node:os'
import { join as joinPath } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

export type Meeting =
  | { kind: 'address', host: string, port: number }
  | { kind: 'file', dir: string, why: string }
  | { kind: 'pmi' }

/** What `--join` says to a usage error (lapirun prints it and exits 2). */
export class JoinError extends Error {}

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
 * file:DIR), PMI-1 (PMI_FD), the temporary directory for a one-host job of Open MPI or Slurm.
 * Throws JoinError saying what to set when none fits.
 */
export function meetingFromEnv (env: NodeJS.ProcessEnv, size: number, source: string): Meeting {
  const rv = (env['AMLAPI_RENDEZVOUS'] ?? '').trim()
  if (rv.startsWith('file:')) {
    const dir = rv.slice(5)
    if (dir === '') throw new JoinError('AMLAPI_RENDEZVOUS=file: needs a directory: file:DIR (one every process of the job can read and write)')
    return { kind: 'file', dir, why: 'AMLAPI_RENDEZVOUS' }
  }
  if (rv !== '') {
    const colon = rv.lastIndexOf(':')
    const host = rv.slice(0, colon).replace(/^\[(.*)\]$/, '$1')
    const port = Number(rv.slice(colon + 1))
    if (colon <= 0 || host === '' || !Number.isInteger(port) || port < 1 || port > 65535) throw new JoinError(`AMLAPI_RENDEZVOUS=${rv} is neither host:port nor file:DIR`)
    return { kind: 'address', host, port }
  }
  if ((env['PMI_FD'] ?? '').trim() !== '') return { kind: 'pmi' }
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
