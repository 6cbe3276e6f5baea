/**
 * Runs a fixture program as a LAPI job with captured output and a hard deadline, for tests.
 */
import { PassThrough } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { expect } from 'vitest'
import { runJob, type JobConfig, type JobResult } from '@amlapi/lapi'

export const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url))

export interface FixtureRun extends JobResult { stdout: string; stderr: string }

/** The job exited 0 (else its output is the error) and `n` lines of its stdout contain `word`. */
export function expectOk (r: { exitCode: number; stdout: string; stderr: string }, n: number, word: string): void {
  if (r.exitCode !== 0) throw new Error(`job failed (${r.exitCode}):\n${r.stderr}\n${r.stdout}`)
  expect(r.stdout.split('\n').filter((l) => l.includes(word)).length).toBe(n)
}

function collect (): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough()
  const chunks: Buffer[] = []
  stream.on('data', (c: Buffer) => chunks.push(c))
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') }
}

/** Runs `fixtures/<rel>` as `numTasks` tasks; the job is failed after `timeoutMs` (default 30 s). */
export async function runFixture (rel: string, numTasks: number, opts: {
  args?: string[]; config?: Partial<JobConfig>; label?: boolean; timeoutMs?: number; env?: NodeJS.ProcessEnv
} = {}): Promise<FixtureRun> {
  const out = collect(); const err = collect()
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
  })
  return { ...r, stdout: out.text(), stderr: err.text() }
}
