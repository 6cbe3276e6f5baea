import { defineConfig } from 'vitest/config'

// The network-namespace tier (`npm run test:netns`): root only, and not part of the README's suite.
export default defineConfig({
  test: {
    include: ['test/tiers/netns.test.ts'],
    pool: 'forks',
    // (stops the run when the packages' bundles are older than what tsc last wrote)
    globalSetup: ['test/helpers/fresh-build.ts'],
    fileParallelism: false,
    testTimeout: 90_000,
    hookTimeout: 30_000,
    reporters: ['default'],
  },
})
