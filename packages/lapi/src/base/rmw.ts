/**
 * LAPI_Rmw's arithmetic on a word, wherever it runs: the origin's thread on a co-located task's
 * segment, or the target process's network engine. FETCH_AND_ADD, FETCH_AND_OR and SWAP return the
 * old value; COMPARE_AND_SWAP returns TRUE (1) when the word equalled `v0` and now holds `v1`,
 * else FALSE (0) — LAPI's boolean, not the old value.
 */
import { RmwOp } from './constants.js'

/** On the int32 word `i` of `a` (operands int32). */
export function rmw32(a: Int32Array, i: number, op: number, v0: number, v1: number): number {
  switch (op) {
    case RmwOp.FETCH_AND_ADD:
      return Atomics.add(a, i, v0)
    case RmwOp.FETCH_AND_OR:
      return Atomics.or(a, i, v0)
    case RmwOp.SWAP:
      return Atomics.exchange(a, i, v0)
    default:
      return Atomics.compareExchange(a, i, v0, v1) === v0 ? 1 : 0
  }
}

/** On the int64 word `i` of `a` (operands int64). */
export function rmw64(a: BigInt64Array, i: number, op: number, v0: bigint, v1: bigint): bigint {
  switch (op) {
    case RmwOp.FETCH_AND_ADD:
      return Atomics.add(a, i, v0)
    case RmwOp.FETCH_AND_OR:
      return Atomics.or(a, i, v0)
    case RmwOp.SWAP:
      return Atomics.exchange(a, i, v0)
    default:
      return Atomics.compareExchange(a, i, v0, v1) === v0 ? 1n : 0n
  }
}
