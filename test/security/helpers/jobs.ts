/**
 * A real job of test/fixtures/security/work.mjs (4 tasks in 2 processes over tcp), started as a
 * user would — `lapirun -n 4 --procs 2`, or two `lapirun --join` processes with a host:port
 * rendezvous and a key — watched from outside: its processes' memory, the ports they listen on
 * (found through /proc once every task is in), and strangers aimed at those ports meanwhile.
 */
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:net'
import { FIXTURES } from '../../helpers/job.js'
import { LAPIRUN } from '../../helpers/run.js'
import {
  descendants, environOf, hostileConnections, listeningPorts, watchMemory,
  type Hostile, type HostileOptions, type HostileStats, type ListeningSocket, type MemorySeen, type Target,
} from './attack.js'
import { startNode, until, within, type Proc } from './procs.js'

export const WORK = FIXTURES + 'security/work.mjs'

/** A free loopback port (for a --join rendezvous). */
export async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => { const a = s.address(); s.close(() => resolve(typeof a === 'object' && a !== null ? a.port : 0)) })
  })
}

export type Shape = 'procs' | 'join'

export interface JobOptions {
  /** Rounds of work.mjs (default 300: about 1.5 s on 2 vCPUs) and its pause after "ready", ms (default 1000). */
  rounds?: number
  pauseMs?: number
  /** Strangers started on every listening port once every task is ready. */
  attack?: HostileOptions
  /** Run once every task is ready, with the job's listening ports (the rendezvous labelled so), and the --join key. */
  whileReady?: (targets: Target[], keyHex: string | null) => Promise<void>
  /** Added to every process's environment. */
  env?: Record<string, string>
}

export interface JobRun {
  /** What the test started: the launcher, or each --join process (index = rank). */
  procs: Proc[]
  /** The ports found (through /proc) and what was aimed at them. */
  ports: ListeningSocket[]
  targets: Target[]
  /** Memory by role: "launcher", "process 0", "process 1". */
  memory: Map<string, MemorySeen>
  /** Whether each process exited 0; their stdout and stderr together. */
  ok: boolean
  out: string
  err: string
  /** The rounds' time as task 0 measured it, and the time from the start to the last exit, ms. */
  workMs: number
  totalMs: number
  /** When the last "work ok" line came, and each process's exit (performance.now()). */
  lastLineAt: number
  exitsAt: number[]
  /** The strangers' figures at the last line, and at the end. */
  hostileAtLastLine: HostileStats | null
  hostile: HostileStats | null
  /** The --join key (null for --procs). */
  keyHex: string | null
}

/** Runs the job to its end (every wait bounded); the caller reaps whatever is left. */
export async function runWorkJob (shape: Shape, o: JobOptions = {}): Promise<JobRun> {
  const args = ['--transport', 'tcp', WORK, String(o.rounds ?? 300), String(o.pauseMs ?? 1000)]
  const t0 = performance.now()
  let procs: Proc[]
  let keyHex: string | null = null
  let rvPort = 0
  if (shape === 'procs') {
    procs = [startNode([LAPIRUN, '-n', '4', '--procs', '2', ...args], o.env)]
  } else {
    keyHex = randomBytes(32).toString('hex')
    rvPort = await freePort()
    const env = { ...o.env, AMLAPI_SIZE: '2', AMLAPI_RENDEZVOUS: `127.0.0.1:${rvPort}`, AMLAPI_JOB_KEY: keyHex }
    procs = [0, 1].map((r) => startNode([LAPIRUN, '--join', '--tasks-per-proc', '2', ...args], { ...env, AMLAPI_RANK: String(r) }))
  }
  const watches = procs.map((p) => watchMemory(p.pid))
  const count = (re: RegExp): number => procs.reduce((n, p) => n + p.lines.filter((l) => re.test(l.text)).length, 0)
  let hostile: Hostile | null = null
  let hostileAtLastLine: HostileStats | null = null
  let ports: ListeningSocket[] = []
  let targets: Target[] = []
  try {
    const ready = await until(() => count(/^task \d ready$/) === 4 || procs.some((p) => p.p.exitCode !== null), 20_000)
    if (!ready || count(/^task \d ready$/) !== 4) throw new Error(`the job did not start:\n${procs.map((p) => p.err).join('\n')}`)
    const pids = procs.flatMap((p) => [p.pid, ...descendants(p.pid)])
    ports = listeningPorts(pids, 'tcp')
    targets = ports.map((s) => {
      const launcher = shape === 'procs' && s.pid === procs[0]!.pid
      const rank = shape === 'join' ? procs.findIndex((p) => p.pid === s.pid) : Number(environOf(s.pid)?.get('AMLAPI_RANK') ?? -1)
      return { host: s.host, port: s.port, label: launcher || s.port === rvPort ? 'rendezvous' : `process ${rank} tcp` }
    })
    if (o.attack !== undefined) hostile = hostileConnections(targets, o.attack)
    if (o.whileReady !== undefined) await o.whileReady(targets, keyHex)
    await until(() => count(/^task \d work ok /) === 4 || procs.every((p) => p.p.exitCode !== null || p.p.signalCode !== null), 20_000, 5)
    hostileAtLastLine = hostile?.stats() ?? null
    const exits = await Promise.all(procs.map((p) => within(p.exit, 10_000, { at: NaN, code: null, signal: null })))
    const lines = procs.flatMap((p) => p.lines.filter((l) => /^task \d work ok /.test(l.text)))
    const work = /^task 0 work ok \d+ (\d+)$/m.exec(procs.map((p) => p.out).join('\n'))
    const memory = new Map<string, MemorySeen>()
    procs.forEach((p, i) => {
      for (const [pid, m] of watches[i]!.stop()) {
        const rank = shape === 'join' ? i : pid === p.pid ? -1 : Number(m.env?.get('AMLAPI_RANK') ?? NaN)
        memory.set(rank < 0 ? 'launcher' : `process ${rank}`, m)
      }
    })
    return {
      procs, ports, targets, memory,
      ok: exits.every((e) => e.code === 0) && lines.length === 4,
      out: procs.map((p) => p.out).join(''),
      err: procs.map((p) => p.err).join(''),
      workMs: work === null ? NaN : Number(work[1]),
      totalMs: Math.max(...exits.map((e) => e.at)) - t0,
      lastLineAt: Math.max(...lines.map((l) => l.at)),
      exitsAt: exits.map((e) => e.at),
      hostileAtLastLine,
      hostile: hostile === null ? null : await hostile.stop(),
      keyHex,
    }
  } finally {
    for (const w of watches) w.stop()
    await hostile?.stop()
  }
}

/** MiB of KiB, one decimal. */
export function mib (kib: number): string { return (kib / 1024).toFixed(1) }
