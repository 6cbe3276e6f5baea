/**
 * The AMX test programs (examples/amx, the AM-2 reference section 4) as jobs of 1 to 4 tasks, in
 * Poll and Block mode, with small iteration counts: each must exit 0, print its "verified" /
 * "us / request" / "KB/sec" lines and no ERROR. A few run through the reordering and duplicating
 * test transport, or with a network depth of 4 (flow control, AM_ERR_IN_USE), and a few check that
 * a failing program fails the job. `npm test` runs the variants that test/conformance.test.ts does
 * not (it runs each of test/helpers/programs.ts's AMX programs once too); `npm run test:full` every
 * variant.
 */
import { describe, expect, it } from 'vitest'
import type { ChaosConfig, JobConfig } from '@amlapi/lapi'
import { runFixture, type FixtureRun } from '../helpers/job.js'
import { FULL, matrix } from '../helpers/tier.js'

const AMX = '../../examples/amx/'

interface Opts {
  config?: Partial<JobConfig>
  env?: NodeJS.ProcessEnv
}

async function amx(program: string, tasks: number, args: string[], opts: Opts = {}): Promise<FixtureRun> {
  return await runFixture(AMX + program, tasks, {
    args,
    timeoutMs: 20_000,
    ...(opts.config !== undefined ? { config: opts.config } : {}),
    ...(opts.env !== undefined ? { env: { ...process.env, ...opts.env } } : {}),
  })
}

/** Exit 0 and no error line anywhere. */
/** The global stats line `  name: value` (the whole line, so 5440 does not match 54400). */
function expectStat(stderr: string, name: string, value: number): void {
  expect(stderr).toMatch(new RegExp(`^  ${name}: ${value}$`, 'm'))
}

function expectClean(r: FixtureRun): void {
  if (r.exitCode !== 0) throw new Error(`job failed (${r.exitCode}): ${r.failure?.reason ?? ''}\n${r.stderr}\n${r.stdout}`)
  expect(r.stdout + r.stderr).not.toMatch(/ERROR|mismatch|Error calling/)
}

const RATE = /^Slave (\d+): (\d+) microseconds total, throughput: (\d+) requests\/sec \((\d+\.\d{3}) us \/ request\)$/gm
const BANDWIDTH = /^Slave (\d+): (\d+) microseconds total, throughput: (\d+\.\d{3}) KB\/sec$/gm

/** The ranks that printed a requests/sec line, each with a positive time per request. */
function rateRanks(out: string): number[] {
  const m = [...out.matchAll(RATE)]
  for (const x of m) expect(Number(x[4])).toBeGreaterThan(0)
  return m.map((x) => Number(x[1])).sort((a, b) => a - b)
}

/** The ranks that printed a KB/sec line, each with a positive bandwidth. */
function bandwidthRanks(out: string): number[] {
  const m = [...out.matchAll(BANDWIDTH)]
  for (const x of m) expect(Number(x[3])).toBeGreaterThan(0)
  return m.map((x) => Number(x[1])).sort((a, b) => a - b)
}

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i)

/** "Proc r verified." of every rank. */
function expectVerified(out: string, tasks: number): void {
  const got = [...out.matchAll(/^Proc (\d+) verified\.$/gm)].map((m) => Number(m[1])).sort((a, b) => a - b)
  expect(got).toEqual(range(tasks))
}

const CHAOS: ChaosConfig = { seed: 5, dup: 0.1, hold: 0.5 }

describe('AMX test programs (examples/amx)', () => {
  describe('testam: every category and arity, request and reply, and the endpoint/bundle/translation calls', () => {
    for (const mode of matrix(['P', 'B'], [])) {
      it(`2 tasks, ${mode} mode`, async () => {
        const r = await amx('testam.mjs', 2, ['40', mode])
        expectClean(r)
        expect([...r.stdout.matchAll(/^Worker (\d) done\.$/gm)].map((m) => m[1]).sort()).toEqual(['0', '1'])
        // 17 arities x (Short, Medium, Long, Long async) per iteration, summed over both tasks
        expectStat(r.stderr, 'requests handled', 2 * 68 * 40)
        expectStat(r.stderr, 'replies handled', 2 * 68 * 40)
        expectStat(r.stderr, 'GetXfer replies', 2 * 17)
      })
    }

    it('1 task (everything loops back)', async () => {
      const r = await amx('testam.mjs', 1, ['20'])
      expectClean(r)
      expect(r.stdout).toContain('Worker 0 done.')
      expectStat(r.stderr, 'replies handled', 68 * 20)
    })

    it('3 tasks with a network depth of 4: every request completes while requests wait for credits', async () => {
      const r = await amx('testam.mjs', 3, ['20', 'B'], { env: { AMLAPI_NETWORKDEPTH: '4' } })
      expectClean(r)
      expectStat(r.stderr, 'replies handled', 3 * 68 * 20)
    })

    it('2 tasks over the reordering and duplicating transport', async () => {
      const r = await amx('testam.mjs', 2, ['15'], { config: { chaos: CHAOS } })
      expectClean(r)
      expectStat(r.stderr, 'replies handled', 2 * 68 * 15)
    })
  })

  describe('testping: pipelined Request0/Reply0 throughput', () => {
    for (const mode of matrix(['P', 'B'], [])) {
      it(`2 tasks, ${mode} mode`, async () => {
        const r = await amx('testping.mjs', 2, ['200', mode])
        expectClean(r)
        expect(rateRanks(r.stdout)).toEqual([1])
        expect(r.stdout).toContain('Slave 0 done.')
        expectStat(r.stderr, 'ping requests handled', 200)
      })
    }

    it('1 task pings itself; 4 tasks all to one', async () => {
      const one = await amx('testping.mjs', 1, ['200'])
      expectClean(one)
      expect(rateRanks(one.stdout)).toEqual([0])
      const four = await amx('testping.mjs', 4, ['100', 'B'])
      expectClean(four)
      expect(rateRanks(four.stdout)).toEqual([1, 2, 3])
      expectStat(four.stderr, 'ping requests handled', 300)
    })
  })

  describe('testlatency / testlatencyM: round trips', () => {
    for (const mode of matrix(['P', 'B'], [])) {
      it(`testlatency, 2 tasks, ${mode} mode`, async () => {
        const r = await amx('testlatency.mjs', 2, ['200', mode])
        expectClean(r)
        expect(r.stdout).toMatch(/^Timer overhead: +[\d.]+ us per call$/m)
        expect(r.stdout).toMatch(/^Timer granularity: \+-[\d.]+ us$/m)
        expect(rateRanks(r.stdout)).toEqual([1])
        expect(r.stdout).toContain('Slave 0 done.')
      })
    }

    it(`testlatencyM: ${FULL ? '64 bytes (P), ' : ''}1024 bytes (B), 100000 bytes (beyond the packed limit)`, async () => {
      const sizes = [
        ['200', 'P', '64'],
        ['200', 'B', '1024'],
        ['20', 'P', '100000'],
      ] as const
      for (const [iters, mode, size] of matrix(sizes, sizes.slice(1))) {
        const r = await amx('testlatencyM.mjs', 2, [iters, mode, size])
        expectClean(r)
        expect(r.stdout).toContain(`(MSGSZ=${size})`)
        expect(rateRanks(r.stdout)).toEqual([1])
      }
    })
  })

  describe('testbulk: Long bandwidth in AM_MaxLong() chunks', () => {
    const config = { segmentSize: 16 * 1024 * 1024 }
    it.runIf(FULL)('2 tasks, 1 MiB, P mode, half duplex, source in the LAPI segment', async () => {
      const r = await amx('testbulk.mjs', 2, ['20', '1048576', 'P', 'H'], { config })
      expectClean(r)
      expect(r.stdout).toContain('source in the LAPI segment')
      expect(bandwidthRanks(r.stdout)).toEqual([1])
    })

    it('2 tasks, 5 MiB (a full chunk and a remainder), B mode, full duplex', async () => {
      const r = await amx('testbulk.mjs', 2, ['5', String(5 * 1024 * 1024), 'B', 'F'], { config })
      expectClean(r)
      expect(r.stdout).toContain('(2 Long message(s)')
      expect(bandwidthRanks(r.stdout)).toEqual([0, 1])
    })

    it('1 task, 512 bytes (the default size)', async () => {
      const r = await amx('testbulk.mjs', 1, ['50'])
      expectClean(r)
      expect(bandwidthRanks(r.stdout)).toEqual([0])
    })
  })

  describe('testbounce: AM_MaxLong() round trips with data verification', () => {
    for (const mode of matrix(['P', 'B'], [])) {
      it(`2 tasks, ${mode} mode`, async () => {
        const r = await amx('testbounce.mjs', 2, ['8', mode], { config: { segmentSize: 16 * 1024 * 1024 } })
        expectClean(r)
        expect(bandwidthRanks(r.stdout)).toEqual([0, 1])
      })
    }

    it('1 task (loopback)', async () => {
      const one = await amx('testbounce.mjs', 1, ['4'])
      expectClean(one)
      expect(bandwidthRanks(one.stdout)).toEqual([0])
    })

    it.runIf(FULL)('4 tasks (two pairs)', async () => {
      const four = await amx('testbounce.mjs', 4, ['3'])
      expectClean(four)
      expect(bandwidthRanks(four.stdout)).toEqual([0, 1, 2, 3])
    })
  })

  describe('testreduce: requests without a user reply, to task 0', () => {
    for (const tasks of matrix([1, 2, 4], [1, 2])) {
      it(`${tasks} task(s)`, async () => {
        const r = await amx('testreduce.mjs', tasks, [])
        expectClean(r)
        const got = [...r.stdout.matchAll(/^reduce_request_handler got: (\d+)$/gm)].map((m) => Number(m[1])).sort((a, b) => a - b)
        expect(got).toEqual(range(tasks))
        expect(r.stdout).toContain(`Reduction result: ${(tasks * (tasks - 1)) / 2}`)
        expect(r.stdout).toContain('Result verified!')
      })
    }
  })

  describe('testgetput: synchronous getWord/putWord', () => {
    it('1 task', async () => {
      const r = await amx('testgetput.mjs', 1, ['100'])
      expectClean(r)
      expectVerified(r.stdout, 1)
    })

    for (const tasks of [2, 3]) {
      it(`${tasks} tasks`, async () => {
        const r = await amx('testgetput.mjs', tasks, ['100'])
        expectClean(r)
        expectVerified(r.stdout, tasks)
      })
    }
  })

  describe('testreadwrite: asynchronous readWord/writeWord, 255 at a time', () => {
    for (const tasks of matrix([1, 2, 4], [1])) {
      it(`${tasks} task(s)`, async () => {
        const r = await amx('testreadwrite.mjs', tasks, ['40'])
        expectClean(r)
        expectVerified(r.stdout, tasks)
      })
    }

    it('3 tasks with a network depth of 8 (255 writes wait for credits)', async () => {
      const r = await amx('testreadwrite.mjs', 3, ['20'], { env: { AMLAPI_NETWORKDEPTH: '8' } })
      expectClean(r)
      expectVerified(r.stdout, 3)
    })
  })

  describe('failures fail the job', () => {
    it('a bad P|B argument, half duplex with an odd number of tasks, a usage error', async () => {
      const p = await amx('testping.mjs', 2, ['10', 'X'])
      expect(p.exitCode).not.toBe(0)
      expect(p.stdout).toContain("polling must be 'P' or 'B'")
      const b = await amx('testbulk.mjs', 3, ['10', '512', 'P', 'H'])
      expect(b.exitCode).not.toBe(0)
      expect(b.stdout).toContain('half duplex requires an even number of processors')
      const u = await amx('testreduce.mjs', 2, ['extra'])
      expect(u.exitCode).not.toBe(0)
      expect(u.stderr).toContain('Usage: testreduce.mjs')
    })
  })
})
