/**
 * Remote atomics on signed 8-, 16-, 32-bit (number) and 64-bit (bigint) integers and on 32- and
 * 64-bit floats (number), fetching (they return the old value) and non-fetching (completed by
 * `Core.quiet`). A co-located word is operated on with `Atomics` directly; any other with LAPI's
 * Rmw, whose FETCH_AND_ADD, FETCH_AND_OR, SWAP and COMPARE_AND_SWAP on 32- and 64-bit words are
 * one round trip; everything else is a compare-and-swap loop over a read (FETCH_AND_ADD of 0):
 * AND, XOR, MIN, MAX, float ADD/MIN/MAX, and every operation on an 8- or 16-bit integer, which
 * works on the aligned 32-bit word that holds it. All are atomic with respect to each other
 * wherever they are issued: LAPI's target side performs its operations with `Atomics` on the same
 * memory (a byte's `Atomics` and its word's compare-and-swap are the same hardware operations).
 * atomics-word.ts computes the new words of the loops.
 */
import { LapiError, RmwOp } from '@amlapi/lapi'
import { LAPI_Rmw, LAPI_Rmw64 } from '@amlapi/lapi/compat'
import {
  AtomicKind as K,
  AtomicOp,
  KIND_BYTES,
  type Step32,
  type Step64,
  bitsOfF32,
  bitsOfF64,
  f32OfBits,
  f64OfBits,
  field16,
  field8,
  hasNf,
  hasOp,
  shiftOf,
  stepF32,
  stepF64,
  stepI16,
  stepI32,
  stepI64,
  stepI8,
  wrap,
} from './atomics-word.js'
import type { Core } from './core.js'
import { PgasStatus as S } from './status.js'

export { AtomicKind, AtomicOp, type AtomicOpCode } from './atomics-word.js'

/** The typed array of each kind's flat-face result (`old`). */
const OUT = [Int8Array, Int16Array, Int32Array, BigInt64Array, Float32Array, Float64Array] as const

export class RemoteAtomics {
  private readonly core: Core
  /** The status of the last fetching call (0: it returned a value). */
  status = 0
  /** Per task, byte and half-word views of its segment when it is of this process, else null. */
  private readonly i8: Array<Int8Array | null> = []
  private readonly i16: Array<Int16Array | null> = []
  /** The LAPI handle, and the operand words of the non-blocking Rmw (LAPI copies them at once). */
  private readonly handle: number
  private readonly in32 = new Int32Array(2)
  private readonly in64 = new BigInt64Array(2)

  constructor(core: Core) {
    this.core = core
    this.handle = core.lapi.handle
    for (const u of core.u8) {
      this.i8.push(u === null ? null : new Int8Array(u.buffer, u.byteOffset, u.byteLength))
      this.i16.push(u === null ? null : new Int16Array(u.buffer, u.byteOffset, u.byteLength >>> 1))
    }
  }

  /**
   * The status of `op` on a word of kind `kind` at (task, addr) with operands `a` and (CAS) `b`:
   * an op the kind has (`nf`: one with a non-fetching form), a word inside the segment, aligned to
   * its size, operands of the kind's type (bigint for I64, an integer number for the other
   * integers, any number for floats).
   */
  private check(kind: number, op: number, task: number, addr: number, a: unknown, b: unknown, nf: boolean): number {
    if (!(nf ? hasNf(kind, op) : hasOp(kind, op))) return S.ERR_BAD_ARG
    const bytes = KIND_BYTES[kind]!
    const rc = this.core.checkRange(task, addr, bytes)
    if (rc !== 0) return rc
    // (a byte or half-word in the null word: LAPI refuses address 0 as a remote word)
    if (addr < 4) return S.ERR_NULL_PTR
    if (addr % bytes !== 0) return S.ERR_ALIGN
    if (op !== AtomicOp.LOAD && !operand(kind, a)) return S.ERR_BAD_ARG
    if (op === AtomicOp.CAS && !operand(kind, b)) return S.ERR_BAD_ARG
    return S.OK
  }

  /** A LapiError of a remote operation becomes ERR_LAPI in `status`; anything else is a bug, thrown on. */
  private failed(e: unknown): void {
    if (!(e instanceof LapiError)) throw e
    this.status = S.ERR_LAPI
  }

  /**
   * `op` on the 32-bit word at `addr` of task `task` with operand `a` (and `b`, CAS's new value);
   * returns the old value (CAS: the old value too; it swapped when that equals `a`). Sets `status`.
   */
  op32(op: number, task: number, addr: number, a: number, b = 0): number {
    return this.opN(K.I32, op, task, addr, a, b)
  }

  /** `op32` on a 64-bit word (8-byte aligned), with bigint operands. */
  op64(op: number, task: number, addr: number, a: bigint, b = 0n): bigint {
    const rc = this.check(K.I64, op, task, addr, a, b, false)
    this.status = rc
    if (rc !== 0) return 0n
    try {
      return this.int64(op, task, addr, op === AtomicOp.LOAD ? 0n : BigInt.asIntN(64, a), op === AtomicOp.CAS ? BigInt.asIntN(64, b) : 0n)
    } catch (e) {
      this.failed(e)
      return 0n
    }
  }

  /** `op32` on a word of a number-valued kind (I8, I16, I32, F32, F64); floats' CAS compares bits. */
  opN(kind: number, op: number, task: number, addr: number, a: number, b = 0): number {
    const rc = this.check(kind, op, task, addr, a, b, false)
    this.status = rc
    if (rc !== 0) return 0
    try {
      return this.num(kind, op, task, addr, a, b)
    } catch (e) {
      this.failed(e)
      return 0
    }
  }

  /**
   * The non-fetching form of `op` (ADD, AND, OR, XOR, MIN, MAX, STORE); returns the status. On a
   * co-located word it is done on return. On another task, a 32/64-bit integer's ADD, OR and
   * STORE and a float's STORE are one LAPI Rmw started on the implicit counter (done at the
   * target by the next `quiet`); the other operations are compare-and-swap loops, done on return.
   */
  nf(kind: number, op: number, task: number, addr: number, a: number | bigint): number {
    const rc = this.check(kind, op, task, addr, a, 0, true)
    if (rc !== 0) return rc
    try {
      if (this.core.i32[task] === null) {
        const r = posted(kind, op)
        if (r >= 0) return this.post(kind, r, task, addr, a)
      }
      if (kind === K.I64) this.int64(op, task, addr, BigInt.asIntN(64, a as bigint), 0n)
      else this.num(kind, op, task, addr, a as number, 0)
      return S.OK
    } catch (e) {
      this.failed(e)
      return this.status
    }
  }

  /**
   * The flat face's fetching call: the old value into `old[0]` (a typed array of the kind:
   * Int8Array, Int16Array, Int32Array, BigInt64Array, Float32Array, Float64Array); the status.
   */
  toArray(kind: number, op: number, task: number, addr: number, a: unknown, b: unknown, old: unknown): number {
    if (!(old instanceof OUT[kind]!) || (old as ArrayLike<unknown>).length < 1) return S.ERR_BAD_ARG
    if (kind === K.I64) {
      const v = this.op64(op, task, addr, a as bigint, b as bigint)
      if (this.status === 0) (old as BigInt64Array)[0] = v
    } else {
      const v = this.opN(kind, op, task, addr, a as number, b as number)
      if (this.status === 0) (old as Int32Array)[0] = v
    }
    return this.status
  }

  // ───────────────────────────── the operations, arguments checked ─────────────────────────────

  private num(kind: number, op: number, task: number, addr: number, a: number, b: number): number {
    switch (kind) {
      case K.I32:
        return this.int32(op, task, addr, a | 0, b | 0)
      case K.F32:
        if (op === AtomicOp.ADD || op === AtomicOp.MIN || op === AtomicOp.MAX) return f32OfBits(this.loop32(stepF32, op, task, addr, Math.fround(a), 0, 0))
        // (SWAP, STORE, LOAD and CAS by the bits: a CAS swaps when the word holds the bits of `a`)
        return f32OfBits(this.int32(op, task, addr, bitsOfF32(a), bitsOfF32(b)))
      case K.F64:
        if (op === AtomicOp.ADD || op === AtomicOp.MIN || op === AtomicOp.MAX) return f64OfBits(this.loop64(stepF64, op, task, addr, bitsOfF64(a), 0n))
        return f64OfBits(this.int64(op, task, addr, bitsOfF64(a), op === AtomicOp.CAS ? bitsOfF64(b) : 0n))
      default:
        return this.small(kind, op, task, addr, wrap(kind, a), wrap(kind, b))
    }
  }

  private int32(op: number, task: number, addr: number, a: number, b: number): number {
    const w = this.core.i32[task]
    if (w !== null) return local(w, addr >>> 2, op, a, b)
    const l = this.core.lapi
    switch (op) {
      case AtomicOp.ADD:
        return l.rmw(RmwOp.FETCH_AND_ADD, task, addr, a)
      case AtomicOp.OR:
        return l.rmw(RmwOp.FETCH_AND_OR, task, addr, a)
      case AtomicOp.SWAP:
      case AtomicOp.STORE:
        return l.rmw(RmwOp.SWAP, task, addr, a)
      case AtomicOp.LOAD:
        return l.rmw(RmwOp.FETCH_AND_ADD, task, addr, 0)
      case AtomicOp.CAS:
        return this.cx32(task, addr, a, b)
      default:
        return this.loop32(stepI32, op, task, addr, a, b, 0)
    }
  }

  private int64(op: number, task: number, addr: number, a: bigint, b: bigint): bigint {
    const w = this.core.i64[task]
    // (the same Atomics calls, on a BigInt64Array with bigints)
    if (w !== null) return local(w as unknown as Int32Array, addr >>> 3, op, a as unknown as number, b as unknown as number) as unknown as bigint
    const l = this.core.lapi
    switch (op) {
      case AtomicOp.ADD:
        return l.rmw64(RmwOp.FETCH_AND_ADD, task, addr, a)
      case AtomicOp.OR:
        return l.rmw64(RmwOp.FETCH_AND_OR, task, addr, a)
      case AtomicOp.SWAP:
      case AtomicOp.STORE:
        return l.rmw64(RmwOp.SWAP, task, addr, a)
      case AtomicOp.LOAD:
        return l.rmw64(RmwOp.FETCH_AND_ADD, task, addr, 0n)
      case AtomicOp.CAS:
        return this.cx64(task, addr, a, b)
      default:
        return this.loop64(stepI64, op, task, addr, a, b)
    }
  }

  /** An 8- or 16-bit integer: `Atomics` on its own bytes here, else a loop on its 32-bit word. */
  private small(kind: number, op: number, task: number, addr: number, a: number, b: number): number {
    const w = kind === K.I8 ? this.i8[task] : this.i16[task]
    if (w !== null) return local(w, kind === K.I8 ? addr : addr >>> 1, op, a, b)
    const sh = shiftOf(addr, KIND_BYTES[kind]!)
    const word = addr & ~3
    const old = op === AtomicOp.LOAD ? this.ld32(task, word) : this.loop32(kind === K.I8 ? stepI8 : stepI16, op, task, word, a, b, sh)
    return kind === K.I8 ? field8(old, sh) : field16(old, sh)
  }

  /** A non-fetching LAPI Rmw (`r`) on the implicit counter; the status. */
  private post(kind: number, r: number, task: number, addr: number, a: number | bigint): number {
    const c = this.core.implicitCounter().addr
    let rc: number
    if (kind === K.I32 || kind === K.F32) {
      this.in32[0] = kind === K.I32 ? (a as number) : bitsOfF32(a as number)
      rc = LAPI_Rmw(this.handle, r, task, addr, this.in32, null, c)
    } else {
      this.in64[0] = kind === K.I64 ? (a as bigint) : bitsOfF64(a as number)
      rc = LAPI_Rmw64(this.handle, r, task, addr, this.in64, null, c)
    }
    if (rc !== 0) return S.ERR_LAPI
    this.core.issuedImplicit()
    return S.OK
  }

  // ───────────────────────── words: read, compare-and-swap, the loops ─────────────────────────

  private ld32(task: number, addr: number): number {
    const w = this.core.i32[task]
    return w !== null ? Atomics.load(w, addr >>> 2) : this.core.lapi.rmw(RmwOp.FETCH_AND_ADD, task, addr, 0)
  }

  /** Compare-and-swap with `Atomics.compareExchange`'s answer: the old word (it swapped when that is `e`). */
  private cx32(task: number, addr: number, e: number, v: number): number {
    const w = this.core.i32[task]
    if (w !== null) return Atomics.compareExchange(w, addr >>> 2, e, v)
    const l = this.core.lapi
    for (;;) {
      if (l.rmw(RmwOp.COMPARE_AND_SWAP, task, addr, e, v) === 1) return e
      const now = l.rmw(RmwOp.FETCH_AND_ADD, task, addr, 0)
      // (the word changed back to `e` between the two: try again, so the answer is exact)
      if (now !== e) return now
    }
  }

  /** Replaces the word by `step(word, …)` until a compare-and-swap succeeds; returns the old word. */
  private loop32(step: Step32, op: number, task: number, addr: number, a: number, b: number, sh: number): number {
    let cur = this.ld32(task, addr)
    for (;;) {
      const v = step(cur, op, a, b, sh)
      // (no change to make: the read is the operation's moment)
      if (v === cur) return cur
      const seen = this.cx32(task, addr, cur, v)
      if (seen === cur) return cur
      cur = seen
    }
  }

  private ld64(task: number, addr: number): bigint {
    const w = this.core.i64[task]
    return w !== null ? Atomics.load(w, addr >>> 3) : this.core.lapi.rmw64(RmwOp.FETCH_AND_ADD, task, addr, 0n)
  }

  private cx64(task: number, addr: number, e: bigint, v: bigint): bigint {
    const w = this.core.i64[task]
    if (w !== null) return Atomics.compareExchange(w, addr >>> 3, e, v)
    const l = this.core.lapi
    for (;;) {
      if (l.rmw64(RmwOp.COMPARE_AND_SWAP, task, addr, e, v) === 1n) return e
      const now = l.rmw64(RmwOp.FETCH_AND_ADD, task, addr, 0n)
      if (now !== e) return now
    }
  }

  private loop64(step: Step64, op: number, task: number, addr: number, a: bigint, b: bigint): bigint {
    let cur = this.ld64(task, addr)
    for (;;) {
      const v = step(cur, op, a, b)
      if (v === cur) return cur
      const seen = this.cx64(task, addr, cur, v)
      if (seen === cur) return cur
      cur = seen
    }
  }
}

/** Whether `v` is an operand of kind `kind`. */
function operand(kind: number, v: unknown): boolean {
  return kind === K.I64 ? typeof v === 'bigint' : kind >= K.F32 ? typeof v === 'number' : Number.isInteger(v)
}

/** The LAPI Rmw that is the non-fetching `op` on a word of kind `kind` by itself, or -1 (a loop). */
function posted(kind: number, op: number): number {
  if (kind === K.I8 || kind === K.I16) return -1
  if (op === AtomicOp.STORE) return RmwOp.SWAP
  if (kind !== K.I32 && kind !== K.I64) return -1
  return op === AtomicOp.ADD ? RmwOp.FETCH_AND_ADD : op === AtomicOp.OR ? RmwOp.FETCH_AND_OR : -1
}

/** `op` with `Atomics` on element `i` of `w` (operands already of its width): the old value. */
function local(w: Int8Array | Int16Array | Int32Array, i: number, op: number, a: number, b: number): number {
  switch (op) {
    case AtomicOp.ADD:
      return Atomics.add(w, i, a)
    case AtomicOp.AND:
      return Atomics.and(w, i, a)
    case AtomicOp.OR:
      return Atomics.or(w, i, a)
    case AtomicOp.XOR:
      return Atomics.xor(w, i, a)
    case AtomicOp.SWAP:
    case AtomicOp.STORE:
      return Atomics.exchange(w, i, a)
    case AtomicOp.CAS:
      return Atomics.compareExchange(w, i, a, b)
    case AtomicOp.MIN:
    case AtomicOp.MAX: {
      let cur = Atomics.load(w, i)
      for (;;) {
        if (op === AtomicOp.MIN ? a >= cur : a <= cur) return cur
        const seen = Atomics.compareExchange(w, i, cur, a)
        if (seen === cur) return cur
        cur = seen
      }
    }
    default:
      return Atomics.load(w, i)
  }
}
