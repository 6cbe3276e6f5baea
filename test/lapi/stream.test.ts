/**
 * A long stream of small active messages into a task that comes to it late (busy in its own code
 * while the stream backs up), over udp between two processes: the job ends well, task 1's Gets from
 * busy task 0 are answered, and the stream's datagrams that wait for room are not taken for lost
 * (none counted out of order, no fast retransmits). How soon the stream is taken in and the Gets
 * are answered, over tcp and udp, is a claim about time: test/lapi/stream.perf.test.ts
 * (`npm run test:perf`).
 */
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { LAPIRUN, runCommand } from '../helpers/run.js'

const PROGRAM = fileURLToPath(new URL('../fixtures/lapi/stream.mjs', import.meta.url))

describe('a stream into a task that comes to it late', () => {
  it('udp, 2 processes: the stream arrives, the Gets are answered, the datagrams that waited for room are no gap', async () => {
    // (the debug log, for the transport's statistics each process logs as it leaves)
    const r = await runCommand(process.execPath, [LAPIRUN, '-n', '2', '--procs', '2', '--transport', 'udp', PROGRAM], {
      deadlineMs: 60_000,
      env: { AMLAPI_LOG_LEVEL: 'debug' },
    })
    expect(r.code, r.stderr.slice(-2000)).toBe(0)
    expect(r.stdout, r.stdout).toMatch(/stream 4 rounds of 16384 messages, slowest ([\d.]+) ms/)
    expect(r.stdout, r.stdout).toMatch(/task 1: (\d+) gets from task 0 while it was busy, slowest ([\d.]+) ms/)
    // the datagrams that came in order while the one before them waited for room (task 0's ring
    // full) are no gap: not counted out of order, and not resent as if that one were lost
    const stats = r.stderr
      .split('\n')
      .filter((l) => l.includes('"msg":"process leaves the job"'))
      .map((l) => (JSON.parse(l) as { stats: { datagrams: Record<string, number> } }).stats.datagrams)
    expect(stats).toHaveLength(2)
    for (const d of stats) {
      expect(d['outOfOrder'], JSON.stringify(d)).toBeLessThanOrEqual(10)
      expect(d['fastRetransmits'], JSON.stringify(d)).toBeLessThanOrEqual(2)
    }
  }, 90_000)
})
