import { defineConfig } from 'vitest/config'

// The README's suite, `npm test`: every package and every transport (one process of threads, tcp and
// udp across processes, --join), each conformance program once, and the unit and behaviour tests.
// `npm run test:full` runs the same files with the whole matrix (vitest.full.config.ts sets
// AMLAPI_TEST_FULL=1, which test/helpers/tier.ts reads); the claims about time are the
// *.perf.test.ts files, `npm run test:perf` (vitest.perf.config.ts).
// Tests import the packages by name, so they run against the build (`npm run build` first; `npm test`
// does it). Multi-task tests start real worker threads that load the same built files.
export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    // (the tiers have npm scripts of their own: test:netns, test:launchers, test:security, test:perf)
    exclude: ['test/tiers/**', '**/*.perf.test.ts', '**/node_modules/**'],
    pool: 'forks',
    // (stops the run when the packages' bundles are older than what tsc last wrote)
    globalSetup: ['test/helpers/fresh-build.ts'],
    // Two test files at a time: many tests wait (for a job's timeout, a signal's effect, a peer's
    // silence) while another file's tasks use the CPUs. No test of this suite bounds a time: the
    // claims about time (the spin budget, which needs a CPU per task, among them) are the perf
    // tier's, which runs one file at a time.
    fileParallelism: true,
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 30_000,
    reporters: ['default'],
  },
})
