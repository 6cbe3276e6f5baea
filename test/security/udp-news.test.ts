/**
 * Replays at the `udp` transport (docs/transports.md, "UDP"), each against the real implementation:
 *
 *   - "Liveness only from news": an attacker on the path records a peer's datagrams and replays
 *     them, unchanged, after the peer stopped. Only a datagram whose packet number is above every
 *     one heard counts as news of its sender, so the stopped peer is still lost after the peer
 *     timeout, with or without the per-datagram MAC; the replays are counted stale and deliver
 *     nothing twice. (Before packet numbers, a replay every second kept a stopped peer alive.)
 *   - Packet numbers are 64 bits, news only when above every one heard by less than 2^24: an old
 *     datagram whose packet number's bit 31 and another top bit of its 16-byte block are flipped
 *     (which the checksum cannot see) is not news, and A keeps its live peer.
 *
 * Two datagram paths run in this process with the test as the network between them
 * (helpers/datagram-pair.ts).
 */
import { describe, expect, it } from 'vitest'
import { DG_HEADER_BYTES, DG_MAC_BYTES } from '#lapi-internal'
import { PN_JUMP, packetNumber } from './helpers/datagram-pair.js'
import { Summer, delta, exchange, openPair, replayedStoppedPeer } from './helpers/udp-cases.js'

describe('udp: liveness only from news (replayed datagrams)', () => {
  /** The peer timeout of these pairs, ms (the keepalive interval is 500 ms: a live peer here sends frames). */
  const P = 500
  /** Slack for a loaded machine over the peer timeout. */
  const MARGIN = 350

  for (const mac of [false, true]) {
    it(`a stopped peer whose recorded datagrams are replayed 5 times per peer timeout is still lost (${mac ? 'with' : 'without'} MAC)`, async () => {
      // (within the peer timeout and a margin: udp-news.perf.test.ts, `npm run test:perf`)
      await replayedStoppedPeer(mac, P, MARGIN)
    })
  }

  it('control: a peer that keeps running is not lost, under the same replays (with and without MAC)', async () => {
    for (const mac of [false, true]) {
      const pair = await openPair(mac, P)
      await exchange(pair, 12)
      const recorded = pair.captured.slice()
      const s0 = pair.stats(pair.a)
      const rs0 = pair.realStale
      let next = performance.now()
      let sendAt = next
      await pair.run(
        3 * P,
        () => pair.loss(pair.a) !== null || pair.loss(pair.b) !== null,
        () => {
          const now = performance.now()
          // both keep sending frames, as a running job does
          if (now >= sendAt) {
            pair.send(pair.b)
            pair.send(pair.a)
            sendAt = now + 20
          }
          if (now >= next) {
            for (const d of recorded) pair.attack(d)
            next += P / 5
          }
        },
      )
      await pair.run(2000, () => pair.a.inbound.got === pair.a.inbound.sent && pair.b.inbound.got === pair.b.inbound.sent)
      const s1 = pair.stats(pair.a)
      expect(pair.loss(pair.a), `mac ${mac}`).toBeNull()
      expect(pair.loss(pair.b), `mac ${mac}`).toBeNull()
      // (and B's own datagrams news, but for any the way to the relay put out of order)
      expect(delta(s1, s0, 'stale'), `mac ${mac}: the replays were stale`).toBe(pair.attacks + pair.realStale - rs0)
      expect(pair.a.inbound.violations, `mac ${mac}`).toEqual([])
      expect(pair.b.inbound.violations, `mac ${mac}`).toEqual([])
      expect(pair.a.inbound.got, `mac ${mac}`).toBe(pair.a.inbound.sent)
      expect(pair.b.inbound.got, `mac ${mac}`).toBe(pair.b.inbound.sent)
      expect(pair.a.inbound.got, `mac ${mac}: frames flowed`).toBeGreaterThan(40)
    }
  })
})

describe('udp: 64-bit packet numbers, news only by less than 2^24', () => {
  for (const mac of [false, true]) {
    it(
      `old datagrams with bit 31 of the packet number and another top bit of its block flipped (the checksum still right) are not news; ` +
        `A keeps a live B (${mac ? 'with' : 'without'} MAC)`,
      async () => {
        const P = 500
        const pair = await openPair(mac, P)
        await exchange(pair, 12)
        const summer = new Summer()
        const hl = DG_HEADER_BYTES + (mac ? DG_MAC_BYTES : 0)
        // (the oldest datagrams B sent, each altered three ways: the top bits of bytes 39 and 47 — the packet
        // number's low word and the reserved word: +2^31 —, of 39 and 43, of 43 and 47: the high word, +2^63)
        const old = pair.captured.slice(0, 4)
        const forged = old.flatMap((base) =>
          [
            [39, 47],
            [39, 43],
            [43, 47],
          ].map((bytes) => {
            const d = Buffer.from(base)
            for (const i of bytes) d[i]! ^= 0x80
            return { d, bytes }
          }),
        )
        for (const f of forged) {
          expect(summer.valid(f.d, hl), `the checksum still right with bytes ${f.bytes.join(' and ')} altered`).toBe(true)
          // (above every number heard: news to a rule without the bound, which would then take B's next ones as old)
          expect(packetNumber(f.d) - pair.pnHeard, `bytes ${f.bytes.join(' and ')}`).toBeGreaterThanOrEqual(PN_JUMP)
        }
        const s0 = pair.stats(pair.a)
        for (const f of forged) pair.attack(f.d)
        pair.stepA()
        const s1 = pair.stats(pair.a)
        expect(delta(s1, s0, mac ? 'badMac' : 'stale'), `each forged datagram ${mac ? 'dropped by the MAC' : 'stale'}`).toBe(forged.length)
        expect(delta(s1, s0, 'datagramsReceived') - delta(s1, s0, 'stale'), 'news from the forged datagrams').toBe(0)

        // B goes on, the forged datagrams sent again every P/5: for three peer timeouts A keeps B, and takes B's datagrams as news
        const r0 = pair.stats(pair.a)
        const rs0 = pair.realStale
        const fwd0 = pair.forwarded
        const a0 = pair.attacks
        let sendAt = performance.now()
        let next = sendAt
        await pair.run(
          3 * P,
          () => pair.loss(pair.a) !== null || pair.loss(pair.b) !== null,
          () => {
            const now = performance.now()
            if (now >= sendAt) {
              pair.send(pair.b)
              pair.send(pair.a)
              sendAt = now + 20
            }
            if (now >= next) {
              for (const f of forged) pair.attack(f.d)
              next += P / 5
            }
          },
        )
        await pair.run(2000, () => pair.a.inbound.got === pair.a.inbound.sent && pair.b.inbound.got === pair.b.inbound.sent)
        const r1 = pair.stats(pair.a)
        const realStale = pair.realStale - rs0
        const figures =
          `${pair.attacks - a0} forged datagrams, ${pair.forwarded - fwd0} of B's (${realStale} out of order on the way), ` +
          `stale +${delta(r1, r0, 'stale')}, badMac +${delta(r1, r0, 'badMac')}`
        expect(pair.loss(pair.a), figures).toBeNull()
        expect(pair.loss(pair.b), figures).toBeNull()
        expect(pair.attacks - a0, figures).toBeGreaterThanOrEqual(10 * forged.length)
        expect(delta(r1, r0, mac ? 'badMac' : 'stale') - (mac ? 0 : realStale), figures).toBe(pair.attacks - a0)
        expect(delta(r1, r0, 'datagramsReceived') - delta(r1, r0, 'stale'), `B's datagrams all news: ${figures}`).toBe(pair.forwarded - fwd0 - realStale)
        expect(pair.a.inbound.violations).toEqual([])
        expect(pair.b.inbound.violations).toEqual([])
        expect(pair.a.inbound.got).toBe(pair.a.inbound.sent)
        expect(pair.a.inbound.got, 'frames flowed').toBeGreaterThan(40)
        expect(pair.shortDrains, 'steps in which A did not read all that was sent to it within 200 ms').toBe(0)
      },
    )
  }
})
