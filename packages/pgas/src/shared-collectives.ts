/**
 * Collectives into a shared array: what UPC's `upc_all_*` collectives lower to. Every task calls
 * them (a shared array spans the world); the result lands in the destination array's parts, each
 * on its owner, where its owner's later reads find it (no barrier needed for the data the call
 * wrote into the own part; one before reading other tasks' parts, as after any put).
 *
 * The relocalization ones work on parts, as UPC's do on blocks of `nbytes` per thread: every
 * task's part of the destination holds the same number k of elements (length k·P, spread evenly
 * by its layout, as UPC's `shared [nbytes]` destinations are), and task t's part receives what
 * rank t's buffer would in the collective of the same name:
 *
 * - bcastInto(dst, src, root): every part ← the root's `src` (k elements): upc_all_broadcast;
 * - scatterInto(dst, src, root): part t ← block t of the root's `src` (k·P): upc_all_scatter;
 * - allgatherInto(dst, src): every part ← all tasks' `src` (k/P each), in task order: upc_all_gather_all;
 * - alltoallInto(dst, src): block s of part t ← block t of task s's `src` (k each): upc_all_exchange;
 * - reduceInto(dst, i, src, op): element i of `dst` ← every element of the shared array `src`
 *   combined with `op`, whatever its layout: upc_all_reduce.
 *
 * A source given as a shared array is its own part (`localView()`); as a typed array, any buffer
 * (one in the segment is read in place by co-located tasks). Checks every task makes alike (the
 * arrays, root, operator, index) fail there with ERR_BAD_ARG before anything is sent; a source
 * only one task gets wrong fails there with ERR_BAD_ARG and on the others with ERR_COLL_MISMATCH.
 */
import { K_ALLGATHER, K_ALLTOALL, K_BCAST, K_SCATTER, kindOf } from './coll-base.js'
import type { Collectives } from './collectives.js'
import { type NumArray, ReduceOp, bytesOf, isNumArray, opFits } from './reduce-ops.js'
import { SharedArray } from './shared-array.js'
import { PgasStatus as S, pgasStatusOf } from './status.js'

/** A source: a typed array, or a shared array (its own part). */
export type IntoSource<T extends NumArray> = T | SharedArray<T>

/** `a`'s own part, or the status that says why not (a freed array: ERR_STATE). */
function partOf<T extends NumArray>(a: SharedArray<T>): T | number {
  try {
    return a.localView()
  } catch (e) {
    return pgasStatusOf(e) ?? S.ERR_BAD_ARG
  }
}

/** Elements in every task's part of `a`, or -1 when the parts differ. */
function evenPart(a: SharedArray<NumArray>): number {
  const l = a.layout
  const k = l.localCount(0)
  for (let t = 1; t < l.tasks; t++) if (l.localCount(t) !== k) return -1
  return k
}

/** The destination's part when `dst` is a shared array over every task whose parts are even; else the status. */
function destination(coll: Collectives, dst: unknown): NumArray | number {
  if (!(dst instanceof SharedArray) || dst.layout.tasks !== coll.world.size || evenPart(dst) < 0) return S.ERR_BAD_ARG
  return partOf(dst)
}

/** A source's buffer: a shared array's own part, or the typed array itself; null when it is neither. */
function source(src: unknown): NumArray | number | null {
  if (src instanceof SharedArray) return partOf(src)
  return isNumArray(src) ? src : null
}

/** Whether `a` and `b` share a byte. */
function overlap(a: NumArray, b: NumArray): boolean {
  return a.buffer === b.buffer && a.byteOffset < b.byteOffset + b.byteLength && b.byteOffset < a.byteOffset + a.byteLength
}

function badRoot(coll: Collectives, root: number): boolean {
  return !Number.isInteger(root) || root < 0 || root >= coll.world.size
}

/** Broadcast into every part of `dst`: the root's `src` (a part's length; null elsewhere). upc_all_broadcast. */
export function bcastInto(coll: Collectives, dst: SharedArray<NumArray>, src: NumArray | null, root: number): number {
  const d = destination(coll, dst)
  if (typeof d === 'number') return d
  if (badRoot(coll, root)) return S.ERR_BAD_ARG
  const g = coll.world
  if (g.rank === root) {
    if (!isNumArray(src) || src.constructor !== d.constructor || src.length !== d.length) return coll.abandon(g, kindOf(K_BCAST, root), S.ERR_BAD_ARG)
    if (src !== d) d.set(src as never)
  }
  return coll.bcast(d, root, g)
}

/** Scatter into the parts of `dst`: part t ← block t of the root's `src` (P parts' length; null elsewhere). upc_all_scatter. */
export function scatterInto(coll: Collectives, dst: SharedArray<NumArray>, src: NumArray | null, root: number): number {
  const d = destination(coll, dst)
  if (typeof d === 'number') return d
  if (badRoot(coll, root)) return S.ERR_BAD_ARG
  const g = coll.world
  if (g.rank === root && (!isNumArray(src) || src.constructor !== d.constructor || src.length !== g.size * d.length || overlap(src, d))) {
    return coll.abandon(g, kindOf(K_SCATTER, root), S.ERR_BAD_ARG)
  }
  return coll.scatter(g.rank === root ? src : null, d, root, g)
}

/** All-gather into every part of `dst`: all tasks' `src` (a part's length / P each) in task order. upc_all_gather_all. */
export function allgatherInto(coll: Collectives, dst: SharedArray<NumArray>, src: IntoSource<NumArray>): number {
  const d = destination(coll, dst)
  if (typeof d === 'number') return d
  const g = coll.world
  const s = source(src)
  if (typeof s === 'number') return s
  // (in place: the source is exactly this task's block of its own part)
  const inPlace = s !== null && s.buffer === d.buffer && s.byteOffset === d.byteOffset + g.rank * s.byteLength
  if (s === null || s.constructor !== d.constructor || s.length * g.size !== d.length || (overlap(s, d) && !inPlace))
    return coll.abandon(g, kindOf(K_ALLGATHER), S.ERR_BAD_ARG)
  return coll.allgather(s, d, g)
}

/** All-to-all into the parts of `dst`: block s of part t ← block t of task s's `src` (a part's length). upc_all_exchange. */
export function alltoallInto(coll: Collectives, dst: SharedArray<NumArray>, src: IntoSource<NumArray>): number {
  const d = destination(coll, dst)
  if (typeof d === 'number') return d
  const g = coll.world
  if (d.length % g.size !== 0) return S.ERR_BAD_ARG
  const s = source(src)
  if (typeof s === 'number') return s
  if (s === null || s.constructor !== d.constructor || s.length !== d.length || overlap(s, d)) return coll.abandon(g, kindOf(K_ALLTOALL), S.ERR_BAD_ARG)
  return coll.alltoall(s, d, g)
}

/**
 * Reduction of a whole shared array into one element of another: element `index` of `dst` (at
 * its owner) ← every element of `src` combined with `op` (a ReduceOp), whatever `src`'s layout.
 * Each task folds its own part, then a reduce to the owner. upc_all_reduceT.
 */
export function reduceInto(coll: Collectives, dst: SharedArray<NumArray>, index: number, src: SharedArray<NumArray>, op: number): number {
  const g = coll.world
  if (!(dst instanceof SharedArray) || !(src instanceof SharedArray) || dst.type !== src.type || src.layout.tasks !== g.size || dst.layout.tasks !== g.size)
    return S.ERR_BAD_ARG
  if (!Number.isInteger(index) || index < 0 || index >= dst.length) return S.ERR_BAD_ARG
  const s = partOf(src)
  if (typeof s === 'number') return s
  if (!opFits(op, s)) return S.ERR_BAD_ARG
  const root = dst.owner(index)
  const acc = identity(op, s)
  fold(op, acc, s)
  const out = g.rank === root ? (acc.slice() as NumArray) : null
  const rc = coll.reduce(acc, out, op, root, g)
  if (rc !== 0 || out === null) return rc
  const d = partOf(dst)
  if (typeof d === 'number') return d
  d[dst.layout.localIndex(index)] = out[0]!
  return S.OK
}

/** The smallest and largest values of the integer element types. */
const RANGE = new Map<unknown, readonly [number | bigint, number | bigint]>([
  [Int8Array, [-128, 127]],
  [Uint8Array, [0, 255]],
  [Uint8ClampedArray, [0, 255]],
  [Int16Array, [-32768, 32767]],
  [Uint16Array, [0, 65535]],
  [Int32Array, [-2147483648, 2147483647]],
  [Uint32Array, [0, 4294967295]],
  [Float32Array, [-Infinity, Infinity]],
  [Float64Array, [-Infinity, Infinity]],
  [BigInt64Array, [-(2n ** 63n), 2n ** 63n - 1n]],
  [BigUint64Array, [0n, 2n ** 64n - 1n]],
])

/** A one-element array of `like`'s type holding `op`'s identity (what a task with an empty part contributes). */
function identity(op: number, like: NumArray): NumArray {
  const a = new (like.constructor as new (n: number) => NumArray)(1)
  const r = RANGE.get(like.constructor)!
  const big = typeof r[0] === 'bigint'
  switch (op) {
    case ReduceOp.PROD:
      a[0] = big ? 1n : 1
      break
    case ReduceOp.MIN:
      a[0] = r[1]
      break
    case ReduceOp.MAX:
      a[0] = r[0]
      break
    case ReduceOp.BAND:
      bytesOf(a).fill(0xff)
      break
  }
  return a
}

/** acc[0] = acc[0] op x[0] op … op x[n − 1], element by element as `combine` does (each step stored in the element type). */
function fold(op: number, acc: NumArray, x: NumArray): void {
  const a = acc as Float64Array
  const b = x as Float64Array
  const n = b.length
  switch (op) {
    case ReduceOp.SUM:
      for (let i = 0; i < n; i++) a[0] = a[0]! + b[i]!
      break
    case ReduceOp.PROD:
      for (let i = 0; i < n; i++) a[0] = a[0]! * b[i]!
      break
    case ReduceOp.MIN:
      for (let i = 0; i < n; i++) {
        if (b[i]! < a[0]!) a[0] = b[i]!
      }
      break
    case ReduceOp.MAX:
      for (let i = 0; i < n; i++) {
        if (b[i]! > a[0]!) a[0] = b[i]!
      }
      break
    case ReduceOp.BAND:
      for (let i = 0; i < n; i++) a[0] = a[0]! & b[i]!
      break
    case ReduceOp.BOR:
      for (let i = 0; i < n; i++) a[0] = a[0]! | b[i]!
      break
    case ReduceOp.BXOR:
      for (let i = 0; i < n; i++) a[0] = a[0]! ^ b[i]!
      break
  }
}
