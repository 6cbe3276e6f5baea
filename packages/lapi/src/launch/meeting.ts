/**
 * How the processes of a `lapirun --join` job find the rendezvous and the job key (API.md,
 * "Processes and hosts"; docs/launching.md). Process 0 always serves the rendezvous
 * (launch/rendezvous.ts); what differs is how the others learn where it is:
 *
 *   - `address`: AMLAPI_RENDEZVOUS=host:port, with AMLAPI_JOB_KEY given to every process;
 *   - `file`: AMLAPI_RENDEZVOUS=file:DIR — process 0 writes the rendezvous's address and the key
 *     into DIR/amlapi-<uid>/amlapi-<job id>.rv (the user's 0700 subdirectory; mode 0600, exclusive
 *     create, by a rename: never seen half written; removed once every process has joined), the
 *     others wait for it and take it only if this user wrote it (`readNote`); the default on one
 *     host, in the user's runtime directory or else the temporary directory, under Open MPI's `mpirun`,
 *     Slurm's `srun` without PMI, and a PMI launcher whose socket did not reach this process
 *     (`npx lapirun` is a process of its own, without PMI_FD);
 *   - `pmi`: the launcher's PMI-1 key-value space (PMI_FD: MPICH's `mpiexec`, `srun --mpi=pmi2`;
 *     launch/pmi.ts).
 *
 * With `file` and `pmi` process 0 makes the key (or takes AMLAPI_JOB_KEY) and shares it only
 * through them. Everything here but the file's reading and writing is a pure function of the
 * environment, for tests with each launcher's variables.
 */
import { lookup } from 'node:dns/promises'
import { connect } from 'node:net'
import { randomBytes } from 'node:crypto'
import {
  chmodSync,
  closeSync,
  constants as fsc,
  fchmodSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs'
import { hostname, networkInterfaces, tmpdir } from 'node:os'
import { dirname, join as joinPath } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

export type Meeting = { kind: 'address'; host: string; port: number } | { kind: 'file'; dir: string; why: string } | { kind: 'pmi' }

/** `host:port` text of an address (an IPv6 host in brackets). */
export function hostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`
}

/** The host and port of `host:port` text (brackets taken off; port NaN or host '' when it is none). */
export function splitHostPort(text: string): { host: string; port: number } {
  const colon = text.lastIndexOf(':')
  if (colon <= 0) return { host: '', port: NaN }
  return { host: text.slice(0, colon).replace(/^\[(.*)\]$/, '$1'), port: Number(text.slice(colon + 1)) }
}

/**
 * Where a one-host job's file rendezvous goes: the user's runtime directory (XDG_RUNTIME_DIR, which
 * only the user can use) when the environment names one, else the temporary directory (the note
 * then sits in a 0700 subdirectory of it: `meetingFile`).
 */
export function runtimeDir(env: NodeJS.ProcessEnv): string {
  const x = (env['XDG_RUNTIME_DIR'] ?? '').trim()
  return x.startsWith('/') ? x : tmpdir()
}

/** What `--join` says to a usage error (lapirun prints it and exits 2). */
export class JoinError extends Error {}

/** Whether descriptor PMI_FD of `env` is a socket of this process (a launcher's PMI). */
export function pmiOpen(env: NodeJS.ProcessEnv): boolean {
  const fd = Number((env['PMI_FD'] ?? '').trim())
  if (!Number.isInteger(fd) || fd < 0) return false
  try {
    return fstatSync(fd).isSocket()
  } catch {
    return false
  }
}

/**
 * The pid of this process's nearest ancestor that is a launcher's per-host agent (Hydra's
 * `hydra_pmi_proxy`, Slurm's `slurmstepd`, Open MPI's `orted`/`prted`), read from /proc; -1 when
 * none is found. Every process of a job on one host has the same one: a job name where the
 * launcher gives none.
 */
export function launcherAgent(): number {
  let pid = process.ppid
  for (let k = 0; k < 16 && pid > 1; k++) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      if (/^(hydra_pmi_proxy|slurmstepd|orted|prted)/.test(name)) return pid
      pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    } catch {
      return -1
    }
  }
  return -1
}

/** The name a launcher gives this job (the `file:` rendezvous's file name), or "job". */
export function jobIdFromEnv(env: NodeJS.ProcessEnv): string {
  const v = (k: string): string => (env[k] ?? '').trim()
  let id =
    v('AMLAPI_JOB_ID') ||
    v('PMI_JOBID') ||
    (v('SLURM_JOB_ID') !== '' ? `${v('SLURM_JOB_ID')}.${v('SLURM_STEP_ID') || '0'}` : '') ||
    v('OMPI_MCA_ess_base_jobid') ||
    v('PMIX_NAMESPACE')
  if (id === '') id = 'job'
  return id.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100)
}

/**
 * Whether the job's processes are on more than one host, as the launcher says (local and world
 * sizes, Slurm's node count); undefined when it does not say.
 */
export function spansHosts(env: NodeJS.ProcessEnv): boolean | undefined {
  const n = (k: string): number | undefined => {
    const t = (env[k] ?? '').trim()
    if (!/^\d+$/.test(t)) return undefined
    return Number(t)
  }
  const pairs: Array<[string, string]> = [
    ['OMPI_COMM_WORLD_LOCAL_SIZE', 'OMPI_COMM_WORLD_SIZE'],
    ['MPI_LOCALNRANKS', 'PMI_SIZE'],
  ]
  for (const [local, world] of pairs) {
    const l = n(local)
    const w = n(world)
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
export function meetingFromEnv(env: NodeJS.ProcessEnv, size: number, source: string, pmiOpen = true): Meeting {
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
    if (spansHosts(env) === false) return { kind: 'file', dir: runtimeDir(env), why: 'PMI_FD not open here, one host' }
    throw new JoinError(
      `PMI_FD=${env['PMI_FD']!} is not open in this process (a wrapper between the launcher and lapirun, such as npx, closes it): ` +
        'run lapirun itself (node_modules/.bin/lapirun), or set AMLAPI_RENDEZVOUS=file:DIR on a shared file system, or host:port with AMLAPI_JOB_KEY',
    )
  }
  const launcher = env['OMPI_COMM_WORLD_SIZE'] !== undefined ? "Open MPI's mpirun" : env['SLURM_PROCID'] !== undefined ? "Slurm's srun" : null
  if (launcher !== null) {
    if (spansHosts(env) === false) return { kind: 'file', dir: runtimeDir(env), why: `${launcher}, one host` }
    const hint = launcher.startsWith('Slurm') ? ' (or run srun --mpi=pmi2, whose PMI lapirun speaks)' : ''
    throw new JoinError(
      `a job of ${size} processes started by ${launcher} on several hosts needs a rendezvous: set AMLAPI_RENDEZVOUS=file:DIR ` +
        `on a file system every host shares, or host:port with AMLAPI_JOB_KEY${hint}`,
    )
  }
  throw new JoinError(
    `a job of ${size} processes (${source}) needs a rendezvous: set AMLAPI_RENDEZVOUS=host:port (process 0 listens there, ` +
      'the others connect) with AMLAPI_JOB_KEY, or AMLAPI_RENDEZVOUS=file:DIR',
  )
}

/**
 * The address process 0 serves a `file` or `pmi` rendezvous on: AMLAPI_BIND; loopback for a job on
 * one host; else this host's address (its name's, or its first external IPv4 interface's).
 */
export async function rendezvousHost(env: NodeJS.ProcessEnv): Promise<string> {
  const bind = (env['AMLAPI_BIND'] ?? '').trim()
  if (bind !== '') return bind
  if (spansHosts(env) === false) return '127.0.0.1'
  try {
    const a = await lookup(hostname(), { family: 4 })
    if (!a.address.startsWith('127.')) return a.address
  } catch {
    /* a name without an address: the interfaces say */
  }
  for (const list of Object.values(networkInterfaces())) {
    for (const i of list ?? []) if (i.family === 'IPv4' && !i.internal) return i.address
  }
  return '127.0.0.1'
}

/** What the `file` rendezvous's file holds (and, as read, when it was written). */
export interface MeetingNote {
  rendezvous: string
  key: string
  mtimeMs?: number
}

/** Largest note a reader takes, bytes (one holds an address and a key: about 120). */
const NOTE_MAX_BYTES = 4096

/** This process's user id (-1 where the platform has none). */
function myUid(): number {
  return typeof process.getuid === 'function' ? process.getuid() : -1
}

/**
 * The file of job `jobId` under `dir`: in the user's own subdirectory `amlapi-<uid>` of it (made
 * 0700 by `privateDir`), so that `dir` may be one every user can write, as the temporary
 * directory is.
 */
export function meetingFile(dir: string, jobId: string): string {
  return joinPath(dir, `amlapi-${myUid()}`, `amlapi-${jobId}.rv`)
}

/** What the file rendezvous refuses to use (a directory or note another user could have made or read). */
export class NoteError extends Error {}

/**
 * Makes (or checks) the directory a note lives in: a real directory (not a symbolic link), owned
 * by this user, mode 0700 (one of this user's with other modes is set to 0700). Throws NoteError
 * naming what is wrong where another user made it or could use it.
 */
export function privateDir(path: string): void {
  const dir = dirname(path)
  const parent = dirname(dir)
  mkdirSync(parent, { recursive: true, mode: 0o700 })
  // (the directory the user named, or the default: its owner could move the private one away, and
  // others could where it is writable without the sticky bit)
  const ps = statSync(parent)
  const me = myUid()
  if (me >= 0 && ps.uid !== me && ps.uid !== 0)
    throw new NoteError(
      `${parent} belongs to user ${ps.uid}, neither this user (${me}) nor root: the file rendezvous refuses it; set AMLAPI_RENDEZVOUS=file:DIR to a directory of your own`,
    )
  if ((ps.mode & 0o022) !== 0 && (ps.mode & 0o1000) === 0)
    throw new NoteError(
      `${parent} may be written by others and has no sticky bit (mode ${(ps.mode & 0o7777).toString(8)}): the file rendezvous refuses it; use a directory of your own, or one with the sticky bit as /tmp has`,
    )
  try {
    mkdirSync(dir, { mode: 0o700 })
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e
  }
  const st = lstatSync(dir)
  const uid = myUid()
  if (st.isSymbolicLink() || !st.isDirectory())
    throw new NoteError(
      `${dir} is not a directory of its own (a symbolic link or a file): the file rendezvous refuses it; remove it, or set AMLAPI_RENDEZVOUS=file:DIR elsewhere`,
    )
  if (uid >= 0 && st.uid !== uid)
    throw new NoteError(
      `${dir} belongs to user ${st.uid}, not to this user (${uid}): the file rendezvous refuses it; remove it, or set AMLAPI_RENDEZVOUS=file:DIR elsewhere`,
    )
  if ((st.mode & 0o777) !== 0o700) chmodSync(dir, 0o700)
}

/**
 * Process 0: writes the note, mode 0600, through a temporary file of an unpredictable name made
 * with exclusive create and without following a symbolic link, then renamed (a reader sees all of
 * it or none). The temporary file is removed whatever happens.
 */
export function publishNote(path: string, note: MeetingNote): void {
  privateDir(path)
  const tmp = joinPath(dirname(path), `.${randomBytes(12).toString('hex')}.tmp`)
  let fd = -1
  try {
    fd = openSync(tmp, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | fsc.O_NOFOLLOW, 0o600)
    fchmodSync(fd, 0o600)
    writeSync(fd, JSON.stringify(note))
    closeSync(fd)
    fd = -1
    renameSync(tmp, path)
  } finally {
    if (fd >= 0) closeSync(fd)
    try {
      unlinkSync(tmp)
    } catch {
      /* renamed, or never made */
    }
  }
}

/**
 * Removes the note (process 0: once every process has joined, and at every end) — only while its
 * directory is still this user's own (a directory swapped for a link since is not unlinked through).
 */
export function removeNote(path: string): void {
  try {
    const st = lstatSync(dirname(path))
    const uid = myUid()
    if (st.isSymbolicLink() || !st.isDirectory() || (uid >= 0 && st.uid !== uid)) return
    unlinkSync(path)
  } catch {
    /* gone already */
  }
}

/**
 * Reads the note at `path` if it is one this user's process 0 wrote at `notBefore` (ms since the
 * epoch) or later: a regular file (opened without following a symbolic link), owned by this user,
 * mode 0600, short. Returns null while there is none yet (or only an older one: a finished job's);
 * throws NoteError for one that fails a check.
 */
export function readNote(path: string, notBefore: number): MeetingNote | null {
  let fd: number
  try {
    fd = openSync(path, fsc.O_RDONLY | fsc.O_NOFOLLOW | fsc.O_NONBLOCK)
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return null
    if (code === 'ELOOP') throw new NoteError(`${path} is a symbolic link: the file rendezvous refuses it`)
    throw e
  }
  try {
    const st = fstatSync(fd)
    const uid = myUid()
    if (!st.isFile()) throw new NoteError(`${path} is not a regular file: the file rendezvous refuses it`)
    if (uid >= 0 && st.uid !== uid) throw new NoteError(`${path} belongs to user ${st.uid}, not to this user (${uid}): the file rendezvous refuses it`)
    if ((st.mode & 0o777) !== 0o600) throw new NoteError(`${path} has mode ${(st.mode & 0o777).toString(8)}, not 600: the file rendezvous refuses it`)
    if (st.size > NOTE_MAX_BYTES) throw new NoteError(`${path} holds ${st.size} bytes, more than a note (${NOTE_MAX_BYTES}): the file rendezvous refuses it`)
    if (st.mtimeMs < notBefore) return null
    const b = Buffer.alloc(st.size)
    const got = readSync(fd, b, 0, st.size, 0)
    let n: Partial<MeetingNote> | null = null
    try {
      n = JSON.parse(b.subarray(0, got).toString('utf8')) as Partial<MeetingNote>
    } catch {
      /* below */
    }
    // (a note is renamed into place whole: one that does not read is nobody's process 0's)
    if (typeof n !== 'object' || n === null || typeof n.rendezvous !== 'string' || typeof n.key !== 'string')
      throw new NoteError(`${path} is not a note of process 0 (it does not read as one): the file rendezvous refuses it`)
    return { rendezvous: n.rendezvous, key: n.key, mtimeMs: st.mtimeMs }
  } finally {
    closeSync(fd)
  }
}

/**
 * The other processes: waits for a note written at `notBefore` (ms since the epoch) or later — an
 * older one is a finished job's — until `deadline` or `signal`; rejects after it, or at once with NoteError
 * for a directory or note that fails a check (`privateDir`, `readNote`).
 */
export async function awaitNote(
  path: string,
  notBefore: number,
  deadline: number,
  signal?: AbortSignal,
  skip?: (n: MeetingNote) => boolean,
): Promise<MeetingNote> {
  privateDir(path)
  for (;;) {
    const n = readNote(path, notBefore)
    if (n !== null && skip?.(n) !== true) return n
    if (signal?.aborted === true) throw new Error('the job was interrupted')
    if (Date.now() > deadline) {
      const old = readNote(path, 0)
      const why =
        old === null
          ? 'is the directory shared by every host of the job?'
          : n !== null
            ? 'the one there names a rendezvous that does not answer: a job that ended without removing it'
            : `the one there is older than this job: a finished job's, or this process started more than ${NOTE_SLACK_S} s after process 0`
      throw new Error(`process 0 did not write ${path} in time (${why})`)
    }
    await sleep(20)
  }
}

/** How much older than a process a note may be and still be its job's, s (process 0 may start a little before it). */
export const NOTE_SLACK_S = 5

/**
 * `awaitNote`, skipping a note whose rendezvous refuses connections (a process 0 killed before it
 * could remove its note: the next one of the job's name replaces it).
 */
export async function awaitLiveNote(path: string, notBefore: number, deadline: number, signal?: AbortSignal): Promise<MeetingNote> {
  const dead = new Set<string>()
  for (;;) {
    const n = await awaitNote(path, notBefore, deadline, signal, (x) => dead.has(x.rendezvous + ' ' + String(x.mtimeMs)))
    const { host, port } = splitHostPort(n.rendezvous)
    if (await answers(host, port)) return n
    dead.add(n.rendezvous + ' ' + String(n.mtimeMs))
  }
}

/** Whether something listens at host:port (a connection opened, then closed at once; false when refused). */
function answers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host, port })
    const done = (ok: boolean): void => {
      clearTimeout(t)
      s.destroy()
      resolve(ok)
    }
    // (no answer in time, as on a lossy network: taken as alive, the join tries again as it does)
    const t = setTimeout(() => done(true), 2000)
    s.once('connect', () => done(true))
    s.once('error', (e: NodeJS.ErrnoException) => done(e.code !== 'ECONNREFUSED'))
  })
}
