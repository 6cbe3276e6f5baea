/**
 * Runs commands as a user of the packages runs them in a project of their own (test/packaging.test.ts,
 * test/tiers/docs.test.ts): with the clone's npm variables and its node_modules/.bin out of the
 * environment, each command in a process group of its own with a deadline, and every group still
 * running killed at the end.
 */
import { spawn } from 'node:child_process'
import { delimiter, dirname, sep } from 'node:path'

export interface Run {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** Child processes still running (process-group ids), killed at the end whatever happened. */
export const running = new Set<number>()

/**
 * The environment of the children: npm's per-run variables of an `npm test` left out (they name the
 * clone as the project), and the clone's node_modules/.bin off PATH, so that only the new project's
 * lapirun can be found.
 */
export function childEnv(root: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    const key = k.toLowerCase()
    if (key === 'init_cwd' || /^npm_(package_|lifecycle_|command$|execpath$|node_execpath$)/.test(key)) continue
    if (/^npm_config_(local_prefix|prefix|global_prefix|call|workspaces?|include_workspace_root|offline|prefer_online|yes)$/.test(key)) continue
    env[k] = v
  }
  const pathKey = Object.keys(env).find((k) => k.toUpperCase() === 'PATH') ?? 'PATH'
  // (the folder of the Node running the tests stays: `npm run test:node-lines` runs them under
  // .node/<line>/bin/node, inside the clone and first on PATH, and `node`, npm and lapirun's
  // `#!/usr/bin/env node` must run that same Node)
  const nodeDir = dirname(process.execPath)
  env[pathKey] = (env[pathKey] ?? '')
    .split(delimiter)
    .filter((p) => p !== '' && (p === nodeDir || !(p + sep).startsWith(root + sep)))
    .join(delimiter)
  return env
}

export interface SpawnOptions {
  /** The environment (default: childEnv of `root`). */
  env?: NodeJS.ProcessEnv
  /** Called with each piece of output as it comes (stdout and stderr alike). */
  onData?: (text: string) => void
}

/**
 * Runs `cmd args` in `cwd` with a deadline: past it the whole process group (npx, lapirun and the
 * job) is killed and the run rejects.
 */
export function runIn(root: string, cmd: string, args: string[], cwd: string, deadlineMs: number, opts: SpawnOptions = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { cwd, env: opts.env ?? childEnv(root), stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    let stdout = ''
    let stderr = ''
    p.stdout.on('data', (d: Buffer) => {
      const s = d.toString()
      stdout += s
      opts.onData?.(s)
    })
    p.stderr.on('data', (d: Buffer) => {
      const s = d.toString()
      stderr += s
      opts.onData?.(s)
    })
    const pid = p.pid
    if (pid !== undefined) running.add(pid)
    const kill = setTimeout(() => {
      killGroup(pid)
      reject(new Error(`deadline (${deadlineMs} ms) passed: ${cmd} ${args.join(' ')}\n${stdout}\n${stderr}`))
    }, deadlineMs)
    p.on('error', (e) => {
      clearTimeout(kill)
      if (pid !== undefined) running.delete(pid)
      reject(e)
    })
    p.on('close', (code, signal) => {
      clearTimeout(kill)
      if (pid !== undefined) running.delete(pid)
      resolve({ code, signal, stdout, stderr })
    })
  })
}

/** Kills process group `pid` (a child started by runIn), if it is still there. */
export function killGroup(pid: number | undefined): void {
  if (pid === undefined) return
  running.delete(pid)
  try {
    process.kill(-pid, 'SIGKILL')
  } catch {
    /* gone already */
  }
}

/** Kills every group runIn started that is still running. */
export function killAll(): void {
  for (const pid of [...running]) killGroup(pid)
}

/** `r`, when it exited 0; else throws with its output. */
export function ok(r: Run, what: string): Run {
  if (r.code !== 0) throw new Error(`${what} exited ${r.code ?? r.signal}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`)
  return r
}
