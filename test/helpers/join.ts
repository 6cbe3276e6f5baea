/**
 * Processes of `lapirun --join` started as a script would, for tests: each with its output
 * captured and killed at a deadline at the latest, so no test leaves one behind.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import { LAPIRUN } from './run.js'

/** A free loopback port (for process 0's rendezvous). */
export async function freePort(): Promise<number> {
  return await new Promise((resolve) => {
    const s = createServer()
    s.listen(0, '127.0.0.1', () => {
      const a = s.address()
      s.close(() => resolve(typeof a === 'object' && a !== null ? a.port : 0))
    })
  })
}

/** Waits until `cond` holds, looking every 20 ms, for at most `limitMs` (the caller's expect says whether it came). */
export async function until(cond: () => boolean, limitMs: number): Promise<void> {
  const end = performance.now() + limitMs
  while (!cond() && performance.now() < end) await new Promise((resolve) => setTimeout(resolve, 20))
}

export interface Proc {
  p: ChildProcess
  out: string
  err: string
  code: Promise<number | null>
}

/** Members still running: killed when the test file's process exits, so none outlives a failed test. */
const live = new Set<ChildProcess>()
process.once('exit', () => {
  for (const p of live) p.kill('SIGKILL')
})

/** Starts `lapirun --join` as rank `rank` of `size` with `env` added (killed after `deadlineMs`, or when this process exits, at the latest). */
export function member(rank: number, size: number, env: NodeJS.ProcessEnv, args: string[], deadlineMs = 40_000): Proc {
  const p = spawn(process.execPath, [LAPIRUN, '--join', ...args], {
    env: { ...process.env, AMLAPI_RANK: String(rank), AMLAPI_SIZE: String(size), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const r: Proc = { p, out: '', err: '', code: new Promise((resolve) => p.on('close', (c) => resolve(c))) }
  p.stdout!.on('data', (d: Buffer) => {
    r.out += d.toString()
  })
  p.stderr!.on('data', (d: Buffer) => {
    r.err += d.toString()
  })
  live.add(p)
  p.once('exit', () => live.delete(p))
  setTimeout(() => p.kill('SIGKILL'), deadlineMs).unref()
  return r
}
