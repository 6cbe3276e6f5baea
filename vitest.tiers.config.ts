import { defineConfig } from 'vitest/config'

// The tiers beside the README's suite, one npm script each naming its file: `test:netns` (root: two
// network namespaces over a lossy veth), `test:launchers` (mpirun, mpiexec and srun where installed),
// `test:security` (root: a second local user's attacks, and the cost of hostile connections timed).
export default defineConfig({
  test: {
    include: ['test/tiers/**/*.test.ts'],
    pool: 'forks',
    // (stops the run when the packages' bundles are older than what tsc last wrote)
    globalSetup: ['test/helpers/fresh-build.ts'],
    fileParallelism: false,
    testTimeout: 90_000,
    hookTimeout: 30_000,
    reporters: ['default'],
  },
})
