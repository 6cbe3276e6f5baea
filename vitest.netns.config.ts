import { defineConfig } from 'vitest/config'

// The network-namespace tier (`npm run test:netns`): root only, and not part of the README's suite.
export default defineConfig({
  test: {
    include: ['test/tiers/netns.test.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 90_000,
    hookTimeout: 30_000,
    reporters: ['default'],
  },
})
