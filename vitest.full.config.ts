import { defineConfig, mergeConfig } from 'vitest/config'
import base from './vitest.config.js'

// `npm run test:full`: the files of the README's suite with the whole matrix (AMLAPI_TEST_FULL=1, read
// by test/helpers/tier.ts): every conformance program on every placement, every pgas program on every
// placement, every seed, both transports where the fast suite takes one, the repeated and heavy
// variants. It includes everything `npm test` runs.
export default mergeConfig(
  base,
  defineConfig({
    test: {
      env: { AMLAPI_TEST_FULL: '1' },
    },
  }),
)
