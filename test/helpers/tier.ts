/**
 * Which tier of the suite runs, for the test files that have a matrix or repeat a case. `npm test`
 * (the fast suite) runs every package and every transport with each program once; `npm run
 * test:full` sets AMLAPI_TEST_FULL=1 and runs the same files with the whole matrix (every program on
 * every placement, every seed, the repeated and heavy variants). Claims about time are not here:
 * they are the *.perf.test.ts files, which only `npm run test:perf` runs (vitest.perf.config.ts).
 */

/** True under `npm run test:full` (AMLAPI_TEST_FULL=1). */
export const FULL = process.env['AMLAPI_TEST_FULL'] === '1'

/** `all` under test:full; `fast` (some of them) in the fast suite. */
export function matrix<T>(all: readonly T[], fast: readonly NoInfer<T>[]): readonly T[] {
  return FULL ? all : fast
}

/** A count (repetitions, iterations): `full` under test:full, `fast` in the fast suite. */
export function count(fast: number, full: number): number {
  return FULL ? full : fast
}
