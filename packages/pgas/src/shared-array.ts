/**
 * Shared arrays: `length` elements of a typed array type spread over all tasks by a Layout
 * (blocked, cyclic, block-cyclic). Made collectively (every task allocates room for the most any
 * task owns, and the tasks exchange where), by one task (`Pgas.globalAlloc`: the others allocate
 * in their progress), or as a view from a descriptor another task handed over; element access by
 * global index goes to the owner by the fastest path (rma.ts), and the owner works on its part
 * through a local view. `ptrAt` gives pointers that step along the layout (shared-ptr.ts).
 */
import type { Core } from './core.js'
import { DESC_HEADER, partBytes, typeCodeOf, D_BLOCK, D_ELEM, D_KIND, D_LENGTH, D_TASKS, D_TYPE } from './descriptor.js'
import { GlobalPtr, type NumArrayCtor } from './gptr.js'
import type { Layout } from './layout.js'
import type { NumArray } from './reduce-ops.js'
import type { Rma } from './rma.js'
import { SharedPtr } from './shared-ptr.js'
import { PgasError, PgasStatus as S, check } from './status.js'
import { elementWhy, indexWhy } from './explain.js'

export type { NumArrayCtor } from './gptr.js'

export class SharedArray<T extends NumArray> {
  readonly layout: Layout
  readonly type: NumArrayCtor<T>
  readonly elemBytes: number
  /** Every task's base address, index = task. */
  readonly bases: readonly number[]
  private readonly core: Core
  private readonly rma: Rma
  private readonly one: T
  private readonly one8: Uint8Array
  private freed = false

  /**
   * @internal (programs make shared arrays with `Pgas.sharedArray`, `globalAlloc`, `sharedArrayFrom`)
   * Collective without `bases`: every task allocates its part and the tasks exchange where.
   * With `bases` (every task's base address), a view of an array made elsewhere: nothing is allocated.
   */
  constructor(core: Core, rma: Rma, type: NumArrayCtor<T>, layout: Layout, bases?: readonly number[]) {
    this.core = core
    this.rma = rma
    this.type = type
    this.layout = layout
    this.elemBytes = type.BYTES_PER_ELEMENT
    if (bases !== undefined) this.bases = bases.slice()
    else {
      const bytes = partBytes(this.elemBytes, layout.block, layout.length, layout.tasks)
      let base = 0
      try {
        base = core.lapi.malloc(bytes)
      } catch {
        base = -1
      }
      const all = core.lapi.addressInit(base)
      if (all.some((b) => b < 0)) {
        if (base >= 0) core.lapi.free(base)
        throw new PgasError(S.ERR_NOMEM, 'SharedArray')
      }
      this.bases = all
    }
    this.one = new type(1)
    this.one8 = new Uint8Array(this.one.buffer, 0, this.elemBytes)
  }

  get length(): number {
    return this.layout.length
  }

  /** Whether `free` or `Pgas.globalFree` gave it back (through this object). */
  get isFreed(): boolean {
    return this.freed
  }

  /** The task that owns element `i`. */
  owner(i: number): number {
    return this.layout.owner(i)
  }

  /** A global pointer to element `i` (untyped, phase-less: arithmetic on it is in bytes of the owner's segment). */
  ptr(i: number): GlobalPtr {
    this.checkIndex(i, this.layout.length - 1)
    const t = this.layout.owner(i)
    return new GlobalPtr(t, this.bases[t]! + this.layout.localIndex(i) * this.elemBytes)
  }

  /**
   * A pointer to element `i` (0 ≤ i ≤ length: one past the end too) that carries its phase: its
   * `add(n)` steps along the layout, `diff` and `compare` count in the array's global order.
   */
  ptrAt(i: number): SharedPtr<T> {
    this.checkIndex(i, this.layout.length)
    return new SharedPtr(this, i)
  }

  private checkIndex(i: number, last: number): void {
    if (this.freed) throw new PgasError(S.ERR_STATE, 'SharedArray (freed)')
    if (!Number.isInteger(i) || i < 0 || i > last)
      throw new PgasError(S.ERR_BAD_ARG, 'SharedArray', indexWhy(i, this.layout.length, last === this.layout.length))
  }

  /** Element `i` (a get from its owner). */
  get(i: number): T[number] {
    const p = this.ptr(i)
    check(this.rma.get(p.task, p.addr, this.one8), 'SharedArray.get')
    return this.one[0]!
  }

  /** Sets element `i` (a put to its owner, complete when this returns). */
  set(i: number, v: T[number]): void {
    const p = this.ptr(i)
    try {
      this.one[0] = v as never
    } catch {
      throw new PgasError(S.ERR_BAD_ARG, 'SharedArray.set', elementWhy(v, this.type.name))
    }
    check(this.rma.put(p.task, p.addr, this.one8), 'SharedArray.set')
  }

  /** This task's part, as a live typed array (local index j is global index layout.globalIndex(rank, j)). */
  localView(): T {
    if (this.core.closed) throw new PgasError(S.ERR_NOT_INIT, 'SharedArray.localView (after finalize)')
    if (this.freed) throw new PgasError(S.ERR_STATE, 'SharedArray (freed)')
    const n = this.layout.localCount(this.core.rank)
    const v = this.core.lapi.view(this.bases[this.core.rank]!, Math.max(1, n * this.elemBytes))
    return new this.type(v.buffer, v.byteOffset, n)
  }

  /**
   * The array as plain numbers (descriptor.ts: element type, layout, every task's base address),
   * for other tasks to make a view of it with `Pgas.sharedArrayFrom`.
   */
  descriptor(): Int32Array {
    const l = this.layout
    const d = new Int32Array(DESC_HEADER + l.tasks)
    d[D_TYPE] = typeCodeOf(this.type)
    d[D_ELEM] = this.elemBytes
    d[D_KIND] = l.code
    d[D_BLOCK] = l.block
    d[D_LENGTH] = l.length
    d[D_TASKS] = l.tasks
    for (let t = 0; t < l.tasks; t++) d[DESC_HEADER + t] = this.bases[t]!
    return d
  }

  /** Whether `other` is this array or a view of the same memory with the same layout. */
  sameAs(other: SharedArray<NumArray>): boolean {
    if (other === (this as unknown)) return true
    const a = this.layout
    const b = other.layout
    if (a.kind !== b.kind || a.block !== b.block || a.length !== b.length || a.tasks !== b.tasks || this.elemBytes !== other.elemBytes) return false
    for (let t = 0; t < a.tasks; t++) if (this.bases[t] !== other.bases[t]) return false
    return true
  }

  /** @internal Marks it given back (by `Pgas.globalFree`). */
  markFreed(): void {
    this.freed = true
  }

  /**
   * Collective: gives the memory back (after a barrier of the caller's, as every task may still be
   * reading). An array is freed once: by this, or by one task's `Pgas.globalFree`.
   */
  free(): void {
    if (this.freed) return
    this.freed = true
    try {
      this.core.lapi.free(this.bases[this.core.rank]!)
    } catch {
      throw new PgasError(S.ERR_STATE, 'SharedArray.free (already freed)')
    }
  }
}
