import { defineConfig } from 'vitest/config'

// `npm run test:perf`: the claims about time (test/**/*.perf.test.ts and packages/*/test/**/*.perf.test.ts),
// each with a margin for a loaded machine: wake-ups, waits that spin or sleep, how soon a job ends
// after a loss or a signal, stream and round-trip bounds, decode times, allocation counts whose runs
// spin both CPUs. The behaviour these runs also show is in the README's suite, without the bounds.
export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.perf.test.ts', 'test/**/*.perf.test.ts'],
    exclude: ['test/tiers/**', '**/node_modules/**'],
    pool: 'forks',
    // (stops the run when the packages' bundles are older than what tsc last wrote)
    globalSetup: ['test/helpers/fresh-build.ts'],
    // (one file at a time, as the README's suite: a claim about time wants the CPUs to itself)
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 30_000,
    reporters: ['default'],
  },
})
