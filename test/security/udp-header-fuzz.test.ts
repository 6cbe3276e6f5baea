/**
 * The `udp` transport's datagram header (docs/transports.md, "UDP"), fuzzed against the real
 * implementation:
 *
 *   - The datagram header's checks, fuzzed: mutations of captured datagrams (flipped bits, cut or
 *     lengthened, fields rewritten, re-checksummed under the MAC) and random bytes are each dropped
 *     by the check a model of the header predicts, never taken as news, never delivered. (Without
 *     the MAC, an altered datagram whose checksum is still right is B's as far as A can tell: those
 *     are counted, not sent — but for those altered only in the packet number and the reserved
 *     word, which must be stale.) A's counters are compared in two phases: B's own traffic, then
 *     the attacker's alone, so that a datagram of B's taken as stale is never mistaken for one of
 *     the attacker's.
 *
 * Two datagram paths run in this process with the test as the network between them
 * (helpers/datagram-pair.ts). Each property is seeded (FUZZ_SEED) and runs for a time (FUZZ_MS per
 * property, for a longer run: `npm run test:fuzz`); FUZZ_VERBOSE=1 prints what each reached.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { DG_HEADER_BYTES, DG_MAC_BYTES, UDP_VERSION } from '#lapi-internal'
import { DROP_COUNTERS, PN_JUMP, isNews, packetNumber } from './helpers/datagram-pair.js'
import { Summer, delta, exchange, note, openPair, setPn } from './helpers/udp-cases.js'
import { budget } from './helpers/fuzz-run.js'

/** What A does with a datagram: the counter it lands in. */
type Verdict = (typeof DROP_COUNTERS)[number] | 'stale'

/** Header fields a mutation may rewrite: offset and bytes (transport/udp/header.ts's layout). */
const FIELDS: Record<string, [number, number]> = {
  version: [0, 1],
  type: [1, 1],
  flags: [2, 1],
  reserved0: [3, 1],
  src: [4, 2],
  len: [6, 2],
  session: [8, 8],
  seq: [16, 4],
  ack: [20, 4],
  sack: [24, 4],
  win: [28, 2],
  reserved1: [30, 2],
  sum: [32, 4],
  pn: [36, 4],
  pnHigh: [40, 4],
  reserved2: [44, 4],
  mac: [48, 16],
}
/**
 * The top bits of the packet number's two words and of the reserved word: lanes 1-3 of the 16-byte
 * block at 32. The checksum adds each lane times an odd number, so flipping the top bit of two of
 * them changes no sum: only a MAC tells.
 */
const TOP_BITS = [39, 43, 47]
type Op =
  | { k: 'replay' }
  | { k: 'flip'; at: Array<[number, number]> }
  | { k: 'truncate'; to: number }
  | { k: 'extend'; bytes: Uint8Array }
  | { k: 'field'; f: string; v: number }
  /** The packet number set just above any heard: a try at forging news. */
  | { k: 'pnAhead'; by: number }
  /** The packet number set far above any heard (PN_JUMP or more), or below: never news. */
  | { k: 'pnFar'; by: number }
  /** The top bits of two of TOP_BITS flipped: a change the checksum cannot see. */
  | { k: 'topBits'; pair: [number, number] }
  | { k: 'random'; bytes: Uint8Array }
interface Mutation {
  base: number
  op: Op
  resum: boolean
}

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.constant<Op>({ k: 'replay' }),
  fc.record({ k: fc.constant('flip' as const), at: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 7 })), { minLength: 1, maxLength: 4 }) }),
  fc.record({ k: fc.constant('truncate' as const), to: fc.nat() }),
  fc.record({ k: fc.constant('extend' as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 64 }) }),
  fc.record({
    k: fc.constant('field' as const),
    f: fc.constantFrom(...Object.keys(FIELDS)),
    v: fc.oneof(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 4 })),
  }),
  fc.record({ k: fc.constant('pnAhead' as const), by: fc.integer({ min: 1, max: 64 }) }),
  fc.record({
    k: fc.constant('pnFar' as const),
    by: fc.oneof(fc.constantFrom(PN_JUMP, PN_JUMP + 1, 2 ** 31, 2 ** 32, 2 ** 32 + 1, 2 ** 52, -1, -(2 ** 31)), fc.integer({ min: PN_JUMP, max: 2 ** 40 })),
  }),
  fc.record({ k: fc.constant('topBits' as const), pair: fc.constantFrom<[number, number]>([0, 1], [0, 2], [1, 2]) }),
  fc.record({ k: fc.constant('random' as const), bytes: fc.uint8Array({ minLength: 0, maxLength: 1600 }) }),
)
const mutationArb: fc.Arbitrary<Mutation> = fc.record({ base: fc.nat(), op: opArb, resum: fc.boolean() })

const equalBytes = (x: Uint8Array, y: Uint8Array): boolean => x.length === y.length && Buffer.compare(x, y) === 0

/**
 * Which check drops datagram `d` (as A's socket gives it: cut at the largest datagram), in the
 * order the path makes them (transport/udp/path.ts `onDatagram`): 'stale' when it passes them all with
 * a packet number that is not news to A (`heard`: the highest A took, datagram-pair.ts `isNews`),
 * 'news' otherwise. `missed`: it differs from `base` where the checksum looks, and its checksum
 * is right all the same; `inPn`: only in the packet number's and the reserved word (bytes 36-47).
 */
function verdict(
  d: Uint8Array,
  base: Uint8Array,
  o: { mac: boolean; session: Uint8Array; heard: number; summer: Summer },
): { v: Verdict | 'news'; missed: boolean; inPn: boolean } {
  const no = (v: Verdict): { v: Verdict; missed: boolean; inPn: boolean } => ({ v, missed: false, inPn: false })
  const dv = new DataView(d.buffer, d.byteOffset, d.length)
  if (d.length < DG_HEADER_BYTES) return no('badLength')
  if (d[0] !== UDP_VERSION) return no('badVersion')
  const type = d[1]!
  if (type !== 1 && type !== 2) return no('badType')
  if (dv.getUint16(4, true) !== 1) return no('unknownSender')
  if (!equalBytes(d.subarray(8, 16), o.session)) return no('badSession')
  if (((d[2]! & 1) !== 0) !== o.mac) return no('badMac')
  const hl = DG_HEADER_BYTES + (o.mac ? DG_MAC_BYTES : 0)
  const len = dv.getUint16(6, true)
  if (hl + len !== d.length || (type === 2 && len !== 0)) return no('badLength')
  if (!o.summer.valid(d, hl)) return no('badChecksum')
  const same = equalBytes(d, base)
  // (the checksum leaves the MAC field out: a change there alone is the MAC's to find)
  const outsideMac = (x: Uint8Array): Buffer => Buffer.concat([x.subarray(0, DG_HEADER_BYTES), x.subarray(hl)])
  const missed = !equalBytes(outsideMac(d), outsideMac(base))
  const inPn = missed && d.length === base.length && equalBytes(d.subarray(0, 36), base.subarray(0, 36)) && equalBytes(d.subarray(48), base.subarray(48))
  // (a MAC is right only on the bytes it was made for: those of a datagram B sent)
  if (o.mac && !same) return { v: 'badMac', missed, inPn }
  return { v: isNews(packetNumber(d), o.heard) ? 'news' : 'stale', missed, inPn }
}

function mutate(m: Mutation, base: Buffer, heard: number): Uint8Array {
  const op = m.op
  switch (op.k) {
    case 'replay':
      return Buffer.from(base)
    case 'random':
      return op.bytes
    case 'truncate':
      return Buffer.from(base.subarray(0, op.to % base.length))
    case 'extend':
      return Buffer.concat([base, op.bytes])
    case 'flip': {
      const d = Buffer.from(base)
      for (const [at, bit] of op.at) d[at % d.length]! ^= 1 << bit
      return d
    }
    case 'pnAhead':
    case 'pnFar': {
      const d = Buffer.from(base)
      setPn(d, heard + op.by)
      return d
    }
    case 'topBits': {
      const d = Buffer.from(base)
      for (const i of op.pair) d[TOP_BITS[i]!]! ^= 0x80
      return d
    }
    case 'field': {
      const d = Buffer.from(base)
      const [at, n] = FIELDS[op.f]!
      for (let i = 0; i < n && at + i < d.length; i++) d[at + i] = (op.v >>> (8 * (i % 4))) & 0xff
      return d
    }
  }
}

/** Fuzzing time per property (one per mode), ms (longer on a loaded machine: fuzz-run.ts), and the seed; a longer run (`npm run test:fuzz`) sets FUZZ_MS. */
const FUZZ_MS = budget(1000)
const FUZZ_SEED = Number(process.env['FUZZ_SEED'] ?? 0x5eed)

describe('udp: the datagram header, fuzzed', () => {
  for (const mac of [false, true]) {
    it(`mutated and random datagrams are each dropped by the predicted check, never news, never delivered; the pair goes on (${mac ? 'with' : 'without'} MAC, seed ${FUZZ_SEED})`, async () => {
      const pair = await openPair(mac, 5000)
      await exchange(pair, 12)
      const summer = new Summer()
      const hl = DG_HEADER_BYTES + (mac ? DG_MAC_BYTES : 0)
      let runs = 0
      let sent = 0
      const byVerdict: Record<string, number> = {}
      let missed = 0
      let pnMissed = 0
      const prop = fc.asyncProperty(fc.array(mutationArb, { minLength: 1, maxLength: 8 }), async (muts) => {
        runs++
        // B's own traffic first, to its end: B's datagrams taken (news, but for any the way to the relay put out
        // of order: `realStale`), nothing else counted. It goes on both ways, so the captured datagrams stay close
        // to the live ones
        if (runs % 3 === 0) {
          pair.send(pair.b)
          pair.send(pair.a)
        }
        if (runs % 64 === 0) await new Promise((resolve) => setImmediate(resolve))
        const r0 = pair.stats(pair.a)
        const fwd0 = pair.forwarded
        const rs0 = pair.realStale
        const short0 = pair.shortDrains
        pair.step()
        const r1 = pair.stats(pair.a)
        const realStale = pair.realStale - rs0
        expect(
          DROP_COUNTERS.filter((k) => delta(r1, r0, k) !== 0),
          "B's datagrams dropped by a check",
        ).toEqual([])
        expect(delta(r1, r0, 'stale'), "B's datagrams taken as stale (the model: only those out of order)").toBe(realStale)
        expect(delta(r1, r0, 'datagramsReceived') - delta(r1, r0, 'stale'), "B's datagrams taken as news").toBe(pair.forwarded - fwd0 - realStale)

        // then the attacker's datagrams, A alone: each counted by the check predicted
        const recent = Math.min(pair.captured.length, 256)
        const want: Record<string, number> = {}
        const news: string[] = []
        for (const m of muts) {
          const base = pair.captured[pair.captured.length - 1 - (m.base % recent)]!
          // (A's socket gives at most the largest datagram: the rest of a longer one is cut off)
          let d = mutate(m, base, pair.pnHeard).subarray(0, pair.opts.maxDatagram)
          // (under the MAC, half are given a right checksum, so that they reach the MAC's check)
          const resummed = mac && m.resum && m.op.k !== 'random'
          if (resummed) {
            d = Buffer.from(d)
            summer.fix(d, hl)
          }
          const { v, missed: miss, inPn } = verdict(d, base, { mac, session: pair.session, heard: pair.pnHeard, summer })
          // (without the MAC nothing tells an altered datagram with a right checksum from one B sent:
          // the checksum misses some two-bit changes, the top bits of two words of one 16-byte block.
          // One altered in the packet number (and the reserved word) only is sent: its number moved by
          // 2^31 or more, it must be stale. Any other is counted, not sent. Any datagram the checks
          // would pass as news fails the property, not sent)
          if (miss && !resummed) missed++
          if (miss && !mac && !inPn) continue
          if (v === 'news') {
            news.push(Buffer.from(d).toString('hex'))
            continue
          }
          if (miss && !mac) pnMissed++
          want[v] = (want[v] ?? 0) + 1
          byVerdict[v] = (byVerdict[v] ?? 0) + 1
          pair.attack(d)
          sent++
        }
        const s0 = pair.stats(pair.a)
        pair.stepA()
        const s1 = pair.stats(pair.a)
        expect(pair.shortDrains, 'steps in which A did not read all that was sent to it within 200 ms').toBe(short0)
        expect(news, 'altered datagrams that every check would pass as news').toEqual([])
        const got: Record<string, number> = {}
        for (const k of [...DROP_COUNTERS, 'stale'] as const) if (delta(s1, s0, k) !== 0) got[k] = delta(s1, s0, k)
        expect(got, 'each datagram in the counter of the check predicted').toEqual(want)
        // (none was news: news = taken less stale)
        expect(delta(s1, s0, 'datagramsReceived') - delta(s1, s0, 'stale'), 'news from the attacker').toBe(0)
        expect(pair.a.inbound.violations).toEqual([])
        expect(pair.loss(pair.a)).toBeNull()
      })
      // (no shrinking: every run acts on the same live pair, so a smaller input tried after a failure meets what the
      // failure left — the first failure, as it came, is the one to read)
      await fc.assert(prop, { seed: FUZZ_SEED, numRuns: 100_000_000, endOnFailure: true, plugins: [fc.interruptAfterTimeLimit(FUZZ_MS)] })
      note(
        `fuzz mac ${mac}: ${runs} runs, ${sent} datagrams in ${FUZZ_MS} ms (${missed} altered ones the checksum missed` +
          `${mac ? ', each dropped by the MAC' : `, ${pnMissed} of them in the packet number only, sent, stale; the rest not sent`}; ` +
          `${pair.realStale} of B's stale on the way):`,
        byVerdict,
      )
      expect(runs).toBeGreaterThan(50)

      // afterwards the pair still exchanges frames, all of them, intact and in order
      const n = pair.a.inbound.sent + 30
      const m = pair.b.inbound.sent + 30
      const ok = await pair.run(
        10_000,
        () => pair.a.inbound.got === n && pair.b.inbound.got === m,
        () => {
          if (pair.a.inbound.sent < n) pair.send(pair.b)
          if (pair.b.inbound.sent < m) pair.send(pair.a)
        },
      )
      expect(ok, `after the fuzz: ${pair.a.inbound.got}/${n} to A, ${pair.b.inbound.got}/${m} to B`).toBe(true)
      expect(pair.a.inbound.violations).toEqual([])
      expect(pair.b.inbound.violations).toEqual([])
      expect(pair.loss(pair.a)).toBeNull()
      expect(pair.loss(pair.b)).toBeNull()
      const s = pair.stats(pair.a)
      const drops = DROP_COUNTERS.reduce((x, k) => x + s[k], 0)
      expect(drops + s.stale - pair.realStale, 'every attacking datagram accounted for').toBe(pair.attacks)
    })
  }
})
