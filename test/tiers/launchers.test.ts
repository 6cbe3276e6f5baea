/**
 * The launchers tier (`npm run test:launchers`; docs/launching.md): the conformance programs run as
 * jobs of the launchers HPC sites have — Open MPI's `mpirun`, MPICH's `mpiexec` (Hydra), Slurm's
 * `srun` — each process `lapirun --join`, over tcp and over udp; Ctrl-C of the launcher and the loss
 * of a process end the job everywhere, named, with nothing left running.
 *
 * Runs the launchers it finds (scripts/install-launcher-deps.sh installs them from Debian's
 * packages) and says plainly which it skipped and why. It installs nothing itself; for `srun` it
 * uses the Slurm that answers `sinfo`, or starts a one-node one in a temporary directory
 * (scripts/slurm-one-node.sh, root only) and stops it at the end.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import type { JobConfig } from '@amlapi/lapi'
import { FIXTURES, type FixtureRun } from '../helpers/job.js'
import { PROGRAMS, checkOutput, type Program } from '../helpers/programs.js'
import { LAPIRUN, runCommand } from '../helpers/run.js'

interface Launcher {
  name: string
  /** The command that starts `procs` processes of `argv`. */
  cmd: (procs: number, argv: string[]) => string[]
  env: NodeJS.ProcessEnv
}

function sh(cmd: string): { ok: boolean; out: string } {
  const r = spawnSync('sh', ['-c', cmd], { encoding: 'utf8', timeout: 20_000 })
  return { ok: r.status === 0, out: (r.stdout ?? '') + (r.stderr ?? '') }
}

/** Every job ends itself before the test's deadline (60 s), saying what each task waited for, should one hang. */
const HANG = ['--timeout', '45']
const SLURM_ONE_NODE = fileURLToPath(new URL('../../scripts/slurm-one-node.sh', import.meta.url))
const which = (c: string): string | null => {
  const r = sh(`command -v ${c}`)
  return r.ok ? r.out.trim() : null
}

/**
 * Whether a Slurm answers: the site's, or a one-node one this tier starts in a temporary directory
 * (root only: scripts/slurm-one-node.sh) and stops at its end.
 */
let slurmDir: string | null = null
let slurmWhy = ''
function slurmUp(): boolean {
  if (sh('sinfo -h -o %t').out.match(/idle|mix|alloc/)) return true
  if (process.getuid?.() !== 0) {
    slurmWhy = 'not root'
    return false
  }
  const dir = mkdtempSync(join(tmpdir(), 'amlapi-slurm-'))
  const r = spawnSync('bash', [SLURM_ONE_NODE, 'start', dir], { encoding: 'utf8', timeout: 60_000 })
  const conf = /^SLURM_CONF=(.*)$/m.exec(r.stdout ?? '')
  if (r.status !== 0 || conf === null) {
    slurmWhy = `scripts/slurm-one-node.sh failed: ${(r.stderr ?? '').trim().split('\n').slice(-3).join(' / ')}`
    return false
  }
  slurmDir = dir
  process.env['SLURM_CONF'] = conf[1]!
  return true
}
afterAll(() => {
  if (slurmDir !== null) spawnSync('bash', [SLURM_ONE_NODE, 'stop', slurmDir], { timeout: 30_000 })
})

const skipped: string[] = []
const LAUNCHERS: Launcher[] = []
{
  const ompi = which('mpirun.openmpi') ?? (sh('mpirun --version').out.includes('Open MPI') ? which('mpirun') : null)
  if (ompi !== null) {
    // (as root, Open MPI wants both variables; -n above the core count wants --oversubscribe)
    LAUNCHERS.push({
      name: 'Open MPI mpirun',
      cmd: (n, a) => [ompi, '--oversubscribe', '-n', String(n), ...a],
      env: { OMPI_ALLOW_RUN_AS_ROOT: '1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM: '1' },
    })
  } else skipped.push("Open MPI's mpirun: not on the PATH (bash scripts/install-launcher-deps.sh installs openmpi-bin)")
  const hydra = which('mpiexec.hydra') ?? which('mpiexec.mpich')
  if (hydra !== null) LAUNCHERS.push({ name: 'MPICH mpiexec', cmd: (n, a) => [hydra, '-n', String(n), ...a], env: {} })
  else skipped.push("MPICH's mpiexec: not on the PATH (bash scripts/install-launcher-deps.sh installs mpich)")
  const srun = which('srun')
  if (srun === null) skipped.push("Slurm's srun: not on the PATH (bash scripts/install-launcher-deps.sh installs it)")
  else if (!slurmUp()) skipped.push(`Slurm's srun: no Slurm answers here, and none could be started: ${slurmWhy}`)
  else {
    LAUNCHERS.push({ name: 'Slurm srun', cmd: (n, a) => [srun, '--overcommit', '-n', String(n), ...a], env: {} })
    LAUNCHERS.push({ name: 'Slurm srun --mpi=pmi2', cmd: (n, a) => [srun, '--mpi=pmi2', '--overcommit', '-n', String(n), ...a], env: {} })
  }
}
for (const s of skipped) process.stdout.write(`launchers tier SKIPPED ${s}\n`)

/** The job settings a program wants, as the environment says them to every process (the segment: 4 MiB unless it says, as runFixture's). */
function configEnv(c: Partial<JobConfig> | undefined): Record<string, string> {
  const e: Record<string, string> = { AMLAPI_SEGMENT_SIZE: String(c?.segmentSize ?? 4 * 1024 * 1024) }
  if (c?.spinUs !== undefined) e['AMLAPI_SPIN_US'] = String(c.spinUs)
  return e
}

/** Processes and tasks per process for a program of `tasks` tasks. */
function split(tasks: number): { procs: number; perProc: number } {
  return tasks % 2 === 0 ? { procs: 2, perProc: tasks / 2 } : { procs: tasks, perProc: 1 }
}

/** Whether process `pid` is still there. */
const alive = (pid: number): boolean => existsSync(`/proc/${pid}`)

/** The processes of `pids` still there after up to 5 s. */
async function gone(pids: number[]): Promise<number[]> {
  for (let i = 0; i < 100 && pids.some(alive); i++) await new Promise((resolve) => setTimeout(resolve, 50))
  return pids.filter(alive)
}

/**
 * Starts lapi/lose.mjs as a job of 2 processes under `l` and waits until both tasks printed their
 * process's pid (task 1 then waits for the test, task 0 in a Gfence it cannot finish).
 */
async function startLose(
  l: Launcher,
): Promise<{ p: ChildProcess; code: Promise<number | null>; out: () => string; pids: Array<{ task: number; pid: number }> }> {
  const [cmd, ...args] = l.cmd(2, [process.execPath, LAPIRUN, '--join', FIXTURES + 'lapi/lose.mjs'])
  const p = spawn(cmd!, args, { env: { ...process.env, ...l.env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  p.stdout!.on('data', (d: Buffer) => {
    out += d.toString()
  })
  p.stderr!.on('data', (d: Buffer) => {
    out += d.toString()
  })
  const kill = setTimeout(() => p.kill('SIGKILL'), 40_000)
  const code = new Promise<number | null>((resolve) =>
    p.on('close', (c) => {
      clearTimeout(kill)
      resolve(c)
    }),
  )
  for (let i = 0; i < 400 && [...out.matchAll(/task \d pid (\d+)/g)].length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 50))
  const pids = [...out.matchAll(/task (\d) pid (\d+)/g)].map((m) => ({ task: Number(m[1]), pid: Number(m[2]) }))
  expect(pids, out).toHaveLength(2)
  return { p, code, out: () => out, pids }
}

describe.skipIf(LAUNCHERS.length === 0)('launchers: lapirun --join under each', () => {
  for (const l of LAUNCHERS) {
    describe(l.name, () => {
      for (const transport of ['tcp', 'udp'] as const) {
        for (const prog of PROGRAMS.filter((p: Program) => p.shmOnly === undefined)) {
          const { procs, perProc } = split(prog.tasks)
          it(`${prog.file.replace('../../examples/', 'examples/')} ${(prog.args ?? []).join(' ')} — ${procs} × ${perProc} over ${transport}`, async () => {
            const argv = [
              process.execPath,
              LAPIRUN,
              '--join',
              ...HANG,
              '--tasks-per-proc',
              String(perProc),
              '--transport',
              transport,
              FIXTURES + prog.file,
              ...(prog.args ?? []),
            ]
            const [cmd, ...args] = l.cmd(procs, argv)
            const r = await runCommand(cmd!, args, { env: { ...l.env, ...prog.env, ...configEnv(prog.config) }, deadlineMs: 60_000 })
            if (r.code !== 0) throw new Error(`job failed (${r.code}):\n${r.stderr}\n${r.stdout}`)
            checkOutput(prog, { stdout: r.stdout, stderr: r.stderr } as unknown as FixtureRun)
          }, 70_000)
        }
      }

      it('npx lapirun --join, as the docs write it (npx does not pass PMI_FD on: the job meets through a file on one host)', async () => {
        for (const transport of ['tcp', 'udp']) {
          const [cmd, ...args] = l.cmd(2, [
            'npx',
            'lapirun',
            '--join',
            ...HANG,
            '--tasks-per-proc',
            '2',
            '--transport',
            transport,
            FIXTURES + 'lapi/putget.mjs',
          ])
          const r = await runCommand(cmd!, args, { env: { ...l.env, AMLAPI_SEGMENT_SIZE: String(4 << 20) }, deadlineMs: 60_000 })
          expect(r.code, r.stderr).toBe(0)
          expect(r.stdout.match(/putget ok/g)).toHaveLength(4)
        }
      }, 90_000)

      it('Ctrl-C of the launcher ends every process of the job', async () => {
        const job = await startLose(l)
        job.p.kill('SIGINT')
        // (the launcher's own status after a Ctrl-C is its business — MPICH's mpiexec has returned 0
        // once its processes had ended; the job is named interrupted by them, or fails)
        const code = await job.code
        expect(code !== 0 || /the job was interrupted/.test(job.out()), job.out()).toBe(true)
        expect(await gone(job.pids.map((x) => x.pid)), 'processes left running').toEqual([])
      }, 60_000)

      it('a process killed with kill -9 ends the job everywhere, named', async () => {
        const job = await startLose(l)
        process.kill(job.pids.find((x) => x.task === 1)!.pid, 'SIGKILL')
        expect(await job.code, job.out()).not.toBe(0)
        // (named by the other process, or by the launcher, which may end it first)
        expect(job.out()).toMatch(/task 1 failed: process 1 \(task 1\) was lost|rank 1|task 1/)
        expect(await gone(job.pids.map((x) => x.pid)), 'processes left running').toEqual([])
      }, 60_000)
    })
  }
})

it.skipIf(LAUNCHERS.length > 0)('launchers tier: no launcher here', () => {
  expect(skipped.length).toBeGreaterThan(0)
})

// ───────────── across hosts: two network namespaces, each a "host" with its own address ─────────────

const NS = [`amlapi-h0-${process.pid}`, `amlapi-h1-${process.pid}`]
const DEV = [`amlh0${process.pid % 10000}`, `amlh1${process.pid % 10000}`]
const ADDR = ['198.18.1.1', '198.18.1.2']

/** Why the namespaces cannot be made here (null: they can). */
function noNamespaces(): string | null {
  if (process.platform !== 'linux') return 'not Linux'
  if (process.getuid?.() !== 0) return 'not root (network namespaces need it)'
  if (which('ip') === null) return "no 'ip' on the PATH (bash scripts/install-netns-deps.sh installs it)"
  return null
}
const nsWhy = noNamespaces()
if (nsWhy !== null) process.stdout.write(`launchers tier SKIPPED across hosts: ${nsWhy}\n`)
const hydraExe = which('mpiexec.hydra')
if (nsWhy === null && hydraExe === null) process.stdout.write("launchers tier SKIPPED across hosts by MPICH's mpiexec: not on the PATH\n")

/** The lines of a debug log that say where a process listened and what it moved. */
function netFacts(log: string): { addresses: string[]; received: number[] } {
  const addresses: string[] = []
  const received: number[] = []
  for (const line of log.split('\n')) {
    if (!line.startsWith('{')) continue
    let j: Record<string, unknown>
    try {
      j = JSON.parse(line) as Record<string, unknown>
    } catch {
      continue
    }
    if ((j['msg'] === 'tcp: listening' || j['msg'] === 'udp: sockets bound') && typeof j['address'] === 'string') addresses.push(j['address'])
    if (j['msg'] === 'process leaves the job') received.push(Number((j['stats'] as Record<string, unknown>)['bytesReceived']))
  }
  return { addresses, received }
}

describe.skipIf(nsWhy !== null)('across hosts: two network namespaces joined by a veth pair', () => {
  let launcherExec = ''
  afterAll(() => {
    for (const ns of NS) sh(`ip netns del ${ns}`)
  })
  it('the namespaces come up, each with its own address', () => {
    for (const ns of NS) expect(sh(`ip netns add ${ns}`).ok).toBe(true)
    expect(sh(`ip link add ${DEV[0]} type veth peer name ${DEV[1]}`).ok).toBe(true)
    for (let k = 0; k < 2; k++) {
      for (const c of [
        `ip link set ${DEV[k]} netns ${NS[k]}`,
        `ip -n ${NS[k]} addr add ${ADDR[k]}/24 dev ${DEV[k]}`,
        `ip -n ${NS[k]} link set ${DEV[k]} up`,
        `ip -n ${NS[k]} link set lo up`,
      ]) {
        const r = sh(c)
        expect(r.ok, `${c}: ${r.out}`).toBe(true)
      }
    }
    // what a launcher's remote shell would be: "<exec> [options] host command…" runs the command in that host's namespace
    launcherExec = join(mkdtempSync(join(tmpdir(), 'amlapi-nsexec-')), 'nsexec.sh')
    writeFileSync(
      launcherExec,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell script: ${1#-} is the shell's
      '#!/bin/sh\nwhile [ "${1#-}" != "$1" ]; do shift; done\nhost=$1; shift\n' +
        `case $host in ${ADDR[0]}) ns=${NS[0]} ;; ${ADDR[1]}) ns=${NS[1]} ;; *) echo "no host $host" >&2; exit 1 ;; esac\n` +
        'exec ip netns exec $ns sh -c "$*"\n',
      { mode: 0o755 },
    )
  })

  /** The programs run across the namespaces (tasks per process: their task count over 2). */
  const ACROSS = PROGRAMS.filter((p) => ['lapi/putget.mjs', 'am2/xfer.mjs', '../../examples/amx/testgetput.mjs'].includes(p.file) && p.tasks % 2 === 0)

  for (const transport of ['tcp', 'udp'] as const) {
    for (const prog of ACROSS) {
      it(`by a script: ${prog.file.replace('../../', '')} with AMLAPI_RENDEZVOUS and AMLAPI_JOB_KEY, over ${transport}`, async () => {
        const key = randomBytes(32).toString('hex')
        const runs = [1, 0].map((rank) =>
          runCommand(
            'ip',
            [
              'netns',
              'exec',
              NS[rank]!,
              process.execPath,
              LAPIRUN,
              '--join',
              ...HANG,
              '--tasks-per-proc',
              String(prog.tasks / 2),
              '--transport',
              transport,
              FIXTURES + prog.file,
              ...(prog.args ?? []),
            ],
            {
              env: {
                AMLAPI_RANK: String(rank),
                AMLAPI_SIZE: '2',
                AMLAPI_RENDEZVOUS: `${ADDR[0]}:${47000 + (process.pid % 1000)}`,
                AMLAPI_JOB_KEY: key,
                AMLAPI_SEGMENT_SIZE: String(16 << 20),
                AMLAPI_LOG_LEVEL: 'debug',
              },
              deadlineMs: 60_000,
            },
          ),
        )
        const [r1, r0] = await Promise.all(runs)
        for (const r of [r0!, r1!]) expect(r.code, r.stderr.slice(-3000)).toBe(0)
        checkOutput(prog, { stdout: r0!.stdout + r1!.stdout, stderr: '' } as unknown as FixtureRun)
        // each process listened on its namespace's address, and received the other's bytes
        const f0 = netFacts(r0!.stderr)
        const f1 = netFacts(r1!.stderr)
        expect(f0.addresses).toEqual([ADDR[0]])
        expect(f1.addresses).toEqual([ADDR[1]])
        expect(f0.received[0]).toBeGreaterThan(0)
        expect(f1.received[0]).toBeGreaterThan(0)
      }, 70_000)
    }

    for (const prog of PROGRAMS.filter((p: Program) => p.shmOnly === undefined)) {
      const { procs, perProc } = split(prog.tasks)
      it.skipIf(hydraExe === null)(
        `by MPICH's mpiexec, its remote shell an ip netns exec: ${prog.file.replace('../../', '')} ${(prog.args ?? []).join(' ')} — ${procs} × ${perProc} over ${transport}`,
        async () => {
          const r = await runCommand(
            'ip',
            [
              'netns',
              'exec',
              NS[0]!,
              hydraExe!,
              '-launcher',
              'ssh',
              '-launcher-exec',
              launcherExec,
              '-iface',
              DEV[0]!,
              '-hosts',
              `${ADDR[0]},${ADDR[1]}`,
              '-n',
              String(procs),
              process.execPath,
              LAPIRUN,
              '--join',
              ...HANG,
              '--tasks-per-proc',
              String(perProc),
              '--transport',
              transport,
              FIXTURES + prog.file,
              ...(prog.args ?? []),
            ],
            {
              env: { ...prog.env, ...configEnv(prog.config), AMLAPI_LOG_LEVEL: 'debug' },
              deadlineMs: 60_000,
            },
          )
          if (r.code !== 0) throw new Error(`job failed (${r.code}):\n${r.stderr.slice(-3000)}\n${r.stdout}`)
          // (the program's own lines: the debug log went to stderr)
          checkOutput(prog, {
            stdout: r.stdout,
            stderr: r.stderr
              .split('\n')
              .filter((l) => !l.startsWith('{'))
              .join('\n'),
          } as unknown as FixtureRun)
          const f = netFacts(r.stderr)
          // every process listened on its own namespace's address, both namespaces had some, and each received
          expect(f.addresses.every((a) => ADDR.includes(a)) && ADDR.every((a) => f.addresses.includes(a)), f.addresses.join(' ')).toBe(true)
          expect(f.received.length).toBe(procs)
          expect(f.received.every((b) => b > 0)).toBe(true)
          // (PMI told the processes where process 0's rendezvous is: on its namespace's address)
          expect(r.stderr).toMatch(new RegExp(`"rendezvous":"${ADDR[0]!.replace(/\./g, '\\.')}:\\d+","by":"pmi"`))
        },
        70_000,
      )
    }
  }
})
