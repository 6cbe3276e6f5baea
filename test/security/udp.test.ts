/**
 * Attacks on the `udp` transport (docs/transports.md, "UDP"), each against the real implementation:
 *
 *   - "Liveness only from news": an attacker on the path records a peer's datagrams and replays
 *     them, unchanged, after the peer stopped. Only a datagram whose packet number is above every
 *     one heard counts as news of its sender, so the stopped peer is still lost after the peer
 *     timeout, with or without the per-datagram MAC; the replays are counted stale and deliver
 *     nothing twice. (Before packet numbers, a replay every second kept a stopped peer alive.)
 *   - The datagram header's checks, fuzzed: mutations of captured datagrams (flipped bits, cut or
 *     lengthened, fields rewritten, re-checksummed under the MAC) and random bytes are each dropped
 *     by the check a model of the header predicts, never taken as news, never delivered. (Without
 *     the MAC, an altered datagram whose checksum is still right is B's as far as A can tell: those
 *     are counted, not sent — but for those altered only in the packet number and the reserved
 *     word, which must be stale.) A's counters are compared in two phases: B's own traffic, then
 *     the attacker's alone, so that a datagram of B's taken as stale is never mistaken for one of
 *     the attacker's.
 *   - Packet numbers are 64 bits, news only when above every one heard by less than 2^24: an old
 *     datagram whose packet number's bit 31 and another top bit of its 16-byte block are flipped
 *     (which the checksum cannot see) is not news, and A keeps its live peer.
 *   - After a peer's goodbye: frames that come in its name later (a datagram made with its session
 *     value and the next sequence number, as whoever took its port could) are dropped, never
 *     delivered; and it is sent nothing but the acknowledgement its goodbye calls for — no
 *     keepalive, no resend, no new data.
 *   - A handshake response handled twice before its sending socket is made counts the peer ready
 *     once (before, twice: a job of three went on with a peer it never met).
 *   - "Stateless handshake": a flood of forged hellos at a process's handshake port while its peer
 *     joins does not keep the pair from meeting (before, the acceptor's table of four answered
 *     hellos was pushed out faster than the real handshake could finish).
 *
 * The datagram tests run two datagram paths in this process with the test as the network between
 * them (helpers/datagram-pair.ts); the forged hellos a two-process job with `lapirun --join`; the
 * response a transport of this process, its handshake called directly.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createSocket, type Socket } from 'node:dgram'
import { writeSync } from 'node:fs'
import { createServer } from 'node:net'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { DG_HEADER_BYTES, DG_MAC_BYTES, UDP_VERSION, UdpTransport, createDatagramShared, logger } from '@amlapi/lapi/internal'
import {
  DatagramSum, FRAME_CONTROL, FRAME_HEADER_BYTES, FRAME_PACKET, FRAME_VERSION, PEER_BYE, decodeBody, encodeMessage, makeKey, makeNonce, peerFlags, proof,
  streamStats, type PeerAddress,
} from '@amlapi/lapi/transport'
import { FIXTURES } from '../helpers/job.js'
import { LAPIRUN } from '../helpers/run.js'
import { DROP_COUNTERS, DatagramPair, PN_JUMP, frameBody, isNews, packetNumber, type DgStats } from './helpers/datagram-pair.js'

/** Figures for a reader of the run (FUZZ_VERBOSE=1, as `npm run test:fuzz` sets it), not for the assertions. */
const note = (...a: unknown[]): void => { if (process.env['FUZZ_VERBOSE'] === '1') console.log('[udp security]', ...a) }

/** Pairs and processes a test made, undone after it whatever happened. */
const cleanups: Array<() => Promise<unknown> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

async function openPair (mac: boolean, peerTimeoutMs: number): Promise<DatagramPair> {
  const pair = await DatagramPair.open({ mac, peerTimeoutMs })
  cleanups.push(() => pair.close())
  return pair
}

/** Sends frames both ways until `n` went each way and all came, with their acknowledgements. */
async function exchange (pair: DatagramPair, n: number): Promise<void> {
  const done = (): boolean => pair.a.inbound.got >= n && pair.b.inbound.got >= n
  const ok = await pair.run(5000, done, () => {
    if (pair.a.inbound.sent < n) pair.send(pair.b)
    if (pair.b.inbound.sent < n) pair.send(pair.a)
  })
  expect(ok, `frames through: ${pair.a.inbound.got} to A, ${pair.b.inbound.got} to B of ${n}`).toBe(true)
  // (a few more rounds: the last acknowledgements go both ways)
  await pair.run(30)
}

const delta = (s1: DgStats, s0: DgStats, k: keyof DgStats): number => s1[k] - s0[k]

describe('udp: liveness only from news (replayed datagrams)', () => {
  /** The peer timeout of these pairs, ms (the keepalive interval is 500 ms: a live peer here sends frames). */
  const P = 500
  /** Slack for a loaded machine over the peer timeout. */
  const MARGIN = 350

  for (const mac of [false, true]) {
    it(`a stopped peer whose recorded datagrams are replayed 5 times per peer timeout is still lost within it (${mac ? 'with' : 'without'} MAC)`, async () => {
      const pair = await openPair(mac, P)
      const N = 24
      await exchange(pair, N)
      const recorded = pair.captured.slice()
      expect(recorded.length).toBeGreaterThan(N / 4)
      expect(pair.stats(pair.a).stale, 'no real datagram is stale').toBe(0)

      // B stops (its port stays open); the attacker replays all it recorded, unchanged, every P/5
      pair.bRuns = false
      const t0 = performance.now()
      const s0 = pair.stats(pair.a)
      const a0 = pair.attacks
      let next = t0
      let rounds = 0
      const replay = (): void => {
        if (performance.now() < next) return
        for (const d of recorded) pair.attack(d)
        rounds++
        next += P / 5
      }
      const lost = await pair.run(P + MARGIN + 1500, () => pair.loss(pair.a) !== null, replay)
      const after = performance.now() - t0
      const roundsBefore = rounds
      // one more round after the loss: dropped as from an unknown sender
      for (const d of recorded) pair.attack(d)
      pair.step()
      const s1 = pair.stats(pair.a)
      note(`mac ${mac}: lost after ${after.toFixed(0)} ms (peer timeout ${P}); ${roundsBefore} rounds of ${recorded.length} replays before; stale +${delta(s1, s0, 'stale')}, duplicates +${delta(s1, s0, 'duplicates')}, unknownSender +${delta(s1, s0, 'unknownSender')}`)

      expect(lost, `A still had B ${after.toFixed(0)} ms after it stopped, after ${rounds} rounds of replays`).toBe(true)
      expect(after, 'lost within the peer timeout and a margin').toBeLessThan(P + MARGIN)
      expect(pair.loss(pair.a)).toMatch(/the peer timeout/)
      expect(pair.peerFailed(pair.a)).toBe(true)
      expect(roundsBefore).toBeGreaterThanOrEqual(2)
      // every replay was taken as stale (while B was known) or dropped (once lost); none was news
      expect(delta(s1, s0, 'stale') + delta(s1, s0, 'unknownSender')).toBe(pair.attacks - a0)
      expect(delta(s1, s0, 'stale')).toBeGreaterThanOrEqual((roundsBefore - 1) * recorded.length)
      expect(delta(s1, s0, 'datagramsReceived'), 'datagrams taken after B stopped are all stale').toBe(delta(s1, s0, 'stale'))
      expect(delta(s1, s0, 'duplicates'), 'replayed data is recognised as duplicate').toBeGreaterThan(0)
      // no replayed frame was delivered again
      expect(pair.a.inbound.violations).toEqual([])
      expect(pair.a.inbound.got).toBe(N)
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
      await pair.run(3 * P, () => pair.loss(pair.a) !== null || pair.loss(pair.b) !== null, () => {
        const now = performance.now()
        // both keep sending frames, as a running job does
        if (now >= sendAt) { pair.send(pair.b); pair.send(pair.a); sendAt = now + 20 }
        if (now >= next) { for (const d of recorded) pair.attack(d); next += P / 5 }
      })
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

// ───────────────────────────── header fuzz ─────────────────────────────

/** What A does with a datagram: the counter it lands in. */
type Verdict = typeof DROP_COUNTERS[number] | 'stale'

/** Header fields a mutation may rewrite: offset and bytes (datagram-path.ts's layout). */
const FIELDS: Record<string, [number, number]> = {
  version: [0, 1], type: [1, 1], flags: [2, 1], reserved0: [3, 1], src: [4, 2], len: [6, 2], session: [8, 8], seq: [16, 4],
  ack: [20, 4], sack: [24, 4], win: [28, 2], reserved1: [30, 2], sum: [32, 4], pn: [36, 4], pnHigh: [40, 4], reserved2: [44, 4], mac: [48, 16],
}
/**
 * The top bits of the packet number's two words and of the reserved word: lanes 1-3 of the 16-byte
 * block at 32. The checksum adds each lane times an odd number, so flipping the top bit of two of
 * them changes no sum: only a MAC tells.
 */
const TOP_BITS = [39, 43, 47]
type Op =
  | { k: 'replay' }
  | { k: 'flip', at: Array<[number, number]> }
  | { k: 'truncate', to: number }
  | { k: 'extend', bytes: Uint8Array }
  | { k: 'field', f: string, v: number }
  /** The packet number set just above any heard: a try at forging news. */
  | { k: 'pnAhead', by: number }
  /** The packet number set far above any heard (PN_JUMP or more), or below: never news. */
  | { k: 'pnFar', by: number }
  /** The top bits of two of TOP_BITS flipped: a change the checksum cannot see. */
  | { k: 'topBits', pair: [number, number] }
  | { k: 'random', bytes: Uint8Array }
interface Mutation { base: number, op: Op, resum: boolean }

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.constant<Op>({ k: 'replay' }),
  fc.record({ k: fc.constant('flip' as const), at: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 7 })), { minLength: 1, maxLength: 4 }) }),
  fc.record({ k: fc.constant('truncate' as const), to: fc.nat() }),
  fc.record({ k: fc.constant('extend' as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 64 }) }),
  fc.record({ k: fc.constant('field' as const), f: fc.constantFrom(...Object.keys(FIELDS)), v: fc.oneof(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 4 })) }),
  fc.record({ k: fc.constant('pnAhead' as const), by: fc.integer({ min: 1, max: 64 }) }),
  fc.record({
    k: fc.constant('pnFar' as const),
    by: fc.oneof(fc.constantFrom(PN_JUMP, PN_JUMP + 1, 2 ** 31, 2 ** 32, 2 ** 32 + 1, 2 ** 52, -1, -(2 ** 31)), fc.integer({ min: PN_JUMP, max: 2 ** 40 })),
  }),
  fc.record({ k: fc.constant('topBits' as const), pair: fc.constantFrom<[number, number]>([0, 1], [0, 2], [1, 2]) }),
  fc.record({ k: fc.constant('random' as const), bytes: fc.uint8Array({ minLength: 0, maxLength: 1600 }) }),
)
const mutationArb: fc.Arbitrary<Mutation> = fc.record({ base: fc.nat(), op: opArb, resum: fc.boolean() })

/** A datagram's checksum, made by the path's own code (the header with checksum and MAC zero, then the payload). */
class Summer {
  private readonly mem = { buffer: new SharedArrayBuffer(65536) }
  private readonly u8 = new Uint8Array(this.mem.buffer)
  private readonly sum = new DatagramSum(this.mem, null, 65536 - 64)

  /** The checksum `d` should carry (header length `hl`). */
  value (d: Uint8Array, hl: number): number {
    this.u8.set(d.subarray(0, hl), 0)
    this.u8.fill(0, 32, 36)
    this.u8.fill(0, DG_HEADER_BYTES, hl)
    this.u8.set(d.subarray(hl), 1024)
    this.sum.reset()
    this.sum.add(0, hl)
    if (d.length > hl) this.sum.add(1024, d.length - hl)
    return this.sum.value()
  }

  /** Writes the right checksum into `d`. */
  fix (d: Uint8Array, hl: number): void {
    if (d.length >= hl) new DataView(d.buffer, d.byteOffset, d.length).setUint32(32, this.value(d, hl), true)
  }

  valid (d: Uint8Array, hl: number): boolean {
    return new DataView(d.buffer, d.byteOffset, d.length).getUint32(32, true) === this.value(d, hl)
  }
}

const equalBytes = (x: Uint8Array, y: Uint8Array): boolean => x.length === y.length && Buffer.compare(x, y) === 0

/**
 * Which check drops datagram `d` (as A's socket gives it: cut at the largest datagram), in the
 * order the path makes them (datagram-path.ts `onDatagram`): 'stale' when it passes them all with
 * a packet number that is not news to A (`heard`: the highest A took, datagram-pair.ts `isNews`),
 * 'news' otherwise. `missed`: it differs from `base` where the checksum looks, and its checksum
 * is right all the same; `inPn`: only in the packet number's and the reserved word (bytes 36-47).
 */
function verdict (
  d: Uint8Array, base: Uint8Array, o: { mac: boolean, session: Uint8Array, heard: number, summer: Summer },
): { v: Verdict | 'news', missed: boolean, inPn: boolean } {
  const no = (v: Verdict): { v: Verdict, missed: boolean, inPn: boolean } => ({ v, missed: false, inPn: false })
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

/** Writes packet number `pn` (a whole number below 2^64, as exact as a double is) into datagram `d`. */
function setPn (d: Buffer, pn: number): void {
  // (only a negative number is moved up by 2^64: a small one plus 2^64 is not exact in a double, and rounded to 0)
  const v = pn < 0 ? 2 ** 64 + pn : pn % 2 ** 64
  d.writeUInt32LE(v % 2 ** 32, 36)
  d.writeUInt32LE(Math.floor(v / 2 ** 32) % 2 ** 32, 40)
}

function mutate (m: Mutation, base: Buffer, heard: number): Uint8Array {
  const op = m.op
  switch (op.k) {
    case 'replay': return Buffer.from(base)
    case 'random': return op.bytes
    case 'truncate': return Buffer.from(base.subarray(0, op.to % base.length))
    case 'extend': return Buffer.concat([base, op.bytes])
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

/** Fuzzing time per property (one per mode), ms, and the seed; a longer run (`npm run test:fuzz`) sets FUZZ_MS. */
const FUZZ_MS = Number(process.env['FUZZ_MS'] ?? 1000)
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
        if (runs % 3 === 0) { pair.send(pair.b); pair.send(pair.a) }
        if (runs % 64 === 0) await new Promise((resolve) => setImmediate(resolve))
        const r0 = pair.stats(pair.a)
        const fwd0 = pair.forwarded; const rs0 = pair.realStale; const short0 = pair.shortDrains
        pair.step()
        const r1 = pair.stats(pair.a)
        const realStale = pair.realStale - rs0
        expect(DROP_COUNTERS.filter((k) => delta(r1, r0, k) !== 0), 'B\'s datagrams dropped by a check').toEqual([])
        expect(delta(r1, r0, 'stale'), 'B\'s datagrams taken as stale (the model: only those out of order)').toBe(realStale)
        expect(delta(r1, r0, 'datagramsReceived') - delta(r1, r0, 'stale'), 'B\'s datagrams taken as news').toBe(pair.forwarded - fwd0 - realStale)

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
          if (resummed) { d = Buffer.from(d); summer.fix(d, hl) }
          const { v, missed: miss, inPn } = verdict(d, base, { mac, session: pair.session, heard: pair.pnHeard, summer })
          // (without the MAC nothing tells an altered datagram with a right checksum from one B sent:
          // the checksum misses some two-bit changes, the top bits of two words of one 16-byte block.
          // One altered in the packet number (and the reserved word) only is sent: its number moved by
          // 2^31 or more, it must be stale. Any other is counted, not sent. Any datagram the checks
          // would pass as news fails the property, not sent)
          if (miss && !resummed) missed++
          if (miss && !mac && !inPn) continue
          if (v === 'news') { news.push(Buffer.from(d).toString('hex')); continue }
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
      note(`fuzz mac ${mac}: ${runs} runs, ${sent} datagrams in ${FUZZ_MS} ms (${missed} altered ones the checksum missed` +
        `${mac ? ', each dropped by the MAC' : `, ${pnMissed} of them in the packet number only, sent, stale; the rest not sent`}; ` +
        `${pair.realStale} of B's stale on the way):`, byVerdict)
      expect(runs).toBeGreaterThan(50)

      // afterwards the pair still exchanges frames, all of them, intact and in order
      const n = pair.a.inbound.sent + 30
      const m = pair.b.inbound.sent + 30
      const ok = await pair.run(10_000, () => pair.a.inbound.got === n && pair.b.inbound.got === m, () => {
        if (pair.a.inbound.sent < n) pair.send(pair.b)
        if (pair.b.inbound.sent < m) pair.send(pair.a)
      })
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

describe('udp: 64-bit packet numbers, news only by less than 2^24', () => {
  for (const mac of [false, true]) {
    it(`old datagrams with bit 31 of the packet number and another top bit of its block flipped (the checksum still right) are not news; ` +
      `A keeps a live B (${mac ? 'with' : 'without'} MAC)`, async () => {
      const P = 500
      const pair = await openPair(mac, P)
      await exchange(pair, 12)
      const summer = new Summer()
      const hl = DG_HEADER_BYTES + (mac ? DG_MAC_BYTES : 0)
      // (the oldest datagrams B sent, each altered three ways: the top bits of bytes 39 and 47 — the packet
      // number's low word and the reserved word: +2^31 —, of 39 and 43, of 43 and 47: the high word, +2^63)
      const old = pair.captured.slice(0, 4)
      const forged = old.flatMap((base) => [[39, 47], [39, 43], [43, 47]].map((bytes) => {
        const d = Buffer.from(base)
        for (const i of bytes) d[i]! ^= 0x80
        return { d, bytes }
      }))
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
      const r0 = pair.stats(pair.a); const rs0 = pair.realStale; const fwd0 = pair.forwarded; const a0 = pair.attacks
      let sendAt = performance.now(); let next = sendAt
      await pair.run(3 * P, () => pair.loss(pair.a) !== null || pair.loss(pair.b) !== null, () => {
        const now = performance.now()
        if (now >= sendAt) { pair.send(pair.b); pair.send(pair.a); sendAt = now + 20 }
        if (now >= next) { for (const f of forged) pair.attack(f.d); next += P / 5 }
      })
      await pair.run(2000, () => pair.a.inbound.got === pair.a.inbound.sent && pair.b.inbound.got === pair.b.inbound.sent)
      const r1 = pair.stats(pair.a)
      const realStale = pair.realStale - rs0
      const figures = `${pair.attacks - a0} forged datagrams, ${pair.forwarded - fwd0} of B's (${realStale} out of order on the way), ` +
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
    })
  }
})

// ───────────────────────────── after a goodbye ─────────────────────────────

/** A frame as the stream path writes it (contract.ts): length, version, kind, dst, then `body`. */
function frameBytes (kind: number, dst: number, body: Uint8Array): Buffer {
  const f = Buffer.alloc(FRAME_HEADER_BYTES + body.length)
  f.writeUInt32LE(body.length, 0)
  f[4] = FRAME_VERSION
  f[5] = kind
  f.writeUInt32LE(dst, 8)
  f.set(body, FRAME_HEADER_BYTES)
  return f
}

/**
 * A data datagram in B's name, without MAC: B's datagram `tpl`'s header (its session value and
 * acknowledgements), sequence number `seq`, packet number `pn`, `payload`, the checksum right.
 */
function forgeData (tpl: Buffer, seq: number, pn: number, payload: Uint8Array, summer: Summer): Buffer {
  const d = Buffer.alloc(DG_HEADER_BYTES + payload.length)
  tpl.copy(d, 0, 0, DG_HEADER_BYTES)
  d[1] = 1 // DATA
  d[2] = 0 // no MAC, not held
  d.writeUInt16LE(payload.length, 6)
  d.writeInt32LE(seq, 16)
  setPn(d, pn)
  d.writeUInt32LE(0, 44)
  d.set(payload, DG_HEADER_BYTES)
  summer.fix(d, DG_HEADER_BYTES)
  return d
}

const isData = (d: Buffer): boolean => d[1] === 1
const seqOf = (d: Buffer): number => d.readInt32LE(16)
const describeDg = (d: Buffer): string => `${isData(d) ? 'data' : 'ack'} seq ${seqOf(d)} ack ${d.readInt32LE(20)} pn ${packetNumber(d)}, ${d.readUInt16LE(6)} bytes`

describe('udp: after a peer\'s goodbye', () => {
  it('control: a datagram made so (B\'s session value, the next sequence number, a right checksum) delivers its frame while B has not said goodbye', async () => {
    const pair = await openPair(false, 5000)
    await exchange(pair, 12)
    pair.bRuns = false
    const summer = new Summer()
    const last = pair.captured[pair.captured.length - 1]!
    const next = Math.max(...pair.captured.filter(isData).map(seqOf)) + 1
    // (frame 12 is the next A's flow expects: 4 bytes)
    const id = pair.a.inbound.sent++
    const s0 = pair.stats(pair.a)
    pair.attack(forgeData(last, next, pair.pnHeard + 1, frameBytes(FRAME_PACKET, id, frameBody(id)), summer))
    pair.stepA()
    const s1 = pair.stats(pair.a)
    expect([delta(s1, s0, 'datagramsReceived'), delta(s1, s0, 'stale')], 'taken, as news').toEqual([1, 0])
    expect(pair.a.inbound.violations).toEqual([])
    expect(pair.a.inbound.got, 'the made frame delivered').toBe(13)
  })

  it('frames in B\'s name after its goodbye are dropped, never delivered; A sends B nothing after it but the acknowledgement it calls for: ' +
    'no keepalive, resend or new data (watched 1.2 s)', async () => {
    /** How long what A sends B is watched after the goodbye: over twice the keepalive interval (500 ms) and the longest resend timeout (500 ms). */
    const WATCH_MS = 1200
    const pair = await openPair(false, 5000)
    await exchange(pair, 12)
    const summer = new Summer()

    // B stops reading; A sends it frames, which stay unacknowledged: what reaches B's socket shows A resending them
    pair.bRuns = false
    const before: Buffer[] = []
    for (let i = 0; i < 3; i++) pair.send(pair.a)
    const resent = (): boolean => { const seqs = before.filter(isData).map(seqOf); return new Set(seqs).size < seqs.length }
    await pair.run(1500, resent, () => { before.push(...pair.takeAt(pair.b)) })
    expect(resent(), `the watch sees A resend to a silent B: ${before.map(describeDg).join('; ')}`).toBe(true)

    // B says goodbye (one datagram, relayed); A's datagrams numbered above pn0 were sent after it took the goodbye
    // (A has no other peer: its packet numbers to B count the datagrams it sent)
    before.push(...pair.takeAt(pair.b))
    const s0 = pair.stats(pair.a)
    const pn0 = s0.datagramsSent
    const f0 = pair.forwarded
    expect(pair.goodbye(pair.b), 'B\'s goodbye queued').toBe(true)
    pair.step()
    expect(pair.forwarded - f0, 'B\'s goodbye: one datagram').toBe(1)
    const bye = pair.captured[pair.captured.length - 1]!
    expect(isData(bye)).toBe(true)
    expect(peerFlags(pair.a.shared, 1) & PEER_BYE, 'A took the goodbye').toBe(PEER_BYE)

    // (b) watched: A asked for more frames to B now and then; B's socket read, A polled, every millisecond or so
    const after: Buffer[] = []
    const t0 = performance.now()
    let asked = 0
    const take = (): void => { for (const d of pair.takeAt(pair.b)) if (packetNumber(d) > pn0) after.push(d) }
    await pair.run(WATCH_MS, () => false, () => {
      take()
      if (asked < 6 && performance.now() - t0 >= asked * 200) { pair.send(pair.a); asked++ }
    })
    take()
    const s1 = pair.stats(pair.a)
    const seen = after.map(describeDg).join('; ')
    note(`after the goodbye: ${after.length} datagrams to B in ${WATCH_MS} ms (${seen}); before it ${before.length}, ${s0.retransmits} resends`)
    expect(after.filter(isData).map(describeDg), 'data (new or resent) after the goodbye').toEqual([])
    expect(after.length, `acknowledgements after the goodbye: the one it calls for (${seen})`).toBe(1)
    expect(after[0]!.readInt32LE(20), 'it acknowledges the goodbye').toBe(seqOf(bye) + 1)
    expect(delta(s1, s0, 'keepalives'), 'keepalives').toBe(0)
    expect(delta(s1, s0, 'retransmits') + delta(s1, s0, 'fastRetransmits'), 'resends').toBe(0)
    expect(delta(s1, s0, 'datagramsSent'), 'datagrams A sent B').toBe(after.length)
    expect(pair.loss(pair.a), 'B is not lost (the peer timeout is 5 s)').toBeNull()

    // (a) a datagram in B's name after its goodbye, made as a squatter on B's port who learned the session value
    // could: the next sequence number, a packet number that is news, a right checksum; a packet and a control frame
    const s2 = pair.stats(pair.a)
    const st2 = streamStats(pair.a.shared)
    const got = pair.a.inbound.got
    const payload = Buffer.concat([frameBytes(FRAME_PACKET, got, frameBody(got)), frameBytes(FRAME_CONTROL, 0, encodeMessage({ t: 'x' }).subarray(4))])
    pair.attack(forgeData(bye, seqOf(bye) + 1, pair.pnHeard + 1, payload, summer))
    pair.stepA()
    const s3 = pair.stats(pair.a)
    const st3 = streamStats(pair.a.shared)
    expect(DROP_COUNTERS.filter((k) => delta(s3, s2, k) !== 0), 'the datagram passed every check').toEqual([])
    expect([delta(s3, s2, 'datagramsReceived'), delta(s3, s2, 'stale')], 'taken, as news').toEqual([1, 0])
    expect(st3.framesDropped - st2.framesDropped, 'its two frames dropped').toBe(2)
    expect(st3.framesReceived - st2.framesReceived, 'frames passed up').toBe(0)
    expect(pair.a.inbound.got, 'nothing delivered').toBe(got)
    expect(pair.a.inbound.violations).toEqual([])
  })
})

// ───────────────────────────── forged-hello flood ─────────────────────────────

/** A free loopback port (for process 0's rendezvous). */
async function freePort (): Promise<number> {
  return await new Promise((resolve) => {
    const s = createServer()
    s.listen(0, '127.0.0.1', () => { const a = s.address(); s.close(() => resolve(typeof a === 'object' && a !== null ? a.port : 0)) })
  })
}

interface Member {
  p: ChildProcess, out: string, err: string, exit: Promise<number | null>
  /** When it was started, when it logged its (first) handshake done, and when it ended (performance.now ms; 0: not yet). */
  started: number, met: number, ended: number
}

/** Starts `lapirun --join` as rank `rank` of a 2-process udp job running putget (one task per process); killed after the test. */
function member (rank: number, env: NodeJS.ProcessEnv): Member {
  const args = [LAPIRUN, '--join', '--tasks-per-proc', '1', '--transport', 'udp', FIXTURES + 'lapi/putget.mjs']
  const p = spawn(process.execPath, args, { env: { ...process.env, AMLAPI_RANK: String(rank), AMLAPI_SIZE: '2', AMLAPI_LOG_LEVEL: 'debug', ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  const m: Member = { p, out: '', err: '', exit: Promise.resolve(null), started: performance.now(), met: 0, ended: 0 }
  m.exit = new Promise((resolve) => p.on('close', (c) => { m.ended = performance.now(); resolve(c) }))
  p.stdout!.on('data', (d: Buffer) => { m.out += d.toString() })
  p.stderr!.on('data', (d: Buffer) => {
    m.err += d.toString()
    if (m.met === 0 && m.err.includes('"msg":"udp: peer ready"')) m.met = performance.now()
  })
  cleanups.push(async () => {
    if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL')
    await m.exit
    expect(p.exitCode !== null || p.signalCode !== null, `process ${rank} is gone`).toBe(true)
  })
  return m
}

/** The pino records (AMLAPI_LOG_LEVEL=debug) with message `msg` in `stderr`. */
function records (stderr: string, msg: string): Array<Record<string, unknown>> {
  return stderr.split('\n').filter((l) => l.startsWith('{') && l.includes(`"msg":"${msg}"`)).map((l) => JSON.parse(l) as Record<string, unknown>)
}

/** The end of a process's stderr, less the refusals a flood makes it log. */
function logTail (p: Member): string {
  return p.err.split('\n').filter((l) => !l.includes('handshake datagram refused')).join('\n').slice(-3000)
}

/** Waits for `cond`, looking every 10 ms, at most `ms`; whether it came. */
async function until (cond: () => boolean, ms: number): Promise<boolean> {
  const end = performance.now() + ms
  while (!cond() && performance.now() < end) await new Promise((resolve) => setTimeout(resolve, 10))
  return cond()
}

/**
 * A forged udp hello: "AMLH", then the msgpack map {t: 'hello', from, to, nj} (written out byte by
 * byte: a map of 4, short strings, small integers, a 16-byte bin).
 */
function forgedHello (from: number, to: number, nj: Uint8Array): Buffer {
  const str = (s: string): Buffer => Buffer.concat([Buffer.from([0xa0 | s.length]), Buffer.from(s)])
  return Buffer.concat([
    Buffer.from('AMLH'), Buffer.from([0x84]),
    str('t'), str('hello'), str('from'), Buffer.from([from]), str('to'), Buffer.from([to]), str('nj'), Buffer.from([0xc4, nj.length]), nj,
  ])
}

/** Sends forged hellos to `port` at `perSecond` until stopped (a connected socket, written to directly). */
async function flood (port: number, perSecond: number): Promise<{ stop: () => Promise<number> }> {
  const pool: Buffer[] = []
  for (let i = 0; i < 1024; i++) {
    // (mostly the real dialer's rank; some from ranks that are no peer of process 0, or to another)
    const r = i % 10
    const [from, to] = r < 7 ? [1, 0] : r === 7 ? [0, 0] : r === 8 ? [2 + (i % 5), 0] : [1, 1]
    pool.push(forgedHello(from, to, randomBytes(16)))
  }
  const sock: Socket = createSocket('udp4')
  sock.on('error', () => {})
  await new Promise<void>((resolve) => sock.connect(port, '127.0.0.1', resolve))
  const sym = Object.getOwnPropertySymbols(sock).find((x) => x.description === 'state symbol')!
  const fd = (sock as unknown as Record<symbol, { handle: { fd: number } }>)[sym]!.handle.fd
  const t0 = performance.now()
  let sent = 0
  const timer = setInterval(() => {
    const due = Math.min(Math.floor((performance.now() - t0) * perSecond / 1000), sent + perSecond / 20)
    try {
      for (; sent < due; sent++) writeSync(fd, pool[sent % pool.length]!)
    } catch {
      // (a refused write: the port is closed, its process gone; the next tick tries again)
      sent++
    }
  }, 5)
  let closed: Promise<void> | null = null
  const stop = async (): Promise<number> => {
    clearInterval(timer)
    closed ??= new Promise<void>((resolve) => sock.close(() => resolve()))
    await closed
    return sent
  }
  cleanups.push(stop)
  return { stop }
}

describe('udp: stateless handshake (forged hellos)', () => {
  it('a job whose process 0 is flooded with forged hellos (10,000/s) from before process 1 starts to the end still meets and verifies, about as fast as without', async () => {
    const RATE = 10_000
    /** Runs one job; `flooding` floods process 0's handshake port from 1 s before process 1 starts to the end. */
    const job = async (flooding: boolean): Promise<{ met: number, ran: number, sent: number, ps: Member[] }> => {
      const env = { AMLAPI_RENDEZVOUS: `127.0.0.1:${await freePort()}`, AMLAPI_JOB_KEY: randomBytes(32).toString('hex') }
      const p0 = member(0, env)
      const bound = await until(() => records(p0.err, 'udp: sockets bound').length > 0, 15_000)
      expect(bound, `process 0 bound its sockets\n${p0.err}`).toBe(true)
      const port = records(p0.err, 'udp: sockets bound')[0]!['handshakePort'] as number
      const f = flooding ? await flood(port, RATE) : null
      if (f !== null) await new Promise((resolve) => setTimeout(resolve, 1000))
      const p1 = member(1, env)
      let ended = false
      let sent = 0
      try {
        // (long enough for a process that never meets its peer to give up itself, after 30 s, and say so)
        ended = await until(() => p0.ended > 0 && p1.ended > 0, 35_000)
      } finally {
        if (f !== null) sent = await f.stop()
      }
      if (!ended) throw new Error(`the job did not end in 35 s${flooding ? ` (flooded: ${sent} forged hellos)` : ''}\nprocess 1: ${logTail(p1)}`)
      return { met: p1.met - p1.started, ran: p1.ended - p1.started, sent, ps: [p0, p1] }
    }
    const plain = await job(false)
    const flooded = await job(true)
    const figures = `process 1 met process 0 after ${flooded.met.toFixed(0)} ms flooded, ${plain.met.toFixed(0)} ms not; it ran ${flooded.ran.toFixed(0)} ms flooded, ${plain.ran.toFixed(0)} ms not (${flooded.sent} forged hellos)`
    note(figures)
    for (const [what, r] of [['unflooded', plain], ['flooded', flooded]] as const) {
      for (const [i, p] of r.ps.entries()) {
        expect(await p.exit, `${what}: process ${i}\n${logTail(p)}`).toBe(0)
        expect(p.out, `${what}: process ${i}`).toMatch(/task \d putget ok/)
      }
    }
    expect(flooded.sent, 'the flood ran at about its rate').toBeGreaterThan(RATE)
    // the handshake, what the flood attacks, takes about its usual time (before, it never ended:
    // both processes gave up after 30 s). The whole job is slower by what answering 7,000 hellos a
    // second costs both processes (two HMACs each in process 0, a challenge to refuse in process 1):
    // a second or two here, up to 5 s with the machine's load on one CPU; bounded loosely
    expect(plain.met, figures).toBeGreaterThan(0)
    expect(flooded.met, figures).toBeGreaterThan(0)
    expect(flooded.met, figures).toBeLessThan(plain.met + 3000)
    expect(flooded.ran, figures).toBeLessThan(plain.ran + 10_000)
    // the flood reached the handshake: process 0 refused the hellos from no peer of its, and those in
    // process 1's name once the pair had met (before, it answered them: process 1 refused those
    // challenges as to no hello of its, as many as came in the short time before they met)
    const left = (p: Member): Record<string, number> => (records(p.err, 'process leaves the job')[0]?.['stats'] ?? {}) as Record<string, number>
    expect(left(flooded.ps[0]!)['connectionsRefused'], 'process 0 refused forged hellos').toBeGreaterThan(100)
    if ((left(flooded.ps[1]!)['connectionsRefused'] ?? 0) > 0) expect(flooded.ps[1]!.err).toMatch(/"why":"a challenge to no hello of ours"/)
  }, 60_000)
})

// ─────────────────────────── a response taken once ───────────────────────────

/** UdpTransport's insides this test reaches (udp.ts). */
interface UdpInside {
  readyCount: number
  onHandshake (b: Buffer, from: string): void
  acceptorNonce (nj: Uint8Array, r: number): Buffer
}

describe('udp: a handshake response taken once', () => {
  it('the same valid response handled twice in a row, before the socket toward its sender is made, counts the peer ready once', async () => {
    const key = makeKey()
    const u = new UdpTransport({ rank: 0, size: 3, key, log: logger('udp-response'), mac: false, faults: null, peerTimeoutMs: 5000 })
    cleanups.push(() => u.close())
    const self = await u.listen()
    u.useShared(createDatagramShared(3, 128 << 10, 0, u.geometry()))
    // ranks 1 and 2 as sockets of this test: where process 0's welcome goes, and rank 1's receiving socket
    const socks = await Promise.all([0, 1, 2].map(async () => {
      const s = createSocket('udp4')
      s.on('error', () => {})
      await new Promise<void>((resolve) => s.bind(0, '127.0.0.1', resolve))
      cleanups.push(() => new Promise<void>((resolve) => { try { s.close(() => resolve()) } catch { resolve() } }))
      return s
    }))
    const welcomes: unknown[] = []
    socks[0]!.on('message', (b) => { try { welcomes.push((decodeBody(b.subarray(4)) as Record<string, unknown>)['t']) } catch { /* not ours */ } })
    const table: PeerAddress[] = [self, ...[socks[0]!, socks[2]!].map((s) => ({ host: '127.0.0.1', port: s.address().port }))]
    let connected = false
    // (rank 2 never comes: connect() must not resolve; its 30 s deadline rejects after the test, unheard)
    u.connect(table, { onBytes: () => {}, onPeerLost: () => {} }).then(() => { connected = true }, () => {})
    const inside = u as unknown as UdpInside
    const nj = makeNonce()
    const ni = inside.acceptorNonce(nj, 1)
    const port = socks[1]!.address().port; const max = 1472; const win = 16
    // (rank 1's answer to the challenge process 0 would have sent its hello: a real peer's, with the key)
    const p = proof(key, 'udp-connect', ni, nj, 1, 0, port, max, win)
    const response = Buffer.concat([Buffer.from('AMLH'), encodeMessage({ t: 'response', from: 1, to: 0, nj, ni, port, max, win, p }).subarray(4)])
    const from = `127.0.0.1:${socks[0]!.address().port}`
    inside.onHandshake(response, from)
    inside.onHandshake(response, from)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(inside.readyCount, 'peers counted ready').toBe(1)
    expect(connected, 'connect() resolved without rank 2').toBe(false)
    expect(welcomes, 'welcomes sent to rank 1').toEqual(['welcome'])
    expect(u.stats().connectionsRefused, 'the copy is no refusal').toBe(0)
  })
})
