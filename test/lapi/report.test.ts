/**
 * A job that explains itself: the report of what each task is doing (which call, which counter and
 * what it holds, who has arrived at the barrier) is the same in one process, over processes (tcp
 * and udp) and under --join; --timeout prints it and ends the job, the first Ctrl-C prints it and
 * ends the job (130), SIGUSR1 prints it and the job goes on; a task spinning in a wait is never
 * taken for one running its own code; the debug log says what the tasks wait for once a second.
 * `npm test` runs --timeout and SIGUSR1 over processes under --join (tcp) only; `npm run test:full`
 * under --procs over tcp and udp too.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { FIXTURES } from '../helpers/job.js'
import { LAPIRUN, runNode } from '../helpers/run.js'
import { freePort, member, until } from '../helpers/join.js'
import { FULL, matrix } from '../helpers/tier.js'

const ENDING = FIXTURES + 'lapi/ending.mjs'

/** The four lines of the `waits` fixture's report, whatever the placement. */
const WAITS = [
  /^ {2}task 0 was waiting in LAPI_Waitcntr for the counter at Addr \d+ to reach 1 \(it holds 0\)$/m,
  /^ {2}task 1 was waiting in LAPI_Gfence for the other tasks \(1 of 4 had arrived; not tasks 0, 2, 3\)$/m,
  /^ {2}task 2 was running its own code \(not waiting in a LAPI or AM-2 call\)$/m,
  /^ {2}task 3 was waiting in Lapi\.waitUntil$/m,
]

function expectWaits(text: string): void {
  for (const re of WAITS) expect(text).toMatch(re)
}

/** The text from the last report's header on (`head`: the header's words). */
function lastReport(text: string, head: string): string {
  const i = text.lastIndexOf(head)
  return i < 0 ? '' : text.slice(i)
}

/** Every process a test started: killed when it ends, whatever its expectations did. */
const started: Array<{ kill: (s: NodeJS.Signals) => boolean; exitCode: number | null; signalCode: NodeJS.Signals | null }> = []
afterEach(() => {
  for (const p of started.splice(0)) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL')
})

/** Starts lapirun with `args`, killed at the deadline (or the test's end) at the latest; `signal` sends it a signal. */
function start(args: string[], env: NodeJS.ProcessEnv = {}): { err: () => string; signal: (s: NodeJS.Signals) => void; code: Promise<number | null> } {
  const p = spawn(process.execPath, [LAPIRUN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] })
  started.push(p)
  let err = ''
  p.stderr.on('data', (d: Buffer) => {
    err += d.toString()
  })
  const kill = setTimeout(() => p.kill('SIGKILL'), 30_000)
  const code = new Promise<number | null>((resolve) =>
    p.on('close', (c) => {
      clearTimeout(kill)
      resolve(c)
    }),
  )
  return { err: () => err, signal: (s) => p.kill(s), code }
}

/**
 * Once lapirun has started the job (its debug log says so: its SIGUSR1 handler is set), asks for
 * the report every 300 ms until one shows every task in its place (all have joined and reached
 * their waits by then). Returns that report.
 */
async function askUntilReported(err: () => string, ask: () => void): Promise<string> {
  await until(() => err().includes('"msg":"job starting"'), 15_000)
  let last = 0
  const head = 'lapirun: what each task was doing (the job goes on):'
  // (a report's lines, not the debug log's JSON, which names the waits too)
  const done = (): boolean => {
    const r = lastReport(err(), head)
    return WAITS.every((re) => re.test(r))
  }
  await until(() => {
    if (!done() && performance.now() - last > 300) {
      last = performance.now()
      ask()
    }
    return done()
  }, 15_000)
  return lastReport(err(), head)
}

const PLACEMENTS: Array<[string, string[]]> = [
  ['one process', []],
  ['2 processes over tcp', ['--procs', '2', '--transport', 'tcp']],
  ['2 processes over udp', ['--procs', '2', '--transport', 'udp']],
]

describe('the report of a job', () => {
  // (`npm test` leaves the report over processes to the --join tests below; `npm run test:full` runs tcp and udp here too)
  for (const [name, place] of matrix(PLACEMENTS, [PLACEMENTS[0]!])) {
    it(`--timeout prints each task's call, counter and the barrier's arrivals, then ends the job (${name})`, async () => {
      const r = await runNode([LAPIRUN, '-n', '4', ...place, '--timeout', '2', ENDING, 'waits'])
      expect(r.code).toBe(1)
      expect(r.stderr).toMatch(/^lapirun: the job timed out after 2 s:$/m)
      expectWaits(r.stderr)
      if (place.length > 0) expect(r.stderr.match(/^ {2}network of process [01]: /gm)).toHaveLength(2)
    })
  }

  it(`SIGUSR1 prints the report and the job goes on; the first Ctrl-C prints it and ends the job with 130 (one process${FULL ? ', and 2 over tcp' : ''})`, async () => {
    for (const place of matrix([[], ['--procs', '2']], [[]])) {
      const j = start(['-n', '4', ...place, ENDING, 'waits'], { AMLAPI_LOG_LEVEL: 'debug' })
      const report = await askUntilReported(j.err, () => j.signal('SIGUSR1'))
      const first = j.err()
      expect(report).toMatch(/^lapirun: what each task was doing \(the job goes on\):$/m)
      expectWaits(report)
      j.signal('SIGINT')
      expect(await j.code).toBe(130)
      const rest = j.err().slice(first.length)
      expect(rest).toMatch(/^lapirun: the job was interrupted:$/m)
      expectWaits(rest)
    }
  }, 45_000)

  it('SIGTERM ends a job with 143', async () => {
    // (once lapirun has set its handlers, which its debug log's "job starting" follows: a fixed
    // sleep before the signal lost the race on a loaded machine, and the default action killed it)
    const j = start(['-n', '2', ENDING, 'waits'], { AMLAPI_LOG_LEVEL: 'debug' })
    await until(() => j.err().includes('"msg":"job starting"'), 15_000)
    j.signal('SIGTERM')
    expect(await j.code).toBe(143)
  })

  it("under --join process 0 prints the whole job's report; the others say where it is", async () => {
    const env = { AMLAPI_RENDEZVOUS: `127.0.0.1:${await freePort()}`, AMLAPI_JOB_KEY: randomBytes(32).toString('hex') }
    const args = ['--tasks-per-proc', '2', '--transport', 'tcp', '--timeout', '2', ENDING, 'waits']
    const ps = [member(0, 2, env, args), member(1, 2, env, args)]
    started.push(...ps.map((m) => m.p))
    expect(await Promise.all(ps.map((p) => p.code))).toEqual([1, 1])
    expect(ps[0]!.err).toMatch(/^lapirun: the job timed out after 2 s:$/m)
    expectWaits(ps[0]!.err)
    expect(
      ps[0]!.err.match(
        /^ {2}network of process [01]: the connections read by the (agent|tasks) \(\d+ hand-overs\), the lock (free|held by .*), \d+ bytes waiting to be sent.*; process [01]: \d+ bytes not taken in, \d+ reads held by the agent, flags \d+$/gm,
      ),
    ).toHaveLength(2)
    expect(ps[1]!.err).toMatch(/^lapirun: the job timed out after 2 s \(process 0 reported what each task was doing\)$/m)
    expect(ps[1]!.err).not.toMatch(/task 0 was waiting/)
  })

  it('under --join SIGUSR1 to any process has process 0 print the report; Ctrl-C to one ends the job with the report', async () => {
    const env = { AMLAPI_RENDEZVOUS: `127.0.0.1:${await freePort()}`, AMLAPI_JOB_KEY: randomBytes(32).toString('hex') }
    const args = ['--tasks-per-proc', '2', '--transport', 'tcp', ENDING, 'waits']
    const ps = [member(0, 2, { ...env, AMLAPI_LOG_LEVEL: 'debug' }, args), member(1, 2, { ...env, AMLAPI_LOG_LEVEL: 'debug' }, args)]
    started.push(...ps.map((m) => m.p))
    await until(() => ps[1]!.err.includes('"msg":"job starting"'), 15_000)
    const report = await askUntilReported(
      () => ps[0]!.err,
      () => ps[1]!.p.kill('SIGUSR1'),
    )
    expect(report).toMatch(/^lapirun: what each task was doing \(the job goes on\):$/m)
    expectWaits(report)
    const before = ps[0]!.err.length
    ps[1]!.p.kill('SIGINT')
    const codes = await Promise.all(ps.map((p) => p.code))
    expect(codes[1]).toBe(130)
    expect(codes[0]).toBe(1)
    expect(ps[0]!.err.slice(before)).toMatch(/^lapirun: the job was interrupted:$/m)
    expectWaits(ps[0]!.err.slice(before))
    expect(ps[1]!.err).toMatch(/the job was interrupted \(process 0 reported what each task was doing\)/)
  }, 45_000)

  it('a task spinning in LAPI_Waitcntr or LAPI_Gfence (never asleep) is reported in its call, not as running its own code', async () => {
    // (a spin of 10 s: the waits do not sleep before the report, where each task has a CPU)
    const r = await runNode([LAPIRUN, '-n', '2', '--timeout', '1.5', ENDING, 'waits'], { env: { AMLAPI_SPIN_US: '10000000', AMLAPI_SPIN_MAX_US: '10000000' } })
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^ {2}task 0 was waiting in LAPI_Waitcntr for the counter at Addr \d+ to reach 1 \(it holds 0\)$/m)
    expect(r.stderr).toMatch(/^ {2}task 1 was waiting in LAPI_Gfence for the other tasks \(1 of 2 had arrived; not task 0\)$/m)
    expect(r.stderr).not.toMatch(/running its own code/)
  })

  it('the debug log says what each waiting task waits for, once a second', async () => {
    // (at least one line: how many fit before the deadline depends on how soon the tasks start,
    // which a loaded machine delays)
    const r = await runNode([LAPIRUN, '-n', '4', '--timeout', '3', ENDING, 'waits'], { env: { AMLAPI_LOG_LEVEL: 'debug' } })
    expect(r.code).toBe(1)
    const ticks = r.stderr.split('\n').filter((l) => l.includes('"msg":"what the tasks wait for"'))
    expect(ticks.length).toBeGreaterThanOrEqual(1)
    const t = JSON.parse(ticks[0]!.slice(ticks[0]!.indexOf('{'))) as { tasks: string[] }
    expect(t.tasks).toContain('task 3 was waiting in Lapi.waitUntil')
  })
})
