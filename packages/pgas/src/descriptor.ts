/**
 * Shared array descriptors: a shared array as plain numbers, to hand to other tasks (a broadcast,
 * an RPC argument, a put) and to make a view of the array from. An Int32Array of DESC_HEADER + P
 * words:
 *
 * | word | |
 * |---|---|
 * | 0 | element type (ElemType) |
 * | 1 | bytes per element |
 * | 2 | layout kind (LayoutCode) |
 * | 3 | block (elements; the effective one: ⌈length/P⌉ for blocked, 1 for cyclic) |
 * | 4 | length (elements) |
 * | 5 | P, the tasks it is spread over |
 * | 6 + t | its base address on task t |
 */
import { effectiveBlock, maxLocalCountOf } from './layout.js'
import type { NumArrayCtor } from './gptr.js'
import type { NumArray } from './reduce-ops.js'
import { PgasStatus as S } from './status.js'

/** Element types of descriptors. BYTES: elements of any size with no typed array (the flat face's structs). */
export const ElemType = {
  BYTES: 0,
  INT8: 1,
  UINT8: 2,
  UINT8_CLAMPED: 3,
  INT16: 4,
  UINT16: 5,
  INT32: 6,
  UINT32: 7,
  FLOAT32: 8,
  FLOAT64: 9,
  BIGINT64: 10,
  BIGUINT64: 11,
} as const

const CTORS: ReadonlyArray<NumArrayCtor<NumArray> | null> = [
  null,
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
] as ReadonlyArray<NumArrayCtor<NumArray> | null>

/** Words before the base addresses. */
export const DESC_HEADER = 6
export const D_TYPE = 0
export const D_ELEM = 1
export const D_KIND = 2
export const D_BLOCK = 3
export const D_LENGTH = 4
export const D_TASKS = 5

/** The ElemType of a typed array constructor, or −1. */
export function typeCodeOf(type: unknown): number {
  return type === null ? -1 : CTORS.indexOf(type as NumArrayCtor<NumArray>)
}
/** The typed array constructor of an ElemType (null for BYTES or an unknown code). */
export function ctorOf(code: number): NumArrayCtor<NumArray> | null {
  return Number.isInteger(code) ? (CTORS[code] ?? null) : null
}

/**
 * Checks a descriptor's header and fills its block word: OK, or ERR_BAD_ARG (a header that makes
 * no array, or fewer words than DESC_HEADER + P). `tasks` given: P must be it.
 */
export function checkHeader(desc: ArrayLike<number>, tasks?: number): number {
  if (desc === null || typeof desc !== 'object' || typeof desc.length !== 'number' || desc.length < DESC_HEADER) return S.ERR_BAD_ARG
  const type = desc[D_TYPE]!
  const eb = desc[D_ELEM]!
  const p = desc[D_TASKS]!
  if (!Number.isInteger(type) || type < 0 || type >= CTORS.length || !Number.isInteger(eb) || eb < 1) return S.ERR_BAD_ARG
  const ctor = CTORS[type]
  if (ctor !== null && ctor !== undefined && ctor.BYTES_PER_ELEMENT !== eb) return S.ERR_BAD_ARG
  if (tasks !== undefined && p !== tasks) return S.ERR_BAD_ARG
  const b = effectiveBlock(desc[D_KIND]!, desc[D_BLOCK]!, desc[D_LENGTH]!, p)
  if (b < 0 || b !== desc[D_BLOCK] || desc.length < DESC_HEADER + p) return S.ERR_BAD_ARG
  return S.OK
}

/** Bytes every task allocates for an array of this header (at least 8). */
export function partBytes(elemBytes: number, block: number, length: number, tasks: number): number {
  return Math.max(8, maxLocalCountOf(block, tasks, length) * elemBytes)
}

/**
 * Writes a descriptor's header into `out` (its block made effective): OK, or ERR_BAD_ARG for a
 * header that makes no array or an `out` of fewer than DESC_HEADER + `tasks` words.
 */
export function writeHeader(out: Int32Array, type: number, elemBytes: number, kind: number, block: number, length: number, tasks: number): number {
  if (!(out instanceof Int32Array) || out.length < DESC_HEADER + tasks) return S.ERR_BAD_ARG
  const b = effectiveBlock(kind, block, length, tasks)
  if (b < 0) return S.ERR_BAD_ARG
  const ctor = ctorOf(type)
  if (!Number.isInteger(type) || type < 0 || type >= CTORS.length || !Number.isInteger(elemBytes) || elemBytes < 1 || elemBytes > 0x7fffffff)
    return S.ERR_BAD_ARG
  if (ctor !== null && ctor.BYTES_PER_ELEMENT !== elemBytes) return S.ERR_BAD_ARG
  if (maxLocalCountOf(b, tasks, length) * elemBytes > 0x7fffffff) return S.ERR_NOMEM
  out[D_TYPE] = type
  out[D_ELEM] = elemBytes
  out[D_KIND] = kind
  out[D_BLOCK] = b
  out[D_LENGTH] = length
  out[D_TASKS] = tasks
  return S.OK
}
