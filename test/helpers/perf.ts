/**
 * How the claims about time (the *.perf.test.ts files, `npm run test:perf`) hold on a loaded
 * machine: a claim is tried up to three times and holds when one try shows it. Other work on the
 * machine slows some tries; what a claim is about (a lost wake-up, a connection left paused, a
 * loss not noticed) slows every one. The bounds leave room besides.
 */

/** Runs `attempt` until one try returns without throwing, at most `tries` times; else throws every try's error. */
export async function bestOf<T>(tries: number, attempt: (k: number) => Promise<T>): Promise<T> {
  const errors: string[] = []
  for (let k = 0; k < tries; k++) {
    try {
      return await attempt(k)
    } catch (e) {
      errors.push(`try ${k + 1}: ${e instanceof Error ? e.message : String(e)}`)
    }
  }
  throw new Error(`the claim held in none of ${tries} tries:\n${errors.join('\n')}`)
}
