/**
 * Errors a user can cause name the values involved (the task and the job's range, the address,
 * length and segment size, the handler index and what is registered), and a BigInt where a
 * number goes gets the code and words, not a raw TypeError (fixtures/lapi/messages.mjs, both
 * faces, one process and two). lapirun: a missing option value names the option; SIGTERM ends a
 * job with 143 in every placement; runJob writes nothing of its own to stderr unless given one.
 */
import { randomBytes } from 'node:crypto'
import { spawn } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { runJob } from '@amlapi/lapi'
import { FIXTURES, expectOk, runFixture } from '../helpers/job.js'
import { LAPIRUN, runNode } from '../helpers/run.js'
import { freePort, member, until } from '../helpers/join.js'

const MESSAGES = FIXTURES + 'lapi/messages.mjs'
const ENDING = FIXTURES + 'lapi/ending.mjs'

describe('errors name the values involved', () => {
  for (const procs of [1, 2]) {
    it(`in both faces, BigInts included (${procs} process${procs === 1 ? '' : 'es'})`, async () => {
      expectOk(await runFixture('lapi/messages.mjs', 2, { procs, timeoutMs: 20_000 }), 2, 'messages ok')
    })
  }

  it("an active message for an unregistered handler: the index and what is registered (LAPI's default error handling)", async () => {
    const r = await runNode([LAPIRUN, '-n', '2', MESSAGES, 'unregistered'], { deadlineMs: 20_000 })
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(
      /lapirun: task 1 failed: an active message for header handler index 9, which is not registered here \(registered: 1, 2, 5\) \(AM_ERR, peer task 0\)/,
    )
  })
})

describe('lapirun', () => {
  it('a missing option value names the option, at the end or followed by another option', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['-n'], /^lapirun: -n needs a value \(/],
      [['--timeout'], /^lapirun: --timeout needs a value \(/],
      [['-n', '2', '--procs'], /^lapirun: --procs needs a value \(/],
      [['-n', '--procs', '2', 'x.mjs'], /^lapirun: -n needs a value, but the next argument is the option --procs/],
      [['-n', '2', '--timeout', 'x.mjs'], /^lapirun: --timeout needs a value: 'x.mjs' was taken as its value, and no program is left/],
      [['--procs', '-n', '2', 'x.mjs'], /^lapirun: --procs needs a value, but the next argument is the option -n/],
      [['-n', '2', '--timeout', '--label', 'x.mjs'], /^lapirun: --timeout needs a value, but the next argument is the option --label/],
      [['-n', '2', '--segment-size', '--spin-us=5', 'x.mjs'], /^lapirun: --segment-size needs a value, but the next argument is the option --spin-us=5/],
    ]
    // (each exits while reading its options: run side by side)
    const runs = await Promise.all(cases.map(([args]) => runNode([LAPIRUN, ...args], { deadlineMs: 10_000 })))
    for (const [i, [args, want]] of cases.entries()) {
      expect(runs[i]!.code, args.join(' ')).toBe(2)
      expect(runs[i]!.stderr, args.join(' ')).toMatch(want)
    }
    // (a value that merely starts with '-' is still a value: a bad count, said as such)
    const neg = await runNode([LAPIRUN, '-n', '-1', 'x.mjs'], { deadlineMs: 10_000 })
    expect(neg.stderr).toMatch(/-n \(the number of tasks\) must be a whole number from 1 to \d+, not '-1'/)
  })

  it('SIGTERM ends a job with 143: one process, 2 processes, and a process under --join', async () => {
    const placed = async (place: string[]): Promise<void> => {
      const p = spawn(process.execPath, [LAPIRUN, '-n', '2', ...place, ENDING, 'waits'], {
        env: { ...process.env, AMLAPI_LOG_LEVEL: 'debug' },
        stdio: ['ignore', 'ignore', 'pipe'],
      })
      let err = ''
      p.stderr.on('data', (d: Buffer) => {
        err += d.toString()
      })
      const kill = setTimeout(() => p.kill('SIGKILL'), 20_000)
      const code = new Promise<number | null>((resolve) =>
        p.on('close', (c) => {
          clearTimeout(kill)
          resolve(c)
        }),
      )
      await until(() => err.includes('"msg":"job starting"'), 15_000)
      p.kill('SIGTERM')
      expect(await code, `${place.join(' ')}\n${err.slice(-2000)}`).toBe(143)
    }
    const joined = async (): Promise<void> => {
      const env = { AMLAPI_RENDEZVOUS: `127.0.0.1:${await freePort()}`, AMLAPI_JOB_KEY: randomBytes(32).toString('hex'), AMLAPI_LOG_LEVEL: 'debug' }
      const args = ['--tasks-per-proc', '1', '--transport', 'tcp', ENDING, 'waits']
      const ps = [member(0, 2, env, args, 25_000), member(1, 2, env, args, 25_000)]
      await until(() => ps.every((m) => m.err.includes('"msg":"job starting"')), 15_000)
      ps[1]!.p.kill('SIGTERM')
      const codes = await Promise.all(ps.map((m) => m.code))
      expect(codes[1], ps[1]!.err.slice(-2000)).toBe(143)
      expect(codes[0]).not.toBe(0)
    }
    // (three independent jobs, each waiting for its signal: side by side)
    await Promise.all([placed([]), placed(['--procs', '2']), joined()])
  }, 60_000)
})

describe('runJob', () => {
  it('writes nothing of its own to stderr unless given one: the failure is in the result', async () => {
    const writes: string[] = []
    const write = process.stderr.write.bind(process.stderr)
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      writes.push(String(chunk))
      return (write as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest)
    }) as typeof process.stderr.write
    let r: Awaited<ReturnType<typeof runJob>>
    try {
      r = await runJob({
        program: FIXTURES + 'lapi/fail.mjs',
        numTasks: 2,
        args: ['exit'],
        stdout: new (await import('node:stream')).PassThrough(),
        timeoutMs: 20_000,
      })
    } finally {
      process.stderr.write = write
    }
    expect(r.exitCode).toBe(3)
    expect(r.failure?.reason).toMatch(/exited with code 3/)
    expect(writes.join('')).not.toMatch(/lapirun:|task 1 failed/)
  })
})
