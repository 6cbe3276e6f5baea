/**
 * Property-based fuzzing of what faces strangers before they prove the job key (docs/security.md):
 *
 *   - `readMessages`, the length-prefixed framing (fed directly, through a socket stand-in): any
 *     bytes in any chunking; the model of one buffer parsed at once says what it must make of them
 *     (before the key: flat maps only, `decodeFlat`'s rules; after `setLimit`: any msgpack value);
 *     its copying stays linear; every decode of a body of at most 1 KiB, however hostile
 *     (msgpackr's extensions, the structured-clone blowup among them), is quick.
 *   - `decodeFlat`, through a reader before the key: flat maps round-trip, any mutation of one is a
 *     flat map or an error as the model says, quickly; the bombs are refused in microseconds.
 *   - The rendezvous, the tcp transport's listener and the udp handshake: fuzzed bytes and
 *     hello-like messages from strangers (wrong keys, replayed and reflected proofs, odd types,
 *     truncated streams) are refused, never welcomed, and a member with the key still joins after.
 *
 * Each property is seeded (FUZZ_SEED) and runs for a time (FUZZ_MS per property, for a longer run:
 * `npm run test:fuzz`); FUZZ_VERBOSE=1 prints what each reached.
 */
import { createSocket, type Socket as DgramSocket } from 'node:dgram'
import { connect, type Socket } from 'node:net'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { DEFAULT_CONFIG } from '@amlapi/lapi'
import { PRE_AUTH_MAX_BYTES, UdpTransport, createDatagramShared, logger, serveRendezvous } from '@amlapi/lapi/internal'
import {
  MAX_MESSAGE_BYTES, TcpTransport, createStreamShared, decodeBody, encodeMessage, makeKey, makeNonce, proof, readMessages, sameProof, type PeerAddress,
} from '@amlapi/lapi/transport'
import {
  FUZZ_SEED, FakeSocket, budget, chunkSizesArb, chunked, errorBomb, fixedHostileBodies, flatBodyArb, flatForm, flatMapArb, flatModel, flatMutationArb,
  flatOrNull, flatValueArb, flatViolations, framed, hostileBodyArb, mstr, modelStream, mutateBody, note, printerFor, prototypeNames,
  runFor, streamPieceArb, structuredCloneBomb, Suspects, timed,
} from './helpers/fuzz-msgpack.js'
import { build, planArb, recipeArb, stranger, type Listener } from './helpers/fuzz-net.js'

const log = logger('fuzz')
/** The longest one decode (or one handshake datagram) may take, ms. */
const DECODE_MS = 50
/** A test's time limit: its fuzzing budget and room for the rest. */
const limit = (ms: number): number => ms + 30_000

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

/** Waits until `cond` holds, looking every 5 ms, for at most `ms`; whether it came. */
async function until (cond: () => boolean, ms: number): Promise<boolean> {
  const end = performance.now() + ms
  while (!cond() && performance.now() < end) await new Promise((resolve) => setTimeout(resolve, 5))
  return cond()
}

/** Waits until `count()` has not changed for 100 ms (at most 3 s): what a listener still had to read is counted. */
async function quiet (count: () => number): Promise<number> {
  const end = performance.now() + 3000
  let last = count(); let since = performance.now()
  while (performance.now() < end && performance.now() - since < 100) {
    await new Promise((resolve) => setTimeout(resolve, 10))
    const now = count()
    if (now !== last) { last = now; since = performance.now() }
  }
  return last
}

/** `p`, or the text `timeout` after `ms`; a rejection as its message. */
async function settle (p: Promise<unknown>, ms: number): Promise<string> {
  let t: NodeJS.Timeout | undefined
  const to = new Promise<string>((resolve) => { t = setTimeout(() => resolve('timeout'), ms) })
  try {
    return await Promise.race([p.then(() => 'ok', (e: unknown) => `rejected: ${(e as Error).message}`), to])
  } finally { clearTimeout(t) }
}

// ───────────────────────────── readMessages ─────────────────────────────

/** Bytes `Buffer.concat` copied while `f` ran (the only copying `readMessages` does). */
function copiedBy (f: () => void): number {
  const concat = Buffer.concat
  let copied = 0
  Buffer.concat = ((list: readonly Uint8Array[], total?: number) => {
    copied += total ?? list.reduce((n, b) => n + b.length, 0)
    return concat(list, total)
  }) as typeof Buffer.concat
  try { f() } finally { Buffer.concat = concat }
  return copied
}

/** One body through `readMessages` (prefixed, in one chunk): whether it decoded, how long it took (the least of up to 3 tries when slow), and a rerun. */
function decodeOnce (body: Buffer): { ms: number, outcome: string, again: () => void } {
  const msg = framed(body)
  let outcome = ''
  const again = (): void => {
    const sock = new FakeSocket()
    const seen: string[] = []
    readMessages(sock.sock, () => seen.push('message'), (why) => seen.push(`error: ${why.slice(0, 80)}`))
    sock.feed(msg)
    outcome = seen.length === 1 ? seen[0]! : `${seen.length} outcomes: ${seen.join('; ')}`
  }
  const ms = timed(again, DECODE_MS)
  return { ms, outcome, again }
}

/** A message with every integer msgpackr could take for a record id: it decodes so after any hostile body. */
const REFERENCE = { t: 'hello', ids: Array.from({ length: 64 }, (_, i) => 64 + i), n: Buffer.alloc(16, 3) }
const REFERENCE_BYTES = encodeMessage(REFERENCE).subarray(4)
function expectDecoderClean (why: string): void {
  expect(decodeBody(REFERENCE_BYTES), `${why}: a later message decodes as it should`).toEqual(REFERENCE)
}

/** The longest one flat decode may take (timed once more when over), ms; the most a bomb's refusal may take on average. */
const FLAT_MS = 5
const BOMB_MEAN_MS = 0.25

/** One body through a reader before the key (framed, in one chunk): its outcomes, the message or why not, how long it took (ms). */
function throughReader (body: Uint8Array): { outcomes: number, m: unknown, why: string | null, ms: number } {
  const msg = framed(body)
  const sock = new FakeSocket()
  const r: { outcomes: number, m: unknown, why: string | null, ms: number } = { outcomes: 0, m: undefined, why: null, ms: 0 }
  readMessages(sock.sock, (m) => { r.outcomes++; r.m = m }, (w) => { r.outcomes++; r.why = w })
  const t0 = performance.now()
  sock.feed(msg)
  r.ms = performance.now() - t0
  return r
}

/** A map's entries, Buffers as their bytes (what a flat map is compared by). */
function entries (m: unknown): Array<[string, unknown]> {
  if (m === null || typeof m !== 'object') return [['not a map', m]]
  return Object.keys(m).map((k) => {
    const v = (m as Record<string, unknown>)[k]
    return [k, v instanceof Uint8Array ? `bytes ${Buffer.from(v).toString('hex')}` : v]
  })
}

/** Scalars no flat map may hold: floats, integers past 32 bits, extensions (a date, a bigint), long strings and binaries. */
const badScalarArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.double({ noInteger: true }), fc.constantFrom(2 ** 32, -(2 ** 31) - 1, 2 ** 53, -(2 ** 53), 0.5, Infinity, Number.NaN),
  fc.date({ noInvalidDate: true }), fc.bigInt({ min: -(BigInt(2) ** BigInt(63)), max: BigInt(2) ** BigInt(64) - BigInt(1) }),
  fc.string({ unit: 'grapheme-ascii', minLength: 256, maxLength: 400 }), fc.uint8Array({ minLength: 256, maxLength: 300 }).map((b) => Buffer.from(b)),
)
/** Values no flat map may hold: those scalars, arrays, maps. */
const badValueArb: fc.Arbitrary<unknown> = fc.oneof(badScalarArb, fc.array(flatValueArb, { maxLength: 3 }), flatMapArb)

/**
 * Values that are no flat map: not a map (undefined among them: in a map, msgpackr leaves it out), a
 * map with a value not flat, more than 16 entries, a key over 32 characters.
 */
const generalArb: fc.Arbitrary<unknown> = fc.oneof(
  flatValueArb, badScalarArb, fc.array(flatValueArb, { maxLength: 4 }), fc.constant(undefined),
  fc.tuple(flatMapArb, fc.string({ unit: 'grapheme-ascii', maxLength: 6 }), badValueArb).map(([m, k, v]) => ({ ...m, [k]: v })),
  fc.dictionary(fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 6 }), flatValueArb, { minKeys: 17, maxKeys: 20 }),
  fc.tuple(flatMapArb, fc.string({ unit: 'grapheme-ascii', minLength: 33, maxLength: 60 }), flatValueArb).map(([m, k, v]) => ({ ...m, [k]: v })),
)

/** Any msgpack value msgpackr gives back equal (what a peer that proved the key may send). */
const anyValueArb: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true },
    fc.integer(), fc.maxSafeInteger(), fc.double().map((d) => Object.is(d, -0) ? 0 : d), fc.string({ unit: 'grapheme', maxLength: 40 }),
    fc.boolean(), fc.constant(null), fc.date({ noInvalidDate: true }),
    fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b)),
    fc.array(tie('value'), { maxLength: 6 }),
    fc.dictionary(fc.string({ unit: 'grapheme', maxLength: 8 }).filter((k) => k !== '__proto__'), tie('value'), { maxKeys: 6, noNullPrototype: true })),
})).value

/** Whether `v` has a key `__proto__` anywhere (msgpackr gives it back as `__proto_`). */
function hasProtoKey (v: unknown): boolean {
  if (v === null || typeof v !== 'object' || v instanceof Uint8Array || v instanceof Date) return false
  return Object.keys(v).some((k) => k === '__proto__' || hasProtoKey((v as Record<string, unknown>)[k]))
}

/** A flat message whose body is `size` bytes or a little less (entries of strings of at most 200 characters). */
function flatOfSize (size: number): Buffer {
  const m: Record<string, string> = { t: 'x' }
  for (let i = 0; i < 15 && encodeMessage(m).length - 4 < size - 8; i++) {
    // (a key of 2 characters and a str8 header: 5 bytes)
    m[`p${i.toString(16)}`] = 'p'.repeat(Math.max(0, Math.min(200, size - (encodeMessage(m).length - 4) - 5)))
  }
  return encodeMessage(m)
}

describe('readMessages: the framing before the key', () => {
  it(`any bytes, in any chunking, stopped anywhere: what one buffer parsed at once gives; one error at most, then nothing; ` +
    `buffered < 4 + limit (seed ${FUZZ_SEED})`, () => {
    const ms = budget(700)
    let runs = 0; let messages = 0; let errors = 0; let bytes = 0
    // (up to PRE_AUTH_MAX_BYTES the reader takes flat maps only; 4096: any msgpack, as after the key)
    const limitArb = fc.constantFrom<number | undefined>(undefined, undefined, 16, 300, 4096)
    fc.assert(fc.property(limitArb, fc.array(streamPieceArb(1024), { maxLength: 12 }), chunkSizesArb, fc.nat(), (lim, pieces, sizes, stopAt) => {
      runs++
      const max = lim ?? PRE_AUTH_MAX_BYTES
      const print = printerFor(max)
      const chunks = chunked(Buffer.concat(pieces), sizes)
      const k = stopAt % (chunks.length + 1)
      const fed = Buffer.concat(chunks.slice(0, k))
      bytes += fed.length
      const want = modelStream(fed, max)
      const sock = new FakeSocket()
      const got: string[] = []; const why: string[] = []
      let late = 0
      const r = readMessages(sock.sock,
        (m) => { if (why.length > 0) late++; got.push(print(m)) },
        (w) => { if (why.length > 0) late++; why.push(w) }, lim)
      const copied = copiedBy(() => { for (const c of chunks.slice(0, k)) sock.feed(c) })
      if (why.length > 0) expect(sock.listenerCount('data'), 'reading stops at an error').toBe(0)
      const rest = r.stop()
      for (const c of chunks.slice(k)) sock.feed(c)
      messages += got.length; errors += why.length
      expect(got, 'the messages').toEqual(want.messages)
      expect(why.length, `errors: ${why.join('; ')}`).toBe(want.error ? 1 : 0)
      expect(late, 'nothing after an error').toBe(0)
      expect(Buffer.compare(rest, want.rest), 'what is left buffered').toBe(0)
      expect(rest.length).toBeLessThan(4 + max)
      expect(sock.listenerCount('data'), 'stop() stops reading').toBe(0)
      expect(copied, `bytes copied for ${fed.length} fed in ${k} chunks`).toBeLessThanOrEqual(3 * fed.length + 16)
    }), runFor(ms))
    note(`stream: ${runs} runs, ${bytes} bytes, ${messages} messages, ${errors} errors in ${ms} ms`)
    expect(runs).toBeGreaterThan(10)
  }, limit(budget(700)))

  it(`a prefix over the limit is one error, at once, whatever follows (seed ${FUZZ_SEED})`, () => {
    let runs = 0
    const overArb = fc.integer({ min: 1, max: 0xffffffff - PRE_AUTH_MAX_BYTES })
    fc.assert(fc.property(overArb, fc.uint8Array({ maxLength: 64 }), chunkSizesArb, (over, tail, sizes) => {
      runs++
      const n = PRE_AUTH_MAX_BYTES + over
      const bytes = Buffer.concat([framed(Buffer.alloc(0), n), tail])
      const sock = new FakeSocket()
      const why: string[] = []
      let msgs = 0
      readMessages(sock.sock, () => { msgs++ }, (w) => why.push(w))
      const chunks = chunked(bytes, sizes)
      let fedAt = -1
      for (const [i, c] of chunks.entries()) { sock.feed(c); if (why.length > 0 && fedAt < 0) fedAt = i }
      expect(why).toEqual([`a control message of ${n} bytes (at most ${PRE_AUTH_MAX_BYTES} here)`])
      expect(msgs).toBe(0)
      // (the error comes with the chunk that completes the prefix)
      expect(chunks.slice(0, fedAt + 1).reduce((x, c) => x + c.length, 0)).toBeGreaterThanOrEqual(4)
      expect(chunks.slice(0, fedAt).reduce((x, c) => x + c.length, 0)).toBeLessThan(4)
    }), runFor(budget(150)))
    expect(runs).toBeGreaterThan(10)
  }, limit(budget(150)))

  it(`flat maps (encodeMessage's, and written by hand in every encoding the rules take) round-trip before the key under any chunking ` +
    `(seed ${FUZZ_SEED})`, () => {
    const ms = budget(150)
    const msgArb = fc.oneof(
      flatMapArb.map((m) => ({ bytes: encodeMessage(m), want: m })),
      flatBodyArb.map((f) => ({ bytes: framed(f.body), want: f.want })),
    )
    let runs = 0; let total = 0
    fc.assert(fc.property(fc.array(msgArb, { minLength: 1, maxLength: 10 }), chunkSizesArb, (all, sizes) => {
      runs++
      // (a flat map over 1 KiB cannot come before the key)
      const msgs = all.filter((m) => m.bytes.length - 4 <= PRE_AUTH_MAX_BYTES)
      const sock = new FakeSocket()
      const got: unknown[] = []; const why: string[] = []
      const r = readMessages(sock.sock, (m) => got.push(m), (w) => why.push(w))
      for (const c of chunked(Buffer.concat(msgs.map((m) => m.bytes)), sizes)) sock.feed(c)
      total += got.length
      expect(why).toEqual([])
      expect(got.map(flatViolations).flat()).toEqual([])
      expect(got.map(entries)).toEqual(msgs.map((m) => entries(m.want)))
      expect(r.stop().length).toBe(0)
    }), runFor(ms))
    note(`flat round trip: ${runs} runs, ${total} messages in ${ms} ms`)
    expect(runs).toBeGreaterThan(10)
  }, limit(budget(150)))

  it(`general values (arrays, nested maps, floats, extensions, long strings, too many or long keys) before the key: flat maps ` +
    `before them delivered, then one error, then nothing (seed ${FUZZ_SEED})`, () => {
    const ms = budget(100)
    let runs = 0; let decodeErrors = 0
    fc.assert(fc.property(fc.array(flatMapArb, { maxLength: 3 }), generalArb, fc.array(flatMapArb, { maxLength: 3 }), chunkSizesArb,
      (before, general, after, sizes) => {
        runs++
        const head = before.map((m) => encodeMessage(m)).filter((b) => b.length - 4 <= PRE_AUTH_MAX_BYTES)
        const bad = encodeMessage(general)
        expect(flatOrNull(bad.subarray(4)), `the model takes ${fc.stringify(general)} as flat`).toBeNull()
        const sock = new FakeSocket()
        const got: unknown[] = []; const why: string[] = []
        let late = 0
        readMessages(sock.sock, (m) => { if (why.length > 0) late++; got.push(m) }, (w) => { if (why.length > 0) late++; why.push(w) })
        for (const c of chunked(Buffer.concat([...head, bad, ...after.map((m) => encodeMessage(m))]), sizes)) sock.feed(c)
        expect(got.map(entries)).toEqual(head.map((b) => entries(flatModel(b.subarray(4)))))
        expect(why.length, why.join('; ')).toBe(1)
        expect(why[0]).toMatch(bad.length - 4 > PRE_AUTH_MAX_BYTES ? /^a control message of \d+ bytes/ : /^a control message that does not decode/)
        if (bad.length - 4 <= PRE_AUTH_MAX_BYTES) decodeErrors++
        expect(late, 'nothing after the error').toBe(0)
        expect(sock.listenerCount('data'), 'reading stops at the error').toBe(0)
      }), runFor(ms))
    note(`general before the key: ${runs} runs, ${decodeErrors} refused by the decoder in ${ms} ms`)
    expect(runs).toBeGreaterThan(10)
    expect(decodeErrors).toBeGreaterThan(runs / 2)
  }, limit(budget(100)))

  it(`after setLimit(MAX_MESSAGE_BYTES) (or a reader made so) any msgpack value round-trips under any chunking (seed ${FUZZ_SEED})`, () => {
    const ms = budget(150)
    let runs = 0; let total = 0
    fc.assert(fc.property(fc.array(fc.oneof(anyValueArb, generalArb.filter((v) => !hasProtoKey(v))), { minLength: 1, maxLength: 10 }), fc.boolean(), chunkSizesArb, (msgs, made, sizes) => {
      runs++
      // (raised by the first message, a flat hello, as a listener does once the peer proved the key: the next is taken with msgpackr at once)
      const hello = { t: 'hello', n: Buffer.alloc(16, 7) }
      const sock = new FakeSocket()
      const got: unknown[] = []; const why: string[] = []
      const r = readMessages(sock.sock, (m) => {
        if (!made && got.length === 0) r.setLimit(MAX_MESSAGE_BYTES)
        got.push(m)
      }, (w) => why.push(w), made ? MAX_MESSAGE_BYTES : undefined)
      const stream = Buffer.concat([...(made ? [] : [encodeMessage(hello)]), ...msgs.map((m) => encodeMessage(m))])
      for (const c of chunked(stream, sizes)) sock.feed(c)
      total += got.length
      expect(why).toEqual([])
      expect(made ? got : got.slice(1)).toEqual(msgs)
      if (!made) expect(entries(got[0])).toEqual(entries(hello))
      expect(r.stop().length).toBe(0)
    }), runFor(ms))
    note(`round trip after the key: ${runs} runs, ${total} messages in ${ms} ms`)
    expect(runs).toBeGreaterThan(10)
  }, limit(budget(150)))

  it('buffering is linear: 1 MiB of small flat messages, and of 1 KiB ones, fed a byte at a time, each byte copied at most twice', () => {
    for (const size of [24, PRE_AUTH_MAX_BYTES]) {
      const one = flatOfSize(size)
      expect(one.length - 4).toBeLessThanOrEqual(PRE_AUTH_MAX_BYTES)
      expect(one.length - 4).toBeGreaterThanOrEqual(size - 8)
      const count = Math.ceil((1 << 20) / one.length)
      const stream = Buffer.concat(new Array<Buffer>(count).fill(one))
      const sock = new FakeSocket()
      let got = 0; const why: string[] = []
      readMessages(sock.sock, () => { got++ }, (w) => why.push(w))
      const t0 = performance.now()
      const copied = copiedBy(() => { for (let i = 0; i < stream.length; i++) sock.feed(stream.subarray(i, i + 1)) })
      const ms = performance.now() - t0
      note(`linear: ${count} messages of ${one.length} bytes (${stream.length} bytes) a byte at a time: ${ms.toFixed(0)} ms, ${copied} bytes copied`)
      expect(why).toEqual([])
      expect(got).toBe(count)
      expect(copied, 'bytes copied').toBeLessThanOrEqual(2 * stream.length)
      expect(ms, `${stream.length} bytes a byte at a time`).toBeLessThan(5000)
    }
  }, 60_000)
})

describe('decodeFlat, through a reader before the key', () => {
  it(`every flat map fast-check makes decodes to an equal map with a null prototype: encodeMessage's body, and one written by ` +
    `hand in any encoding the rules take (seed ${FUZZ_SEED})`, () => {
    const ms = budget(100)
    let runs = 0; let over = 0
    const caseArb = fc.oneof(flatMapArb.map((m) => ({ body: encodeMessage(m).subarray(4), want: m })), flatBodyArb)
    fc.assert(fc.property(caseArb, ({ body, want }) => {
      runs++
      const r = throughReader(body)
      expect(r.outcomes, 'one outcome').toBe(1)
      if (body.length > PRE_AUTH_MAX_BYTES) { over++; expect(r.why).toMatch(/^a control message of \d+ bytes/); return }
      expect(r.why).toBeNull()
      expect(flatViolations(r.m)).toEqual([])
      expect(entries(r.m)).toEqual(entries(want))
    }), runFor(ms))
    note(`flat maps: ${runs} runs (${over} over 1 KiB) in ${ms} ms`)
    expect(runs).toBeGreaterThan(10)
  }, limit(budget(100)))

  it(`any mutation, truncation or extension of a flat map's body is a flat map or one error, as the model says; each within ` +
    `${FLAT_MS} ms (seed ${FUZZ_SEED})`, () => {
    const ms = budget(250)
    const protos = prototypeNames()
    const slow: string[] = []
    let runs = 0; let maps = 0; let worst = 0
    const baseArb = fc.oneof(flatBodyArb.map((f) => f.body), flatMapArb.map((m) => encodeMessage(m).subarray(4)))
    fc.assert(fc.property(baseArb, fc.array(flatMutationArb, { minLength: 1, maxLength: 4 }), (base, muts) => {
      runs++
      // (cut to the limit: every body reaches the decoder)
      const body = mutateBody(base, muts).subarray(0, PRE_AUTH_MAX_BYTES)
      let r = throughReader(body)
      let t = r.ms
      // (a slow one is timed once more: a pause of a shared machine is no slow input)
      if (t >= FLAT_MS) { r = throughReader(body); t = r.ms }
      if (t >= FLAT_MS && slow.length < 20) slow.push(`${body.toString('hex')}: ${t.toFixed(2)} ms`)
      worst = Math.max(worst, t)
      const what = body.toString('hex').slice(0, 400)
      expect(r.outcomes, `one outcome: ${what}`).toBe(1)
      const want = flatOrNull(body)
      if (want === null) {
        expect(r.why, what).toMatch(/^a control message that does not decode/)
      } else {
        maps++
        expect(r.why, what).toBeNull()
        expect(flatViolations(r.m), what).toEqual([])
        expect(flatForm(r.m), what).toBe(flatForm(want))
      }
    }), runFor(ms))
    note(`flat mutations: ${runs} runs (${maps} still flat maps), worst ${worst.toFixed(3)} ms, in ${ms} ms`)
    expect(slow, `decodes over ${FLAT_MS} ms twice`).toEqual([])
    expect(runs).toBeGreaterThan(10)
    expect(maps, 'some mutations leave a flat map').toBeGreaterThan(0)
    expect(maps, 'most mutations break the map').toBeLessThan(runs)
    expect(prototypeNames()).toBe(protos)
  }, limit(budget(250)))

  it(`the structured-clone and Error-extension bombs, and every fixed hostile body, are refused in well under 1 ms each on average`, () => {
    const inMap = (b: Buffer): Buffer => Buffer.concat([Buffer.from([0x82, 0xa1, 0x74, 0xa5, ...Buffer.from('hello'), 0xa1, 0x6d]), b]).subarray(0, PRE_AUTH_MAX_BYTES)
    const bombs: Array<[string, Buffer]> = [
      ['structured clone, 998 bytes', structuredCloneBomb(76)],
      ['Error extensions (d4 65 00 92 a1 45 a0) to 1 KiB', errorBomb()],
      ['structured clone as a map value', inMap(structuredCloneBomb(76))],
      ['Error extensions as a map value', inMap(errorBomb())],
      ...fixedHostileBodies(),
    ]
    expect(structuredCloneBomb(76).length).toBe(998)
    expect(errorBomb().length).toBeGreaterThan(PRE_AUTH_MAX_BYTES - 7)
    const REPS = 40
    const figures: string[] = []
    for (const [name, body] of bombs) {
      expect(body.length, name).toBeLessThanOrEqual(PRE_AUTH_MAX_BYTES)
      expect(flatOrNull(body), `${name}: the model refuses it`).toBeNull()
      const r = throughReader(body)
      expect(r.outcomes, name).toBe(1)
      expect(r.why, name).toMatch(/^a control message that does not decode/)
      // (the least mean of three batches: a pause of a shared machine is not the decoder's)
      let best = Infinity
      for (let batch = 0; batch < 3; batch++) {
        const t0 = performance.now()
        for (let i = 0; i < REPS; i++) throughReader(body)
        best = Math.min(best, (performance.now() - t0) / REPS)
      }
      figures.push(`${name}: ${(best * 1000).toFixed(1)} µs`)
      expect(best, `${name}: mean ms per refusal`).toBeLessThan(BOMB_MEAN_MS)
    }
    note(`bombs refused before the key (mean of ${REPS}):`, figures)
  })
})

describe('readMessages: hostile msgpack bodies of at most 1 KiB decode quickly', () => {
  it(`fixed cases, the structured-clone blowup (998 bytes) first: each fails or decodes within ${DECODE_MS} ms; no prototype polluted`, async () => {
    const protos = prototypeNames()
    const bomb = structuredCloneBomb(76)
    expect(bomb.length).toBe(998)
    const slow = new Suspects()
    for (const [name, body] of fixedHostileBodies()) {
      expect(body.length, name).toBeLessThanOrEqual(PRE_AUTH_MAX_BYTES)
      const { ms, outcome, again } = decodeOnce(body)
      note(`${name}: ${ms.toFixed(2)} ms, ${outcome}`)
      expect(outcome, name).toMatch(/^(message|error: .*)$/)
      if (ms >= DECODE_MS) slow.add(name, again)
      expectDecoderClean(name)
    }
    expect(await slow.confirm(DECODE_MS), 'decodes that took too long').toEqual([])
    expect(decodeOnce(bomb).outcome, 'the structured-clone case is refused').toMatch(/^error: a control message that does not decode/)
    expect(prototypeNames()).toBe(protos)
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined()
  })

  it(`every extension header (fixext 1-16, ext 8/16/32) with every type byte, with zero, 0xff and nested payloads: each within ${DECODE_MS} ms`, async () => {
    const protos = prototypeNames()
    const slow = new Suspects()
    const odd: string[] = []
    let n = 0
    const t0 = performance.now()
    // payload bytes, then what follows: nothing, nesting, bytes, what the error and regexp extensions read after them
    const variants: Array<[number, number[]]> = [[0x00, []], [0xff, []], [0x00, [0x91, 0x91, 0x92, 0xc0, 0xc0]], [0xff, new Array<number>(60).fill(0xff)],
      [0x41, [0x94, ...mstr('AggregateError'), ...mstr('m'), 0xc0, 0xa3, 0x61, 0x62, 0x63]], [0x00, [0x92, ...mstr('(a|a)*$'), ...mstr('g')]]]
    for (let type = 0; type < 256; type++) {
      for (const [head, size] of [[0xd4, 1], [0xd5, 2], [0xd6, 4], [0xd7, 8], [0xd8, 16], [0xc7, -1], [0xc8, -2], [0xc9, -4]] as const) {
        for (const [fill, tail] of variants) {
          const len = size > 0 ? size : 20
          const hdr = size > 0 ? [head, type] : size === -1 ? [head, len, type] : size === -2 ? [head, 0, len, type] : [head, 0, 0, 0, len, type]
          const body = Buffer.from([0x92, ...hdr, ...new Array<number>(len).fill(fill), ...tail].slice(0, PRE_AUTH_MAX_BYTES))
          const { ms, outcome, again } = decodeOnce(body)
          n++
          if (ms >= DECODE_MS) slow.add(body.toString('hex'), again)
          if (!/^(message|error: )/.test(outcome)) odd.push(`${body.toString('hex')}: ${outcome}`)
        }
      }
    }
    note(`extension sweep: ${n} bodies in ${(performance.now() - t0).toFixed(0)} ms`)
    expect(odd, 'one outcome each').toEqual([])
    expect(await slow.confirm(DECODE_MS), 'slow decodes').toEqual([])
    expectDecoderClean('after the sweep')
    expect(prototypeNames()).toBe(protos)
  }, 60_000)

  it(`fuzzed hostile bodies (headers, nesting, msgpackr's extensions, valid values, bytes): each within ${DECODE_MS} ms, ` +
    `one outcome each (seed ${FUZZ_SEED})`, async () => {
    const ms = budget(900)
    const protos = prototypeNames()
    const slow = new Suspects()
    let runs = 0; let worst = 0; let decoded = 0; let bytes = 0
    fc.assert(fc.property(hostileBodyArb(PRE_AUTH_MAX_BYTES), (body) => {
      runs++
      bytes += body.length
      const r = decodeOnce(body)
      worst = Math.max(worst, r.ms)
      if (r.outcome === 'message') decoded++
      expect(r.outcome).toMatch(/^(message|error: )/)
      if (r.ms >= DECODE_MS) slow.add(`seed ${FUZZ_SEED}, ${body.length} bytes: ${body.toString('hex')}`, r.again)
      if (runs % 64 === 0) expectDecoderClean('after a hostile body')
    }), runFor(ms))
    note(`hostile bodies: ${runs} runs (${decoded} decoded), ${bytes} bytes, worst ${worst.toFixed(2)} ms (${slow.size} timed again), in ${ms} ms`)
    expect(await slow.confirm(DECODE_MS), 'slow decodes').toEqual([])
    expect(prototypeNames()).toBe(protos)
    expectDecoderClean('after the fuzz')
    expect(runs).toBeGreaterThan(10)
  }, limit(budget(900)))
})

// ───────────────────────────── stream listeners ─────────────────────────────

/** What one round of strangers came to. */
interface Tally { connections: number, refusals: number, resets: number, answered: number, lostAnswers: number }

/**
 * Sends batches of 1-3 concurrent strangers (planArb, recipeArb) at `port` for `ms`, checking each
 * outcome: closed before its deadline, a challenge first (unless it reset), and then `refusal`
 * or nothing (for a reset: a prefix of those). The model says which connections must be refused
 * (a complete message, a prefix over the limit, a body that does not decode): `refusals`.
 */
async function strangers (port: number, l: Listener, refusal: Buffer, ms: number, seed: number): Promise<Tally> {
  const tally: Tally = { connections: 0, refusals: 0, resets: 0, answered: 0, lostAnswers: 0 }
  let other: Uint8Array = makeNonce()
  await fc.assert(fc.asyncProperty(fc.array(fc.tuple(planArb, recipeArb), { minLength: 1, maxLength: 3 }), async (batch) => {
    const outs = await Promise.all(batch.map(([plan, rc]) => stranger(port, plan, (c) => build(l, rc, c, other))))
    for (const [i, o] of outs.entries()) {
      const plan = batch[i]![0]
      tally.connections++
      const sent = `sent ${o.sent.toString('hex').slice(0, 400)} (${plan.waitChallenge ? 'after' : 'before'} the challenge, ${plan.finish})`
      expect(o.closed, `the listener closed the connection; ${sent}`).toBe(true)
      if (o.challenge !== null) other = o.challenge
      if (plan.finish === 'reset') {
        tally.resets++
        expect(refusal.subarray(0, o.answer.length).equals(o.answer), `answer ${o.answer.toString('hex')}; ${sent}`).toBe(true)
        continue
      }
      expect(o.challengeOk, `a challenge first; ${sent}`).toBe(true)
      const v = modelStream(o.sent, PRE_AUTH_MAX_BYTES)
      const refused = v.error || v.messages.length > 0
      if (refused) tally.refusals++
      if (o.answer.length > 0) tally.answered++
      if (refused && o.answer.length === 0 && refusal.length > 0) tally.lostAnswers++
      const allowed = refused ? [refusal.toString('hex'), ''] : ['']
      expect(allowed, `answer ${o.answer.toString('hex')}; ${sent}`).toContain(o.answer.toString('hex'))
    }
  }), runFor(ms, seed, true))
  return tally
}

/** A member with the key, emulated: joins the rendezvous as `rank`; resolves once welcomed (its proof checked). */
function member (port: number, key: Uint8Array, rank: number): Promise<{ sock: Socket, welcomed: boolean, later: unknown[] }> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: '127.0.0.1', port })
    cleanups.push(() => { sock.destroy() })
    const nonce = makeNonce()
    let challenge: Uint8Array | null = null
    const later: unknown[] = []
    let welcomed: boolean | null = null
    const timer = setTimeout(() => { sock.destroy(); reject(new Error(`member ${rank}: no welcome within 5 s`)) }, 5000)
    sock.on('error', () => {})
    sock.once('close', () => { clearTimeout(timer); reject(new Error(`member ${rank}: closed before the welcome`)) })
    const reader = readMessages(sock, (m) => {
      const o = m as Record<string, unknown>
      if (welcomed !== null) { later.push(m); return }
      if (o['t'] === 'challenge' && challenge === null && o['n'] instanceof Uint8Array) {
        challenge = o['n']
        sock.write(encodeMessage({ t: 'hello', rank, n: nonce, p: proof(key, 'join', challenge, nonce, rank) }))
      } else if (o['t'] === 'welcome' && challenge !== null) {
        welcomed = sameProof(o['p'], proof(key, 'rendezvous', challenge, nonce, rank))
        reader.setLimit(MAX_MESSAGE_BYTES)
        clearTimeout(timer)
        resolve({ sock, welcomed, later })
      } else { clearTimeout(timer); reject(new Error(`member ${rank}: ${JSON.stringify(m)}`)) }
    }, (why) => { clearTimeout(timer); reject(new Error(`member ${rank}: ${why}`)) })
  })
}

describe('the rendezvous, to strangers', () => {
  it(`fuzzed bytes and hello-like messages: each refused with {t:'refused'} or closed without a word, none welcomed; ` +
    `then both members join and get the job (seed ${FUZZ_SEED})`, async () => {
    const ms = budget(1300)
    const key = makeKey()
    const rv = await serveRendezvous({
      key, procs: 2, host: '127.0.0.1', port: 0, log, onFail: () => {}, onDone: () => {},
      job: { numTasks: 2, config: { ...DEFAULT_CONFIG }, label: false, graceMs: 1000, data: { fuzz: true } },
    })
    cleanups.push(() => rv.close())
    const l: Listener = {
      key,
      hello: (k, c, n, r) => proof(k, 'join', c, n, r),
      answer: (k, c, n, r) => proof(k, 'rendezvous', c, n, r),
      admits: (r) => typeof r === 'number' && Number.isInteger(r) && r >= 0 && r < 2,
    }
    const refusal = encodeMessage({ t: 'refused' })
    const tally = await strangers(rv.port, l, refusal, ms, FUZZ_SEED)
    const refusedNow = (): number => Number(/(\d+) connections? (?:were|was) refused/.exec(rv.waitingFor())?.[1] ?? 0)
    const refused = await quiet(refusedNow)
    const waiting = rv.waitingFor()
    note(`rendezvous: ${tally.connections} connections in ${ms} ms:`, tally, `refused ${refused}`)
    expect(waiting, 'no stranger joined').toMatch(/^processes 0, 1 never joined/)
    expect(refused, 'refusals counted').toBeGreaterThanOrEqual(tally.refusals)
    expect(refused, 'refusals counted').toBeLessThanOrEqual(tally.refusals + tally.resets)
    expect(tally.connections).toBeGreaterThan(5)

    // members with the key join; a stranger with a right proof for a rank taken is refused; the job goes out
    const m0 = await member(rv.port, key, 0)
    expect(m0.welcomed, 'the welcome proves the key').toBe(true)
    const dup = await stranger(rv.port, { waitChallenge: true, sizes: [1 << 20], finish: 'end' }, (c) => {
      const n = makeNonce()
      return encodeMessage({ t: 'hello', rank: 0, n, p: proof(key, 'join', c!, n, 0) })
    })
    expect(dup.answer.toString('hex'), 'a second rank 0 is refused').toBe(refusal.toString('hex'))
    const m1 = await member(rv.port, key, 1)
    expect(m1.welcomed).toBe(true)
    m0.sock.write(encodeMessage({ t: 'addr', host: '127.0.0.1', port: 1000 }))
    m1.sock.write(encodeMessage({ t: 'addr', host: '127.0.0.1', port: 1001 }))
    type Msg = Record<string, unknown>
    const job = (m: { later: unknown[] }): Msg | undefined => m.later.find((x) => (x as Msg)['t'] === 'job') as Msg | undefined
    expect(await until(() => job(m0) !== undefined && job(m1) !== undefined, 5000), 'both members get the job').toBe(true)
    expect(job(m0)!['table']).toEqual([{ host: '127.0.0.1', port: 1000 }, { host: '127.0.0.1', port: 1001 }])
    expect(job(m1)!['data']).toEqual({ fuzz: true })
    expect(rv.complete).toBe(true)
  }, limit(budget(1300)))
})

describe('the tcp transport\'s listener, to strangers', () => {
  it(`fuzzed bytes and hello-like messages: closed without a word and counted, no bytes to the frame path; ` +
    `then rank 1 with the key connects (seed ${FUZZ_SEED})`, async () => {
    // (rounds of at most 20 s: connect() gives up after 30 s)
    let left = budget(1100)
    for (let round = 0; left > 0; round++) {
      const ms = Math.min(left, 20_000)
      left -= ms
      const key = makeKey()
      const ts = [0, 1].map((rank) => {
        const t = new TcpTransport({ rank, size: 2, key, log })
        t.useShared(createStreamShared(2, 64 << 10))
        cleanups.push(() => t.close())
        return t
      })
      const table: PeerAddress[] = [await ts[0]!.listen(), await ts[1]!.listen()]
      let bytes = 0; const lost: string[] = []
      const c0 = ts[0]!.connect(table, { onBytes: (_p, _c, n) => { bytes += n }, onPeerLost: (p, why) => { lost.push(`${p}: ${why}`) } })
      c0.catch(() => { /* (settled below; a failure before then must not leave it unhandled) */ })
      const l: Listener = {
        key,
        hello: (k, c, n, r) => proof(k, 'tcp-connect', c, n, r, 0),
        answer: (k, c, n, r) => proof(k, 'tcp-accept', c, n, 0, r),
        admits: (r) => r === 1,
      }
      const tally = await strangers(table[0]!.port, l, Buffer.alloc(0), ms, FUZZ_SEED + round)
      const refused = await quiet(() => ts[0]!.stats().connectionsRefused)
      note(`tcp round ${round}: ${tally.connections} connections in ${ms} ms:`, tally, `refused ${refused}`)
      expect(tally.answered, 'no stranger is answered').toBe(0)
      expect(bytes, 'no stranger\'s bytes reach the frame path').toBe(0)
      expect(refused).toBeGreaterThanOrEqual(tally.refusals)
      expect(refused).toBeLessThanOrEqual(tally.refusals + tally.resets)
      expect(tally.connections).toBeGreaterThan(5)

      const c1 = ts[1]!.connect(table, { onBytes: () => {}, onPeerLost: () => {} })
      expect(await settle(Promise.all([c0, c1]), 10_000), 'rank 1 with the key connects').toBe('ok')
      expect(ts[0]!.stats().connectionsRefused, 'rank 1 was not refused').toBe(refused)
      expect(lost).toEqual([])
      await Promise.all(ts.map((t) => t.close()))
    }
  }, limit(budget(1100)))
})

// ───────────────────────────── udp handshake ─────────────────────────────

/** UdpTransport's insides the fuzz reaches (udp.ts): the handshake parser and what it keeps. */
interface UdpInside {
  events: unknown
  table: PeerAddress[]
  readyCount: number
  shakes: Array<{ mine: Buffer, ready: boolean, sock: unknown, theirs: Uint8Array | null }>
  onHandshake (b: Buffer, from: string): void
  sendHs (r: number, m: Record<string, unknown>): void
  refuse (from: string, why: string): void
  acceptorNonce (nj: Uint8Array, r: number): Buffer
}

const MAGIC = Buffer.from('AMLH')

type V = { k: 'absent' } | { k: 'v', v: unknown }
const vArb = (a: fc.Arbitrary<unknown>): fc.Arbitrary<V> =>
  fc.oneof({ arbitrary: fc.constant<V>({ k: 'absent' }), weight: 1 }, { arbitrary: a.map((v): V => ({ k: 'v', v })), weight: 8 })
const numArb = fc.oneof(fc.constantFrom(0, -1, 1, 64, 1024, 1472, 4096, 65507, 65535, 65536, 2 ** 32, 0.5, 1e300, Number.NaN, '1000', null), fc.integer())

interface UdpRecipe {
  kind: 'map' | 'hostile' | 'json' | 'bytes'
  /** A real peer's challenge (from 0), response (from 2) or welcome (from 0) but for its proof (`p`: tampered, wrong key, reflected). */
  near: 'no' | 'challenge' | 'response' | 'welcome'
  magic: 'ok' | 'wrong' | 'cut'
  t: V
  from: V
  to: V
  nj: 'mine' | 'nonce' | 'short' | 'long' | 'string' | 'absent' | 'number'
  ni: 'acceptor' | 'nonce' | 'absent' | 'mine' | 'long'
  port: V
  max: V
  win: V
  /** Sizes a real peer would send (so that a proof it took would be the only check left), or the fuzzed ones. */
  valid: boolean
  p: 'absent' | 'random' | 'wrongKey' | 'reflect' | 'tamper' | 'short' | 'string'
  tamper: 'nj' | 'ni' | 'from' | 'to' | 'port' | 'max' | 'win'
  extra: Record<string, unknown>
  pad: number
  nonce: Uint8Array
  random: Uint8Array
  hostile: Buffer
  json: unknown
  bytes: Uint8Array
}

const udpRecipeArb: fc.Arbitrary<UdpRecipe> = fc.record({
  kind: fc.oneof({ arbitrary: fc.constant('map' as const), weight: 8 }, fc.constantFrom('hostile' as const, 'json' as const, 'bytes' as const)),
  near: fc.constantFrom('no', 'no', 'no', 'no', 'challenge', 'response', 'welcome'),
  magic: fc.constantFrom('ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'wrong', 'cut'),
  t: vArb(fc.oneof({ arbitrary: fc.constantFrom('hello', 'challenge', 'response', 'welcome'), weight: 8 }, fc.constantFrom('other', 'HELLO', 1, null, true))),
  from: vArb(fc.oneof({ arbitrary: fc.constantFrom(0, 2), weight: 6 }, fc.constantFrom(1, 3, -1, 0.5, 2.5, '2', '0', Number.NaN, 2 ** 32, null), fc.integer())),
  to: vArb(fc.oneof({ arbitrary: fc.constant(1), weight: 8 }, fc.constantFrom(0, 2, '1', 1.5, null), fc.integer())),
  nj: fc.constantFrom('mine', 'mine', 'mine', 'nonce', 'nonce', 'short', 'long', 'string', 'absent', 'number'),
  ni: fc.constantFrom('acceptor', 'acceptor', 'acceptor', 'nonce', 'absent', 'mine', 'long'),
  port: vArb(numArb), max: vArb(numArb), win: vArb(numArb), valid: fc.oneof(fc.constant(true), fc.constant(true), fc.constant(false)),
  p: fc.constantFrom('absent', 'random', 'wrongKey', 'wrongKey', 'reflect', 'reflect', 'tamper', 'tamper', 'tamper', 'tamper', 'short', 'string'),
  tamper: fc.constantFrom('nj', 'ni', 'from', 'to', 'port', 'max', 'win'),
  // (flat extras mostly, so that a map reaches the checks after the decoder; some not flat)
  extra: fc.oneof({ arbitrary: fc.dictionary(fc.string({ maxLength: 4 }), flatValueArb, { maxKeys: 2 }), weight: 3 },
    fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 })),
  pad: fc.oneof({ arbitrary: fc.constant(0), weight: 3 }, fc.nat({ max: 250 }), fc.nat({ max: 1500 })),
  nonce: fc.uint8Array({ minLength: 16, maxLength: 16 }),
  random: fc.uint8Array({ minLength: 32, maxLength: 32 }),
  hostile: hostileBodyArb(2000),
  json: fc.jsonValue({ maxDepth: 3 }),
  bytes: fc.uint8Array({ maxLength: 2000 }),
})

/**
 * A handshake datagram from a recipe, to process `rank` (1 of 3) whose dialer nonce toward 0 is
 * `mine`. Proofs: a wrong key's over the right fields; the key's as this process itself would
 * make them (its own messages reflected); or the key's over the fields with one changed (a real
 * peer's message tampered with). None is a real peer's message.
 */
function udpDatagram (rc: UdpRecipe, key: Uint8Array, inside: UdpInside): Buffer {
  if (rc.near !== 'no') {
    const p = rc.p === 'wrongKey' || rc.p === 'reflect' ? rc.p : 'tamper'
    rc = {
      ...rc, kind: 'map', magic: 'ok', t: { k: 'v', v: rc.near }, from: { k: 'v', v: rc.near === 'response' ? 2 : 0 }, to: { k: 'v', v: 1 },
      nj: rc.near === 'response' ? 'nonce' : 'mine', ni: 'acceptor', valid: true, p, pad: 0,
    }
  }
  let body: Buffer
  if (rc.kind === 'hostile') body = rc.hostile
  else if (rc.kind === 'json') body = encodeMessage(rc.json).subarray(4)
  else if (rc.kind === 'bytes') return Buffer.from(rc.bytes)
  else {
    const mine = inside.shakes[0]!.mine
    const nonce = Buffer.from(rc.nonce)
    const nj: unknown = ({
      mine, nonce, short: nonce.subarray(0, 15), long: Buffer.concat([nonce, nonce]), string: nonce.toString('hex'), absent: undefined, number: 16,
    })[rc.nj]
    const njb = nj instanceof Uint8Array ? nj : nonce
    const from = rc.from.k === 'v' && typeof rc.from.v === 'number' ? rc.from.v : 2
    const ni: unknown = ({
      acceptor: inside.acceptorNonce(njb, from), nonce: Buffer.from(rc.random.subarray(0, 16)), absent: undefined, mine, long: Buffer.from(rc.random),
    })[rc.ni]
    const nib = ni instanceof Uint8Array ? ni : nonce
    if (rc.valid) { rc = { ...rc, port: { k: 'v', v: 40000 }, max: { k: 'v', v: 1472 }, win: { k: 'v', v: 16 } } }
    const num = (x: V): number => x.k === 'v' && typeof x.v === 'number' && Number.isInteger(x.v) ? x.v : -1
    const f = { nj: njb, ni: nib, from, to: 1, port: num(rc.port), max: num(rc.max), win: num(rc.win) }
    if (rc.p === 'tamper') {
      const g = f as Record<string, unknown>
      g[rc.tamper] = typeof g[rc.tamper] === 'number' ? (g[rc.tamper] as number) + 1 : Buffer.concat([g[rc.tamper] as Uint8Array, Buffer.from([0])])
    }
    const t = rc.t.k === 'v' ? rc.t.v : 'hello'
    const wrong = Buffer.alloc(key.length, 0x5a)
    const k = rc.p === 'wrongKey' ? wrong : key
    // the proof each step's receiver checks, and (reflect) what this process sends at the step before it
    const check = (): Buffer => t === 'challenge' ? proof(k, 'udp-accept', f.nj, f.ni, f.from, f.to, f.port, f.max, f.win)
      : t === 'response' ? proof(k, 'udp-connect', f.ni, f.nj, f.from, f.to, f.port, f.max, f.win)
        : proof(k, 'udp-welcome', f.ni, f.nj, f.from, f.to)
    const reflect = (): Buffer => t === 'challenge' ? proof(key, 'udp-accept', f.nj, f.ni, 1, 2, f.port, f.max, f.win)
      : t === 'response' ? proof(key, 'udp-connect', f.ni, f.nj, 1, 0, f.port, f.max, f.win)
        : proof(key, 'udp-welcome', f.ni, f.nj, 1, 2)
    const p: unknown = ({
      absent: undefined, random: Buffer.from(rc.random), wrongKey: check(), tamper: check(), reflect: reflect(),
      short: Buffer.from(rc.random.subarray(0, 8)), string: 'p',
    })[rc.p]
    const m: Record<string, unknown> = { ...rc.extra }
    const put = (name: string, v: V | { k: 'v', v: unknown }): void => { if (v.k === 'v' && v.v !== undefined) m[name] = v.v }
    put('t', rc.t); put('from', rc.from); put('to', rc.to); put('nj', { k: 'v', v: nj }); put('ni', { k: 'v', v: ni })
    put('port', rc.port); put('max', rc.max); put('win', rc.win); put('p', { k: 'v', v: p })
    if (rc.pad > 0) m['pad'] = 'x'.repeat(rc.pad)
    body = encodeMessage(m).subarray(4)
  }
  const magic = rc.magic === 'ok' ? MAGIC : rc.magic === 'wrong' ? Buffer.from(rc.random.subarray(0, 4)) : MAGIC.subarray(0, rc.pad % 4)
  return rc.magic === 'cut' ? magic : Buffer.concat([magic, body])
}

/**
 * What process 1 of 3 must do with handshake datagram `b` from a stranger: answer a well-formed hello
 * from rank 2 (stateless), else refuse it. Its body must be a flat map (`flatModel`: a stranger's).
 */
function udpVerdict (b: Buffer): 'answer' | 'refuse' {
  if (b.length < 5 || b.length > PRE_AUTH_MAX_BYTES || !b.subarray(0, 4).equals(MAGIC)) return 'refuse'
  const m = flatOrNull(b.subarray(4))
  if (m === null) return 'refuse'
  const from = m['from']; const nj = m['nj']
  return m['to'] === 1 && m['t'] === 'hello' && from === 2 && nj instanceof Uint8Array && nj.length === 16 ? 'answer' : 'refuse'
}

describe('the udp handshake, to strangers', () => {
  it(`fuzzed handshake datagrams (called directly, then some sent): each refused and counted, or a hello answered; within ${DECODE_MS} ms ` +
    `each; none over 1 KiB taken; no peer ready; then the job's three processes meet (seed ${FUZZ_SEED})`, async () => {
    const ms = budget(600)
    const msReal = budget(300)
    const key = makeKey()
    const us = [0, 1, 2].map((rank) => {
      const u = new UdpTransport({ rank, size: 3, key, log, mac: false, faults: null, peerTimeoutMs: 5000 })
      cleanups.push(() => u.close())
      return u
    })
    const table: PeerAddress[] = []
    for (const u of us) table.push(await u.listen())
    for (const [rank, u] of us.entries()) u.useShared(createDatagramShared(3, 128 << 10, rank, u.geometry()))
    const node = us[1]!
    const inside = node as unknown as UdpInside
    let bytes = 0
    const events = { onBytes: (_p: number, _c: Uint8Array, n: number) => { bytes += n }, onPeerLost: () => {} }
    // (what connect() sets, without its 30-second deadline: the fuzz may run longer)
    inside.events = events
    inside.table = table
    const sends: Array<{ r: number, t: unknown }> = []
    const sendHs = inside.sendHs.bind(node)
    inside.sendHs = (r, m) => { sends.push({ r, t: m['t'] }); sendHs(r, m) }
    // (refusals by source: other programs on this machine may send to a port that was theirs)
    const refusals: Array<{ from: string, why: string }> = []
    const refuse = inside.refuse.bind(node)
    inside.refuse = (from, why) => { refusals.push({ from, why }); refuse(from, why) }
    const refusedFrom = (...from: string[]): number => refusals.filter((x) => from.includes(x.from)).length
    const FROM = '127.0.0.1:9'
    const noneReady = (): void => {
      expect(inside.readyCount, 'no peer ready').toBe(0)
      expect(inside.shakes.map((s) => [s.ready, s.sock !== null, s.theirs !== null]).flat().every((x) => !x), 'no handshake state').toBe(true)
      expect(bytes, 'no bytes to the data path').toBe(0)
    }

    // called directly: fast, and each call's effect is its own
    const slow = new Suspects()
    let runs = 0; let answered = 0; let over = 0; let worst = 0
    fc.assert(fc.property(udpRecipeArb, (rc) => {
      runs++
      const b = udpDatagram(rc, key, inside)
      const want = udpVerdict(b)
      if (b.length > PRE_AUTH_MAX_BYTES) over++
      const r0 = node.stats().connectionsRefused
      sends.length = 0
      let tries = 0
      const t = timed(() => { tries++; inside.onHandshake(b, FROM) }, DECODE_MS)
      worst = Math.max(worst, t)
      const what = `${want}: ${b.toString('hex').slice(0, 600)} (${b.length} bytes)`
      if (t >= DECODE_MS) slow.add(`seed ${FUZZ_SEED}, ${what}`, () => inside.onHandshake(b, FROM))
      if (want === 'answer') {
        answered++
        expect(node.stats().connectionsRefused - r0, what).toBe(0)
        expect(sends, what).toEqual(new Array(tries).fill({ r: 2, t: 'challenge' }))
      } else {
        expect(node.stats().connectionsRefused - r0, what).toBe(tries)
        expect(sends, what).toEqual([])
      }
      noneReady()
    }), runFor(ms, FUZZ_SEED, true))
    note(`udp direct: ${runs} datagrams (${answered} hellos answered, ${over} over 1 KiB), worst ${worst.toFixed(2)} ms ` +
      `(${slow.size} timed again), in ${ms} ms`)
    expect(runs).toBeGreaterThan(10)
    expect(await slow.confirm(DECODE_MS), 'slow handshake datagrams').toEqual([])

    // real datagrams to its handshake port, one at a time
    const sock: DgramSocket = createSocket('udp4')
    cleanups.push(() => new Promise<void>((resolve) => { try { sock.close(() => resolve()) } catch { resolve() } }))
    sock.on('error', () => {})
    await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', resolve))
    const client = `127.0.0.1:${sock.address().port}`
    let real = 0
    await fc.assert(fc.asyncProperty(udpRecipeArb, async (rc) => {
      real++
      const b = udpDatagram(rc, key, inside)
      const want = udpVerdict(b)
      const r0 = refusedFrom(client)
      sends.length = 0
      sock.send(b, table[1]!.port, '127.0.0.1')
      const came = await until(() => refusedFrom(client) !== r0 || sends.length > 0, 2000)
      const what = `${want}: ${b.toString('hex').slice(0, 600)} (${b.length} bytes)`
      expect(came, `the datagram was taken: ${what}`).toBe(true)
      expect([refusedFrom(client) - r0, sends.length], what).toEqual(want === 'answer' ? [0, 1] : [1, 0])
      noneReady()
    }), runFor(msReal, FUZZ_SEED + 1, true))
    note(`udp real: ${real} datagrams in ${msReal} ms`)
    expect(real).toBeGreaterThan(5)

    // the job's processes, with the key, meet; none of their datagrams is refused
    delete (inside as Partial<UdpInside>).sendHs
    const peers = [table[0]!, table[2]!].map((a) => `${a.host}:${a.port}`)
    const ev = { onBytes: () => {}, onPeerLost: () => {} }
    const all = Promise.all(us.map((u, rank) => u.connect(table, rank === 1 ? events : ev)))
    expect(await settle(all, 10_000), 'the three processes meet').toBe('ok')
    expect(inside.readyCount).toBe(2)
    expect(refusals.filter((x) => peers.includes(x.from)), 'no real peer refused').toEqual([])
    const foreign = refusals.filter((x) => x.from !== FROM && x.from !== client && !peers.includes(x.from))
    if (foreign.length > 0) note(`udp: ${foreign.length} datagrams from other programs refused:`, foreign.slice(0, 5))
  }, limit(budget(600) + budget(300)))
})
