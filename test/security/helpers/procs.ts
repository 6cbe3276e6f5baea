/**
 * Processes the security tests start (lapirun and what it starts), with their output lines
 * time-stamped as they come, waits that always have a deadline, and a reaper that kills every
 * one of them, descendants too, and says which (if any) outlived it.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { alive, descendants } from './attack.js'

export interface Line {
  at: number
  text: string
}

export interface Proc {
  p: ChildProcess
  pid: number
  out: string
  err: string
  /** Complete stdout lines, with performance.now() when each came. */
  lines: Line[]
  /** When the process exited (performance.now()), its code and signal. */
  exit: Promise<{ at: number; code: number | null; signal: NodeJS.Signals | null }>
}

/**
 * Every process the tests started, and every descendant seen of one, to be killed at the end: pid →
 * its start time (field 22 of /proc/<pid>/stat), so that a pid the system gave to another process
 * since is never signalled.
 */
const started = new Map<number, string>()

/** The start time of `pid` in clock ticks since boot, or null when it is gone. */
function startTime(pid: number): string | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return s.slice(s.lastIndexOf(')') + 2).split(' ')[19] ?? null
  } catch {
    return null
  }
}

/** Notes processes to be reaped (a launcher's children, found while they run). */
export function noteStarted(pids: number[]): void {
  for (const p of pids) {
    const t = startTime(p)
    if (t !== null && !started.has(p)) started.set(p, t)
  }
}

/**
 * Starts `node args…` with the test's environment and `env` over it (an undefined value removes a
 * variable). It is killed after `limitMs` (default 45 s) whatever happens.
 */
export function startNode(args: string[], env: Record<string, string | undefined> = {}, limitMs = 45_000): Proc {
  const e: NodeJS.ProcessEnv = { ...process.env }
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete e[k]
    else e[k] = v
  }
  const p = spawn(process.execPath, args, { env: e, stdio: ['ignore', 'pipe', 'pipe'] })
  const r: Proc = {
    p,
    pid: p.pid!,
    out: '',
    err: '',
    lines: [],
    exit: new Promise((resolve) => p.once('exit', (code, signal) => resolve({ at: performance.now(), code, signal }))),
  }
  noteStarted([r.pid])
  let partial = ''
  p.stdout!.on('data', (d: Buffer) => {
    const at = performance.now()
    r.out += d.toString()
    partial += d.toString()
    const parts = partial.split('\n')
    partial = parts.pop()!
    for (const text of parts) r.lines.push({ at, text })
  })
  p.stderr!.on('data', (d: Buffer) => {
    r.err += d.toString()
  })
  const kill = setTimeout(() => p.kill('SIGKILL'), limitMs)
  kill.unref()
  // (its children are noted while it runs, to be reaped even where it dies first)
  const look = setInterval(() => noteStarted(descendants(r.pid)), 100)
  // (once Node has reaped it, its pid is no longer ours)
  void r.exit.then(() => {
    clearTimeout(kill)
    clearInterval(look)
    started.delete(r.pid)
  })
  return r
}

/** Waits until `cond` holds, looking every `everyMs` (default 20), for at most `limitMs`; says whether it came. */
export async function until(cond: () => boolean, limitMs: number, everyMs = 20): Promise<boolean> {
  const end = performance.now() + limitMs
  for (;;) {
    if (cond()) return true
    if (performance.now() >= end) return false
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}

/** `p`, or `fallback` after `limitMs`. */
export async function within<T>(p: Promise<T>, limitMs: number, fallback: T): Promise<T> {
  let t: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      p,
      new Promise<T>((resolve) => {
        t = setTimeout(() => resolve(fallback), limitMs)
      }),
    ])
  } finally {
    clearTimeout(t)
  }
}

/** The processes noted here (and not reaped yet) that still run: [] once a job has ended cleanly. */
export function survivors(): number[] {
  return [...started].filter(([pid, t]) => startTime(pid) === t && alive(pid)).map(([pid]) => pid)
}

/**
 * Kills (SIGKILL) every process started here that still runs and every descendant of one, waits
 * up to 3 s for them to be gone, and returns those that are not (process.kill(pid, 0) still
 * succeeds and /proc says no zombie): a test's afterEach expects [].
 */
export async function reapAll(): Promise<number[]> {
  for (const pid of [...started.keys()]) noteStarted(descendants(pid))
  const ours = [...started].filter(([pid, t]) => startTime(pid) === t).map(([pid]) => pid)
  started.clear()
  for (const pid of ours) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      /* gone */
    }
  }
  await until(() => ours.every((p) => !alive(p)), 3000)
  return ours.filter(alive)
}
