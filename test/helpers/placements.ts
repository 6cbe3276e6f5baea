/**
 * Where the pgas tests run a job: all tasks in one process (shared memory), or split over
 * processes on tcp or udp; and the run of a self-checking program there.
 */
import { expect } from 'vitest'
import type { JobConfig } from '@amlapi/lapi'
import { runFixture } from './job.js'

export interface Placement {
  name: string
  tasks: number
  procs: number
  transport?: 'tcp' | 'udp'
  faults?: string
}

export const SHM4: Placement = { name: 'shm, 4 tasks', tasks: 4, procs: 1 }
export const SHM3: Placement = { name: 'shm, 3 tasks', tasks: 3, procs: 1 }
export const TCP4IN2: Placement = { name: 'tcp, 4 tasks in 2 processes', tasks: 4, procs: 2, transport: 'tcp' }
export const TCP3: Placement = { name: 'tcp, 3 processes', tasks: 3, procs: 3, transport: 'tcp' }
export const UDP4IN2: Placement = { name: 'udp, 4 tasks in 2 processes', tasks: 4, procs: 2, transport: 'udp' }
export const SHM1: Placement = { name: 'shm, 1 task', tasks: 1, procs: 1 }
export const TCP2: Placement = { name: 'tcp, 2 processes', tasks: 2, procs: 2, transport: 'tcp' }

/** The placements every feature of @amlapi/pgas is tested on. */
export const PGAS_PLACEMENTS: readonly Placement[] = [SHM4, SHM3, TCP4IN2, TCP3, UDP4IN2]

/** The placements of the applications (examples/pgas): one task, four, and over processes. */
export const APP_PLACEMENTS: readonly Placement[] = [SHM1, SHM4, TCP2, UDP4IN2]

/**
 * Runs `file` (under test/fixtures, or a path) as a job on `pl`; returns its stdout, or throws
 * with its whole output when it did not exit 0. With `ok`, every task must have printed
 * `task <t> <ok>`.
 */
export async function runPlaced(
  file: string,
  pl: Placement,
  opts: { args?: string[]; timeoutMs?: number; config?: Partial<JobConfig>; ok?: string } = {},
): Promise<string> {
  const r = await runFixture(file, pl.tasks, {
    args: opts.args ?? [],
    timeoutMs: opts.timeoutMs ?? 60_000,
    procs: pl.procs,
    ...(opts.config !== undefined ? { config: opts.config } : {}),
    ...(pl.transport !== undefined ? { transport: pl.transport } : {}),
    ...(pl.faults !== undefined ? { faults: pl.faults } : {}),
  })
  if (r.exitCode !== 0) throw new Error(`job failed (${r.exitCode}): ${r.failure?.reason ?? ''}\n${r.stderr}\n${r.stdout}`)
  if (opts.ok !== undefined) for (let t = 0; t < pl.tasks; t++) expect(r.stdout).toContain(`task ${t} ${opts.ok}`)
  return r.stdout
}
