import { defineConfig } from 'vitest/config'

// The launchers tier (`npm run test:launchers`): mpirun, mpiexec and srun where they are installed;
// not part of the README's suite.
export default defineConfig({
  test: {
    include: ['test/tiers/launchers.test.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 90_000,
    hookTimeout: 30_000,
    reporters: ['default'],
  },
})
