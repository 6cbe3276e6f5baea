/**
 * How a job ends, as a user of lapirun sees it: nothing a task wrote is lost when tasks fail, exit
 * or are aborted; a handler that throws with no error handler ends the job (LAPI's default); (the report
 * of a time-out: report.test.ts); lapirun's own messages for bad options and a
 * missing program; the debug log of a job, under --label.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { FIXTURES } from '../helpers/job.js'
import { LAPIRUN, runNode } from '../helpers/run.js'

const ENDING = FIXTURES + 'lapi/ending.mjs'
const run = (args: string[], env: NodeJS.ProcessEnv = {}): ReturnType<typeof runNode> => runNode(args, { env })

/** The lines `prefix task i` (i < lines) each task t < n wrote, in order, with or without its label. */
function expectAllLines(text: string, kind: 'out' | 'err', n: number, lines: number, label: boolean): void {
  const got = text.split('\n')
  for (let t = 0; t < n; t++) {
    const mine = got.filter((l) => l.startsWith(`${label ? `[${t}] ` : ''}${kind} ${t} `))
    expect(mine.length, `${kind} lines of task ${t}`).toBe(lines)
    expect(
      mine.map((l) => Number(l.split(' ').pop())),
      `${kind} lines of task ${t} in order`,
    ).toEqual([...Array(lines).keys()])
  }
}

describe('ending a job', () => {
  for (const label of [false, true]) {
    it(`every line of every task reaches the output when all fail at once (throw, exit)${label ? ', labelled' : ''}`, async () => {
      for (const mode of ['throw', 'exit']) {
        const r = await run([LAPIRUN, '-n', '4', ...(label ? ['--label'] : []), ENDING, mode, '300'])
        expect(r.code, r.stderr.slice(-2000)).toBe(mode === 'exit' ? 3 : 1)
        expectAllLines(r.stdout, 'out', 4, 300, label)
        expectAllLines(r.stderr, 'err', 4, 300, label)
        expect(r.stderr).toMatch(
          mode === 'exit' ? /lapirun: task \d failed: exited with code 3/ : /lapirun: task \d failed: uncaught error: Error: task \d threw/,
        )
      }
    })
  }

  it("tasks aborted in a wait by another task's failure still deliver what they wrote", async () => {
    const r = await run([LAPIRUN, '-n', '4', '--label', ENDING, 'one-throws', '300'])
    expect(r.code).toBe(1)
    expectAllLines(r.stdout, 'out', 4, 300, true)
    expectAllLines(r.stderr, 'err', 4, 300, true)
    expect(r.stderr).toContain('lapirun: task 1 failed: uncaught error: Error: task 1 threw')
    // the aborted tasks' own JobAbortedErrors are not reported as the cause
    expect(r.stderr).not.toMatch(/failed: .*JobAbortedError/)
  })

  it("a header handler that throws with no error handler ends the job non-zero, named (LAPI's default)", async () => {
    const r = await run([LAPIRUN, '-n', '2', ENDING, 'handler-throws'])
    expect(r.code).toBe(1)
    expect(r.stdout).toContain('task 0 ready')
    expect(r.stderr).toMatch(/lapirun: task 0 failed: a header handler \(AM_ERR, peer task 1\) threw: Error: the header handler blew up/)
    expect(r.stderr).toContain('no error handler was given to LAPI_Init')
    // a program run with plain node (a job of one task) reports it itself
    const alone = await run([ENDING, 'handler-self'])
    expect(alone.code).toBe(1)
    expect(alone.stderr).toMatch(/lapi: task 0 failed: a header handler \(AM_ERR, peer task 0\) threw: Error: the header handler blew up/)
  })

  it('lapirun answers bad options and a missing program with its own messages, before starting any task', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['-n', '-1', 'x.mjs'], /^lapirun: -n \(the number of tasks\) must be a whole number from 1 to 65536, not '-1'/],
      [['-n', '2', '--procs', '3', 'x.mjs'], /^lapirun: --procs \(processes, at most the 2 tasks of -n\) must be a whole number from 1 to 2, not '3'/],
      [['-n'], /^lapirun: -n needs a value/],
      [['--spin-us', 'fast', 'x.mjs'], /^lapirun: --spin-us must be a number of microseconds/],
      [['--timeout', '0', 'x.mjs'], /^lapirun: --timeout must be a positive number of seconds, not '0'/],
      [['--bogus', 'x.mjs'], /^lapirun: unknown option '--bogus'/],
      [['--label=yes', 'x.mjs'], /^lapirun: --label takes no value/],
      [['-n', '2'], /^lapirun: no program given/],
      [['-n', '3', FIXTURES + 'no-such-program.mjs'], /^lapirun: cannot run .*no-such-program\.mjs: no such file$/m],
      [['-n', '3', FIXTURES], /^lapirun: cannot run .*: not a file$/m],
    ]
    // (each exits while reading its options: run side by side)
    const runs = await Promise.all(cases.map(([args]) => run([LAPIRUN, ...args], { AMLAPI_LOG_LEVEL: 'debug' })))
    for (const [i, [args, want]] of cases.entries()) {
      const r = runs[i]!
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.stderr, args.join(' ')).toMatch(want)
      // no task was started (a started job logs 'job starting'), no Node stack
      expect(r.stderr).not.toContain('job starting')
      expect(r.stderr).not.toMatch(/\n\s+at /)
    }
    // the accepted forms of values
    const ok = await run([LAPIRUN, '-n2', '--segment-size=1M', '--timeout', '20', FIXTURES + 'lapi/info.mjs'])
    expect(ok.code, ok.stderr).toBe(0)
    // --version (and -V): the package's version and the Node that runs it, nothing started
    const pkg = JSON.parse(readFileSync(new URL('../../packages/lapi/package.json', import.meta.url), 'utf8')) as { version: string }
    for (const flag of ['--version', '-V']) {
      const v = await run([LAPIRUN, flag])
      expect(v.code, v.stderr).toBe(0)
      expect(v.stdout).toBe(`lapirun ${pkg.version} (@amlapi/lapi, Node ${process.version})\n`)
    }
  })

  it("AMLAPI_LOG_LEVEL=debug tells the story of a job, from lapi and am2, each task's lines under its label", async () => {
    const r = await run([LAPIRUN, '-n', '2', '--label', FIXTURES + 'am2/idiomatic.mjs'], { AMLAPI_LOG_LEVEL: 'debug' })
    expect(r.code, r.stderr.slice(-2000)).toBe(0)
    const logs = r.stderr.split('\n').filter((l) => l.includes('{"level"'))
    const msgs = (task: number | null): string[] =>
      logs
        .filter((l) => (task === null ? l.startsWith('{') : l.startsWith(`[${task}] {`)))
        .map((l) => (JSON.parse(l.slice(l.indexOf('{'))) as { msg: string }).msg)
    // the agent: the job's start (configuration, tasks, placement), each task's exit, the end
    const agent = logs.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(agent[0]).toMatchObject({ c: 'lapi:job', msg: 'job starting', numTasks: 2 })
    expect(agent[0]!['config']).toMatchObject({ segmentSize: expect.any(Number) })
    expect(String(agent[0]!['placement'])).toMatch(/process \d+: tasks 0-1 of 2 as worker threads/)
    expect(msgs(null)).toEqual(expect.arrayContaining(['task exited', 'job ended']))
    for (const t of [0, 1]) {
      expect(msgs(t)).toEqual(expect.arrayContaining(['context initialised', 'AM_Init: runtime started', 'AMX_SPMDStartup: every task mapped', 'task exiting']))
    }
  })
})
