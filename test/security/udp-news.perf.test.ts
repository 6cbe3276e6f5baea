/**
 * "Liveness only from news" as a claim about time (`npm run test:perf`): a stopped peer whose
 * recorded datagrams are replayed 5 times per peer timeout is lost within the peer timeout and a
 * margin, in one of three tries (test/helpers/perf.ts). What the replays do is udp-news.test.ts's,
 * in the README's suite.
 */
import { describe, expect, it } from 'vitest'
import { bestOf } from '../helpers/perf.js'
import { replayedStoppedPeer } from './helpers/udp-cases.js'

/** The peer timeout of these pairs, ms, and the slack for a loaded machine over it (udp-news.test.ts's). */
const P = 500
const MARGIN = 350

describe('udp: liveness only from news (replayed datagrams)', () => {
  for (const mac of [false, true]) {
    it(`a stopped peer whose recorded datagrams are replayed 5 times per peer timeout is lost within it and ${MARGIN} ms (${mac ? 'with' : 'without'} MAC)`, async () => {
      await bestOf(3, async () => {
        expect(await replayedStoppedPeer(mac, P, MARGIN)).toBeLessThan(P + MARGIN)
      })
    }, 60_000)
  }
})
