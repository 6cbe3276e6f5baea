/**
 * The reduction operators of reduce, all-reduce and scan, element by element on typed arrays:
 * sum, product, min, max, and the bitwise and, or and xor of integer arrays.
 */
export const ReduceOp = { SUM: 0, PROD: 1, MIN: 2, MAX: 3, BAND: 4, BOR: 5, BXOR: 6 } as const
export type ReduceOpCode = (typeof ReduceOp)[keyof typeof ReduceOp]

/** The numeric typed arrays the collectives take. */
export type NumArray =
  | Int8Array
  | Uint8Array
  | Uint8ClampedArray
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | Float32Array
  | Float64Array
  | BigInt64Array
  | BigUint64Array

/** Whether `a` is one of the numeric typed arrays. */
export function isNumArray(a: unknown): a is NumArray {
  return ArrayBuffer.isView(a) && !(a instanceof DataView)
}

/** Whether `op` applies to `a`'s element type (bitwise operators: integers only). */
export function opFits(op: number, a: NumArray): boolean {
  if (!Number.isInteger(op) || op < 0 || op > 6) return false
  if (op >= ReduceOp.BAND) return !(a instanceof Float32Array || a instanceof Float64Array)
  return true
}

/**
 * acc[i] = acc[i] op x[i] for i in [from, to). The same loops serve the bigint arrays: +, *, <,
 * &, | and ^ apply to bigints as they do to numbers.
 */
export function combine(op: number, acc: NumArray, x: NumArray, from = 0, to = acc.length): void {
  const a = acc as Float64Array
  const b = x as Float64Array
  switch (op) {
    case ReduceOp.SUM:
      for (let i = from; i < to; i++) a[i] = a[i]! + b[i]!
      break
    case ReduceOp.PROD:
      for (let i = from; i < to; i++) a[i] = a[i]! * b[i]!
      break
    case ReduceOp.MIN:
      for (let i = from; i < to; i++) {
        if (b[i]! < a[i]!) a[i] = b[i]!
      }
      break
    case ReduceOp.MAX:
      for (let i = from; i < to; i++) {
        if (b[i]! > a[i]!) a[i] = b[i]!
      }
      break
    case ReduceOp.BAND:
      for (let i = from; i < to; i++) a[i] = a[i]! & b[i]!
      break
    case ReduceOp.BOR:
      for (let i = from; i < to; i++) a[i] = a[i]! | b[i]!
      break
    case ReduceOp.BXOR:
      for (let i = from; i < to; i++) a[i] = a[i]! ^ b[i]!
      break
  }
}

/** The bytes of a typed array (a view, not a copy). */
export function bytesOf(a: ArrayBufferView): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength)
}

/** A new zeroed typed array of `a`'s type and `n` elements. */
export function like<T extends NumArray>(a: T, n: number): T {
  return new (a.constructor as new (n: number) => T)(n)
}
