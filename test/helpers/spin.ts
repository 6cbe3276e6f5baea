/**
 * The spin-budget ping-pong (fixtures/am/spin.mjs) run as a job of 2 tasks, for test/lapi/am.test.ts
 * (its rule and bounds) and test/lapi/spin.perf.test.ts (how often its waits sleep).
 */
import { expectOk, runFixture } from './job.js'

export interface SpinTask {
  sleeps: number[]
  spinUs: number
  grown: number
  rule: string
}

/**
 * Runs the ping-pong fixture; returns each task's sleeps in the three measured rounds of n / 3
 * waits (after a first round of n), its final budget, µs, and how often the budget grew.
 */
export async function spin(config: { spinUs: number; spinMaxUs?: number }, n: number): Promise<SpinTask[]> {
  const r = await runFixture('am/spin.mjs', 2, { config, args: [String(n)] })
  expectOk(r, 2, 'spin ok')
  return r.stdout
    .split('\n')
    .filter((l) => l.startsWith('spin ok'))
    .map((l) => {
      const m = /sleeps ([\d,]+) spinUs ([\d.]+) grown (\d+) rule (\S+)/.exec(l)!
      return { sleeps: m[1]!.split(',').map(Number), spinUs: Number(m[2]), grown: Number(m[3]), rule: m[4]! }
    })
}
