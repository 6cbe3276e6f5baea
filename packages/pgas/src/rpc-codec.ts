/**
 * What remote procedure calls carry: msgpack (msgpackr), with its extensions for typed arrays,
 * Set, Date and BigInt beyond 64 bits, and one of ours for Map (msgpackr packs a Map as a plain
 * map, which decodes as an object; a Map is sent as its entries, boxed). A function or a symbol
 * anywhere in a value is refused; an instance of another class goes as a plain object of its own
 * enumerable properties. Encoded data is a private copy: a send never waits for it to leave.
 */
// (msgpackr/pack, not msgpackr: the package's main entry loads its optional native addon, msgpackr-extract)
import { Packr, addExtension } from 'msgpackr/pack'

/** msgpack extension type of a boxed Map (application types are 0..127). */
const MAP_EXT = 0x41
/** Nesting depth beyond which a value is refused (msgpackr would overflow the stack). */
const MAX_DEPTH = 512

class MapEntries {
  readonly entries: unknown[]
  constructor(entries: unknown[]) {
    this.entries = entries
  }
}

addExtension({
  Class: MapEntries,
  type: MAP_EXT,
  write: (m: MapEntries) => m.entries,
  read: (a: unknown) => {
    if (!Array.isArray(a) || !a.every((e) => Array.isArray(e) && e.length === 2)) throw new Error('a malformed Map')
    return new Map(a as Array<[unknown, unknown]>)
  },
})

const packr = new Packr({ useRecords: false, moreTypes: true, useBigIntExtension: true, structuredClone: false })

/** `v` as msgpack, in a buffer of its own. Throws for what cannot be carried (a function, a symbol, a cycle). */
export function encode(v: unknown): Uint8Array {
  const b = packr.pack(hasMap(v, 0) ? boxed(v, 0) : v)
  return Uint8Array.prototype.slice.call(b)
}

/** The value `encode` made. Throws for malformed data. */
export function decode(b: Uint8Array): unknown {
  return packr.unpack(b)
}

/** Whether a Map is in `v` (no allocation: most arguments have none). Throws for a function. */
function hasMap(v: unknown, depth: number): boolean {
  if (typeof v === 'function') throw new TypeError(`a function (${v.name || 'anonymous'}) cannot be sent`)
  if (v === null || typeof v !== 'object' || ArrayBuffer.isView(v)) return false
  if (depth > MAX_DEPTH) throw new RangeError('a value nested too deep (or a cycle)')
  if (v instanceof Map) return true
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (hasMap(v[i], depth + 1)) return true
    return false
  }
  if (v instanceof Set) {
    for (const x of v) if (hasMap(x, depth + 1)) return true
    return false
  }
  if (Object.getPrototypeOf(v) !== Object.prototype && Object.getPrototypeOf(v) !== null) return false
  for (const k in v) if (hasMap((v as Record<string, unknown>)[k], depth + 1)) return true
  return false
}

/** A copy of `v` with every Map boxed. */
function boxed(v: unknown, depth: number): unknown {
  if (v === null || typeof v !== 'object' || ArrayBuffer.isView(v)) return v
  if (depth > MAX_DEPTH) throw new RangeError('a value nested too deep (or a cycle)')
  if (v instanceof Map) return new MapEntries([...v].map(([k, x]) => [boxed(k, depth + 1), boxed(x, depth + 1)]))
  if (Array.isArray(v)) return v.map((x) => boxed(x, depth + 1))
  if (v instanceof Set) return new Set([...v].map((x) => boxed(x, depth + 1)))
  if (Object.getPrototypeOf(v) !== Object.prototype && Object.getPrototypeOf(v) !== null) return v
  const o: Record<string, unknown> = {}
  for (const k in v) o[k] = boxed((v as Record<string, unknown>)[k], depth + 1)
  return o
}
