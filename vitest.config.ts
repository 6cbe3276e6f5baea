import { defineConfig } from 'vitest/config'

// Tests import the packages by name, so they run against the build (`npm run build` first; `npm test`
// does it). Multi-task tests start real worker threads that load the same built files.
export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 30_000,
    reporters: ['default'],
  },
})
