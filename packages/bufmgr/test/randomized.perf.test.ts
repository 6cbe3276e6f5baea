/**
 * How long the allocator's randomized churn takes (`npm run test:perf`): 1,000,000 mixed operations
 * with every region's contents checked, well within 30 s (its checks are randomized.test.ts's, in
 * the README's suite), in one of three tries (test/helpers/perf.ts).
 */
import { describe, expect, it } from 'vitest'
import { bestOf } from '../../../test/helpers/perf.js'
import { churn } from './churn.js'

describe('randomized', () => {
  it('1,000,000 mixed operations, their checks included, take less than 30 s', async () => {
    await bestOf(3, async () => {
      expect(churn()).toBeLessThan(30_000)
    })
  }, 120_000)
})
