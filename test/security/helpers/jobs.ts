/**
 * A real job of test/fixtures/security/work.mjs (4 tasks in 2 processes over tcp), started as a
 * user would — `lapirun -n 4 --procs 2`, or two `lapirun --join` processes with a host:port
 * rendezvous and a key — watched from outside: its processes' memory, and the tcp ports they
 * listen on, found through /proc every few ms while the job starts, with strangers aimed at each
 * as soon as it is found. A job that has started listens on no tcp port (docs/security.md, "What
 * a stranger can cost"): the rendezvous stops once every process has joined, each process's
 * listener once its peers are connected. So under --join process 1 is held back a while, during
 * which process 0's rendezvous and tcp listener are up (and attacked); under --procs the
 * launcher's rendezvous is up while its processes start, theirs only for a moment.
 */
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:net'
import { FIXTURES } from '../../helpers/job.js'
import { LAPIRUN } from '../../helpers/run.js'
import {
  descendants,
  environOf,
  hostileConnections,
  listeningPorts,
  tryConnect,
  watchMemory,
  type Hostile,
  type HostileOptions,
  type HostileStats,
  type ListeningSocket,
  type MemorySeen,
  type Target,
} from './attack.js'
import { startNode, until, within, type Proc } from './procs.js'

export const WORK = FIXTURES + 'security/work.mjs'

/** How long process 1 of a --join job starts after process 0 by default, ms. */
export const HOLD_MS = 1200
/** How often the job's listening ports are looked for while it starts, ms. */
const LOOK_MS = 4

/** A free loopback port (for a --join rendezvous). */
export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const a = s.address()
      s.close(() => resolve(typeof a === 'object' && a !== null ? a.port : 0))
    })
  })
}

export type Shape = 'procs' | 'join'

export interface JobOptions {
  /** Rounds of work.mjs (default 300: about 1.5 s on 2 vCPUs) and its pause after "ready", ms (default 1000). */
  rounds?: number
  pauseMs?: number
  /** Strangers aimed at each tcp port of the job as soon as it is found listening. */
  attack?: HostileOptions
  /** --join: process 1 starts this long after process 0, ms (default HOLD_MS), and not before `atRendezvous` is done. */
  holdMs?: number
  /**
   * Run once the rendezvous listens (under --join: and process 0's tcp listener, so rank 0 is in
   * the job), with it and the --join key; under --procs its processes are starting meanwhile.
   */
  atRendezvous?: (rv: Target, keyHex: string | null) => Promise<void>
  /** Added to every process's environment. */
  env?: Record<string, string>
}

/** One port the job listened on while it started. */
export interface Found {
  target: Target
  socket: ListeningSocket
  /** When it was first seen listening, ms after the job's first process started. */
  foundMs: number
  /** The strangers aimed at it (none unless attacked). */
  hostile: Hostile | null
}

export interface JobRun {
  /** What the test started: the launcher, or each --join process (index = rank). */
  procs: Proc[]
  /** The ports found listening while the job started, by label ("rendezvous", "process 1 tcp" …). */
  found: Map<string, Found>
  targets: Target[]
  /** Memory by role: "launcher", "process 0", "process 1". */
  memory: Map<string, MemorySeen>
  /** Whether each process exited 0; their stdout and stderr together. */
  ok: boolean
  out: string
  err: string
  /** The rounds' time as task 0 measured it, and the time from the first start to the last exit, ms. */
  workMs: number
  totalMs: number
  /** --join: when process 1 started, ms after process 0 (0 for --procs). */
  heldMs: number
  /** When the job started (its first "ready" line), its last "work ok" line came, and each process exited (performance.now()). */
  startedAt: number
  lastLineAt: number
  exitsAt: number[]
  /**
   * The strangers' figures per label: once the job had started and every connection of theirs was
   * closed (or 2 s after the start), at the last line, and at the end.
   */
  atStart: Record<string, HostileStats>
  atLastLine: Record<string, HostileStats>
  atEnd: Record<string, HostileStats>
  /** Whether every stranger's connection had been closed by the time `atStart` was taken. */
  closedAtStart: boolean
  /** A connection tried to each port found, once the job had started: 'ECONNREFUSED', 'connected', … */
  afterStart: Record<string, string>
  /** The --join key (null for --procs). */
  keyHex: string | null
}

/** The figures of every attacked port, by label. */
function statsOf(found: Map<string, Found>): Record<string, HostileStats> {
  const out: Record<string, HostileStats> = {}
  for (const [label, f] of found) if (f.hostile !== null) out[label] = f.hostile.stats()
  return out
}

/** Connections open now, over every attacked port. */
function openNow(found: Map<string, Found>): number {
  let n = 0
  for (const f of found.values()) if (f.hostile !== null) for (const v of Object.values(f.hostile.stats().open)) n += v
  return n
}

/** Runs the job to its end (every wait bounded); the caller reaps whatever is left. */
export async function runWorkJob(shape: Shape, o: JobOptions = {}): Promise<JobRun> {
  const args = ['--transport', 'tcp', WORK, String(o.rounds ?? 300), String(o.pauseMs ?? 1000)]
  const procs: Proc[] = []
  let keyHex: string | null = null
  let rvPort = 0
  let env: Record<string, string> = {}
  const t0 = performance.now()
  if (shape === 'procs') {
    procs.push(startNode([LAPIRUN, '-n', '4', '--procs', '2', ...args], o.env))
  } else {
    keyHex = randomBytes(32).toString('hex')
    rvPort = await freePort()
    env = { ...o.env, AMLAPI_SIZE: '2', AMLAPI_RENDEZVOUS: `127.0.0.1:${rvPort}`, AMLAPI_JOB_KEY: keyHex }
    procs.push(startNode([LAPIRUN, '--join', '--tasks-per-proc', '2', ...args], { ...env, AMLAPI_RANK: '0' }))
  }
  const watches = procs.map((p) => watchMemory(p.pid))
  const lines = (re: RegExp): number => procs.reduce((n, p) => n + p.lines.filter((l) => re.test(l.text)).length, 0)
  const ended = (): boolean => procs.every((p) => p.p.exitCode !== null || p.p.signalCode !== null)
  const started = (): boolean => lines(/^task \d ready$/) > 0
  const found = new Map<string, Found>()
  let watching = true
  /** Looks for the job's listening ports once; attacks each new one at once. */
  const look = (): void => {
    // (the processes started by the test last: a child between its fork and its exec holds its
    // launcher's descriptors, and the launcher's claim on the rendezvous's socket wins)
    const roots = procs.map((p) => p.pid)
    const pids = [...roots.flatMap((r) => descendants(r)), ...roots]
    for (const s of listeningPorts(pids, 'tcp')) {
      const rank = shape === 'join' ? roots.indexOf(s.pid) : Number(environOf(s.pid)?.get('AMLAPI_RANK') ?? -1)
      if ([...found.values()].some((f) => f.socket.port === s.port)) continue
      let label = (shape === 'procs' && s.pid === roots[0]) || (shape === 'join' && s.port === rvPort) ? 'rendezvous' : `process ${rank} tcp`
      // (a second port of one role — none is expected — keeps the first's figures apart)
      if (found.has(label)) label += ` (port ${s.port})`
      const target: Target = { host: s.host, port: s.port, label }
      found.set(label, { target, socket: s, foundMs: performance.now() - t0, hostile: o.attack !== undefined ? hostileConnections([target], o.attack) : null })
    }
  }
  // (looked for from the first start until the job has started, at most 25 s; the same in a run unattacked)
  const looking = (async () => {
    const end = performance.now() + 25_000
    while (watching && !started() && !ended() && performance.now() < end) {
      look()
      await new Promise((resolve) => setTimeout(resolve, LOOK_MS))
    }
  })()
  let heldMs = 0
  try {
    const want = shape === 'join' ? ['rendezvous', 'process 0 tcp'] : ['rendezvous']
    const up = await until(() => want.every((l) => found.has(l)) || ended() || started(), 15_000, 2)
    if (!up || !want.every((l) => found.has(l))) {
      throw new Error(`not found listening: ${want.filter((l) => !found.has(l)).join(', ')}\n${procs.map((p) => p.err).join('\n')}`)
    }
    if (o.atRendezvous !== undefined) await o.atRendezvous(found.get('rendezvous')!.target, keyHex)
    if (shape === 'join') {
      const at = t0 + (o.holdMs ?? HOLD_MS)
      if (performance.now() < at) await new Promise((resolve) => setTimeout(resolve, at - performance.now()))
      heldMs = performance.now() - t0
      procs.push(startNode([LAPIRUN, '--join', '--tasks-per-proc', '2', ...args], { ...env, AMLAPI_RANK: '1' }))
      watches.push(watchMemory(procs[1]!.pid))
    }
    const began = await until(() => started() || ended(), 25_000, 2)
    if (!began || !started()) throw new Error(`the job did not start:\n${procs.map((p) => p.err).join('\n')}`)
    const startedAt = Math.min(...procs.flatMap((p) => p.lines.filter((l) => /^task \d ready$/.test(l.text)).map((l) => l.at)))
    watching = false
    await looking
    // (the listeners closed strangers' connections as they stopped: each end here sees it within a turn or two)
    const closedAtStart = await until(() => openNow(found) === 0, 2000, 5)
    const atStart = statsOf(found)
    const afterStart: Record<string, string> = {}
    await Promise.all(
      [...found].map(async ([label, f]) => {
        afterStart[label] = await tryConnect(f.target)
      }),
    )
    await until(() => lines(/^task \d work ok /) === 4 || ended(), 25_000, 5)
    const atLastLine = statsOf(found)
    const exits = await Promise.all(procs.map((p) => within(p.exit, 10_000, { at: NaN, code: null, signal: null })))
    const last = procs.flatMap((p) => p.lines.filter((l) => /^task \d work ok /.test(l.text)))
    const work = /^task 0 work ok \d+ (\d+)$/m.exec(procs.map((p) => p.out).join('\n'))
    const memory = new Map<string, MemorySeen>()
    procs.forEach((p, i) => {
      for (const [pid, m] of watches[i]!.stop()) {
        const rank = shape === 'join' ? i : pid === p.pid ? -1 : Number(m.env?.get('AMLAPI_RANK') ?? NaN)
        memory.set(rank < 0 ? 'launcher' : `process ${rank}`, m)
      }
    })
    await Promise.all([...found.values()].map((f) => f.hostile?.stop()))
    return {
      procs,
      found,
      targets: [...found.values()].map((f) => f.target),
      memory,
      ok: exits.every((e) => e.code === 0) && last.length === 4,
      out: procs.map((p) => p.out).join(''),
      err: procs.map((p) => p.err).join(''),
      workMs: work === null ? NaN : Number(work[1]),
      totalMs: Math.max(...exits.map((e) => e.at)) - t0,
      heldMs,
      startedAt,
      lastLineAt: Math.max(...last.map((l) => l.at)),
      exitsAt: exits.map((e) => e.at),
      atStart,
      atLastLine,
      atEnd: statsOf(found),
      closedAtStart,
      afterStart,
      keyHex,
    }
  } finally {
    watching = false
    await looking
    for (const w of watches) w.stop()
    await Promise.all([...found.values()].map((f) => f.hostile?.stop()))
  }
}

/** MiB of KiB, one decimal. */
export function mib(kib: number): string {
  return (kib / 1024).toFixed(1)
}
