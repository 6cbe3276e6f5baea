/**
 * What the fuzz tests (test/security/fuzz-reader.test.ts, fuzz-listeners.test.ts) feed the
 * control-message parsers: hostile msgpack bodies (huge headers, deep nesting, every extension,
 * msgpackr's own extensions), flat maps (what a peer that has not proved the key may send) and
 * their mutations, length prefixed streams of them, and a model of `readMessages` to check the
 * parser against (the flat rules up to PRE_AUTH_MAX_BYTES, msgpackr above); a socket stand-in and
 * a timer for single decodes. (The seed and time budget they run with: fuzz-run.ts.)
 */
import { EventEmitter } from 'node:events'
import type { Socket } from 'node:net'
import fc from 'fast-check'
import { PRE_AUTH_MAX_BYTES } from '#lapi-internal'
import { decodeBody, encodeMessage } from '@amlapi/lapi/transport'

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
export function structuredCloneBomb(depth = 76): Buffer {
  const def = (k: number): number[] =>
    k === 0 ? [0xd6, 0x69, ...be32(0), 0x92, 0xc0, 0xc0] : [0xd6, 0x69, ...be32(k), 0x92, ...def(k - 1), 0xd6, 0x70, ...be32(k - 1)]
  return Buffer.from([...def(depth), 0xc0])
}

/** msgpackr's Error extension `d4 65 00 92 a1 45 a0` (an error of ['E', '']) repeated to fill `max` bytes. */
export function errorBomb(max = 1024): Buffer {
  const one = [0xd4, 0x65, 0x00, 0x92, 0xa1, 0x45, 0xa0]
  return Buffer.from(new Array<number[]>(Math.floor(max / one.length)).fill(one).flat())
}

/** Fixed hostile bodies (each at most 1 KiB), besides what the arbitraries make. */
export function fixedHostileBodies(): Array<[string, Buffer]> {
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
  out.push([
    'records, long key, many instances',
    Buffer.from([0xdc, ...be16(n + 1), 0xd4, 0x72, 0x40, 0x91, ...key, 0xc0, ...new Array<number>(n).fill(0).flatMap(() => [0x40, 0xc0]), 0xc0].slice(0, 1024)),
  ])
  // records: many structures defined and used past the threshold where msgpackr compiles a reader
  const defs: number[] = []
  for (let id = 0; id < 40; id++) defs.push(0xd4, 0x72, id, 0x91, ...mstr(`f${id}`), 0xc0, 0x40 + id, 0xc0, 0x40 + id, 0xc0, 0x40 + id, 0xc0, 0x40 + id, 0xc0)
  out.push(['records, 40 compiled readers', Buffer.from([0xdc, ...be16(200), ...defs].slice(0, 1024))])
  // nesting as deep as 1 KiB allows, of arrays, maps, sets and errors
  out.push(['1020 nested arrays', Buffer.from([...new Array<number>(1020).fill(0x91), 0xc0])])
  out.push(['340 nested maps', Buffer.from([...new Array<number>(340).fill(0).flatMap(() => [0x81, 0xa1, 0x61]), 0xc0])])
  out.push(['255 nested sets', Buffer.from([...new Array<number>(255).fill(0).flatMap(() => [0xd4, 0x73, 0x00, 0x91]), 0xc0])])
  out.push(['nested errors', Buffer.from([...new Array<number>(120).fill(0).flatMap(() => [0xd4, 0x65, 0x00, 0x93, ...mstr('E'), 0xa0]), 0xc0].slice(0, 1024))])
  out.push(['errors side by side, 1 KiB', errorBomb()])
  // errors named by the error inside them, 255 deep: each is made a string for its lookup, the
  // whole chain below it (quadratic: the costliest 1 KiB body found, some 15-20 ms)
  out.push(['error chain, 255 deep', Buffer.from([...new Array<number>(255).fill(0).flatMap(() => [0xd4, 0x65, 0x00, 0x91]), 0xc0])])
  // headers that promise far more than the body holds
  for (const h of [
    [0xdd, ...be32(0xffffffff)],
    [0xdf, ...be32(0xffffffff)],
    [0xdb, ...be32(0xffffffff)],
    [0xc6, ...be32(0xffffffff)],
    [0xc9, ...be32(0xffffffff), 0x74],
    [0xdc, 0xff, 0xff],
    [0xde, 0xff, 0xff],
  ]) {
    out.push([`header ${Buffer.from(h).toString('hex')}`, Buffer.from([...h, ...new Array<number>(1000).fill(0xc0)].slice(0, 1024))])
  }
  // an array of 1000 huge-array headers (each fails at once, the first one ends it)
  const headers = new Array<number>(200).fill(0).flatMap(() => [0xdd, ...be32(0x7fffffff)])
  out.push(['array of array32 headers', Buffer.from([0xdc, ...be16(200), ...headers].slice(0, 1024))])
  // a bundled-string extension pointing far outside the body, and string references into it
  out.push(['bundled strings, far', Buffer.from([0xd6, 0x62, ...be32(0x7fffffff), 0x92, 0xc1, 0x7f, 0xc1, 0x7f])])
  out.push([
    'bundled strings, refs',
    Buffer.from(
      [
        0xd6,
        0x62,
        ...be32(20),
        0xdc,
        ...be16(300),
        ...new Array<number>(300).fill(0).flatMap(() => [0xc1, 0x7f]),
        ...mstr('x'.repeat(100)),
        ...mstr('y'.repeat(100)),
      ].slice(0, 1024),
    ),
  ])
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
  out.push([
    '__proto__ keys',
    Buffer.from([
      0x83,
      ...mstr('__proto__'),
      0x81,
      ...mstr('polluted'),
      0xc3,
      ...mstr('constructor'),
      0x81,
      ...mstr('prototype'),
      0x81,
      ...mstr('polluted'),
      0xc3,
      ...mstr('t'),
      ...mstr('hello'),
    ]),
  ])
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
  fc
    .tuple(fc.constantFrom(0xd4, 0xd5, 0xd6, 0xd7, 0xd8), fc.integer({ min: 0, max: 255 }), fc.uint8Array({ maxLength: 20 }))
    .map(([h, type, p]) => [h, type, ...p]),
  fc
    .tuple(fc.constantFrom(0xc7, 0xc8, 0xc9), lenArb, fc.integer({ min: 0, max: 255 }), fc.uint8Array({ maxLength: 40 }))
    .map(([h, n, type, p]) => [h, ...(h === 0xc7 ? [n & 255] : h === 0xc8 ? be16(n) : be32(n)), type, ...p]),
  // msgpackr's extensions, by hand: record definitions and uses, ids and pointers, string
  // bundles, bigints, typed arrays, errors, regexps, sets, dates, undefined
  fc
    .tuple(fc.integer({ min: 0, max: 255 }), fc.array(fc.string({ maxLength: 12 }), { maxLength: 6 }))
    .map(([id, keys]) => [0xd4, 0x72, id, 0x90 | keys.length, ...keys.flatMap(mstr)]),
  fc.integer({ min: 0x40, max: 0x7f }).map((t) => [t]),
  fc.tuple(fc.constantFrom(0x69, 0x70), fc.oneof(fc.nat({ max: 80 }), fc.nat())).map(([t, id]) => [0xd6, t, ...be32(id)]),
  fc.tuple(lenArb).map(([n]) => [0xd6, 0x62, ...be32(n)]),
  fc.tuple(fc.integer({ min: -200, max: 200 })).map(([n]) => [0xc1, n & 255]),
  fc.uint8Array({ maxLength: 200 }).map((p) => [0xc7, p.length, 0x42, ...p]),
  fc.tuple(fc.integer({ min: 0, max: 255 }), fc.uint8Array({ maxLength: 100 })).map(([code, p]) => [0xc7, p.length + 1, 0x74, code, ...p]),
  fc
    .tuple(fc.constantFrom('Error', 'AggregateError', 'TypeError', 'constructor', '__proto__', 'toString', 'valueOf', 'x'), fc.nat({ max: 4 }))
    .map(([name, k]) => [0xd4, 0x65, 0x00, 0x90 | k, ...(k > 0 ? mstr(name) : [])]),
  fc.tuple(fc.string({ maxLength: 30 }), fc.string({ maxLength: 8 })).map(([p, f]) => [0xd4, 0x78, 0x00, 0x92, ...mstr(p), ...mstr(f)]),
  fc.constantFrom<number[]>(
    [0xd4, 0x73, 0x00],
    [0xd4, 0x00, 0x00],
    [0xd6, 0xff, 0xff, 0xff, 0xff, 0xff],
    [0xd7, 0xff, ...new Array<number>(8).fill(0xff)],
    [0xc7, 12, 0xff, ...new Array<number>(12).fill(0x80)],
    [0xc1],
  ),
  // nesting
  fc
    .tuple(
      fc.constantFrom<number[]>([0x91], [0x81, 0xa1, 0x74], [0xd4, 0x73, 0x00, 0x91], [0xdc, 0x00, 0x01], [0xd4, 0x65, 0x00, 0x91]),
      fc.integer({ min: 1, max: 400 }),
    )
    .map(([p, k]) => new Array<number[]>(k).fill(p).flat()),
  // small valid values, and raw bytes
  fc.jsonValue({ maxDepth: 3 }).map((v) => [...encodeBodySafe(v)]),
  fc.uint8Array({ maxLength: 64 }).map((b) => [...b]),
  fc.integer({ min: 0, max: 255 }).map((b) => [b]),
)

/** A hostile body of at most `max` bytes (a concatenation of fragments, cut). */
export const hostileBodyArb = (max = 1024): fc.Arbitrary<Buffer> => fc.array(fragmentArb, { maxLength: 30 }).map((fs) => Buffer.from(fs.flat().slice(0, max)))

function encodeBodySafe(v: unknown): Buffer {
  const m = encodeMessage(v)
  return m.subarray(4)
}

/** A length-prefixed message of `body`, its prefix `n` (default: the body's length). */
export function framed(body: Uint8Array, n = body.length): Buffer {
  const out = Buffer.allocUnsafe(4 + body.length)
  out.writeUInt32LE(n >>> 0, 0)
  out.set(body, 4)
  return out
}

/** A piece of a byte stream: a well-formed message (flat or not), a hostile one, a mutated flat one, a bad prefix, bytes. */
export const streamPieceArb = (limit: number): fc.Arbitrary<Buffer> =>
  fc.oneof(
    fc.jsonValue({ maxDepth: 2 }).map((v) => encodeMessage(v)),
    flatMapArb.map((v) => encodeMessage(v)),
    flatBodyArb.map((f) => framed(f.body)),
    fc.tuple(flatBodyArb, fc.array(flatMutationArb, { minLength: 1, maxLength: 3 })).map(([f, ms]) => framed(mutateBody(f.body, ms))),
    hostileBodyArb(Math.min(limit, 300)).map((b) => framed(b)),
    fc.tuple(fc.constantFrom(limit, limit + 1, 0xffffffff, 0, 1, 4), fc.uint8Array({ maxLength: 40 })).map(([n, b]) => framed(b, n)),
    fc.uint8Array({ maxLength: 48 }).map((b) => Buffer.from(b)),
  )

/** Cuts `bytes` into chunks of the given sizes, cycled (as a socket may deliver them). */
export function chunked(bytes: Buffer, sizes: readonly number[]): Buffer[] {
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
export interface StreamVerdict {
  messages: string[]
  error: boolean
  rest: Buffer
}

/** How a reader created with limit `limit` prints what it decodes: `flatForm` (exact) while it takes flat maps only, else `fingerprint`. */
export const printerFor = (limit: number): ((v: unknown) => string) => (limit <= PRE_AUTH_MAX_BYTES ? flatForm : fingerprint)

/**
 * The model: the stream parsed as one buffer, messages printed (`printerFor`). A reader created
 * with a limit of at most PRE_AUTH_MAX_BYTES takes flat maps only (`flatModel`), else any msgpack.
 */
export function modelStream(bytes: Buffer, limit: number): StreamVerdict {
  const messages: string[] = []
  const flat = limit <= PRE_AUTH_MAX_BYTES
  const print = printerFor(limit)
  let at = 0
  while (bytes.length - at >= 4) {
    const n = bytes.readUInt32LE(at)
    if (n > limit) return { messages, error: true, rest: Buffer.alloc(0) }
    if (bytes.length - at < 4 + n) break
    let m: unknown
    const body = bytes.subarray(at + 4, at + 4 + n)
    try {
      m = flat ? flatModel(body) : decodeBody(body)
    } catch {
      return { messages, error: true, rest: Buffer.alloc(0) }
    }
    messages.push(print(m))
    at += 4 + n
  }
  return { messages, error: false, rest: bytes.subarray(at) }
}

/** A short text of a decoded value that two decodes of the same bytes share (no stacks, no identities). */
export function fingerprint(v: unknown, depth = 0): string {
  if (depth > 4) return '…'
  if (v === null || v === undefined) return String(v)
  switch (typeof v) {
    case 'number':
      return Object.is(v, -0) ? '-0' : String(v)
    case 'string':
      return JSON.stringify(v.length > 40 ? v.slice(0, 40) + `…${v.length}` : v)
    case 'bigint':
      return `${v}n`
    case 'object':
      break
    default:
      return `${typeof v}:${String(v)}`
  }
  if (v instanceof Error) return `${v.name}(${JSON.stringify(v.message)})`
  if (ArrayBuffer.isView(v)) return `${v.constructor.name}[${v.byteLength}]${Buffer.from(v.buffer, v.byteOffset, Math.min(v.byteLength, 16)).toString('hex')}`
  if (v instanceof Date || v instanceof RegExp) return `${v.constructor.name}(${String(v)})`
  if (v instanceof Map || v instanceof Set)
    return `${v.constructor.name}{${[...v.entries()]
      .slice(0, 8)
      .map((e) => fingerprint(e, depth + 1))
      .join(',')}}`
  if (Array.isArray(v))
    return `[${v
      .slice(0, 8)
      .map((x) => fingerprint(x, depth + 1))
      .join(',')}${v.length > 8 ? `…${v.length}` : ''}]`
  const keys = Object.keys(v)
  return `{${keys
    .slice(0, 8)
    .map((k) => `${JSON.stringify(k)}:${fingerprint((v as Record<string, unknown>)[k], depth + 1)}`)
    .join(',')}}`
}

/** An object with the `on`/`off` of a socket (all `readMessages` uses), to feed bytes to directly. */
export class FakeSocket extends EventEmitter {
  get sock(): Socket {
    return this as unknown as Socket
  }
  feed(chunk: Buffer): void {
    this.emit('data', chunk)
  }
}

/**
 * Runs `f` and returns its time, ms; a time over `boundMs` is taken again (up to twice more) and
 * the least kept, so that a pause of a shared machine is not taken for a slow input.
 */
export function timed(f: () => void, boundMs: number): number {
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
  private readonly list: Array<{ what: string; run: () => void }> = []
  add(what: string, run: () => void): void {
    if (this.list.length < 20) this.list.push({ what, run })
  }
  get size(): number {
    return this.list.length
  }
  /** The suspects still over `boundMs` at their best of 10 tries 30 ms apart, with that time. */
  async confirm(boundMs: number): Promise<string[]> {
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
export function prototypeNames(): string {
  return [Object.prototype, Array.prototype, Function.prototype].map((p) => Object.getOwnPropertyNames(p).sort().join(',')).join('|')
}

// ───────────── flat maps: what a peer that has not proved the key may send ─────────────

/** A flat map's most entries, and its keys' most characters (UTF-16 units, once decoded): transport/messages.ts. */
export const FLAT_ENTRIES = 16
export const FLAT_KEY_CHARS = 32
const utf8 = new TextDecoder()

/**
 * The model of `decodeFlat` (transport/messages.ts), written apart from it: a fixmap or map16 of at
 * most FLAT_ENTRIES entries, each key a fixstr or str8 of at most FLAT_KEY_CHARS characters, each
 * value nil, a boolean, a fixint, uint8/16/32, int8/16/32, a fixstr or str8 (UTF-8, bad bytes
 * replaced) or a bin8 (a Buffer); nothing after it. Anything else throws. A key given twice keeps
 * its later value. The object has a null prototype.
 */
export function flatModel(b: Uint8Array): Record<string, unknown> {
  let i = 0
  const take = (n: number): Uint8Array => {
    if (b.length - i < n) throw new Error(`${n} bytes wanted at ${i}, ${b.length - i} left`)
    i += n
    return b.subarray(i - n, i)
  }
  const uint = (n: number): number => take(n).reduce((x, y) => x * 256 + y, 0)
  const int = (n: number): number => {
    const v = uint(n)
    return v >= 2 ** (8 * n - 1) ? v - 2 ** (8 * n) : v
  }
  const item = (): unknown => {
    const t = uint(1)
    if (t <= 0x7f) return t
    if (t >= 0xe0) return t - 0x100
    if (t >= 0xa0 && t <= 0xbf) return utf8.decode(take(t - 0xa0))
    const widths: Record<number, () => unknown> = {
      192: () => null,
      194: () => false,
      195: () => true,
      196: () => Buffer.from(take(uint(1))),
      217: () => utf8.decode(take(uint(1))),
      204: () => uint(1),
      205: () => uint(2),
      206: () => uint(4),
      208: () => int(1),
      209: () => int(2),
      210: () => int(4),
    }
    const f = widths[t]
    if (f === undefined) throw new Error(`type 0x${t.toString(16)}`)
    return f()
  }
  const h = uint(1)
  const n = h >= 0x80 && h <= 0x8f ? h - 0x80 : h === 0xde ? uint(2) : -1
  if (n < 0) throw new Error('not a map')
  if (n > FLAT_ENTRIES) throw new Error(`${n} entries`)
  const out = Object.create(null) as Record<string, unknown>
  for (let e = 0; e < n; e++) {
    const k = item()
    if (typeof k !== 'string' || k.length > FLAT_KEY_CHARS) throw new Error('a key')
    out[k] = item()
  }
  if (i !== b.length) throw new Error(`${b.length - i} bytes after`)
  return out
}

/** `flatModel`'s map, or null where it throws. */
export function flatOrNull(b: Uint8Array): Record<string, unknown> | null {
  try {
    return flatModel(b)
  } catch {
    return null
  }
}

const isFlatInt = (x: number): boolean => Number.isInteger(x) && !Object.is(x, -0) && x >= -(2 ** 31) && x < 2 ** 32

/** How `v` breaks the flat rules as a decoded value (a null-prototype object of flat entries): nothing for a flat map. */
export function flatViolations(v: unknown): string[] {
  if (v === null || typeof v !== 'object') return [`not an object: ${fingerprint(v)}`]
  const out: string[] = []
  if (Object.getPrototypeOf(v) !== null) out.push('a prototype')
  const keys = Object.keys(v)
  if (Reflect.ownKeys(v).length !== keys.length) out.push('hidden or symbol keys')
  if (keys.length > FLAT_ENTRIES) out.push(`${keys.length} entries`)
  for (const k of keys) {
    const x = (v as Record<string, unknown>)[k]
    if (k.length > FLAT_KEY_CHARS) out.push(`a key of ${k.length} characters`)
    const ok =
      x === null || typeof x === 'boolean' || typeof x === 'string' || (typeof x === 'number' && isFlatInt(x)) || (Buffer.isBuffer(x) && x.length <= 255)
    if (!ok) out.push(`${JSON.stringify(k)}: ${fingerprint(x)}`)
  }
  return out
}

/** A decoded flat map, printed whole and exactly (Buffers by bytes, and the prototype when there is one). */
export function flatForm(v: unknown): string {
  if (v === null || typeof v !== 'object') return `not a map: ${fingerprint(v)}`
  const proto = Object.getPrototypeOf(v) === null ? '' : 'proto'
  const one = (x: unknown): string =>
    x === null
      ? 'nil'
      : typeof x === 'number'
        ? isFlatInt(x)
          ? String(x)
          : `num ${x}`
        : typeof x === 'string'
          ? JSON.stringify(x)
          : Buffer.isBuffer(x)
            ? `bin:${x.toString('hex')}`
            : `other ${fingerprint(x)}`
  return `${proto}{${Object.keys(v)
    .map((k) => `${JSON.stringify(k)}:${one((v as Record<string, unknown>)[k])}`)
    .join(',')}}`
}

const flatKeyArb: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 8 }), weight: 6 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 10 }).filter((k) => k.length <= FLAT_KEY_CHARS), weight: 2 },
  fc.constantFrom('t', 'n', 'p', '', '__proto__', 'constructor', 'toString', 'k'.repeat(32), 'é'.repeat(32), '\u{1F600}'.repeat(16)),
)

/** Integers at the edges of each msgpack integer encoding. */
const EDGE_INTS = [0, 1, 31, 32, 127, 128, 255, 256, 65535, 65536, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, -1, -32, -33, -128, -129, -32768, -32769, -(2 ** 31)]

/** A value a flat map may hold (as `encodeMessage` writes it, a flat value again). */
export const flatValueArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer({ min: -(2 ** 31), max: 2 ** 32 - 1 }),
  fc.integer({ min: -200, max: 300 }),
  fc.constantFrom(...EDGE_INTS),
  fc.string({ unit: 'grapheme', maxLength: 24 }).filter((s) => Buffer.byteLength(s) <= 255),
  fc.string({ unit: 'grapheme-ascii', minLength: 28, maxLength: 255 }),
  fc.uint8Array({ maxLength: 32 }).map((b) => Buffer.from(b)),
  fc.uint8Array({ maxLength: 255 }).map((b) => Buffer.from(b)),
)

/** A flat map (its prototype null or not, as fast-check makes dictionaries): `encodeMessage` writes it flat. */
export const flatMapArb: fc.Arbitrary<Record<string, unknown>> = fc.dictionary(flatKeyArb, flatValueArb, { maxKeys: FLAT_ENTRIES })

/** A flat map's body written by hand, and the map it stands for. */
export interface FlatBody {
  body: Buffer
  want: Record<string, unknown>
}

/** Value `v` in one of the encodings the flat rules take for it (`c` picks). */
function flatBytes(v: unknown, c: number): number[] {
  if (v === null) return [0xc0]
  if (typeof v === 'boolean') return [v ? 0xc3 : 0xc2]
  if (Buffer.isBuffer(v)) return [0xc4, v.length, ...v]
  if (typeof v === 'string') {
    const b = [...Buffer.from(v)]
    return b.length < 32 && c % 2 === 0 ? [0xa0 | b.length, ...b] : [0xd9, b.length, ...b]
  }
  const n = v as number
  const forms: number[][] = []
  if (n >= 0 && n <= 127) forms.push([n])
  if (n >= -32 && n < 0) forms.push([n + 0x100])
  if (n >= 0 && n <= 255) forms.push([0xcc, n])
  if (n >= 0 && n <= 65535) forms.push([0xcd, ...be16(n)])
  if (n >= 0 && n < 2 ** 32) forms.push([0xce, ...be32(n)])
  if (n >= -128 && n <= 127) forms.push([0xd0, n & 255])
  if (n >= -32768 && n <= 32767) forms.push([0xd1, ...be16(n & 0xffff)])
  if (n >= -(2 ** 31) && n < 2 ** 31) forms.push([0xd2, ...be32(n >>> 0)])
  return forms[c % forms.length]!
}

/**
 * Flat maps written by hand in any encoding the rules take (fixmap or map16, fixstr or str8, every
 * integer width that holds the value, non-shortest among them), keys possibly twice.
 */
export const flatBodyArb: fc.Arbitrary<FlatBody> = fc
  .tuple(fc.array(fc.tuple(flatKeyArb, flatValueArb, fc.nat(), fc.nat()), { maxLength: FLAT_ENTRIES }), fc.boolean())
  .map(([es, wide]) => {
    const want = Object.create(null) as Record<string, unknown>
    const bytes: number[] = es.length <= 15 && !wide ? [0x80 | es.length] : [0xde, ...be16(es.length)]
    for (const [k, v, ck, cv] of es) {
      bytes.push(...flatBytes(k, ck), ...flatBytes(v, cv))
      want[k] = v
    }
    return { body: Buffer.from(bytes), want }
  })

/** A change to a body: a bit, a byte, a cut, bytes appended, inserted or taken out, the map's count. */
export type BodyMutation =
  | { k: 'flip'; at: number; bit: number }
  | { k: 'set'; at: number; v: number }
  | { k: 'cut'; at: number }
  | { k: 'append'; bytes: Buffer }
  | { k: 'insert'; at: number; bytes: Buffer }
  | { k: 'remove'; at: number; n: number }
  | { k: 'count'; n: number }

/** Type bytes outside the flat rules (and a few inside), to write over one. */
const TYPE_BYTES = [
  0xc1, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xcb, 0xcf, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xda, 0xdb, 0xdc, 0xdd, 0xdf, 0x90, 0x9f, 0x80, 0x8f, 0xde, 0xd9,
  0xc4, 0xa0, 0xbf, 0xc0, 0x00, 0x7f, 0xe0, 0xff, 0x10, 0x11,
]

export const flatMutationArb: fc.Arbitrary<BodyMutation> = fc.oneof(
  fc.record({ k: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ k: fc.constant('set' as const), at: fc.nat(), v: fc.oneof(fc.constantFrom(...TYPE_BYTES), fc.integer({ min: 0, max: 255 })) }),
  fc.record({ k: fc.constant('cut' as const), at: fc.nat() }),
  fc.record({
    k: fc.constant('append' as const),
    bytes: fc.oneof(
      hostileBodyArb(64),
      fc.uint8Array({ minLength: 1, maxLength: 4 }).map((b) => Buffer.from(b)),
    ),
  }),
  fc.record({
    k: fc.constant('insert' as const),
    at: fc.nat(),
    bytes: fc.oneof(
      hostileBodyArb(64),
      fc.uint8Array({ minLength: 1, maxLength: 4 }).map((b) => Buffer.from(b)),
    ),
  }),
  fc.record({ k: fc.constant('remove' as const), at: fc.nat(), n: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ k: fc.constant('count' as const), n: fc.oneof(fc.integer({ min: 0, max: 20 }), fc.constantFrom(255, 256, 0xffff)) }),
)

/** `b` with mutations `ms` made in turn. */
export function mutateBody(b: Buffer, ms: readonly BodyMutation[]): Buffer {
  let d = Buffer.from(b)
  for (const m of ms) {
    const at = (x: number): number => (d.length === 0 ? 0 : x % d.length)
    switch (m.k) {
      case 'flip':
        if (d.length > 0) d[at(m.at)]! ^= 1 << m.bit
        break
      case 'set':
        if (d.length > 0) d[at(m.at)] = m.v
        break
      case 'cut':
        d = d.subarray(0, at(m.at))
        break
      case 'append':
        d = Buffer.concat([d, m.bytes])
        break
      case 'insert':
        d = Buffer.concat([d.subarray(0, at(m.at)), m.bytes, d.subarray(at(m.at))])
        break
      case 'remove':
        d = Buffer.concat([d.subarray(0, at(m.at)), d.subarray(at(m.at) + m.n)])
        break
      case 'count': {
        // (the map's header rewritten, fixmap or map16 as it was)
        const h = d[0]
        if (h !== undefined && h >= 0x80 && h <= 0x8f && m.n <= 15) d[0] = 0x80 | m.n
        else if (h === 0xde && d.length >= 3) d.writeUInt16BE(m.n, 1)
        else if (h !== undefined && h >= 0x80 && h <= 0x8f) d = Buffer.concat([Buffer.from([0xde, ...be16(m.n)]), d.subarray(1)])
        break
      }
    }
  }
  return d
}
