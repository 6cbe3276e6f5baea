/**
 * Runs a fixture program as a LAPI job with captured output and a hard deadline, for tests.
 */
import { readFileSync } from 'node:fs'
import { PassThrough } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { expect } from 'vitest'
import { runJob, type JobConfig, type JobResult } from '@amlapi/lapi'

export const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url))

export interface FixtureRun extends JobResult {
  stdout: string
  stderr: string
}

/** The job exited 0 (else its output is the error) and `n` lines of its stdout contain `word`. */
export function expectOk(r: { exitCode: number; stdout: string; stderr: string }, n: number, word: string): void {
  if (r.exitCode !== 0) throw new Error(`job failed (${r.exitCode}):\n${r.stderr}\n${r.stdout}`)
  expect(r.stdout.split('\n').filter((l) => l.includes(word)).length).toBe(n)
}

function collect(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough()
  const chunks: Buffer[] = []
  stream.on('data', (c: Buffer) => chunks.push(c))
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') }
}

/** Runs `fixtures/<rel>` as `numTasks` tasks; the job is failed after `timeoutMs` (default 30 s). */
export async function runFixture(
  rel: string,
  numTasks: number,
  opts: {
    args?: string[]
    config?: Partial<JobConfig>
    label?: boolean
    timeoutMs?: number
    env?: NodeJS.ProcessEnv
    /** Processes to split the tasks over (default 1), and their transport (with its fault injection and MAC). */
    procs?: number
    transport?: 'tcp' | 'udp'
    faults?: string
    mac?: boolean
  } = {},
): Promise<FixtureRun> {
  const out = collect()
  const err = collect()
  const r = await runJob({
    program: FIXTURES + rel,
    numTasks,
    args: opts.args ?? [],
    config: { segmentSize: 4 * 1024 * 1024, ...opts.config },
    label: opts.label ?? false,
    stdout: out.stream,
    stderr: err.stream,
    timeoutMs: opts.timeoutMs ?? 30_000,
    ...(opts.env !== undefined ? { env: opts.env } : {}),
    ...(opts.procs !== undefined ? { procs: opts.procs } : {}),
    ...(opts.transport !== undefined ? { transport: opts.transport } : {}),
    ...(opts.faults !== undefined ? { faults: opts.faults } : {}),
    ...(opts.mac !== undefined ? { mac: opts.mac } : {}),
  })
  return { ...r, stdout: out.text(), stderr: err.text() }
}

/** Busy CPU seconds of the whole machine so far (Linux `/proc/stat`), or null elsewhere. */
function machineBusySeconds(): number | null {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number)
    // user nice system idle iowait irq softirq steal: all but idle and iowait
    return (f.reduce((a, b) => a + b, 0) - f[3]! - f[4]!) / 100
  } catch {
    return null
  }
}

/**
 * Runs `fn` and says how much of a CPU other processes held meanwhile, on average (0.5: half a
 * CPU): the machine's busy time less this process's (whose worker threads run the jobs of
 * `runFixture`), over the wall time. 0 where `/proc/stat` cannot be read. A test of how waits
 * spin judges only runs where the job's tasks had the CPUs: a task another process displaces
 * sleeps, as it should.
 */
export async function withOtherLoad<T>(fn: () => Promise<T>): Promise<{ result: T; otherCpus: number }> {
  const m0 = machineBusySeconds()
  const u0 = process.cpuUsage()
  const t0 = performance.now()
  const result = await fn()
  const wall = (performance.now() - t0) / 1e3
  const m1 = machineBusySeconds()
  const u = process.cpuUsage(u0)
  if (m0 === null || m1 === null || wall <= 0) return { result, otherCpus: 0 }
  const other = Math.max(0, m1 - m0 - (u.user + u.system) / 1e6)
  return { result, otherCpus: other / wall }
}
