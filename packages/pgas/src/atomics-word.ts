/**
 * What an atomic operation makes of a word, for the compare-and-swap loops of atomics.ts: the
 * new value of a 32-bit word (an int32; an 8- or 16-bit field inside it; a float32 by its bits)
 * or a 64-bit one (an int64; a float64 by its bits), given its current value. Pure functions
 * (the float conversions go through one scratch word), so a loop allocates nothing for them.
 */
/** The operations (their codes are the flat face's `op` argument). */
export const AtomicOp = {
  ADD: 0,
  AND: 1,
  OR: 2,
  XOR: 3,
  SWAP: 4,
  CAS: 5,
  LOAD: 6,
  STORE: 7,
  /** Signed minimum (integers), `Math.min` (floats). */
  MIN: 8,
  /** Signed maximum (integers), `Math.max` (floats). */
  MAX: 9,
} as const
export type AtomicOpCode = (typeof AtomicOp)[keyof typeof AtomicOp]

/**
 * The word kinds of the atomics (internal: the Pgas methods and flat functions name them). Integers
 * are signed; the operands of I8 and I16 wrap as `Int8Array` and `Int16Array` elements do.
 */
export const AtomicKind = { I8: 0, I16: 1, I32: 2, I64: 3, F32: 4, F64: 5 } as const
/** Bytes of each kind (its alignment too: an I8 needs none). */
export const KIND_BYTES: readonly number[] = [1, 2, 4, 8, 4, 8]

/** Whether `op` is an AtomicOp that kind `kind` has (floats have no AND, OR, XOR). */
export function hasOp(kind: number, op: number): boolean {
  if (op === AtomicOp.AND || op === AtomicOp.OR || op === AtomicOp.XOR) return kind < AtomicKind.F32
  return Number.isInteger(op) && op >= 0 && op <= AtomicOp.MAX
}

/** Whether `op` has a non-fetching form: it changes the word (not SWAP, CAS, LOAD: they exist to fetch). */
export function hasNf(kind: number, op: number): boolean {
  return hasOp(kind, op) && op !== AtomicOp.SWAP && op !== AtomicOp.CAS && op !== AtomicOp.LOAD
}

const f32 = new Float32Array(1)
const f32Bits = new Int32Array(f32.buffer)
const f64 = new Float64Array(1)
const f64Bits = new BigInt64Array(f64.buffer)

/** The bits of `x` as a float32, as an int32 (every NaN as the one quiet NaN a store of `NaN` makes). */
export function bitsOfF32(x: number): number {
  if (Number.isNaN(x)) return 0x7fc00000
  f32[0] = x
  return f32Bits[0]!
}
/** The float32 whose bits are `b`. */
export function f32OfBits(b: number): number {
  f32Bits[0] = b
  return f32[0]!
}
/** The bits of `x` as a float64, as an int64 (every NaN as 0x7ff8000000000000, as `bitsOfF32`). */
export function bitsOfF64(x: number): bigint {
  if (Number.isNaN(x)) return 0x7ff8000000000000n
  f64[0] = x
  return f64Bits[0]!
}
/** The float64 whose bits are `b`. */
export function f64OfBits(b: bigint): number {
  f64Bits[0] = b
  return f64[0]!
}

/** The new value of the word of a compare-and-swap loop: the loops take `step(cur, op, a, b, sh)`. */
export type Step32 = (cur: number, op: number, a: number, b: number, sh: number) => number
export type Step64 = (cur: bigint, op: number, a: bigint, b: bigint) => bigint

/** `op` on the int32 `cur` with `a` (CAS: `b` when `cur` is `a`). */
export function stepI32(cur: number, op: number, a: number, b: number): number {
  switch (op) {
    case AtomicOp.ADD:
      return (cur + a) | 0
    case AtomicOp.AND:
      return cur & a
    case AtomicOp.OR:
      return cur | a
    case AtomicOp.XOR:
      return cur ^ a
    case AtomicOp.MIN:
      return a < cur ? a : cur
    case AtomicOp.MAX:
      return a > cur ? a : cur
    case AtomicOp.SWAP:
    case AtomicOp.STORE:
      return a
    case AtomicOp.CAS:
      return cur === a ? b : cur
    default:
      return cur
  }
}

/** `op` on the int64 `cur` with `a`. */
export function stepI64(cur: bigint, op: number, a: bigint, b: bigint): bigint {
  switch (op) {
    case AtomicOp.ADD:
      return BigInt.asIntN(64, cur + a)
    case AtomicOp.AND:
      return cur & a
    case AtomicOp.OR:
      return cur | a
    case AtomicOp.XOR:
      return cur ^ a
    case AtomicOp.MIN:
      return a < cur ? a : cur
    case AtomicOp.MAX:
      return a > cur ? a : cur
    case AtomicOp.SWAP:
    case AtomicOp.STORE:
      return a
    case AtomicOp.CAS:
      return cur === a ? b : cur
    default:
      return cur
  }
}

/**
 * Where the byte or half-word at `addr` lies in its aligned 32-bit word, as a shift: the word is
 * read and written with int32 `Atomics`, so in the platform's byte order (little-endian on every
 * platform Node runs on; big-endian handled all the same).
 */
const LITTLE = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1
export function shiftOf(addr: number, bytes: number): number {
  const k = addr & 3
  return LITTLE ? k << 3 : (4 - k - bytes) << 3
}

/** The signed 8-bit field at shift `sh` of the word `w`. */
export function field8(w: number, sh: number): number {
  return (w << (24 - sh)) >> 24
}
/** The signed 16-bit field at shift `sh` of the word `w`. */
export function field16(w: number, sh: number): number {
  return (w << (16 - sh)) >> 16
}

/** `op` on the 8-bit field at shift `sh` of `cur` (the operands wrapped to int8); the other bytes kept. */
export function stepI8(cur: number, op: number, a: number, b: number, sh: number): number {
  const v = stepI32(field8(cur, sh), op, a, b)
  return (cur & ~(0xff << sh)) | ((v & 0xff) << sh)
}

/** `op` on the 16-bit field at shift `sh` of `cur`. */
export function stepI16(cur: number, op: number, a: number, b: number, sh: number): number {
  const v = stepI32(field16(cur, sh), op, a, b)
  return (cur & ~(0xffff << sh)) | ((v & 0xffff) << sh)
}

/** ADD, MIN or MAX on the float32 whose bits are `cur`; the bits of the result. */
export function stepF32(cur: number, op: number, a: number): number {
  const x = f32OfBits(cur)
  return bitsOfF32(op === AtomicOp.ADD ? x + a : op === AtomicOp.MIN ? Math.min(x, a) : Math.max(x, a))
}

/** ADD, MIN or MAX on the float64 whose bits are `cur`. */
export function stepF64(cur: bigint, op: number, a: bigint): bigint {
  const x = f64OfBits(cur)
  // (`a` is the operand's bits: a float64 travels through the 64-bit loop as its bits)
  const y = f64OfBits(a)
  return bitsOfF64(op === AtomicOp.ADD ? x + y : op === AtomicOp.MIN ? Math.min(x, y) : Math.max(x, y))
}

/** The operand of an integer kind, wrapped to its width (int8, int16, int32). */
export function wrap(kind: number, a: number): number {
  return kind === AtomicKind.I8 ? (a << 24) >> 24 : kind === AtomicKind.I16 ? (a << 16) >> 16 : a | 0
}
