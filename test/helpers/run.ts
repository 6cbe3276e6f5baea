/**
 * Runs a command as a user would (lapirun, node, sh) with captured output and a hard deadline: past
 * it the process is killed and the run rejects, so no test waits forever or leaves it behind.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** The lapirun launcher of this checkout (its bin shim, which runs the build). */
export const LAPIRUN = fileURLToPath(new URL('../../packages/lapi/bin/lapirun.js', import.meta.url))

export interface CommandRun {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  ms: number
}

export interface RunOptions {
  /** Added to this process's environment. */
  env?: NodeJS.ProcessEnv
  /** Sends SIGINT (once) when this first holds for the stderr so far. */
  interruptWhen?: (stderr: string) => boolean
  /** Default 30 s. */
  deadlineMs?: number
}

/** Runs `cmd args` to its end. */
export function runCommand(cmd: string, args: string[], opts: RunOptions = {}): Promise<CommandRun> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    const p = spawn(cmd, args, { env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    let interrupted = false
    p.stdout.on('data', (d: Buffer) => {
      stdout += d.toString()
    })
    p.stderr.on('data', (d: Buffer) => {
      stderr += d.toString()
      if (!interrupted && opts.interruptWhen?.(stderr) === true) {
        interrupted = true
        p.kill('SIGINT')
      }
    })
    const kill = setTimeout(() => {
      p.kill('SIGKILL')
      reject(new Error(`deadline passed: ${cmd} ${args.join(' ')}\n${stderr}`))
    }, opts.deadlineMs ?? 30_000)
    p.on('close', (code, signal) => {
      clearTimeout(kill)
      resolve({ code, signal, stdout, stderr, ms: performance.now() - t0 })
    })
  })
}

/** Runs node (this one) with `args`. */
export function runNode(args: string[], opts: RunOptions = {}): Promise<CommandRun> {
  return runCommand(process.execPath, args, opts)
}
