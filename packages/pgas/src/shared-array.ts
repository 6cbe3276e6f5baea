/**
 * Shared arrays: `length` elements of a typed array type spread over all tasks by a Layout
 * (blocked, cyclic, block-cyclic). Made collectively (every task allocates room for the most any
 * task owns, and the tasks exchange where); element access by global index goes to the owner by
 * the fastest path (rma.ts), and the owner works on its part through a local view.
 */
import type { Core } from './core.js'
import { GlobalPtr } from './gptr.js'
import { Layout } from './layout.js'
import type { NumArray } from './reduce-ops.js'
import type { Rma } from './rma.js'
import { PgasError, PgasStatus as S, check } from './status.js'

/** A typed array constructor the shared arrays take. */
export type NumArrayCtor<T extends NumArray> = { new (buffer: ArrayBufferLike, byteOffset: number, length: number): T, new (length: number): T, readonly BYTES_PER_ELEMENT: number }

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

  /** Collective. */
  constructor (core: Core, rma: Rma, type: NumArrayCtor<T>, layout: Layout) {
    this.core = core
    this.rma = rma
    this.type = type
    this.layout = layout
    this.elemBytes = type.BYTES_PER_ELEMENT
    const bytes = Math.max(8, layout.maxLocalCount() * this.elemBytes)
    let base = 0
    try { base = core.lapi.malloc(bytes) } catch { base = -1 }
    const bases = core.lapi.addressInit(base)
    if (bases.some((b) => b < 0)) {
      if (base >= 0) core.lapi.free(base)
      throw new PgasError(S.ERR_NOMEM, 'SharedArray')
    }
    this.bases = bases
    this.one = new type(1)
    this.one8 = new Uint8Array(this.one.buffer, 0, this.elemBytes)
  }

  get length (): number { return this.layout.length }

  /** The task that owns element `i`. */
  owner (i: number): number { return this.layout.owner(i) }

  /** A global pointer to element `i`. */
  ptr (i: number): GlobalPtr {
    this.checkIndex(i)
    const t = this.layout.owner(i)
    return new GlobalPtr(t, this.bases[t]! + this.layout.localIndex(i) * this.elemBytes)
  }

  private checkIndex (i: number): void {
    if (this.freed) throw new PgasError(S.ERR_STATE, 'SharedArray (freed)')
    if (!Number.isInteger(i) || i < 0 || i >= this.layout.length) throw new PgasError(S.ERR_BAD_ARG, `SharedArray index ${i}`)
  }

  /** Element `i` (a get from its owner). */
  get (i: number): T[number] {
    const p = this.ptr(i)
    check(this.rma.get(p.task, p.addr, this.one8), 'SharedArray.get')
    return this.one[0]!
  }

  /** Sets element `i` (a put to its owner, complete when this returns). */
  set (i: number, v: T[number]): void {
    const p = this.ptr(i)
    this.one[0] = v as never
    check(this.rma.put(p.task, p.addr, this.one8), 'SharedArray.set')
  }

  /** This task's part, as a live typed array (local index j is global index layout.globalIndex(rank, j)). */
  localView (): T {
    if (this.freed) throw new PgasError(S.ERR_STATE, 'SharedArray (freed)')
    const n = this.layout.localCount(this.core.rank)
    const v = this.core.lapi.view(this.bases[this.core.rank]!, Math.max(1, n * this.elemBytes))
    return new this.type(v.buffer, v.byteOffset, n)
  }

  /** Collective: gives the memory back (after a barrier of the caller's, as every task may still be reading). */
  free (): void {
    if (this.freed) return
    this.freed = true
    this.core.lapi.free(this.bases[this.core.rank]!)
  }
}
