/**
 * Global pointers: a task and a byte address in that task's segment, and the element type they
 * point to (a typed array constructor; Uint8Array, bytes, when none is given). Immutable;
 * arithmetic makes new ones and counts in elements of the type (in bytes for an untyped pointer).
 * The flat face passes the two numbers instead. Address 0 is null on every task: `GlobalPtr.NULL`
 * is (task 0, address 0), as UPC's; an access through any null pointer answers ERR_NULL_PTR, and
 * so does arithmetic on one.
 */
import type { Core } from './core.js'
import { typeCodeOf } from './descriptor.js'
import type { NumArray } from './reduce-ops.js'
import { PgasError, PgasStatus as S } from './status.js'
import { rangeError, show } from './explain.js'

/** A typed array constructor: what shared arrays and typed pointers take. */
export type NumArrayCtor<T extends NumArray> = {
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): T
  new (length: number): T
  readonly BYTES_PER_ELEMENT: number
}

/** This task's runtime, as pgas.ts tells it (a hook, so that this module imports no runtime). */
let runtimeCore: () => Core | null = () => null
/** @internal Set once by pgas.ts: the running runtime's Core, or null before init and after finalize. */
export function setPointerRuntime(f: () => Core | null): void {
  runtimeCore = f
}

/** The runtime a pointer asks where its task is; ERR_NOT_INIT without one. */
function runtime(what: string): Core {
  const c = runtimeCore()
  if (c === null) throw new PgasError(S.ERR_NOT_INIT, what)
  return c
}

export class GlobalPtr<T extends NumArray = NumArray> {
  /** The null pointer: task 0, address 0. Accesses through it and arithmetic on it answer ERR_NULL_PTR. */
  static readonly NULL: GlobalPtr = new GlobalPtr(0, 0)

  /** The task whose segment it points into (UPC's `upc_threadof`). */
  readonly task: number
  /** The byte address in that segment (UPC's `upc_addrfield`). */
  readonly addr: number
  /** The element type (Uint8Array for an untyped pointer). */
  readonly type: NumArrayCtor<T>

  /** A pointer to `addr` of task `task`, to elements of `type` (default: bytes); ERR_BAD_ARG for a `type` that is no typed array constructor. */
  constructor(task: number, addr: number, type?: NumArrayCtor<T>) {
    if (type !== undefined && typeCodeOf(type) < 1) throw new PgasError(S.ERR_BAD_ARG, 'GlobalPtr: not a typed array type')
    this.task = task
    this.addr = addr
    this.type = type ?? (Uint8Array as unknown as NumArrayCtor<T>)
  }

  /** Bytes of one element (1 for an untyped pointer). */
  get elemBytes(): number {
    return this.type.BYTES_PER_ELEMENT
  }

  /** The position within a block of a shared array (UPC's `upc_phaseof`): 0 for a pointer without a layout. */
  get phase(): number {
    return 0
  }

  /** Whether this is a null pointer (address 0, on any task). */
  isNull(): boolean {
    return this.addr === 0
  }

  /** The same place, seen as elements of `type`. */
  as<U extends NumArray>(type: NumArrayCtor<U>): GlobalPtr<U> {
    return new GlobalPtr(this.task, this.addr, type)
  }

  /** The pointer `n` elements further in the same task's segment (bytes, for an untyped pointer). */
  add(n: number): GlobalPtr<T> {
    this.checkArith(n, 'GlobalPtr.add')
    return new GlobalPtr(this.task, this.addr + n * this.elemBytes, this.type)
  }

  /** The pointer `n` elements of `elemBytes` further (whatever its type). */
  index(n: number, elemBytes: number): GlobalPtr<T> {
    this.checkArith(n, 'GlobalPtr.index')
    if (!Number.isInteger(elemBytes)) throw new PgasError(S.ERR_BAD_ARG, 'GlobalPtr.index')
    return new GlobalPtr(this.task, this.addr + n * elemBytes, this.type)
  }

  /**
   * Elements (of this pointer's type) from `other` to this pointer; both in the same task's
   * segment, else ERR_BAD_ARG (ERR_NULL_PTR for a null one).
   */
  diff(other: GlobalPtr<NumArray>): number {
    if (!(other instanceof GlobalPtr)) throw new PgasError(S.ERR_BAD_ARG, 'GlobalPtr.diff')
    if (this.isNull() || other.isNull()) throw new PgasError(S.ERR_NULL_PTR, 'GlobalPtr.diff')
    if (other.task !== this.task) throw new PgasError(S.ERR_BAD_ARG, 'GlobalPtr.diff: pointers into different tasks')
    return (this.addr - other.addr) / this.elemBytes
  }

  /** Same task and address (the type is not compared); every null pointer equals every other. */
  equals(other: GlobalPtr<NumArray>): boolean {
    return other instanceof GlobalPtr && this.compare(other) === 0
  }

  /**
   * Orders pointers by task, then address: negative, 0 or positive. Null pointers come before
   * every other, and are equal among themselves.
   */
  compare(other: GlobalPtr<NumArray>): number {
    if (!(other instanceof GlobalPtr)) throw new PgasError(S.ERR_BAD_ARG, 'GlobalPtr.compare')
    const a = this.isNull()
    const b = other.isNull()
    if (a || b) return a && b ? 0 : a ? -1 : 1
    return this.task !== other.task ? Math.sign(this.task - other.task) : Math.sign(this.addr - other.addr)
  }

  /** Whether its task shares this process's memory (plain loads and stores reach it); false for a null pointer. Needs the runtime (ERR_NOT_INIT). */
  isLocal(): boolean {
    const c = runtime('GlobalPtr.isLocal')
    return !this.isNull() && Number.isInteger(this.task) && this.task >= 0 && this.task < c.size && c.isLocal(this.task)
  }

  /**
   * A live view of `n` elements at this pointer when its task shares this process's memory, else
   * null. Checked as a get of those bytes would be (ERR_BAD_TASK, ERR_OUT_OF_SEGMENT, ERR_BAD_ARG,
   * ERR_NULL_PTR); ERR_ALIGN when the address is not a multiple of the element size.
   */
  local(n = 1): T | null {
    const c = runtime('GlobalPtr.local')
    const eb = this.elemBytes
    if (!Number.isInteger(n) || n < 0)
      throw new PgasError(S.ERR_BAD_ARG, 'GlobalPtr.local', `n ${show(n)} is not a count of elements (a whole number, 0 or more)`)
    if (this.isNull()) throw new PgasError(S.ERR_NULL_PTR, 'GlobalPtr.local', `a null pointer (task ${show(this.task)}, address 0)`)
    const rc = c.checkRange(this.task, this.addr, n * eb)
    if (rc !== 0) throw rangeError(c, rc, 'GlobalPtr.local', this.task, this.addr, n * eb)
    const seg = c.u8[this.task]
    if (seg === null || seg === undefined) return null
    if (this.addr % eb !== 0) throw new PgasError(S.ERR_ALIGN, 'GlobalPtr.local', `address ${this.addr} is not a multiple of the element size (${eb} bytes)`)
    return new this.type(seg.buffer, this.addr, n)
  }

  toString(): string {
    return `${this.task}:${this.addr}`
  }

  private checkArith(n: number, what: string): void {
    if (this.isNull()) throw new PgasError(S.ERR_NULL_PTR, what, `arithmetic on a null pointer (task ${show(this.task)}, address 0)`)
    if (!Number.isInteger(n))
      throw new PgasError(
        S.ERR_BAD_ARG,
        what,
        typeof n === 'bigint' ? `n ${show(n)} is a BigInt, but a count of elements is a number` : `n ${show(n)} is not a whole number`,
      )
  }
}
