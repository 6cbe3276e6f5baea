/**
 * Jobs over several processes: placement, what each task is told about co-location, and every way
 * of losing a task or a process, each ending the whole job with the cause named. Within its bound
 * is test/lapi/losses.perf.test.ts's (`npm run test:perf`), for the cases of
 * test/helpers/loss-cases.ts. `npm test` runs the losses over 2 processes and the normal end
 * twice; `npm run test:full` over 3 processes too, and the normal end 8 times.
 */
import { readFileSync, readdirSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { runFixture } from '../helpers/job.js'
import { processDies, processKilled, taskThrows } from '../helpers/loss-cases.js'
import { count, matrix } from '../helpers/tier.js'

/** Processes of jobs this test process started that are still there (Linux /proc; [] elsewhere). */
function leftBehind(): string[] {
  let pids: string[]
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d))
  } catch {
    return []
  }
  const left: string[] = []
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      if (ppid === process.pid && cmd.includes('child.js')) left.push(`${pid} ${cmd.replaceAll('\0', ' ')}`)
    } catch {
      /* gone meanwhile */
    }
  }
  return left
}

describe('tasks in several processes', () => {
  afterEach(() => {
    expect(leftBehind()).toEqual([])
  })

  it('places tasks as API.md says and tells each which tasks share its memory', async () => {
    const r = await runFixture('lapi/info.mjs', 5, { procs: 2 })
    if (r.exitCode !== 0) throw new Error(r.stderr)
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { task: number; n: number; pid: number; shm: number })
    lines.sort((a, b) => a.task - b.task)
    expect(lines.map((l) => l.task)).toEqual([0, 1, 2, 3, 4])
    expect(lines.every((l) => l.n === 5)).toBe(true)
    // process 0: tasks ⌊0·5/2⌋..⌊1·5/2⌋-1 = 0-1; process 1: 2-4
    expect(lines.map((l) => l.shm)).toEqual([2, 2, 3, 3, 3])
    expect(lines[0]!.pid).toBe(lines[1]!.pid)
    expect(lines[2]!.pid).toBe(lines[4]!.pid)
    expect(lines[0]!.pid).not.toBe(lines[2]!.pid)
    expect(lines[0]!.pid).not.toBe(process.pid)
  })

  it('a normal end right after the last Gfence is not taken for a loss, while tasks read the connections', async () => {
    // (the tasks spin through the Gfence, so they, not the agent, read the first process's last
    // release, task ends and goodbye; the agent must take the first two before it judges the
    // third: with the loss judged first, a run failed about one time in three)
    for (let k = 0; k < count(2, 8); k++) {
      const r = await runFixture('lapi/last-gfence.mjs', 2, { procs: 2, config: { spinUs: 20_000 }, timeoutMs: 30_000 })
      if (r.exitCode !== 0) throw new Error(`run ${k}: ${r.stderr}`)
      expect(r.stdout.match(/last-gfence ok/g)).toHaveLength(2)
    }
  })

  it("a wait past its spin budget sleeps on the connections where its task is its process's only one, else on its doorbell", async () => {
    const sleeps = async (tasks: number, procs: number): Promise<Array<[number, number]>> => {
      const r = await runFixture('lapi/late-put.mjs', tasks, { procs, timeoutMs: 30_000 })
      if (r.exitCode !== 0) throw new Error(r.stderr)
      const got = [...r.stdout.matchAll(/late-put (\d+) (\d+) (\d+)/g)].map((m) => [Number(m[1]), Number(m[2]), Number(m[3])])
      got.sort((a, b) => a[0]! - b[0]!)
      expect(got.map((g) => g[0])).toEqual(Array.from({ length: tasks }, (_, t) => t))
      return got.map((g) => [g[1]!, g[2]!])
    }
    // (each of the 5 rounds keeps the waiting tasks waiting for about 20 ms: they sleep)
    const alone = await sleeps(2, 2)
    expect(alone[1]![0]).toBeGreaterThan(0)
    expect(alone[1]![1]).toBeGreaterThan(0)
    // tasks 1 and 2 share process 1: their doorbells ring for each other, so they sleep on them
    const shared = await sleeps(3, 2)
    expect(shared.slice(1).every(([slept, onConnections]) => slept > 0 && onConnections === 0)).toBe(true)
    // one process: no connections at all
    expect((await sleeps(2, 1)).every(([, onConnections]) => onConnections === 0)).toBe(true)
  })

  for (const procs of matrix([2, 3], [2])) {
    describe(`losses end the job with the task named (3 tasks, ${procs} processes)`, () => {
      it('a task that throws', async () => {
        await taskThrows(procs)
      })

      it('a task that exits with a non-zero code', async () => {
        const r = await runFixture('lapi/fail.mjs', 3, { args: ['exit'], procs })
        expect(r.exitCode).toBe(3)
        expect(r.stderr).toContain('task 1 failed: exited with code 3')
      })

      it('a task that leaves while the others wait in Gfence', async () => {
        const r = await runFixture('lapi/fail.mjs', 3, { args: ['early'], procs })
        expect(r.exitCode).not.toBe(0)
        expect(r.stderr).toMatch(/task 1 left the job/)
      })

      it('a task sending to a task that has left fails instead of waiting forever for room', async () => {
        const r = await runFixture('lapi/fail.mjs', 2, { args: ['flood'], procs: 2 })
        expect(r.exitCode).not.toBe(0)
        expect(r.stderr).toMatch(/task 0 failed: uncaught error: Error: task 1 has left the job/)
      })

      it('a process that dies at once (its tasks never end)', async () => {
        await processDies(procs)
      })

      it('a process killed with kill -9 from outside', async () => {
        await processKilled(procs)
      })
    })
  }
})
