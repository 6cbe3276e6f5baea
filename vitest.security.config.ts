import { defineConfig } from 'vitest/config'

// The security tier (`npm run test:security`): the attacks that need root or a second local user, and
// the cost of hostile connections timed; not part of the README's suite.
export default defineConfig({
  test: {
    include: ['test/tiers/security.test.ts'],
    pool: 'forks',
    // (stops the run when the packages' bundles are older than what tsc last wrote)
    globalSetup: ['test/helpers/fresh-build.ts'],
    fileParallelism: false,
    testTimeout: 90_000,
    hookTimeout: 30_000,
    reporters: ['default'],
  },
})
