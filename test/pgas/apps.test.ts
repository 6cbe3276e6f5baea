/**
 * The three applications of examples/pgas at small sizes, on shared memory and split over
 * processes on tcp and udp; each checks itself against data nobody here chose and prints
 * "verified": RandomAccess (HPC Challenge's stream, its ≤ 1% error rule), IS (the NAS Parallel
 * Benchmarks' published verification values, class S) and the Jacobi stencil (bit for bit against
 * one task, and the same grid hash for every number of tasks and every placement). `npm test` runs
 * RandomAccess over udp, IS in one process of 4 tasks, and Jacobi on one task and over tcp (the
 * hashes compared); `npm run test:full` each on every placement, and Jacobi's SIMD tails.
 */
import { describe, expect, it } from 'vitest'
import { EX } from '../helpers/programs.js'
import { APP_PLACEMENTS, SHM1, SHM4, TCP2, UDP4IN2, runPlaced, type Placement } from '../helpers/placements.js'
import { FULL, matrix } from '../helpers/tier.js'

const MiB = 1024 * 1024

async function app(file: string, pl: Placement, args: string[], segmentSize = 16 * MiB): Promise<string> {
  return await runPlaced(EX + 'pgas/' + file, pl, { args, timeoutMs: 90_000, config: { segmentSize } })
}

const PLACEMENTS = APP_PLACEMENTS

describe('pgas applications', () => {
  for (const pl of matrix(PLACEMENTS, [UDP4IN2])) {
    it(`RandomAccess 2^14: ${pl.name}`, async () => {
      expect(await app('randomaccess.mjs', pl, ['14'])).toMatch(/RandomAccess 2\^14 verified/)
    }, 120_000)
  }
  for (const pl of matrix(PLACEMENTS, [SHM4])) {
    it(`IS class S: ${pl.name}`, async () => {
      expect(await app('is.mjs', pl, ['S'])).toMatch(/IS class S verified/)
    }, 120_000)
  }
  const hashes = new Map<string, string>()
  const jacobi: Array<Placement & { js?: boolean }> = [
    ...PLACEMENTS,
    { name: 'shm, 3 tasks', tasks: 3, procs: 1 },
    { name: 'tcp, 3 processes', tasks: 3, procs: 3, transport: 'tcp' },
    { name: 'shm, 2 tasks, the JavaScript sweep', tasks: 2, procs: 1, js: true },
  ]
  for (const pl of matrix(jacobi, [SHM1, TCP2])) {
    it(`Jacobi 96 × 96, 40 iterations: ${pl.name}`, async () => {
      const out = await app('jacobi.mjs', pl, ['96', '40', ...(pl.js === true ? ['--js'] : [])])
      expect(out).toMatch(/Jacobi 96 verified \(bit for bit against one task\)/)
      // (the check recomputes the grid with the JavaScript sweep: the SIMD one gives the same bits)
      expect(out).toContain(pl.js === true ? 'sweep: JavaScript' : 'sweep: WebAssembly SIMD')
      hashes.set(pl.name, /grid hash ([0-9a-f]+)/.exec(out)![1]!)
      expect(new Set(hashes.values()).size).toBe(1)
    }, 120_000)
  }
  // (the SIMD sweep takes four points a step, then a pair where (N - 2) / 2 is odd and one point
  // where N - 2 is odd: 98 has neither tail, 99 one point, 100 a pair, 101 both)
  it.runIf(FULL)(
    "Jacobi at widths 98 to 101: the SIMD sweep's tails, bit for bit against the JavaScript sweep",
    async () => {
      for (const n of ['98', '99', '100', '101']) {
        const out = await app('jacobi.mjs', { name: 'shm, 2 tasks', tasks: 2, procs: 1 }, [n, '25'])
        expect(out).toContain('sweep: WebAssembly SIMD')
        expect(out).toMatch(new RegExp(`Jacobi ${n} verified \\(bit for bit against one task\\)`))
      }
    },
    120_000,
  )
})
