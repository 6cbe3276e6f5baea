/**
 * What the fuzz tests (test/security/fuzz.test.ts) feed the control-message parsers: hostile
 * msgpack bodies (huge headers, deep nesting, every extension, msgpackr's own extensions), length
 * prefixed streams of them, and a model of `readMessages` to check the parser against; the seed
 * and time budget they run with; a socket stand-in and a timer for single decodes.
 */
import { EventEmitter } from 'node:events'
import type { Socket } from 'node:net'
import fc from 'fast-check'
import { decodeBody, encodeMessage } from '@amlapi/lapi/transport'

/** The seed of every property (FUZZ_SEED overrides), and the time budget of one, ms (FUZZ_MS overrides `dflt`). */
export const FUZZ_SEED = Number(process.env['FUZZ_SEED'] ?? 20250607)
export const budget = (dflt: number): number => Number(process.env['FUZZ_MS'] ?? dflt)
/** Figures for a reader of the run (FUZZ_VERBOSE=1), not for the assertions. */
export const note = (...a: unknown[]): void => { if (process.env['FUZZ_VERBOSE'] === '1') console.log('[fuzz]', ...a) }

/**
 * fast-check's settings for a property of budget `ms`: seeded, stopped by time rather than count.
 * `stateful`: the property acts on something that outlives a run (a listener): the first failure
 * is reported as it is, not shrunk (a shrunk run would fail for the state the first one left).
 */
export function runFor (ms: number, seed = FUZZ_SEED, stateful = false): fc.Parameters<unknown> {
  return { seed, numRuns: 100_000_000, plugins: [fc.interruptAfterTimeLimit(ms)], markInterruptAsFailure: false, endOnFailure: stateful }
}

const be16 = (n: number): number[] => [(n >>> 8) & 255, n & 255]
const be32 = (n: number): number[] => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]
/** A msgpack str of `s` (its UTF-8 bytes cut to 255). */
export const mstr = (s: string): number[] => {
  const b = [...Buffer.from(s).subarray(0, 255)]
  return b.length < 32 ? [0xa0 | b.length, ...b] : [0xd9, b.length, ...b]
}

/**
 * The reproduction of msgpackr's structured-clone blowup (0x69 id / 0x70 pointer): `def(k)` is an
 * id'd pair of the value of id k-1 and a pointer to it, so the value has 2^k leaves; def(76) and a
 * trailing byte, 998 bytes, made msgpackr expand it on its error path (seconds, or out of memory).
 */
export function structuredCloneBomb (depth = 76): Buffer {
  const def = (k: number): number[] => k === 0
    ? [0xd6, 0x69, ...be32(0), 0x92, 0xc0, 0xc0]
    : [0xd6, 0x69, ...be32(k), 0x92, ...def(k - 1), 0xd6, 0x70, ...be32(k - 1)]
  return Buffer.from([...def(depth), 0xc0])
}

/** Fixed hostile bodies (each at most 1 KiB), besides what the arbitraries make. */
export function fixedHostileBodies (): Array<[string, Buffer]> {
  const out: Array<[string, Buffer]> = []
  out.push(['structured clone, 998 bytes', structuredCloneBomb(76)])
  out.push(['structured clone, no trailing byte', structuredCloneBomb(76).subarray(0, -1)])
  for (const d of [1, 8, 30, 60]) out.push([`structured clone, depth ${d}`, structuredCloneBomb(d)])
  // a pointer to an id never defined, and an id whose value is a pointer to itself
  out.push(['structured clone, dangling pointer', Buffer.from([0xd6, 0x70, ...be32(7)])])
  out.push(['structured clone, self pointer', Buffer.from([0xd6, 0x69, ...be32(1), 0xd6, 0x70, ...be32(1)])])
  // records: one 250-char key, then as many 2-byte instances as fit, then a trailing byte (the
  // "end of buffer not reached" error path makes a JSON view of the whole value)
  const key = mstr('k'.repeat(250))
  const n = Math.floor((1024 - 3 - 3 - 2 - key.length - 1 - 1) / 2)
  out.push(['records, long key, many instances', Buffer.from([0xdc, ...be16(n + 1), 0xd4, 0x72, 0x40, 0x91, ...key, 0xc0,
    ...new Array<number>(n).fill(0).flatMap(() => [0x40, 0xc0]), 0xc0].slice(0, 1024))])
  // records: many structures defined and used past the threshold where msgpackr compiles a reader
  const defs: number[] = []
  for (let id = 0; id < 40; id++) defs.push(0xd4, 0x72, id, 0x91, ...mstr(`f${id}`), 0xc0, 0x40 + id, 0xc0, 0x40 + id, 0xc0, 0x40 + id, 0xc0, 0x40 + id, 0xc0)
  out.push(['records, 40 compiled readers', Buffer.from([0xdc, ...be16(200), ...defs].slice(0, 1024))])
  // nesting as deep as 1 KiB allows, of arrays, maps, sets and errors
  out.push(['1020 nested arrays', Buffer.from([...new Array<number>(1020).fill(0x91), 0xc0])])
  out.push(['340 nested maps', Buffer.from([...new Array<number>(340).fill(0).flatMap(() => [0x81, 0xa1, 0x61]), 0xc0])])
  out.push(['255 nested sets', Buffer.from([...new Array<number>(255).fill(0).flatMap(() => [0xd4, 0x73, 0x00, 0x91]), 0xc0])])
  out.push(['nested errors', Buffer.from([...new Array<number>(120).fill(0).flatMap(() => [0xd4, 0x65, 0x00, 0x93, ...mstr('E'), 0xa0]), 0xc0].slice(0, 1024))])
  // errors named by the error inside them, 255 deep: each is made a string for its lookup, the
  // whole chain below it (quadratic: the costliest 1 KiB body found, some 15-20 ms)
  out.push(['error chain, 255 deep', Buffer.from([...new Array<number>(255).fill(0).flatMap(() => [0xd4, 0x65, 0x00, 0x91]), 0xc0])])
  // headers that promise far more than the body holds
  for (const h of [[0xdd, ...be32(0xffffffff)], [0xdf, ...be32(0xffffffff)], [0xdb, ...be32(0xffffffff)], [0xc6, ...be32(0xffffffff)],
    [0xc9, ...be32(0xffffffff), 0x74], [0xdc, 0xff, 0xff], [0xde, 0xff, 0xff]]) {
    out.push([`header ${Buffer.from(h).toString('hex')}`, Buffer.from([...h, ...new Array<number>(1000).fill(0xc0)].slice(0, 1024))])
  }
  // an array of 1000 huge-array headers (each fails at once, the first one ends it)
  const headers = new Array<number>(200).fill(0).flatMap(() => [0xdd, ...be32(0x7fffffff)])
  out.push(['array of array32 headers', Buffer.from([0xdc, ...be16(200), ...headers].slice(0, 1024))])
  // a bundled-string extension pointing far outside the body, and string references into it
  out.push(['bundled strings, far', Buffer.from([0xd6, 0x62, ...be32(0x7fffffff), 0x92, 0xc1, 0x7f, 0xc1, 0x7f])])
  out.push(['bundled strings, refs', Buffer.from([0xd6, 0x62, ...be32(20), 0xdc, ...be16(300), ...new Array<number>(300).fill(0).flatMap(() => [0xc1, 0x7f]),
    ...mstr('x'.repeat(100)), ...mstr('y'.repeat(100))].slice(0, 1024))])
  // a 1000-byte bigint, typed arrays of every code, an AggregateError over a long string
  out.push(['bigint 1000 bytes', Buffer.from([0xc8, ...be16(1000), 0x42, ...new Array<number>(1000).fill(0xff)])])
  for (let code = 0; code < 20; code++) {
    out.push([`typed array code ${code}`, Buffer.from([0xc8, ...be16(1001), 0x74, code, ...new Array<number>(1000).fill(7)])])
  }
  const longStr = [0xda, ...be16(900), ...new Array<number>(900).fill(0x61)]
  out.push(['AggregateError over a string', Buffer.from([0xd4, 0x65, 0x00, 0x94, ...mstr('AggregateError'), 0xa0, 0xc0, ...longStr])])
  for (const name of ['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', 'AggregateError', 'Error']) {
    out.push([`error named ${name}`, Buffer.from([0xd4, 0x65, 0x00, 0x93, ...mstr(name), ...mstr('m'), 0xc0])])
  }
  // a regular expression that would backtrack forever, were anything to run it
  out.push(['regexp', Buffer.from([0xd4, 0x78, 0x00, 0x92, ...mstr('^(a+)+$'), ...mstr('gimsuy')])])
  // keys that would pollute prototypes
  out.push(['__proto__ keys', Buffer.from([0x83, ...mstr('__proto__'), 0x81, ...mstr('polluted'), 0xc3,
    ...mstr('constructor'), 0x81, ...mstr('prototype'), 0x81, ...mstr('polluted'), 0xc3, ...mstr('t'), ...mstr('hello')])])
  out.push(['__proto__ record', Buffer.from([0xd4, 0x72, 0x40, 0x92, ...mstr('__proto__'), ...mstr('t'), 0x81, ...mstr('polluted'), 0xc3, ...mstr('hello')])])
  return out
}

const lenArb = fc.oneof(
  fc.constantFrom(0, 1, 2, 15, 16, 31, 32, 127, 128, 255, 256, 1023, 1024, 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xffffffff),
  fc.nat({ max: 1100 }),
)

/** One piece of a hostile body: a header, an extension, nesting, a valid value, bytes. */
const fragmentArb: fc.Arbitrary<number[]> = fc.oneof(
  // containers, strings, bins and exts with every length encoding
  fc.tuple(fc.constantFrom(0xdc, 0xde, 0xda, 0xc5), lenArb).map(([t, n]) => [t, ...be16(n)]),
  fc.tuple(fc.constantFrom(0xdd, 0xdf, 0xdb, 0xc6), lenArb).map(([t, n]) => [t, ...be32(n)]),
  fc.tuple(fc.constantFrom(0xd9, 0xc4), lenArb).map(([t, n]) => [t, n & 255]),
  // every extension header, with every type byte (and a payload, sometimes short)
  fc.tuple(fc.constantFrom(0xd4, 0xd5, 0xd6, 0xd7, 0xd8), fc.integer({ min: 0, max: 255 }), fc.uint8Array({ maxLength: 20 }))
    .map(([h, type, p]) => [h, type, ...p]),
  fc.tuple(fc.constantFrom(0xc7, 0xc8, 0xc9), lenArb, fc.integer({ min: 0, max: 255 }), fc.uint8Array({ maxLength: 40 }))
    .map(([h, n, type, p]) => [h, ...(h === 0xc7 ? [n & 255] : h === 0xc8 ? be16(n) : be32(n)), type, ...p]),
  // msgpackr's extensions, by hand: record definitions and uses, ids and pointers, string
  // bundles, bigints, typed arrays, errors, regexps, sets, dates, undefined
  fc.tuple(fc.integer({ min: 0, max: 255 }), fc.array(fc.string({ maxLength: 12 }), { maxLength: 6 }))
    .map(([id, keys]) => [0xd4, 0x72, id, 0x90 | keys.length, ...keys.flatMap(mstr)]),
  fc.integer({ min: 0x40, max: 0x7f }).map((t) => [t]),
  fc.tuple(fc.constantFrom(0x69, 0x70), fc.oneof(fc.nat({ max: 80 }), fc.nat())).map(([t, id]) => [0xd6, t, ...be32(id)]),
  fc.tuple(lenArb).map(([n]) => [0xd6, 0x62, ...be32(n)]),
  fc.tuple(fc.integer({ min: -200, max: 200 })).map(([n]) => [0xc1, n & 255]),
  fc.uint8Array({ maxLength: 200 }).map((p) => [0xc7, p.length, 0x42, ...p]),
  fc.tuple(fc.integer({ min: 0, max: 255 }), fc.uint8Array({ maxLength: 100 })).map(([code, p]) => [0xc7, p.length + 1, 0x74, code, ...p]),
  fc.tuple(fc.constantFrom('Error', 'AggregateError', 'TypeError', 'constructor', '__proto__', 'toString', 'valueOf', 'x'), fc.nat({ max: 4 }))
    .map(([name, k]) => [0xd4, 0x65, 0x00, 0x90 | k, ...(k > 0 ? mstr(name) : [])]),
  fc.tuple(fc.string({ maxLength: 30 }), fc.string({ maxLength: 8 })).map(([p, f]) => [0xd4, 0x78, 0x00, 0x92, ...mstr(p), ...mstr(f)]),
  fc.constantFrom<number[]>([0xd4, 0x73, 0x00], [0xd4, 0x00, 0x00], [0xd6, 0xff, 0xff, 0xff, 0xff, 0xff], [0xd7, 0xff, ...new Array<number>(8).fill(0xff)],
    [0xc7, 12, 0xff, ...new Array<number>(12).fill(0x80)], [0xc1]),
  // nesting
  fc.tuple(fc.constantFrom<number[]>([0x91], [0x81, 0xa1, 0x74], [0xd4, 0x73, 0x00, 0x91], [0xdc, 0x00, 0x01], [0xd4, 0x65, 0x00, 0x91]),
    fc.integer({ min: 1, max: 400 }))
    .map(([p, k]) => new Array<number[]>(k).fill(p).flat()),
  // small valid values, and raw bytes
  fc.jsonValue({ maxDepth: 3 }).map((v) => [...encodeBodySafe(v)]),
  fc.uint8Array({ maxLength: 64 }).map((b) => [...b]),
  fc.integer({ min: 0, max: 255 }).map((b) => [b]),
)

/** A hostile body of at most `max` bytes (a concatenation of fragments, cut). */
export const hostileBodyArb = (max = 1024): fc.Arbitrary<Buffer> =>
  fc.array(fragmentArb, { maxLength: 30 }).map((fs) => Buffer.from(fs.flat().slice(0, max)))

function encodeBodySafe (v: unknown): Buffer {
  const m = encodeMessage(v)
  return m.subarray(4)
}

/** A length-prefixed message of `body`, its prefix `n` (default: the body's length). */
export function framed (body: Uint8Array, n = body.length): Buffer {
  const out = Buffer.allocUnsafe(4 + body.length)
  out.writeUInt32LE(n >>> 0, 0)
  out.set(body, 4)
  return out
}

/** A piece of a byte stream: a well-formed message, a hostile one, a bad prefix, bytes. */
export const streamPieceArb = (limit: number): fc.Arbitrary<Buffer> => fc.oneof(
  fc.jsonValue({ maxDepth: 2 }).map((v) => encodeMessage(v)),
  hostileBodyArb(Math.min(limit, 300)).map((b) => framed(b)),
  fc.tuple(fc.constantFrom(limit, limit + 1, 0xffffffff, 0, 1, 4), fc.uint8Array({ maxLength: 40 })).map(([n, b]) => framed(b, n)),
  fc.uint8Array({ maxLength: 48 }).map((b) => Buffer.from(b)),
)

/** Cuts `bytes` into chunks of the given sizes, cycled (as a socket may deliver them). */
export function chunked (bytes: Buffer, sizes: readonly number[]): Buffer[] {
  const out: Buffer[] = []
  let at = 0
  for (let i = 0; at < bytes.length; i++) {
    const n = Math.max(1, sizes[i % sizes.length] ?? bytes.length)
    out.push(bytes.subarray(at, at + n))
    at += n
  }
  return out
}

export const chunkSizesArb: fc.Arbitrary<readonly number[]> = fc.oneof(
  fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 8 }),
  fc.array(fc.integer({ min: 1, max: 2000 }), { minLength: 1, maxLength: 8 }),
  fc.constant([1]),
  fc.constant([1 << 20]),
)

/** What `readMessages` must make of a stream, whatever its chunking: its messages, whether it failed, what is left. */
export interface StreamVerdict { messages: string[], error: boolean, rest: Buffer }

/** The model: the stream parsed as one buffer, messages fingerprinted. */
export function modelStream (bytes: Buffer, limit: number): StreamVerdict {
  const messages: string[] = []
  let at = 0
  while (bytes.length - at >= 4) {
    const n = bytes.readUInt32LE(at)
    if (n > limit) return { messages, error: true, rest: Buffer.alloc(0) }
    if (bytes.length - at < 4 + n) break
    let m: unknown
    try { m = decodeBody(bytes.subarray(at + 4, at + 4 + n)) } catch { return { messages, error: true, rest: Buffer.alloc(0) } }
    messages.push(fingerprint(m))
    at += 4 + n
  }
  return { messages, error: false, rest: bytes.subarray(at) }
}

/** A short text of a decoded value that two decodes of the same bytes share (no stacks, no identities). */
export function fingerprint (v: unknown, depth = 0): string {
  if (depth > 4) return '…'
  if (v === null || v === undefined) return String(v)
  switch (typeof v) {
    case 'number': return Object.is(v, -0) ? '-0' : String(v)
    case 'string': return JSON.stringify(v.length > 40 ? v.slice(0, 40) + `…${v.length}` : v)
    case 'bigint': return `${v}n`
    case 'object': break
    default: return `${typeof v}:${String(v)}`
  }
  if (v instanceof Error) return `${v.name}(${JSON.stringify(v.message)})`
  if (ArrayBuffer.isView(v)) return `${v.constructor.name}[${v.byteLength}]${Buffer.from(v.buffer, v.byteOffset, Math.min(v.byteLength, 16)).toString('hex')}`
  if (v instanceof Date || v instanceof RegExp) return `${v.constructor.name}(${String(v)})`
  if (v instanceof Map || v instanceof Set) return `${v.constructor.name}{${[...v.entries()].slice(0, 8).map((e) => fingerprint(e, depth + 1)).join(',')}}`
  if (Array.isArray(v)) return `[${v.slice(0, 8).map((x) => fingerprint(x, depth + 1)).join(',')}${v.length > 8 ? `…${v.length}` : ''}]`
  const keys = Object.keys(v)
  return `{${keys.slice(0, 8).map((k) => `${JSON.stringify(k)}:${fingerprint((v as Record<string, unknown>)[k], depth + 1)}`).join(',')}}`
}

/** An object with the `on`/`off` of a socket (all `readMessages` uses), to feed bytes to directly. */
export class FakeSocket extends EventEmitter {
  get sock (): Socket { return this as unknown as Socket }
  feed (chunk: Buffer): void { this.emit('data', chunk) }
}

/**
 * Runs `f` and returns its time, ms; a time over `boundMs` is taken again (up to twice more) and
 * the least kept, so that a pause of a shared machine is not taken for a slow input.
 */
export function timed (f: () => void, boundMs: number): number {
  let best = Infinity
  for (let i = 0; i < 3 && best > boundMs; i++) {
    const t0 = performance.now()
    f()
    best = Math.min(best, performance.now() - t0)
  }
  return best
}

/**
 * Inputs that took longer than a bound (after `timed`'s tries), to be timed again later, spaced
 * out (a machine shared with other work can be slow for a while): only those still slow then
 * fail the test. At most 20 are kept.
 */
export class Suspects {
  private readonly list: Array<{ what: string, run: () => void }> = []
  add (what: string, run: () => void): void { if (this.list.length < 20) this.list.push({ what, run }) }
  get size (): number { return this.list.length }
  /** The suspects still over `boundMs` at their best of 10 tries 30 ms apart, with that time. */
  async confirm (boundMs: number): Promise<string[]> {
    const slow: string[] = []
    for (const s of this.list) {
      let best = Infinity
      for (let i = 0; i < 10 && best >= boundMs; i++) {
        await new Promise((resolve) => setTimeout(resolve, 30))
        const t0 = performance.now()
        s.run()
        best = Math.min(best, performance.now() - t0)
      }
      if (best >= boundMs) slow.push(`${s.what}: ${best.toFixed(0)} ms`)
    }
    return slow
  }
}

/** Own property names of the built-in prototypes a decoded key could pollute. */
export function prototypeNames (): string {
  return [Object.prototype, Array.prototype, Function.prototype].map((p) => Object.getOwnPropertyNames(p).sort().join(',')).join('|')
}
