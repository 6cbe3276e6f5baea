/**
 * The ways a job ends early (a task that throws, a job past its deadline, a process that dies, is
 * killed or goes silent), and a crowded ring, each run to its end with what it must show asserted,
 * returning how long it took (ms): test/lapi/part1.test.ts, processes.test.ts and udp.test.ts run
 * them for what happens (the README's suite), test/lapi/losses.perf.test.ts for how soon
 * (`npm run test:perf`).
 */
import { PassThrough } from 'node:stream'
import { expect } from 'vitest'
import { runJob } from '@amlapi/lapi'
import { FIXTURES, expectOk, runFixture } from './job.js'

/** A task that throws ends the job, task 1 named (3 tasks over `procs` processes). */
export async function taskThrows(procs: number): Promise<number> {
  const t0 = performance.now()
  const r = await runFixture('lapi/fail.mjs', 3, { args: ['throw'], procs })
  const ms = performance.now() - t0
  expect(r.exitCode).not.toBe(0)
  expect(r.failure?.task).toBe(1)
  expect(r.stderr).toMatch(/task 1 failed: uncaught error: .*task one blew up/)
  return ms
}

/** A job that runs past its deadline (1.5 s) is stopped. */
export async function pastDeadline(): Promise<number> {
  const t0 = performance.now()
  const r = await runFixture('lapi/fail.mjs', 2, { args: ['hang'], timeoutMs: 1500 })
  const ms = performance.now() - t0
  expect(r.exitCode).not.toBe(0)
  expect(r.stderr).toContain('timed out')
  return ms
}

/** 16 tasks in one process (on however few cores) complete a ring of signalled Puts and Gfences. */
export async function crowdedRing(): Promise<number> {
  const t0 = performance.now()
  const r = await runFixture('lapi/ring.mjs', 16, { args: ['30'], timeoutMs: 60_000 })
  const ms = performance.now() - t0
  expectOk(r, 16, 'ring ok')
  for (let t = 0; t < 16; t++) expect(r.stdout).toContain(`task ${t}`)
  return ms
}

/** A process that dies at once (its tasks never end) ends the job, task 1 named (3 tasks over `procs` processes). */
export async function processDies(procs: number): Promise<number> {
  const t0 = performance.now()
  const r = await runFixture('lapi/lose.mjs', 3, { args: ['exit'], procs })
  const ms = performance.now() - t0
  expect(r.exitCode).not.toBe(0)
  expect(r.failure?.task).toBe(1)
  expect(r.stderr).toMatch(/process 1 \((task 1|tasks 1-2)\) (was killed by SIGKILL|was lost)/)
  return ms
}

/** A process killed with kill -9 from outside ends the job, named, not by its deadline (3 tasks over `procs` processes). */
export async function processKilled(procs: number): Promise<number> {
  const out = new PassThrough()
  let text = ''
  let killed = false
  out.on('data', (c: Buffer) => {
    text += c.toString()
    const m = /task 1 pid (\d+)/.exec(text)
    if (m !== null && !killed && /task 0 pid/.test(text) && /task 2 pid/.test(text)) {
      killed = true
      process.kill(Number(m[1]), 'SIGKILL')
    }
  })
  const err = new PassThrough()
  let errText = ''
  err.on('data', (c: Buffer) => {
    errText += c.toString()
  })
  const t0 = performance.now()
  const r = await runJob({
    program: FIXTURES + 'lapi/lose.mjs',
    numTasks: 3,
    procs,
    stdout: out,
    stderr: err,
    timeoutMs: 30_000,
    config: { segmentSize: 1 << 20 },
  })
  const ms = performance.now() - t0
  expect(killed).toBe(true)
  expect(r.exitCode).not.toBe(0)
  expect(errText).toMatch(/process 1 \((task 1|tasks 1-2)\) (was killed by SIGKILL|was lost)/)
  expect(errText).not.toMatch(/timed out/)
  return ms
}

/**
 * A process that goes silent over udp (stopped, its port still open) is lost after the peer
 * timeout (1 s here), named, and the launcher kills it. The time is the whole job's: the peer
 * timeout, then the abort's grace and the launcher's kill of the stopped process.
 */
export async function silentUdpProcess(): Promise<number> {
  const out = new PassThrough()
  const err = new PassThrough()
  let text = ''
  let errText = ''
  let stopped = 0
  out.on('data', (c: Buffer) => {
    text += c.toString()
    const m = /task 1 pid (\d+)/.exec(text)
    if (m !== null && stopped === 0 && /task 0 pid/.test(text) && /task 2 pid/.test(text)) {
      stopped = Number(m[1])
      process.kill(stopped, 'SIGSTOP')
    }
  })
  err.on('data', (c: Buffer) => {
    errText += c.toString()
  })
  const t0 = performance.now()
  const r = await runJob({
    program: FIXTURES + 'lapi/lose.mjs',
    numTasks: 3,
    procs: 3,
    transport: 'udp',
    stdout: out,
    stderr: err,
    timeoutMs: 30_000,
    config: { segmentSize: 1 << 20 },
    env: { ...process.env, AMLAPI_PEER_TIMEOUT_MS: '1000' },
  })
  const ms = performance.now() - t0
  expect(stopped).toBeGreaterThan(0)
  expect(r.exitCode).not.toBe(0)
  expect(errText).toMatch(/process 1 \(task 1\) was lost: no datagram from it for 1 s/)
  expect(errText).not.toMatch(/timed out/)
  expect(() => process.kill(stopped, 0)).toThrow()
  return ms
}
