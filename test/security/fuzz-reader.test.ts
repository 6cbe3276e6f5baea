/**
 * Property-based fuzzing of the control-message reader, what faces strangers first, before they
 * prove the job key (docs/security.md):
 *
 *   - `readMessages`, the length-prefixed framing (fed directly, through a socket stand-in): any
 *     bytes in any chunking; the model of one buffer parsed at once says what it must make of them
 *     (before the key: flat maps only, `decodeFlat`'s rules; after `setLimit`: any msgpack value);
 *     its copying stays linear; every decode of a body of at most 1 KiB, however hostile
 *     (msgpackr's extensions, the structured-clone blowup among them), is quick.
 *   - `decodeFlat`, through a reader before the key: flat maps round-trip, any mutation of one is a
 *     flat map or an error as the model says, quickly; the bombs are refused (in microseconds, and
 *     the linear buffering's time: fuzz-reader.perf.test.ts, `npm run test:perf`).
 *
 * (The listeners that read with it, fuzzed by strangers' connections and datagrams, are
 * fuzz-listeners.test.ts's.) Each property is seeded (FUZZ_SEED) and runs for a time (FUZZ_MS per
 * property, for a longer run: `npm run test:fuzz`); FUZZ_VERBOSE=1 prints what each reached.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { PRE_AUTH_MAX_BYTES } from '#lapi-internal'
import { MAX_MESSAGE_BYTES, decodeBody, encodeMessage, readMessages } from '@amlapi/lapi/transport'
import {
  FakeSocket,
  chunkSizesArb,
  chunked,
  errorBomb,
  fixedHostileBodies,
  flatBodyArb,
  flatForm,
  flatMapArb,
  flatModel,
  flatMutationArb,
  flatOrNull,
  flatValueArb,
  flatViolations,
  framed,
  hostileBodyArb,
  mstr,
  modelStream,
  mutateBody,
  printerFor,
  prototypeNames,
  streamPieceArb,
  structuredCloneBomb,
  Suspects,
  timed,
} from './helpers/fuzz-msgpack.js'
import { DECODE_MS, FUZZ_SEED, budget, limit, note, runFor } from './helpers/fuzz-run.js'
import { bombs, flatOfSize, throughReader } from './helpers/reader-cases.js'

/** Bytes `Buffer.concat` copied while `f` ran (the only copying `readMessages` does). */
function copiedBy(f: () => void): number {
  const concat = Buffer.concat
  let copied = 0
  Buffer.concat = ((list: readonly Uint8Array[], total?: number) => {
    copied += total ?? list.reduce((n, b) => n + b.length, 0)
    return concat(list, total)
  }) as typeof Buffer.concat
  try {
    f()
  } finally {
    Buffer.concat = concat
  }
  return copied
}

/** One body through `readMessages` (prefixed, in one chunk): whether it decoded, how long it took (the least of up to 3 tries when slow), and a rerun. */
function decodeOnce(body: Buffer): { ms: number; outcome: string; again: () => void } {
  const msg = framed(body)
  let outcome = ''
  const again = (): void => {
    const sock = new FakeSocket()
    const seen: string[] = []
    readMessages(
      sock.sock,
      () => seen.push('message'),
      (why) => seen.push(`error: ${why.slice(0, 80)}`),
    )
    sock.feed(msg)
    outcome = seen.length === 1 ? seen[0]! : `${seen.length} outcomes: ${seen.join('; ')}`
  }
  const ms = timed(again, DECODE_MS)
  return { ms, outcome, again }
}

/** A message with every integer msgpackr could take for a record id: it decodes so after any hostile body. */
const REFERENCE = { t: 'hello', ids: Array.from({ length: 64 }, (_, i) => 64 + i), n: Buffer.alloc(16, 3) }
const REFERENCE_BYTES = encodeMessage(REFERENCE).subarray(4)
function expectDecoderClean(why: string): void {
  expect(decodeBody(REFERENCE_BYTES), `${why}: a later message decodes as it should`).toEqual(REFERENCE)
}

/** The longest one flat decode may take (timed once more when over), ms. */
const FLAT_MS = 5

/** A map's entries, Buffers as their bytes (what a flat map is compared by). */
function entries(m: unknown): Array<[string, unknown]> {
  if (m === null || typeof m !== 'object') return [['not a map', m]]
  return Object.keys(m).map((k) => {
    const v = (m as Record<string, unknown>)[k]
    return [k, v instanceof Uint8Array ? `bytes ${Buffer.from(v).toString('hex')}` : v]
  })
}

/** Scalars no flat map may hold: floats, integers past 32 bits, extensions (a date, a bigint), long strings and binaries. */
const badScalarArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.double({ noInteger: true }),
  fc.constantFrom(2 ** 32, -(2 ** 31) - 1, 2 ** 53, -(2 ** 53), 0.5, Infinity, Number.NaN),
  fc.date({ noInvalidDate: true }),
  fc.bigInt({ min: -(BigInt(2) ** BigInt(63)), max: BigInt(2) ** BigInt(64) - BigInt(1) }),
  fc.string({ unit: 'grapheme-ascii', minLength: 256, maxLength: 400 }),
  fc.uint8Array({ minLength: 256, maxLength: 300 }).map((b) => Buffer.from(b)),
)
/** Values no flat map may hold: those scalars, arrays, maps. */
const badValueArb: fc.Arbitrary<unknown> = fc.oneof(badScalarArb, fc.array(flatValueArb, { maxLength: 3 }), flatMapArb)

/**
 * Values that are no flat map: not a map (undefined among them: in a map, msgpackr leaves it out), a
 * map with a value not flat, more than 16 entries, a key over 32 characters.
 */
const generalArb: fc.Arbitrary<unknown> = fc.oneof(
  flatValueArb,
  badScalarArb,
  fc.array(flatValueArb, { maxLength: 4 }),
  fc.constant(undefined),
  fc.tuple(flatMapArb, fc.string({ unit: 'grapheme-ascii', maxLength: 6 }), badValueArb).map(([m, k, v]) => ({ ...m, [k]: v })),
  fc.dictionary(fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 6 }), flatValueArb, { minKeys: 17, maxKeys: 20 }),
  fc.tuple(flatMapArb, fc.string({ unit: 'grapheme-ascii', minLength: 33, maxLength: 60 }), flatValueArb).map(([m, k, v]) => ({ ...m, [k]: v })),
)

/** Any msgpack value msgpackr gives back equal (what a peer that proved the key may send). */
const anyValueArb: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.integer(),
    fc.maxSafeInteger(),
    fc.double().map((d) => (Object.is(d, -0) ? 0 : d)),
    fc.string({ unit: 'grapheme', maxLength: 40 }),
    fc.boolean(),
    fc.constant(null),
    fc.date({ noInvalidDate: true }),
    fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b)),
    fc.array(tie('value'), { maxLength: 6 }),
    fc.dictionary(
      fc.string({ unit: 'grapheme', maxLength: 8 }).filter((k) => k !== '__proto__'),
      tie('value'),
      { maxKeys: 6, noNullPrototype: true },
    ),
  ),
})).value

/** Whether `v` has a key `__proto__` anywhere (msgpackr gives it back as `__proto_`). */
function hasProtoKey(v: unknown): boolean {
  if (v === null || typeof v !== 'object' || v instanceof Uint8Array || v instanceof Date) return false
  return Object.keys(v).some((k) => k === '__proto__' || hasProtoKey((v as Record<string, unknown>)[k]))
}

describe('readMessages: the framing before the key', () => {
  it(
    `any bytes, in any chunking, stopped anywhere: what one buffer parsed at once gives; one error at most, then nothing; ` +
      `buffered < 4 + limit (seed ${FUZZ_SEED})`,
    () => {
      const ms = budget(700)
      let runs = 0
      let messages = 0
      let errors = 0
      let bytes = 0
      // (up to PRE_AUTH_MAX_BYTES the reader takes flat maps only; 4096: any msgpack, as after the key)
      const limitArb = fc.constantFrom<number | undefined>(undefined, undefined, 16, 300, 4096)
      fc.assert(
        fc.property(limitArb, fc.array(streamPieceArb(1024), { maxLength: 12 }), chunkSizesArb, fc.nat(), (lim, pieces, sizes, stopAt) => {
          runs++
          const max = lim ?? PRE_AUTH_MAX_BYTES
          const print = printerFor(max)
          const chunks = chunked(Buffer.concat(pieces), sizes)
          const k = stopAt % (chunks.length + 1)
          const fed = Buffer.concat(chunks.slice(0, k))
          bytes += fed.length
          const want = modelStream(fed, max)
          const sock = new FakeSocket()
          const got: string[] = []
          const why: string[] = []
          let late = 0
          const r = readMessages(
            sock.sock,
            (m) => {
              if (why.length > 0) late++
              got.push(print(m))
            },
            (w) => {
              if (why.length > 0) late++
              why.push(w)
            },
            lim,
          )
          const copied = copiedBy(() => {
            for (const c of chunks.slice(0, k)) sock.feed(c)
          })
          if (why.length > 0) expect(sock.listenerCount('data'), 'reading stops at an error').toBe(0)
          const rest = r.stop()
          for (const c of chunks.slice(k)) sock.feed(c)
          messages += got.length
          errors += why.length
          expect(got, 'the messages').toEqual(want.messages)
          expect(why.length, `errors: ${why.join('; ')}`).toBe(want.error ? 1 : 0)
          expect(late, 'nothing after an error').toBe(0)
          expect(Buffer.compare(rest, want.rest), 'what is left buffered').toBe(0)
          expect(rest.length).toBeLessThan(4 + max)
          expect(sock.listenerCount('data'), 'stop() stops reading').toBe(0)
          expect(copied, `bytes copied for ${fed.length} fed in ${k} chunks`).toBeLessThanOrEqual(3 * fed.length + 16)
        }),
        runFor(ms),
      )
      note(`stream: ${runs} runs, ${bytes} bytes, ${messages} messages, ${errors} errors in ${ms} ms`)
      expect(runs).toBeGreaterThan(10)
    },
    limit(budget(700)),
  )

  it(
    `a prefix over the limit is one error, at once, whatever follows (seed ${FUZZ_SEED})`,
    () => {
      let runs = 0
      const overArb = fc.integer({ min: 1, max: 0xffffffff - PRE_AUTH_MAX_BYTES })
      fc.assert(
        fc.property(overArb, fc.uint8Array({ maxLength: 64 }), chunkSizesArb, (over, tail, sizes) => {
          runs++
          const n = PRE_AUTH_MAX_BYTES + over
          const bytes = Buffer.concat([framed(Buffer.alloc(0), n), tail])
          const sock = new FakeSocket()
          const why: string[] = []
          let msgs = 0
          readMessages(
            sock.sock,
            () => {
              msgs++
            },
            (w) => why.push(w),
          )
          const chunks = chunked(bytes, sizes)
          let fedAt = -1
          for (const [i, c] of chunks.entries()) {
            sock.feed(c)
            if (why.length > 0 && fedAt < 0) fedAt = i
          }
          expect(why).toEqual([`a control message of ${n} bytes (at most ${PRE_AUTH_MAX_BYTES} here)`])
          expect(msgs).toBe(0)
          // (the error comes with the chunk that completes the prefix)
          expect(chunks.slice(0, fedAt + 1).reduce((x, c) => x + c.length, 0)).toBeGreaterThanOrEqual(4)
          expect(chunks.slice(0, fedAt).reduce((x, c) => x + c.length, 0)).toBeLessThan(4)
        }),
        runFor(budget(150)),
      )
      expect(runs).toBeGreaterThan(10)
    },
    limit(budget(150)),
  )

  it(
    `flat maps (encodeMessage's, and written by hand in every encoding the rules take) round-trip before the key under any chunking ` + `(seed ${FUZZ_SEED})`,
    () => {
      const ms = budget(150)
      const msgArb = fc.oneof(
        flatMapArb.map((m) => ({ bytes: encodeMessage(m), want: m })),
        flatBodyArb.map((f) => ({ bytes: framed(f.body), want: f.want })),
      )
      let runs = 0
      let total = 0
      fc.assert(
        fc.property(fc.array(msgArb, { minLength: 1, maxLength: 10 }), chunkSizesArb, (all, sizes) => {
          runs++
          // (a flat map over 1 KiB cannot come before the key)
          const msgs = all.filter((m) => m.bytes.length - 4 <= PRE_AUTH_MAX_BYTES)
          const sock = new FakeSocket()
          const got: unknown[] = []
          const why: string[] = []
          const r = readMessages(
            sock.sock,
            (m) => got.push(m),
            (w) => why.push(w),
          )
          for (const c of chunked(Buffer.concat(msgs.map((m) => m.bytes)), sizes)) sock.feed(c)
          total += got.length
          expect(why).toEqual([])
          expect(got.flatMap(flatViolations)).toEqual([])
          expect(got.map(entries)).toEqual(msgs.map((m) => entries(m.want)))
          expect(r.stop().length).toBe(0)
        }),
        runFor(ms),
      )
      note(`flat round trip: ${runs} runs, ${total} messages in ${ms} ms`)
      expect(runs).toBeGreaterThan(10)
    },
    limit(budget(150)),
  )

  it(
    `general values (arrays, nested maps, floats, extensions, long strings, too many or long keys) before the key: flat maps ` +
      `before them delivered, then one error, then nothing (seed ${FUZZ_SEED})`,
    () => {
      const ms = budget(100)
      let runs = 0
      let decodeErrors = 0
      fc.assert(
        fc.property(
          fc.array(flatMapArb, { maxLength: 3 }),
          generalArb,
          fc.array(flatMapArb, { maxLength: 3 }),
          chunkSizesArb,
          (before, general, after, sizes) => {
            runs++
            const head = before.map((m) => encodeMessage(m)).filter((b) => b.length - 4 <= PRE_AUTH_MAX_BYTES)
            const bad = encodeMessage(general)
            expect(flatOrNull(bad.subarray(4)), `the model takes ${fc.stringify(general)} as flat`).toBeNull()
            const sock = new FakeSocket()
            const got: unknown[] = []
            const why: string[] = []
            let late = 0
            readMessages(
              sock.sock,
              (m) => {
                if (why.length > 0) late++
                got.push(m)
              },
              (w) => {
                if (why.length > 0) late++
                why.push(w)
              },
            )
            for (const c of chunked(Buffer.concat([...head, bad, ...after.map((m) => encodeMessage(m))]), sizes)) sock.feed(c)
            expect(got.map(entries)).toEqual(head.map((b) => entries(flatModel(b.subarray(4)))))
            expect(why.length, why.join('; ')).toBe(1)
            expect(why[0]).toMatch(bad.length - 4 > PRE_AUTH_MAX_BYTES ? /^a control message of \d+ bytes/ : /^a control message that does not decode/)
            if (bad.length - 4 <= PRE_AUTH_MAX_BYTES) decodeErrors++
            expect(late, 'nothing after the error').toBe(0)
            expect(sock.listenerCount('data'), 'reading stops at the error').toBe(0)
          },
        ),
        runFor(ms),
      )
      note(`general before the key: ${runs} runs, ${decodeErrors} refused by the decoder in ${ms} ms`)
      expect(runs).toBeGreaterThan(10)
      expect(decodeErrors).toBeGreaterThan(runs / 2)
    },
    limit(budget(100)),
  )

  it(
    `after setLimit(MAX_MESSAGE_BYTES) (or a reader made so) any msgpack value round-trips under any chunking (seed ${FUZZ_SEED})`,
    () => {
      const ms = budget(150)
      let runs = 0
      let total = 0
      fc.assert(
        fc.property(
          fc.array(
            fc.oneof(
              anyValueArb,
              generalArb.filter((v) => !hasProtoKey(v)),
            ),
            { minLength: 1, maxLength: 10 },
          ),
          fc.boolean(),
          chunkSizesArb,
          (msgs, made, sizes) => {
            runs++
            // (raised by the first message, a flat hello, as a listener does once the peer proved the key: the next is taken with msgpackr at once)
            const hello = { t: 'hello', n: Buffer.alloc(16, 7) }
            const sock = new FakeSocket()
            const got: unknown[] = []
            const why: string[] = []
            const r = readMessages(
              sock.sock,
              (m) => {
                if (!made && got.length === 0) r.setLimit(MAX_MESSAGE_BYTES)
                got.push(m)
              },
              (w) => why.push(w),
              made ? MAX_MESSAGE_BYTES : undefined,
            )
            const stream = Buffer.concat([...(made ? [] : [encodeMessage(hello)]), ...msgs.map((m) => encodeMessage(m))])
            for (const c of chunked(stream, sizes)) sock.feed(c)
            total += got.length
            expect(why).toEqual([])
            expect(made ? got : got.slice(1)).toEqual(msgs)
            if (!made) expect(entries(got[0])).toEqual(entries(hello))
            expect(r.stop().length).toBe(0)
          },
        ),
        runFor(ms),
      )
      note(`round trip after the key: ${runs} runs, ${total} messages in ${ms} ms`)
      expect(runs).toBeGreaterThan(10)
    },
    limit(budget(150)),
  )

  it('buffering is linear: 1 MiB of small flat messages, and of 1 KiB ones, fed a byte at a time, each byte copied at most twice', () => {
    for (const size of [24, PRE_AUTH_MAX_BYTES]) {
      const one = flatOfSize(size)
      expect(one.length - 4).toBeLessThanOrEqual(PRE_AUTH_MAX_BYTES)
      expect(one.length - 4).toBeGreaterThanOrEqual(size - 8)
      const count = Math.ceil((1 << 20) / one.length)
      const stream = Buffer.concat(new Array<Buffer>(count).fill(one))
      const sock = new FakeSocket()
      let got = 0
      const why: string[] = []
      readMessages(
        sock.sock,
        () => {
          got++
        },
        (w) => why.push(w),
      )
      const copied = copiedBy(() => {
        for (let i = 0; i < stream.length; i++) sock.feed(stream.subarray(i, i + 1))
      })
      note(`linear: ${count} messages of ${one.length} bytes (${stream.length} bytes) a byte at a time: ${copied} bytes copied`)
      expect(why).toEqual([])
      expect(got).toBe(count)
      // (how long it takes: fuzz-reader.perf.test.ts)
      expect(copied, 'bytes copied').toBeLessThanOrEqual(2 * stream.length)
    }
  }, 60_000)
})

describe('decodeFlat, through a reader before the key', () => {
  it(
    `every flat map fast-check makes decodes to an equal map with a null prototype: encodeMessage's body, and one written by ` +
      `hand in any encoding the rules take (seed ${FUZZ_SEED})`,
    () => {
      const ms = budget(100)
      let runs = 0
      let over = 0
      const caseArb = fc.oneof(
        flatMapArb.map((m) => ({ body: encodeMessage(m).subarray(4), want: m })),
        flatBodyArb,
      )
      fc.assert(
        fc.property(caseArb, ({ body, want }) => {
          runs++
          const r = throughReader(body)
          expect(r.outcomes, 'one outcome').toBe(1)
          if (body.length > PRE_AUTH_MAX_BYTES) {
            over++
            expect(r.why).toMatch(/^a control message of \d+ bytes/)
            return
          }
          expect(r.why).toBeNull()
          expect(flatViolations(r.m)).toEqual([])
          expect(entries(r.m)).toEqual(entries(want))
        }),
        runFor(ms),
      )
      note(`flat maps: ${runs} runs (${over} over 1 KiB) in ${ms} ms`)
      expect(runs).toBeGreaterThan(10)
    },
    limit(budget(100)),
  )

  it(
    `any mutation, truncation or extension of a flat map's body is a flat map or one error, as the model says; each within ` +
      `${FLAT_MS} ms (seed ${FUZZ_SEED})`,
    () => {
      const ms = budget(250)
      const protos = prototypeNames()
      const slow: string[] = []
      let runs = 0
      let maps = 0
      let worst = 0
      const baseArb = fc.oneof(
        flatBodyArb.map((f) => f.body),
        flatMapArb.map((m) => encodeMessage(m).subarray(4)),
      )
      fc.assert(
        fc.property(baseArb, fc.array(flatMutationArb, { minLength: 1, maxLength: 4 }), (base, muts) => {
          runs++
          // (cut to the limit: every body reaches the decoder)
          const body = mutateBody(base, muts).subarray(0, PRE_AUTH_MAX_BYTES)
          let r = throughReader(body)
          let t = r.ms
          // (a slow one is timed once more: a pause of a shared machine is no slow input)
          if (t >= FLAT_MS) {
            r = throughReader(body)
            t = r.ms
          }
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
        }),
        runFor(ms),
      )
      note(`flat mutations: ${runs} runs (${maps} still flat maps), worst ${worst.toFixed(3)} ms, in ${ms} ms`)
      expect(slow, `decodes over ${FLAT_MS} ms twice`).toEqual([])
      expect(runs).toBeGreaterThan(10)
      expect(maps, 'some mutations leave a flat map').toBeGreaterThan(0)
      expect(maps, 'most mutations break the map').toBeLessThan(runs)
      expect(prototypeNames()).toBe(protos)
    },
    limit(budget(250)),
  )

  it('the structured-clone and Error-extension bombs, and every fixed hostile body, are refused', () => {
    // (in well under 1 ms each on average: fuzz-reader.perf.test.ts, `npm run test:perf`)
    expect(structuredCloneBomb(76).length).toBe(998)
    expect(errorBomb().length).toBeGreaterThan(PRE_AUTH_MAX_BYTES - 7)
    for (const [name, body] of bombs()) {
      expect(body.length, name).toBeLessThanOrEqual(PRE_AUTH_MAX_BYTES)
      expect(flatOrNull(body), `${name}: the model refuses it`).toBeNull()
      const r = throughReader(body)
      expect(r.outcomes, name).toBe(1)
      expect(r.why, name).toMatch(/^a control message that does not decode/)
    }
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
    const variants: Array<[number, number[]]> = [
      [0x00, []],
      [0xff, []],
      [0x00, [0x91, 0x91, 0x92, 0xc0, 0xc0]],
      [0xff, new Array<number>(60).fill(0xff)],
      [0x41, [0x94, ...mstr('AggregateError'), ...mstr('m'), 0xc0, 0xa3, 0x61, 0x62, 0x63]],
      [0x00, [0x92, ...mstr('(a|a)*$'), ...mstr('g')]],
    ]
    for (let type = 0; type < 256; type++) {
      for (const [head, size] of [
        [0xd4, 1],
        [0xd5, 2],
        [0xd6, 4],
        [0xd7, 8],
        [0xd8, 16],
        [0xc7, -1],
        [0xc8, -2],
        [0xc9, -4],
      ] as const) {
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

  it(
    `fuzzed hostile bodies (headers, nesting, msgpackr's extensions, valid values, bytes): each within ${DECODE_MS} ms, ` +
      `one outcome each (seed ${FUZZ_SEED})`,
    async () => {
      const ms = budget(900)
      const protos = prototypeNames()
      const slow = new Suspects()
      let runs = 0
      let worst = 0
      let decoded = 0
      let bytes = 0
      fc.assert(
        fc.property(hostileBodyArb(PRE_AUTH_MAX_BYTES), (body) => {
          runs++
          bytes += body.length
          const r = decodeOnce(body)
          worst = Math.max(worst, r.ms)
          if (r.outcome === 'message') decoded++
          expect(r.outcome).toMatch(/^(message|error: )/)
          if (r.ms >= DECODE_MS) slow.add(`seed ${FUZZ_SEED}, ${body.length} bytes: ${body.toString('hex')}`, r.again)
          if (runs % 64 === 0) expectDecoderClean('after a hostile body')
        }),
        runFor(ms),
      )
      note(`hostile bodies: ${runs} runs (${decoded} decoded), ${bytes} bytes, worst ${worst.toFixed(2)} ms (${slow.size} timed again), in ${ms} ms`)
      expect(await slow.confirm(DECODE_MS), 'slow decodes').toEqual([])
      expect(prototypeNames()).toBe(protos)
      expectDecoderClean('after the fuzz')
      expect(runs).toBeGreaterThan(10)
    },
    limit(budget(900)),
  )
})
