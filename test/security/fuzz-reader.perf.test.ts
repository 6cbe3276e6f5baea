/**
 * The control-message reader before the key, claims about time (`npm run test:perf`): the bombs a
 * stranger may send (test/security/helpers/reader-cases.ts) are refused in well under 1 ms each on
 * average, and 1 MiB fed a byte at a time is read in seconds, not the minutes a quadratic buffer
 * would take; each in one of three tries (test/helpers/perf.ts). What becomes of them is
 * fuzz-reader.test.ts's, in the README's suite.
 */
import { describe, expect, it } from 'vitest'
import { PRE_AUTH_MAX_BYTES } from '#lapi-internal'
import { readMessages } from '@amlapi/lapi/transport'
import { bestOf } from '../helpers/perf.js'
import { FakeSocket } from './helpers/fuzz-msgpack.js'
import { bombs, flatOfSize, throughReader } from './helpers/reader-cases.js'

/** The most a bomb's refusal may take on average, ms. */
const BOMB_MEAN_MS = 0.25

describe('readMessages before the key: how long', () => {
  it('the structured-clone and Error-extension bombs, and every fixed hostile body, are refused in well under 1 ms each on average', async () => {
    const REPS = 40
    for (const [name, body] of bombs()) {
      expect(throughReader(body).why, name).toMatch(/^a control message that does not decode/)
      await bestOf(3, async () => {
        // (the least mean of three batches: a pause of a shared machine is not the decoder's)
        let best = Infinity
        for (let batch = 0; batch < 3; batch++) {
          const t0 = performance.now()
          for (let i = 0; i < REPS; i++) throughReader(body)
          best = Math.min(best, (performance.now() - t0) / REPS)
        }
        expect(best, `${name}: mean ms per refusal (${(best * 1000).toFixed(1)} µs)`).toBeLessThan(BOMB_MEAN_MS)
      })
    }
  })

  it('1 MiB of small flat messages, and of 1 KiB ones, fed a byte at a time, is read within 10 s', async () => {
    for (const size of [24, PRE_AUTH_MAX_BYTES]) {
      const one = flatOfSize(size)
      const count = Math.ceil((1 << 20) / one.length)
      const stream = Buffer.concat(new Array<Buffer>(count).fill(one))
      await bestOf(3, async () => {
        const sock = new FakeSocket()
        let got = 0
        readMessages(
          sock.sock,
          () => {
            got++
          },
          () => {},
        )
        const t0 = performance.now()
        for (let i = 0; i < stream.length; i++) sock.feed(stream.subarray(i, i + 1))
        const ms = performance.now() - t0
        expect(got).toBe(count)
        expect(ms, `${stream.length} bytes a byte at a time`).toBeLessThan(10_000)
      })
    }
  }, 120_000)
})
