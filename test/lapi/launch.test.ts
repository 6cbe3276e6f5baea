/**
 * How `lapirun --join` finds its job under a launcher: rank, size and rendezvous from each
 * launcher's environment (as captured under Open MPI 4.1, MPICH 4.0 Hydra and Slurm 22.05), the
 * `file:` rendezvous, and PMI-1 spoken with a launcher this test plays itself (over the socket a
 * real one passes in PMI_FD). The launchers themselves run in the launchers tier.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, statSync, utimesSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Duplex } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import { awaitNote, jobIdFromEnv, meetingFile, meetingFromEnv, parsePmiLine, placementFromEnv, publishNote, spansHosts } from '#lapi-internal'
import { FIXTURES } from '../helpers/job.js'
import { LAPIRUN } from '../helpers/run.js'
import { matrix } from '../helpers/tier.js'

/** What each launcher put in the environment of rank 1 of a 2-process job on one host. */
const OMPI = {
  OMPI_COMM_WORLD_RANK: '1',
  OMPI_COMM_WORLD_SIZE: '2',
  OMPI_COMM_WORLD_LOCAL_RANK: '1',
  OMPI_COMM_WORLD_LOCAL_SIZE: '2',
  OMPI_COMM_WORLD_NODE_RANK: '1',
  OMPI_UNIVERSE_SIZE: '2',
  OMPI_MCA_ess_base_jobid: '51707905',
  PMIX_NAMESPACE: '51707905',
  PMIX_RANK: '1',
}
const HYDRA = { PMI_RANK: '1', PMI_SIZE: '2', PMI_FD: '8', HYDI_CONTROL_FD: '7', MPI_LOCALRANKID: '1', MPI_LOCALNRANKS: '2' }
const SLURM = {
  SLURM_PROCID: '1',
  SLURM_NTASKS: '2',
  SLURM_NPROCS: '2',
  SLURM_LOCALID: '1',
  SLURM_NODEID: '0',
  SLURM_JOB_ID: '12',
  SLURM_STEP_ID: '0',
  SLURM_STEP_NUM_NODES: '1',
  SLURM_NNODES: '1',
  SLURM_TASKS_PER_NODE: '2',
  SLURM_STEP_NODELIST: 'vm',
}
const SLURM_PMI2 = { ...SLURM, PMI_RANK: '1', PMI_SIZE: '2', PMI_FD: '5', PMI_JOBID: '12.0' }
const SLURM_PMIX = { ...SLURM, PMIX_RANK: '1', PMIX_NAMESPACE: 'slurm.pmix.12.0' }

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'amlapi-launch-'))
  dirs.push(d)
  return d
}

describe('lapirun --join under a launcher: the environment', () => {
  it('rank and size under each launcher', () => {
    expect(placementFromEnv(OMPI)).toMatchObject({ rank: 1, size: 2, source: 'OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE', warnings: [] })
    expect(placementFromEnv(HYDRA)).toMatchObject({ rank: 1, size: 2, source: 'PMI_RANK/PMI_SIZE', warnings: [] })
    expect(placementFromEnv(SLURM)).toMatchObject({ rank: 1, size: 2, source: 'SLURM_PROCID/SLURM_NTASKS', warnings: [] })
    expect(placementFromEnv(SLURM_PMI2)).toMatchObject({ rank: 1, size: 2, source: 'PMI_RANK/PMI_SIZE', warnings: [] })
    expect(placementFromEnv(SLURM_PMIX)).toMatchObject({ rank: 1, size: 2, source: 'PMIX_RANK/SLURM_NTASKS', warnings: [] })
  })

  it('the rendezvous: PMI where the launcher speaks it, a file on one host under mpirun and srun, else an error saying what to set', () => {
    expect(meetingFromEnv(HYDRA, 2, 'PMI')).toEqual({ kind: 'pmi' })
    expect(meetingFromEnv(SLURM_PMI2, 2, 'PMI')).toEqual({ kind: 'pmi' })
    expect(meetingFromEnv(OMPI, 2, 'OMPI')).toEqual({ kind: 'file', dir: tmpdir(), why: "Open MPI's mpirun, one host" })
    expect(meetingFromEnv(SLURM, 2, 'SLURM')).toEqual({ kind: 'file', dir: tmpdir(), why: "Slurm's srun, one host" })
    expect(meetingFromEnv(SLURM_PMIX, 2, 'SLURM')).toMatchObject({ kind: 'file' })
    // a PMI_FD that did not reach this process (npx between the launcher and lapirun): a file on one host, else an error
    expect(meetingFromEnv(HYDRA, 2, 'PMI', false)).toEqual({ kind: 'file', dir: tmpdir(), why: 'PMI_FD not open here, one host' })
    expect(() => meetingFromEnv({ ...HYDRA, MPI_LOCALNRANKS: '1' }, 2, 'PMI', false)).toThrow(/PMI_FD=8 is not open in this process .* such as npx/)
    // what the user sets wins
    expect(meetingFromEnv({ ...HYDRA, AMLAPI_RENDEZVOUS: 'h1:7000' }, 2, '')).toEqual({ kind: 'address', host: 'h1', port: 7000 })
    expect(meetingFromEnv({ ...OMPI, AMLAPI_RENDEZVOUS: '[::1]:7000' }, 2, '')).toEqual({ kind: 'address', host: '::1', port: 7000 })
    expect(meetingFromEnv({ ...OMPI, AMLAPI_RENDEZVOUS: 'file:/shared/x' }, 2, '')).toEqual({ kind: 'file', dir: '/shared/x', why: 'AMLAPI_RENDEZVOUS' })
    // several hosts and no way to meet
    expect(() => meetingFromEnv({ ...OMPI, OMPI_COMM_WORLD_LOCAL_SIZE: '1' }, 2, '')).toThrow(
      /started by Open MPI's mpirun on several hosts needs a rendezvous: set AMLAPI_RENDEZVOUS=file:DIR/,
    )
    expect(() => meetingFromEnv({ ...SLURM, SLURM_STEP_NUM_NODES: '2' }, 2, '')).toThrow(/srun --mpi=pmi2/)
    expect(() => meetingFromEnv({ AMLAPI_RANK: '0', AMLAPI_SIZE: '2' }, 2, 'AMLAPI_RANK/AMLAPI_SIZE')).toThrow(
      /set AMLAPI_RENDEZVOUS=host:port .* or AMLAPI_RENDEZVOUS=file:DIR/,
    )
    expect(() => meetingFromEnv({ AMLAPI_RENDEZVOUS: 'file:' }, 2, '')).toThrow(/needs a directory/)
    expect(() => meetingFromEnv({ AMLAPI_RENDEZVOUS: 'nowhere' }, 2, '')).toThrow(/neither host:port nor file:DIR/)
  })

  it('one host or several, as the launcher says; the job id names the file', () => {
    expect(spansHosts(OMPI)).toBe(false)
    expect(spansHosts({ ...OMPI, OMPI_COMM_WORLD_LOCAL_SIZE: '1' })).toBe(true)
    expect(spansHosts(HYDRA)).toBe(false)
    expect(spansHosts(SLURM)).toBe(false)
    expect(spansHosts({ ...SLURM, SLURM_STEP_NUM_NODES: '3' })).toBe(true)
    expect(spansHosts({ AMLAPI_RANK: '0', AMLAPI_SIZE: '2' })).toBeUndefined()
    expect(jobIdFromEnv(OMPI)).toBe('51707905')
    expect(jobIdFromEnv(SLURM)).toBe('12.0')
    expect(jobIdFromEnv(SLURM_PMI2)).toBe('12.0')
    expect(jobIdFromEnv({ AMLAPI_JOB_ID: 'a/b c' })).toBe('a_b_c')
    expect(jobIdFromEnv({})).toBe('job')
    expect(parsePmiLine('cmd=get_result rc=0 value=127.0.0.1:4000 \n')).toEqual(
      new Map([
        ['cmd', 'get_result'],
        ['rc', '0'],
        ['value', '127.0.0.1:4000'],
      ]),
    )
  })

  it('the file: note is private, and one older than the job is not taken', async () => {
    const dir = tempDir()
    const path = meetingFile(dir, 'j1')
    publishNote(path, { rendezvous: '127.0.0.1:5000', key: 'ab'.repeat(32) })
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(await awaitNote(path, Date.now() - 60_000, Date.now() + 1000)).toMatchObject({ rendezvous: '127.0.0.1:5000', key: 'ab'.repeat(32) })
    // a finished job's note: waited past, then the deadline says so
    const old = (Date.now() - 120_000) / 1000
    utimesSync(path, old, old)
    await expect(awaitNote(path, Date.now() - 60_000, Date.now() + 200)).rejects.toThrow(
      /did not write .* in time \(the one there is older than this job: .* this process started more than 5 s after process 0\)/,
    )
  })
})

interface Proc {
  p: ChildProcess
  out: string
  err: string
  code: Promise<number | null>
}

/** Starts `lapirun --join` with `env` added and, when `pmi`, a socket as descriptor 3. */
function start(env: NodeJS.ProcessEnv, args: string[], pmi = false): Proc {
  const p = spawn(process.execPath, [LAPIRUN, '--join', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe', ...(pmi ? ['pipe' as const] : [])],
  })
  const r: Proc = { p, out: '', err: '', code: new Promise((resolve) => p.on('close', (c) => resolve(c))) }
  p.stdout!.on('data', (d: Buffer) => {
    r.out += d.toString()
  })
  p.stderr!.on('data', (d: Buffer) => {
    r.err += d.toString()
  })
  setTimeout(() => p.kill('SIGKILL'), 40_000).unref()
  return r
}

/**
 * A PMI-1 launcher for `size` processes over their descriptor-3 sockets: one key-value space, a
 * barrier that lets all out once all are in. Records every command.
 */
function servePmi(socks: Duplex[]): { kvs: Map<string, string>; log: string[] } {
  const kvs = new Map<string, string>()
  const log: string[] = []
  let inBarrier: Duplex[] = []
  for (const s of socks) {
    let buf = ''
    s.on('data', (d: Buffer) => {
      buf += d.toString()
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const w = parsePmiLine(buf.slice(0, nl))
        buf = buf.slice(nl + 1)
        const cmd = w.get('cmd') ?? ''
        log.push(cmd)
        const say = (line: string): void => {
          s.write(line + '\n')
        }
        switch (cmd) {
          case 'init':
            say('cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0')
            break
          case 'get_maxes':
            say('cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024')
            break
          case 'get_my_kvsname':
            say('cmd=my_kvsname kvsname=kvs_test_0 rc=0')
            break
          case 'put':
            kvs.set(w.get('key')!, w.get('value')!)
            say('cmd=put_result rc=0')
            break
          case 'get': {
            const v = kvs.get(w.get('key')!)
            say(v === undefined ? 'cmd=get_result rc=-1 msg=key_not_found' : `cmd=get_result rc=0 value=${v}`)
            break
          }
          case 'barrier_in':
            inBarrier.push(s)
            if (inBarrier.length === socks.length) {
              for (const b of inBarrier) b.write('cmd=barrier_out\n')
              inBarrier = []
            }
            break
          case 'finalize':
            say('cmd=finalize_ack')
            break
          default:
            say(`cmd=${cmd} rc=-1 msg=unknown`)
        }
      }
    })
  }
  return { kvs, log }
}

describe('lapirun --join under a launcher: meeting', () => {
  // (`npm test` over udp, the --join tests over tcp; `npm run test:full` both here)
  for (const transport of matrix(['tcp', 'udp'], ['udp'])) {
    it(`through a file: directory, without a key given (${transport})`, async () => {
      const dir = tempDir()
      const env = { AMLAPI_SIZE: '2', AMLAPI_RENDEZVOUS: `file:${dir}`, AMLAPI_JOB_ID: `t-${transport}` }
      const args = ['--transport', transport, FIXTURES + 'lapi/putget.mjs']
      const ps = [start({ ...env, AMLAPI_RANK: '1' }, args), start({ ...env, AMLAPI_RANK: '0' }, args)]
      const codes = await Promise.all(ps.map((p) => p.code))
      expect(codes, ps.map((p) => p.err).join('\n')).toEqual([0, 0])
      expect((ps[0]!.out + ps[1]!.out).match(/putget ok/g)).toHaveLength(2)
      // (process 0 removed its note; the user's own subdirectory stays, mode 0700)
      const own = `amlapi-${process.getuid!()}`
      expect(readdirSync(dir)).toEqual([own])
      expect(readdirSync(join(dir, own))).toEqual([])
      expect(statSync(join(dir, own)).mode & 0o777).toBe(0o700)
    }, 45_000)
  }

  it("through the launcher's PMI-1: process 0 puts the rendezvous and a key it made, the others get them after the barrier", async () => {
    const args = ['--tasks-per-proc', '2', FIXTURES + 'lapi/putget.mjs']
    const ps = [0, 1, 2].map((r) => start({ PMI_RANK: String(r), PMI_SIZE: '3', PMI_FD: '3', MPI_LOCALRANKID: String(r), MPI_LOCALNRANKS: '3' }, args, true))
    const pmi = servePmi(ps.map((p) => p.p.stdio[3] as Duplex))
    const codes = await Promise.all(ps.map((p) => p.code))
    expect(codes, ps.map((p) => p.err).join('\n')).toEqual([0, 0, 0])
    expect(
      ps
        .map((p) => p.out)
        .join('')
        .match(/putget ok/g),
    ).toHaveLength(6)
    expect(pmi.kvs.get('amlapi-rv')).toMatch(/^127\.0\.0\.1:\d+$/)
    expect(pmi.kvs.get('amlapi-key')).toMatch(/^[0-9a-f]{64}$/)
    expect(pmi.log.filter((c) => c === 'init')).toHaveLength(3)
    expect(pmi.log.filter((c) => c === 'barrier_in')).toHaveLength(3)
    expect(pmi.log.filter((c) => c === 'finalize')).toHaveLength(3)
  }, 45_000)

  it('a launcher whose PMI socket closes before it answers: the process ends with status 1, saying so', async () => {
    const p = start({ PMI_RANK: '0', PMI_SIZE: '2', PMI_FD: '3' }, [FIXTURES + 'lapi/putget.mjs'], true)
    setTimeout(() => (p.p.stdio[3] as Duplex).destroy(), 300)
    expect(await p.code).toBe(1)
    expect(p.err).toMatch(/lapirun: the launcher's PMI socket closed/)
  }, 45_000)
})
