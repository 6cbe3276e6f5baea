/**
 * Remote atomics on 32-bit (number) and 64-bit (bigint) words: fetch-add, fetch-and, fetch-or,
 * fetch-xor, swap, compare-and-swap, load and store. A co-located word is operated on with
 * `Atomics` directly; any other with LAPI's Rmw (fetch-add, fetch-or, swap and compare-and-swap
 * are LAPI operations; and, xor, load and store are made of them: a compare-and-swap loop, a
 * fetch-add of 0, a swap). All are atomic with respect to each other wherever they are issued:
 * LAPI's target side performs its operations with `Atomics` on the same memory.
 */
import { RmwOp } from '@amlapi/lapi'
import type { Core } from './core.js'
import { PgasStatus as S } from './status.js'

/** The operations. */
export const AtomicOp = { ADD: 0, AND: 1, OR: 2, XOR: 3, SWAP: 4, CAS: 5, LOAD: 6, STORE: 7 } as const
export type AtomicOpCode = (typeof AtomicOp)[keyof typeof AtomicOp]

export class RemoteAtomics {
  private readonly core: Core
  /** The status of the last call (0: it returned a value). */
  status = 0

  constructor (core: Core) {
    this.core = core
  }

  private check (task: number, addr: number, bytes: number): number {
    const rc = this.core.checkRange(task, addr, bytes)
    if (rc !== 0) return rc
    return addr % bytes === 0 ? S.OK : S.ERR_ALIGN
  }

  /**
   * `op` on the 32-bit word at `addr` of task `task` with operand `a` (and `b`, CAS's new value);
   * returns the old value (CAS: the old value too; it swapped when that equals `a`). Sets `status`.
   */
  op32 (op: number, task: number, addr: number, a: number, b = 0): number {
    const rc = this.check(task, addr, 4)
    this.status = rc
    if (rc !== 0) return 0
    a |= 0; b |= 0
    const w = this.core.i32[task]
    if (w !== null) {
      const v = local(w, addr >>> 2, op, a, b)
      if (v === undefined) { this.status = S.ERR_BAD_ARG; return 0 }
      return v
    }
    const l = this.core.lapi
    switch (op) {
      case AtomicOp.ADD: return l.rmw(RmwOp.FETCH_AND_ADD, task, addr, a)
      case AtomicOp.OR: return l.rmw(RmwOp.FETCH_AND_OR, task, addr, a)
      case AtomicOp.SWAP: case AtomicOp.STORE: return l.rmw(RmwOp.SWAP, task, addr, a)
      case AtomicOp.LOAD: return l.rmw(RmwOp.FETCH_AND_ADD, task, addr, 0)
      case AtomicOp.CAS: {
        for (;;) {
          if (l.rmw(RmwOp.COMPARE_AND_SWAP, task, addr, a, b) === 1) return a
          const old = l.rmw(RmwOp.FETCH_AND_ADD, task, addr, 0)
          // (the word changed back to `a` between the two: try again, so the answer is exact)
          if (old !== a) return old
        }
      }
      case AtomicOp.AND: case AtomicOp.XOR: {
        let old = l.rmw(RmwOp.FETCH_AND_ADD, task, addr, 0)
        for (;;) {
          const v = op === AtomicOp.AND ? (old & a) : (old ^ a)
          if (l.rmw(RmwOp.COMPARE_AND_SWAP, task, addr, old, v) === 1) return old
          old = l.rmw(RmwOp.FETCH_AND_ADD, task, addr, 0)
        }
      }
      default: this.status = S.ERR_BAD_ARG; return 0
    }
  }

  /** `op32` on a 64-bit word (8-byte aligned), with bigint operands. */
  op64 (op: number, task: number, addr: number, a: bigint, b = 0n): bigint {
    const rc = this.check(task, addr, 8)
    this.status = rc
    if (rc !== 0) return 0n
    a = BigInt.asIntN(64, a); b = BigInt.asIntN(64, b)
    const w = this.core.i64[task]
    if (w !== null) {
      // (the same Atomics calls, on a BigInt64Array with bigints)
      const v = local(w as unknown as Int32Array, addr >>> 3, op, a as unknown as number, b as unknown as number)
      if (v === undefined) { this.status = S.ERR_BAD_ARG; return 0n }
      return v as unknown as bigint
    }
    const l = this.core.lapi
    switch (op) {
      case AtomicOp.ADD: return l.rmw64(RmwOp.FETCH_AND_ADD, task, addr, a)
      case AtomicOp.OR: return l.rmw64(RmwOp.FETCH_AND_OR, task, addr, a)
      case AtomicOp.SWAP: case AtomicOp.STORE: return l.rmw64(RmwOp.SWAP, task, addr, a)
      case AtomicOp.LOAD: return l.rmw64(RmwOp.FETCH_AND_ADD, task, addr, 0n)
      case AtomicOp.CAS: {
        for (;;) {
          if (l.rmw64(RmwOp.COMPARE_AND_SWAP, task, addr, a, b) === 1n) return a
          const old = l.rmw64(RmwOp.FETCH_AND_ADD, task, addr, 0n)
          if (old !== a) return old
        }
      }
      case AtomicOp.AND: case AtomicOp.XOR: {
        let old = l.rmw64(RmwOp.FETCH_AND_ADD, task, addr, 0n)
        for (;;) {
          const v = BigInt.asIntN(64, op === AtomicOp.AND ? (old & a) : (old ^ a))
          if (l.rmw64(RmwOp.COMPARE_AND_SWAP, task, addr, old, v) === 1n) return old
          old = l.rmw64(RmwOp.FETCH_AND_ADD, task, addr, 0n)
        }
      }
      default: this.status = S.ERR_BAD_ARG; return 0n
    }
  }
}

/** `op` with `Atomics` on element `i` of `w`: the old value, or undefined for an unknown op. */
function local (w: Int32Array, i: number, op: number, a: number, b: number): number | undefined {
  switch (op) {
    case AtomicOp.ADD: return Atomics.add(w, i, a)
    case AtomicOp.AND: return Atomics.and(w, i, a)
    case AtomicOp.OR: return Atomics.or(w, i, a)
    case AtomicOp.XOR: return Atomics.xor(w, i, a)
    case AtomicOp.SWAP: case AtomicOp.STORE: return Atomics.exchange(w, i, a)
    case AtomicOp.CAS: return Atomics.compareExchange(w, i, a, b)
    case AtomicOp.LOAD: return Atomics.load(w, i)
    default: return undefined
  }
}
