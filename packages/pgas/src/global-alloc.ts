/**
 * Allocation and freeing of shared arrays by one task (UPC's `upc_global_alloc` and `upc_free`):
 * the caller asks every other task with an active message (library slot SLOT_GALLOC); the target
 * allocates in its own segment (or frees) in the message's completion handler, that is in its
 * progress, with no call of its program, and answers the address (or the status). The caller
 * allocates its own part itself, waits for every answer, and gives back what was allocated when
 * some task had no room. The result is an array descriptor (descriptor.ts) any task makes a view
 * of; the same module makes views and frees from descriptors, for both faces.
 */
import type { compl_hndlr_t, lapi_return_info_t, Ref } from '@amlapi/lapi'
import { WaitCall } from '@amlapi/lapi'
import type { Core } from './core.js'
import { DESC_HEADER, D_BLOCK, D_ELEM, D_KIND, D_LENGTH, D_TASKS, D_TYPE, checkHeader, ctorOf, partBytes, typeCodeOf, writeHeader } from './descriptor.js'
import type { NumArrayCtor } from './gptr.js'
import { Layout, kindOfCode } from './layout.js'
import type { NumArray } from './reduce-ops.js'
import type { Rma } from './rma.js'
import { SharedArray } from './shared-array.js'
import { PgasError, PgasStatus as S } from './status.js'

export const SLOT_GALLOC = 20
const UHDR = 16
/** Messages (word 0): a request to allocate (word 2: bytes) or free (word 2: address), and their answers (word 2: address or −1; status). */
const OP_ALLOC = 1
const OP_ALLOCATED = 2
const OP_FREE = 3
const OP_FREED = 4

/** A request in flight: answers still to come, and each task's answer. */
interface Request {
  left: number
  results: number[]
}
/** What a request's completion handler at the target gets. */
interface Served {
  src: number
  op: number
  id: number
  arg: number
}

export class GlobalAlloc {
  private readonly core: Core
  private readonly hdr: number
  private readonly pending = new Map<number, Request>()
  private nextId = 1

  constructor(core: Core) {
    this.core = core
    this.hdr = core.lapi.setLibraryHandler(
      SLOT_GALLOC,
      (_h: number, uhdr: Uint8Array, _ul: number, info: lapi_return_info_t, comp: Ref<compl_hndlr_t | null>, ui: Ref<unknown>) =>
        this.onMessage(uhdr, info, comp, ui),
    )
  }

  /** A message's header handler: an answer is taken here; a request is served in its completion handler. */
  private onMessage(uhdr: Uint8Array, info: lapi_return_info_t, comp: Ref<compl_hndlr_t | null>, ui: Ref<unknown>): null {
    const dv = new DataView(uhdr.buffer, uhdr.byteOffset, UHDR)
    const op = dv.getInt32(0, true)
    const id = dv.getInt32(4, true)
    const arg = dv.getInt32(8, true)
    if (op === OP_ALLOCATED || op === OP_FREED) {
      const r = this.pending.get(id)
      if (r !== undefined) {
        r.results[info.src] = arg
        r.left--
      }
    } else if (op === OP_ALLOC || op === OP_FREE) {
      comp.value = this.serve
      ui.value = { src: info.src, op, id, arg } satisfies Served
    }
    return null
  }

  /** Allocates or frees at this task for another (a completion handler: this task's progress), and answers. */
  private readonly serve: compl_hndlr_t = (_h, ui) => {
    const { src, op, id, arg } = ui as Served
    let answer = -1
    if (op === OP_ALLOC) {
      try {
        answer = this.core.lapi.malloc(Math.max(1, arg))
      } catch {
        answer = -1
      }
    } else {
      try {
        this.core.lapi.free(arg)
        answer = S.OK
      } catch {
        answer = S.ERR_BAD_ARG
      }
    }
    this.send(src, op + 1, id, answer)
  }

  /** Sends a message of this slot (a header of its own: a wait for the send may serve another request, which sends too). */
  private send(tgt: number, op: number, id: number, arg: number): number {
    const u = Int32Array.of(op, id, arg, 0)
    const c = this.core.counter()
    const rc = this.core.lapi.amsendCode(tgt, this.hdr, new Uint8Array(u.buffer), UHDR, null, 0, c)
    if (rc === 0) c.wait(1)
    this.core.release(c)
    return rc === 0 ? S.OK : S.ERR_LAPI
  }

  /**
   * Sends `op` with `args[t]` to every other task t whose `args[t]` ≥ 0, does `own` here, and
   * waits for every answer (running progress). Results: per task, the answer (−1: none).
   */
  private everywhere(op: number, args: readonly number[], own: (arg: number) => number): { results: number[]; sendFailed: boolean } {
    const me = this.core.rank
    const r: Request = { left: 0, results: new Array<number>(this.core.size).fill(-1) }
    const id = this.nextId
    this.nextId = (this.nextId + 1) | 0 || 1
    this.pending.set(id, r)
    let sendFailed = false
    for (let t = 0; t < this.core.size; t++) {
      if (t === me || args[t]! < 0) continue
      // (counted before the send: the answer may come while the send waits for room)
      r.left++
      if (this.send(t, op, id, args[t]!) !== S.OK) {
        r.left--
        sendFailed = true
      }
    }
    if (args[me]! >= 0) r.results[me] = own(args[me]!)
    if (r.left > 0) this.core.lapi.waitUntil(() => r.left === 0, WaitCall.PGAS_OP)
    this.pending.delete(id)
    return { results: r.results, sendFailed }
  }

  /** `bytes` on every task: every task's address, or ERR_NOMEM (ERR_LAPI) after giving back what was allocated. */
  allocEverywhere(bytes: number): number[] | number {
    const { results, sendFailed } = this.everywhere(OP_ALLOC, new Array<number>(this.core.size).fill(bytes), (b) => {
      try {
        return this.core.lapi.malloc(Math.max(1, b))
      } catch {
        return -1
      }
    })
    if (results.every((a) => a > 0)) return results
    this.freeEverywhere(results)
    return sendFailed ? S.ERR_LAPI : S.ERR_NOMEM
  }

  /** Frees `addrs[t]` on every task t (−1: none): OK, or the first failure (ERR_BAD_ARG: not an allocated address). */
  freeEverywhere(addrs: readonly number[]): number {
    const { results, sendFailed } = this.everywhere(OP_FREE, addrs, (a) => {
      try {
        this.core.lapi.free(a)
        return S.OK
      } catch {
        return S.ERR_BAD_ARG
      }
    })
    if (sendFailed) return S.ERR_LAPI
    for (let t = 0; t < results.length; t++) if (addrs[t]! >= 0 && results[t] !== S.OK) return results[t]! < 0 ? S.ERR_LAPI : results[t]!
    return S.OK
  }

  // ───────────────────────────── descriptors (both faces) ─────────────────────────────

  /**
   * One task: an array of `length` elements (ElemType `type`, `elemBytes` each) laid out by `kind`
   * and `block` over every task; its descriptor into `desc` (DESC_HEADER + P words).
   */
  allocDesc(type: number, elemBytes: number, kind: number, block: number, length: number, desc: Int32Array): number {
    const rc = writeHeader(desc, type, elemBytes, kind, block, length, this.core.size)
    if (rc !== S.OK) return rc
    const r = this.allocEverywhere(partBytes(elemBytes, desc[D_BLOCK]!, length, this.core.size))
    if (typeof r === 'number') return r
    for (let t = 0; t < r.length; t++) desc[DESC_HEADER + t] = r[t]!
    return S.OK
  }

  /** Collective: the same array made by every task at once (`upc_all_alloc`); the descriptor on every task. */
  allAllocDesc(type: number, elemBytes: number, kind: number, block: number, length: number, desc: Int32Array): number {
    const rc = writeHeader(desc, type, elemBytes, kind, block, length, this.core.size)
    if (rc !== S.OK) return rc
    const l = this.core.lapi
    let a = -1
    try {
      a = l.malloc(partBytes(elemBytes, desc[D_BLOCK]!, length, this.core.size))
    } catch {
      a = -1
    }
    const all = l.addressInit(a)
    if (all.some((x) => x < 0)) {
      if (a >= 0) l.free(a)
      return S.ERR_NOMEM
    }
    for (let t = 0; t < all.length; t++) desc[DESC_HEADER + t] = all[t]!
    return S.OK
  }

  /** Checks a descriptor against this job: OK, ERR_BAD_ARG (its header), or the range check of a task's part (ERR_OUT_OF_SEGMENT, ERR_NULL_PTR). */
  checkDesc(desc: ArrayLike<number>): number {
    const rc = checkHeader(desc, this.core.size)
    if (rc !== S.OK) return rc
    const bytes = partBytes(desc[D_ELEM]!, desc[D_BLOCK]!, desc[D_LENGTH]!, desc[D_TASKS]!)
    for (let t = 0; t < this.core.size; t++) {
      const r = this.core.checkRange(t, desc[DESC_HEADER + t]!, bytes)
      if (r !== S.OK) return r
    }
    return S.OK
  }

  /** One task: frees every task's part of the array `desc` describes. */
  freeDesc(desc: ArrayLike<number>): number {
    const rc = this.checkDesc(desc)
    if (rc !== S.OK) return rc
    const addrs: number[] = []
    for (let t = 0; t < this.core.size; t++) addrs.push(desc[DESC_HEADER + t]!)
    return this.freeEverywhere(addrs)
  }

  // ───────────────────────────── shared arrays (the idiomatic face) ─────────────────────────────

  /** One task: a shared array over every task; throws PgasError. */
  array<T extends NumArray>(rma: Rma, type: NumArrayCtor<T>, layout: Layout): SharedArray<T> {
    if (typeCodeOf(type) < 0) throw new PgasError(S.ERR_BAD_ARG, 'globalAlloc (not a typed array type)')
    const r = this.allocEverywhere(partBytes(type.BYTES_PER_ELEMENT, layout.block, layout.length, layout.tasks))
    if (typeof r === 'number') throw new PgasError(r, 'globalAlloc')
    return new SharedArray(this.core, rma, type, layout, r)
  }

  /** A view of the array a descriptor describes; throws PgasError. */
  fromDesc(rma: Rma, desc: ArrayLike<number>): SharedArray<NumArray> {
    const rc = this.checkDesc(desc)
    if (rc !== S.OK) throw new PgasError(rc, 'sharedArrayFrom')
    const type = ctorOf(desc[D_TYPE]!)
    if (type === null) throw new PgasError(S.ERR_BAD_ARG, 'sharedArrayFrom (elements of no typed array type)')
    const layout = new Layout(kindOfCode(desc[D_KIND]!)!, desc[D_LENGTH]!, desc[D_TASKS]!, desc[D_BLOCK]!)
    const bases: number[] = []
    for (let t = 0; t < this.core.size; t++) bases.push(desc[DESC_HEADER + t]!)
    return new SharedArray(this.core, rma, type, layout, bases)
  }

  /** One task: frees every task's part of `a`; throws PgasError (ERR_STATE: freed through this object already). */
  freeArray(a: SharedArray<NumArray>): void {
    if (!(a instanceof SharedArray)) throw new PgasError(S.ERR_BAD_ARG, 'globalFree')
    if (a.isFreed) throw new PgasError(S.ERR_STATE, 'globalFree (freed already)')
    a.markFreed()
    const rc = this.freeEverywhere(a.bases)
    if (rc !== S.OK) throw new PgasError(rc, 'globalFree')
  }
}
