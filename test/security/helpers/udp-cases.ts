/**
 * What the udp attack tests (test/security/udp-*.test.ts) share: the figures they print; the pairs
 * and processes a test made, undone after each test of a file that imports this (the afterEach
 * below is registered in each such file); a datagram pair (helpers/datagram-pair.ts) opened and
 * run until frames went both ways; a counter's change; a datagram's checksum, made by the path's
 * own code; a packet number written into a datagram; the replays at a stopped peer (udp-news.test.ts
 * and udp-news.perf.test.ts).
 */
import { afterEach, expect } from 'vitest'
import { DG_HEADER_BYTES } from '#lapi-internal'
import { DatagramSum } from '@amlapi/lapi/transport'
import { DatagramPair, type DgStats } from './datagram-pair.js'

/** Figures for a reader of the run (FUZZ_VERBOSE=1, as `npm run test:fuzz` sets it), not for the assertions. */
export const note = (...a: unknown[]): void => {
  if (process.env['FUZZ_VERBOSE'] === '1') console.log('[udp security]', ...a)
}

/** Pairs and processes a test made, undone after it whatever happened. */
// biome-ignore lint/suspicious/noConfusingVoidType: a cleanup is any function, async or not
export const cleanups: Array<() => Promise<unknown> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

export async function openPair(mac: boolean, peerTimeoutMs: number): Promise<DatagramPair> {
  const pair = await DatagramPair.open({ mac, peerTimeoutMs })
  cleanups.push(() => pair.close())
  return pair
}

/** Sends frames both ways until `n` went each way and all came, with their acknowledgements. */
export async function exchange(pair: DatagramPair, n: number): Promise<void> {
  const done = (): boolean => pair.a.inbound.got >= n && pair.b.inbound.got >= n
  const ok = await pair.run(5000, done, () => {
    if (pair.a.inbound.sent < n) pair.send(pair.b)
    if (pair.b.inbound.sent < n) pair.send(pair.a)
  })
  expect(ok, `frames through: ${pair.a.inbound.got} to A, ${pair.b.inbound.got} to B of ${n}`).toBe(true)
  // (a few more rounds: the last acknowledgements go both ways)
  await pair.run(30)
}

export const delta = (s1: DgStats, s0: DgStats, k: keyof DgStats): number => s1[k] - s0[k]

/** A datagram's checksum, made by the path's own code (the header with checksum and MAC zero, then the payload). */
export class Summer {
  private readonly mem = { buffer: new SharedArrayBuffer(65536) }
  private readonly u8 = new Uint8Array(this.mem.buffer)
  private readonly sum = new DatagramSum(this.mem, null, 65536 - 64)

  /** The checksum `d` should carry (header length `hl`). */
  value(d: Uint8Array, hl: number): number {
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
  fix(d: Uint8Array, hl: number): void {
    if (d.length >= hl) new DataView(d.buffer, d.byteOffset, d.length).setUint32(32, this.value(d, hl), true)
  }

  valid(d: Uint8Array, hl: number): boolean {
    return new DataView(d.buffer, d.byteOffset, d.length).getUint32(32, true) === this.value(d, hl)
  }
}

/** Writes packet number `pn` (a whole number below 2^64, as exact as a double is) into datagram `d`. */
export function setPn(d: Buffer, pn: number): void {
  // (only a negative number is moved up by 2^64: a small one plus 2^64 is not exact in a double, and rounded to 0)
  const v = pn < 0 ? 2 ** 64 + pn : pn % 2 ** 64
  d.writeUInt32LE(v % 2 ** 32, 36)
  d.writeUInt32LE(Math.floor(v / 2 ** 32) % 2 ** 32, 40)
}

/**
 * "Liveness only from news" (udp-news.test.ts): a pair with peer timeout `P` exchanges frames, B
 * stops (its port still open) and an attacker replays all it recorded of B's datagrams, unchanged,
 * every P / 5 until A loses B (for at most P + MARGIN + 1.5 s); every replay must be stale or
 * dropped, none delivered. Returns how long after B stopped A lost it, ms (udp-news.perf.test.ts
 * bounds it by P + MARGIN).
 */
export async function replayedStoppedPeer(mac: boolean, P: number, MARGIN: number): Promise<number> {
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
  note(
    `mac ${mac}: lost after ${after.toFixed(0)} ms (peer timeout ${P}); ${roundsBefore} rounds of ${recorded.length} replays before; stale +${delta(s1, s0, 'stale')}, duplicates +${delta(s1, s0, 'duplicates')}, unknownSender +${delta(s1, s0, 'unknownSender')}`,
  )

  expect(lost, `A still had B ${after.toFixed(0)} ms after it stopped, after ${rounds} rounds of replays`).toBe(true)
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
  return after
}
