/**
 * How the fuzz tests (test/security/fuzz-reader.test.ts, fuzz-listeners.test.ts) run: the seed and
 * time budget of each property (FUZZ_SEED, FUZZ_MS: `npm run test:fuzz` sets them for a longer
 * run), fast-check's settings for one, a test's time limit, how long one decode may take, and the
 * figures they print (FUZZ_VERBOSE=1).
 */
import { availableParallelism, loadavg } from 'node:os'
import fc from 'fast-check'

/**
 * How many times over its CPUs the machine is asked for as the file starts (the 1-minute load
 * average per CPU, from 1 to 8): a property's budget is wall time, and a machine busy with other
 * work gives it a share of that, so the default budgets grow by this, and a property still reaches
 * about the cases it reaches on a quiet machine (the tests ask for more than 10 or 50).
 */
const LOAD = Math.min(8, Math.max(1, loadavg()[0]! / availableParallelism()))

/** The seed of every property (FUZZ_SEED overrides), and the time budget of one, ms (FUZZ_MS overrides `dflt`, which grows on a loaded machine). */
export const FUZZ_SEED = Number(process.env['FUZZ_SEED'] ?? 20250607)
export const budget = (dflt: number): number => (process.env['FUZZ_MS'] !== undefined ? Number(process.env['FUZZ_MS']) : Math.round(dflt * LOAD))
/** Figures for a reader of the run (FUZZ_VERBOSE=1), not for the assertions. */
export const note = (...a: unknown[]): void => {
  if (process.env['FUZZ_VERBOSE'] === '1') console.log('[fuzz]', ...a)
}

/**
 * fast-check's settings for a property of budget `ms`: seeded, stopped by time rather than count.
 * `stateful`: the property acts on something that outlives a run (a listener): the first failure
 * is reported as it is, not shrunk (a shrunk run would fail for the state the first one left).
 */
export function runFor(ms: number, seed = FUZZ_SEED, stateful = false): fc.Parameters<unknown> {
  return { seed, numRuns: 100_000_000, plugins: [fc.interruptAfterTimeLimit(ms)], markInterruptAsFailure: false, endOnFailure: stateful }
}

/** The longest one decode (or one handshake datagram) may take, ms. */
export const DECODE_MS = 50
/** A test's time limit: its fuzzing budget and room for the rest. */
export const limit = (ms: number): number => ms + 30_000
