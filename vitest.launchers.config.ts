import { defineConfig } from 'vitest/config'

// The launchers tier (`npm run test:launchers`): mpirun, mpiexec and srun where they are installed;
// not part of the README's suite.
export default defineConfig({
  test: {
    include: ['test/tiers/launchers.test.ts'],
    pool: 'forks',
    // (stops the run when the packages' bundles are older than what tsc last wrote)
    globalSetup: ['test/helpers/fresh-build.ts'],
    fileParallelism: false,
    testTimeout: 90_000,
    hookTimeout: 30_000,
    reporters: ['default'],
  },
})
