/**
 * The conformance programs (every LAPI and AM-2 test program, the AMX programs and the examples),
 * each with its task count and the check of its output: the conformance suite runs them in one
 * process and over processes (test/conformance.test.ts), the launchers tier under mpirun, mpiexec
 * and srun (test/tiers/launchers.test.ts).
 */
import { expect } from 'vitest'
import type { JobConfig } from '@amlapi/lapi'
import type { FixtureRun } from './job.js'

export interface Program {
  /** Under test/fixtures/, or ../../examples/… */
  file: string
  tasks: number
  args?: string[]
  env?: Record<string, string>
  config?: Partial<JobConfig>
  /** What each task prints when it is done (the suite counts one line per task), or a check of its own. */
  ok: string | ((r: FixtureRun, tasks: number) => void)
  /** Only in one process, and why (what is not yet true across processes). */
  shmOnly?: string
}

export const EX = '../../examples/'
const MiB = 1024 * 1024

/** Exit 0 and no error line; `Proc r verified.` from every rank when `verified`. */
function amx(verified: boolean) {
  return (r: FixtureRun, tasks: number): void => {
    expect(r.stdout + r.stderr).not.toMatch(/ERROR|mismatch|Error calling/)
    if (verified) {
      const got = [...r.stdout.matchAll(/^Proc (\d+) verified\.$/gm)].map((m) => Number(m[1])).sort((a, b) => a - b)
      expect(got).toEqual(Array.from({ length: tasks }, (_, i) => i))
    }
  }
}

/** testam's checks: every worker done, and every request and reply of `iters` iterations handled (17 arities × 4 kinds). */
function testam(iters: number) {
  return (r: FixtureRun, tasks: number): void => {
    amx(false)(r, tasks)
    expect([...r.stdout.matchAll(/^Worker (\d) done\.$/gm)].map((m) => m[1]).sort()).toEqual(['0', '1'])
    expect(r.stderr).toMatch(new RegExp(`^  requests handled: ${2 * 68 * iters}$`, 'm'))
    expect(r.stderr).toMatch(new RegExp(`^  replies handled: ${2 * 68 * iters}$`, 'm'))
    expect(r.stderr).toMatch(/^ {2}GetXfer replies: 34$/m)
  }
}

export const PROGRAMS: Program[] = [
  // LAPI: one-sided operations, counters, collectives, handlers, errors
  { file: 'lapi/env.mjs', tasks: 3, env: { EXPECT_TASKS: '3' }, ok: 'env ok' },
  { file: 'lapi/putget.mjs', tasks: 4, ok: 'putget ok' },
  { file: 'lapi/bulk.mjs', tasks: 3, config: { segmentSize: 16 * MiB }, ok: 'bulk ok' },
  { file: 'lapi/bulk-asleep.mjs', tasks: 2, config: { segmentSize: 16 * MiB, spinUs: 0 }, ok: 'bulk-asleep ok' },
  // (with the default spin the target's wait reads the stream at first, then sleeps and leaves it
  // to the agent: the connections change hands during it, and the receive buffer fills up)
  { file: 'lapi/bulk-asleep.mjs', tasks: 2, args: ['8'], config: { segmentSize: 16 * MiB }, ok: 'bulk-asleep ok' },
  { file: 'lapi/rmw.mjs', tasks: 4, ok: 'rmw ok' },
  { file: 'lapi/vector.mjs', tasks: 3, ok: 'vector ok' },
  { file: 'lapi/xfer.mjs', tasks: 3, ok: 'xfer ok' },
  { file: 'lapi/errors.mjs', tasks: 2, ok: 'errors ok' },
  { file: 'lapi/handlers.mjs', tasks: 3, ok: 'handlers ok' },
  {
    file: 'lapi/busy.mjs',
    tasks: 2,
    ok: (r) => {
      expect(r.stdout).toContain('put/get/rmw to a busy task done')
      expect(r.stdout).toContain('target released')
    },
  },
  {
    file: 'lapi/burst.mjs',
    tasks: 2,
    ok: (r) => {
      expect(r.stdout).toContain('burst arrived while the sender was busy')
      expect(r.stdout).toContain('burst ok')
    },
  },
  { file: 'lapi/idiomatic.mjs', tasks: 3, ok: 'idiomatic ok' },
  { file: 'lapi/counter-args.mjs', tasks: 3, ok: 'counter-args ok' },
  { file: 'lapi/ring.mjs', tasks: 4, args: ['30'], ok: 'ring ok' },
  { file: 'lapi/segment-memory.mjs', tasks: 3, ok: 'segment-memory ok' },
  { file: 'lapi/segment-memory.mjs', tasks: 2, args: ['plain'], config: { segmentSize: 1_000_000 }, ok: 'segment-memory ok' },
  // LAPI active messages
  { file: 'am/basic.mjs', tasks: 3, ok: 'am basic ok' },
  { file: 'am/vector.mjs', tasks: 3, ok: 'am vector ok' },
  { file: 'am/errors.mjs', tasks: 3, ok: 'am errors ok' },
  { file: 'am/waits.mjs', tasks: 2, ok: 'am waits ok' },
  { file: 'am/edges.mjs', tasks: 2, args: ['plain'], ok: 'am edges ok' },
  { file: 'am/held.mjs', tasks: 2, ok: 'am held ok' },
  { file: 'am/held-term.mjs', tasks: 2, ok: 'am held-term ok' },
  { file: 'am/prepared.mjs', tasks: 2, args: ['plain'], ok: 'am prepared ok' },
  { file: 'am/reply.mjs', tasks: 4, args: ['200'], ok: 'am reply ok' },
  { file: 'am/stress.mjs', tasks: 4, args: ['1500'], config: { segmentSize: 8 * MiB }, ok: 'am stress ok' },
  { file: 'am/interrupt.mjs', tasks: 2, args: ['polling'], ok: 'polling: during await []' },
  { file: 'am/interrupt.mjs', tasks: 2, args: ['interrupt'], ok: 'interrupt: during await [hdr,cmpl]' },
  {
    file: EX + 'accumulate/c-style.mjs',
    tasks: 4,
    args: ['5000'],
    ok: (r) => expect(r.stdout).toContain('accumulate: D = sum of 4 vectors of 5000 doubles, verified'),
  },
  {
    file: EX + 'accumulate/idiomatic.mjs',
    tasks: 4,
    args: ['5000'],
    ok: (r) => expect(r.stdout).toContain('accumulate: D = sum of 4 vectors of 5000 doubles, verified'),
  },
  { file: EX + 'put-get/c-style.mjs', tasks: 2, ok: 'read from task' },
  { file: EX + 'put-get/idiomatic.mjs', tasks: 2, ok: 'read from task' },
  // AM-2 over LAPI
  { file: 'am2/rules.mjs', tasks: 2, args: ['plain'], ok: 'am2 rules ok' },
  { file: 'am2/returned.mjs', tasks: 3, ok: 'am2 returned ok' },
  { file: 'am2/inplace.mjs', tasks: 2, args: ['plain'], ok: 'am2 inplace ok' },
  { file: 'am2/xfer.mjs', tasks: 2, config: { segmentSize: 16 * MiB }, ok: 'am2 xfer ok' },
  { file: 'am2/bigmedium.mjs', tasks: 2, config: { segmentSize: 32 * MiB }, ok: 'am2 bigmedium ok' },
  { file: 'am2/throws.mjs', tasks: 2, env: { AMLAPI_LOG_LEVEL: 'error' }, ok: 'am2 throws ok' },
  { file: 'am2/wait.mjs', tasks: 2, ok: 'am2 wait ok' },
  { file: 'am2/idiomatic.mjs', tasks: 2, ok: 'am2 idiomatic ok' },
  {
    file: 'am2/noalloc.mjs',
    tasks: 2,
    args: ['2000'],
    ok: 'bytes allocated',
    shmOnly:
      "over tcp the engine still allocates per message (about 55 B a Short round trip, 390 B a Medium by rendezvous; a heap profile shows clock reads, performance.now, returned boxed from calls V8 does not inline, and a direct frame's writev views)",
  },
  // the AMX programs (the AM-2 reference, section 4)
  { file: EX + 'amx/testam.mjs', tasks: 2, args: ['40', 'P'], ok: testam(40) },
  { file: EX + 'amx/testam.mjs', tasks: 2, args: ['40', 'B'], ok: testam(40) },
  { file: EX + 'amx/testping.mjs', tasks: 2, args: ['200', 'P'], ok: amx(false) },
  { file: EX + 'amx/testping.mjs', tasks: 4, args: ['100', 'B'], ok: amx(false) },
  { file: EX + 'amx/testlatency.mjs', tasks: 2, args: ['200', 'B'], ok: amx(false) },
  { file: EX + 'amx/testbulk.mjs', tasks: 2, args: ['20', '1048576', 'P', 'H'], ok: amx(false) },
  { file: EX + 'amx/testbounce.mjs', tasks: 2, args: ['8', 'P'], config: { segmentSize: 16 * MiB }, ok: amx(false) },
  {
    file: EX + 'amx/testreduce.mjs',
    tasks: 4,
    ok: (r, tasks) => {
      amx(false)(r, tasks)
      const got = [...r.stdout.matchAll(/^reduce_request_handler got: (\d+)$/gm)].map((m) => Number(m[1])).sort((a, b) => a - b)
      expect(got).toEqual([0, 1, 2, 3])
      expect(r.stdout).toContain('Result verified!')
    },
  },
  { file: EX + 'amx/testgetput.mjs', tasks: 4, args: ['40'], ok: amx(true) },
  { file: EX + 'amx/testreadwrite.mjs', tasks: 4, args: ['20'], ok: amx(true) },
]

/** Checks a run's output as `prog` wants (`stdout` and `stderr` of the whole job). */
export function checkOutput(prog: Program, r: FixtureRun): void {
  if (typeof prog.ok === 'string') {
    const word = prog.ok
    expect(r.stdout.split('\n').filter((l) => l.includes(word)).length, `lines with "${word}"`).toBe(
      prog.tasks === 2 && word.includes('during await') ? 1 : prog.tasks,
    )
  } else {
    prog.ok(r, prog.tasks)
  }
}
