/**
 * The idiomatic face's first half: the parts of a task's runtime (made here, in their order), and
 * what works on memory alone: allocation, shared arrays, put and get in every form, copy and fill,
 * atomics. `Pgas` (pgas.ts) adds calls, synchronisation, collectives and the Promise forms.
 */
import type { Lapi, Counter, SegmentMemory } from '@amlapi/lapi'
import { AtomicKind, AtomicOp, RemoteAtomics } from './atomics.js'
import { Barrier } from './barrier.js'
import { Collectives } from './collectives.js'
import { Core } from './core.js'
import { Copier } from './copy.js'
import { GlobalAlloc } from './global-alloc.js'
import { GlobalPtr } from './gptr.js'
import { Layout, type LayoutKind } from './layout.js'
import { Messages } from './messages.js'
import { type NumArray, bytesOf } from './reduce-ops.js'
import { OpHandle, Rma } from './rma.js'
import { SharedBlocks } from './shared-block.js'
import { ShmSync } from './shm-sync.js'
import { Rpc } from './rpc.js'
import { DistObjects } from './dist-object.js'
import { AsyncOps } from './async-ops.js'
import { type NumArrayCtor, SharedArray } from './shared-array.js'
import { PgasError, PgasStatus as S, check } from './status.js'
import { atomicError, indexedError, rangeError } from './explain.js'
/** How a shared array is laid out: a kind, and for block-cyclic the block size. */
export interface LayoutSpec {
  kind: LayoutKind
  block?: number
}

/** The element types of shared arrays, and the layout kinds. */
const ELEMENT_TYPES = new Set<unknown>([
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
])
const LAYOUT_KINDS = new Set<unknown>(['blocked', 'cyclic', 'block-cyclic'])

/**
 * A counter on every task that `putSignal`s move at their target: a task waits on its own for the
 * puts it expects (halo exchanges: data and "it is there" in one message).
 */
export class SignalCounter {
  /** Every task's counter address, index = task. */
  readonly addrs: readonly number[]
  private readonly mine: Counter
  constructor(mine: Counter, addrs: readonly number[]) {
    this.mine = mine
    this.addrs = addrs
  }
  /** Waits until `n` signals came (and takes them off). */
  wait(n = 1): void {
    this.mine.wait(n)
  }
  /** Signals that came and were not waited for yet. */
  get value(): number {
    return this.mine.get()
  }
}

export abstract class PgasBase {
  /** @internal */ readonly core: Core
  /** @internal */ readonly rma: Rma
  /** @internal */ readonly atomics: RemoteAtomics
  /** @internal */ readonly blocks: SharedBlocks
  /** @internal */ readonly msg: Messages
  /** @internal */ readonly sync: ShmSync
  /** @internal */ readonly bar: Barrier
  /** @internal */ readonly coll: Collectives
  /** @internal */ readonly rpcs: Rpc
  /** @internal */ readonly dists: DistObjects
  /** @internal */ readonly asyncOps: AsyncOps
  /** @internal */ readonly copier: Copier
  /** @internal */ readonly galloc: GlobalAlloc

  /** A barrier of all tasks (Pgas's). */
  abstract barrier(id?: number): void

  protected constructor(lapi: Lapi) {
    this.core = new Core(lapi)
    this.rma = new Rma(this.core)
    this.atomics = new RemoteAtomics(this.core)
    this.blocks = new SharedBlocks(this.core)
    this.msg = new Messages(this.core, this.blocks)
    this.sync = new ShmSync(this.core, this.blocks, () => this.msg.unblock())
    this.bar = new Barrier(this.core, this.msg, this.sync)
    this.coll = new Collectives(this.core, this.msg, this.sync)
    this.rpcs = new Rpc(this.core)
    this.dists = new DistObjects(this.core, this.rpcs)
    this.asyncOps = new AsyncOps(this.core, this.rma, this.rpcs)
    this.copier = new Copier(this.core, this.rma)
    this.galloc = new GlobalAlloc(this.core)
  }

  get lapi(): Lapi {
    return this.core.lapi
  }
  get rank(): number {
    return this.core.rank
  }
  get size(): number {
    return this.core.size
  }

  /** Runs handlers and remote procedure calls that came (a program that computes should call it now and then). */
  progress(): void {
    this.core.progress()
    this.rpcs.serveQueued()
  }

  // ───────────────────────────── memory ─────────────────────────────

  /** `bytes` of this task's segment (zero-filled), as a global pointer. */
  alloc(bytes: number): GlobalPtr {
    if (!Number.isInteger(bytes) || bytes < 0)
      throw new PgasError(
        S.ERR_BAD_ARG,
        'alloc',
        `bytes ${typeof bytes === 'bigint' ? `${String(bytes)}n is a BigInt, but a length is a number` : `${String(bytes)} is not a number of bytes (a whole number, 0 or more)`}`,
      )
    try {
      return new GlobalPtr(this.rank, this.core.lapi.malloc(Math.max(1, bytes)))
    } catch {
      throw new PgasError(S.ERR_NOMEM, 'alloc', `no room for ${bytes} more bytes in this task's segment (${this.core.segmentSize} bytes)`)
    }
  }

  /** Frees what `alloc` gave this task. */
  free(p: GlobalPtr): void {
    p = gp(p, 'free')
    if (p.task !== this.rank)
      throw new PgasError(S.ERR_BAD_TASK, 'free', `only the owner frees: the pointer is task ${String(p.task)}'s, this is task ${this.rank}`)
    try {
      this.core.lapi.free(p.addr)
    } catch {
      throw new PgasError(S.ERR_BAD_ARG, 'free', `address ${String(p.addr)} is not one alloc gave (or it was freed already)`)
    }
  }

  /** Collective: `bytes` on every task; every task gets all the pointers (index = task). */
  allocAll(bytes: number): GlobalPtr[] {
    if (!Number.isInteger(bytes) || bytes < 0)
      throw new PgasError(
        S.ERR_BAD_ARG,
        'allocAll',
        `bytes ${typeof bytes === 'bigint' ? `${String(bytes)}n is a BigInt, but a length is a number` : `${String(bytes)} is not a number of bytes`}`,
      )
    let a = -1
    try {
      a = this.core.lapi.malloc(Math.max(1, bytes))
    } catch {
      a = -1
    }
    const all = this.core.lapi.addressInit(a)
    if (all.some((x) => x < 0)) {
      if (a >= 0) this.core.lapi.free(a)
      throw new PgasError(S.ERR_NOMEM, 'allocAll')
    }
    return all.map((x, t) => new GlobalPtr(t, x))
  }

  /** Collective: frees what `allocAll` gave (a barrier first: no task may still be using it). */
  freeAll(ptrs: readonly GlobalPtr[]): void {
    this.barrier()
    // (checked after the barrier: a task with a bad argument does not leave the others waiting)
    if (!Array.isArray(ptrs)) throw new PgasError(S.ERR_BAD_ARG, 'freeAll: not an array of pointers')
    this.free(ptrs[this.rank]!)
  }

  /** Collective: a shared array of `length` elements of `type`, laid out by `layout` (default blocked). */
  sharedArray<T extends NumArray>(type: NumArrayCtor<T>, length: number, layout: LayoutSpec = { kind: 'blocked' }): SharedArray<T> {
    if (!ELEMENT_TYPES.has(type as unknown))
      throw new PgasError(S.ERR_BAD_ARG, `sharedArray: ${String((type as { name?: unknown })?.name ?? type)} is not a typed array type`)
    if (layout === null || typeof layout !== 'object' || !LAYOUT_KINDS.has(layout.kind))
      throw new PgasError(S.ERR_BAD_ARG, `sharedArray: layout kind ${String(layout?.kind)}`)
    let l: Layout
    try {
      l = new Layout(layout.kind, length, this.size, layout.block ?? 1)
    } catch {
      throw new PgasError(S.ERR_BAD_ARG, 'sharedArray')
    }
    return new SharedArray(this.core, this.rma, type, l)
  }

  /** Whether task `t` is of this process (its memory reachable by plain loads and stores). */
  isLocal(t: number): boolean {
    return t >= 0 && t < this.size && this.core.isLocal(t)
  }

  /** A live view of `bytes` at `p` when its task is of this process, else null (the owner's part of a global object, or a co-located one's). */
  localView(p: GlobalPtr, bytes: number): Uint8Array | null {
    p = gp(p, 'localView')
    const rc = this.core.checkRange(p.task, p.addr, bytes)
    if (rc !== 0) throw rangeError(this.core, rc, 'localView', p.task, p.addr, bytes)
    const seg = this.core.u8[p.task]
    return seg === null || seg === undefined ? null : seg.subarray(p.addr, p.addr + bytes)
  }

  /**
   * This task's segment as a shared WebAssembly.Memory (`Lapi.segmentMemory`), for WebAssembly
   * kernels that work on the task's part of global objects in place: a pointer `p` of this task is
   * byte `p.addr` of it. Undefined where the segment is a plain buffer.
   */
  get segmentMemory(): SegmentMemory | undefined {
    return this.core.lapi.segmentMemory
  }

  /**
   * One task (UPC's `upc_global_alloc`): a shared array like `sharedArray`'s, made by this task
   * alone; every other task allocates its part in its progress, calling nothing. Hand
   * `a.descriptor()` to the others (a broadcast, an RPC, a put): `sharedArrayFrom` makes their view.
   * ERR_BAD_ARG, ERR_NOMEM (no task keeps a part then).
   */
  globalAlloc<T extends NumArray>(type: NumArrayCtor<T>, length: number, layout: LayoutSpec = { kind: 'blocked' }): SharedArray<T> {
    let l: Layout
    try {
      l = new Layout(layout.kind, length, this.size, layout.block ?? 1)
    } catch {
      throw new PgasError(S.ERR_BAD_ARG, 'globalAlloc')
    }
    return this.galloc.array(this.rma, type, l)
  }

  /** A view of the shared array a descriptor (`SharedArray.descriptor()`, `pgas_global_alloc`) describes; nothing is allocated. ERR_BAD_ARG, ERR_OUT_OF_SEGMENT. */
  sharedArrayFrom<T extends NumArray = NumArray>(desc: ArrayLike<number>): SharedArray<T> {
    return this.galloc.fromDesc(this.rma, desc) as unknown as SharedArray<T>
  }

  /** One task (UPC's `upc_free`): frees every task's part of `a`, however it was made; no task may use it after. ERR_STATE: freed already (through `a`). */
  globalFree(a: SharedArray<NumArray>): void {
    this.galloc.freeArray(a)
  }

  /**
   * Copies `bytes` from `src` to `dst`, wherever both are (UPC's `upc_memcpy`: neither need be this
   * task's); returns when every byte is at `dst`. Overlapping ranges of one task: as memmove.
   * ERR_BAD_ARG, ERR_BAD_TASK, ERR_OUT_OF_SEGMENT, ERR_NOMEM.
   */
  copy(dst: GlobalPtr<NumArray>, src: GlobalPtr<NumArray>, bytes: number): void {
    dst = gp(dst, 'copy')
    src = gp(src, 'copy')
    const rc = this.copier.copy(dst.task, dst.addr, src.task, src.addr, bytes)
    if (rc !== 0) {
      const d = this.core.checkRange(dst.task, dst.addr, bytes) !== 0
      throw rangeError(this.core, rc, d ? 'copy to' : 'copy from', d ? dst.task : src.task, d ? dst.addr : src.addr, bytes)
    }
  }

  /** Sets `bytes` bytes at `dst` to `byte` (0 … 255; UPC's `upc_memset`); returns when they are set. */
  fill(dst: GlobalPtr<NumArray>, byte: number, bytes: number): void {
    dst = gp(dst, 'fill')
    const rc = this.copier.fill(dst.task, dst.addr, byte, bytes)
    if (rc !== 0)
      throw rc === S.ERR_BAD_ARG && !(Number.isInteger(byte) && byte >= 0 && byte <= 255)
        ? new PgasError(rc, 'fill', `byte ${String(byte)} is not a byte value (0 to 255)`)
        : rangeError(this.core, rc, 'fill', dst.task, dst.addr, bytes)
  }

  // ───────────────────────────── data movement ─────────────────────────────

  /** Copies `src` to `p`; returns when it is there. */
  put(p: GlobalPtr, src: ArrayBufferView): void {
    p = gp(p, 'put')
    const b = bytes(src)
    const rc = this.rma.put(p.task, p.addr, b)
    if (rc !== 0) throw rangeError(this.core, rc, 'put', p.task, p.addr, b.length)
  }
  /** Copies `dst.byteLength` bytes at `p` into `dst`. */
  get(p: GlobalPtr, dst: ArrayBufferView): void {
    p = gp(p, 'get')
    const b = bytes(dst)
    const rc = this.rma.get(p.task, p.addr, b)
    if (rc !== 0) throw rangeError(this.core, rc, 'get', p.task, p.addr, b.length)
  }
  /** Starts a put (`src` unchanged until the handle completes). */
  putNb(p: GlobalPtr, src: ArrayBufferView): OpHandle {
    p = gp(p, 'putNb')
    const b = bytes(src)
    return this.started(this.rma.putNb(p.task, p.addr, b), 'putNb', p, b)
  }
  /** Starts a get. */
  getNb(p: GlobalPtr, dst: ArrayBufferView): OpHandle {
    p = gp(p, 'getNb')
    const b = bytes(dst)
    return this.started(this.rma.getNb(p.task, p.addr, b), 'getNb', p, b)
  }
  private started(h: OpHandle, what: string, p: GlobalPtr, b: Uint8Array): OpHandle {
    if (h.status !== 0) throw rangeError(this.core, h.status, what, p.task, p.addr, b.length)
    return h
  }
  /** Collective: a new signal counter on every task. */
  newSignalCounter(): SignalCounter {
    const c = this.core.lapi.counter()
    return new SignalCounter(c, this.core.lapi.addressInit(c.addr))
  }
  /** Starts a put of `src` to `p` that moves `sc` at `p`'s task when it is there; the handle completes when `src` may be reused. */
  putSignal(p: GlobalPtr, src: ArrayBufferView, sc: SignalCounter): OpHandle {
    if (!(sc instanceof SignalCounter)) throw new PgasError(S.ERR_BAD_ARG, 'putSignal: not a SignalCounter')
    p = gp(p, 'putSignal')
    const b = bytes(src)
    return this.started(this.rma.putSignal(p.task, p.addr, b, sc.addrs[p.task] ?? -1), 'putSignal', p, b)
  }
  /** Whether `h` completed. */
  test(h: OpHandle): boolean {
    return this.rma.test(handle(h, 'test'))
  }
  /** Waits for `h`. */
  wait(h: OpHandle): void {
    check(this.rma.wait(handle(h, 'wait')), 'wait')
  }
  /** Waits for all of `hs`. */
  waitAll(hs: readonly OpHandle[]): void {
    if (!Array.isArray(hs)) throw new PgasError(S.ERR_BAD_ARG, 'waitAll: not an array of handles')
    for (const h of hs) handle(h, 'waitAll')
    check(this.rma.waitAll(hs), 'waitAll')
  }
  /** A put that `syncAll` completes. */
  putNbi(p: GlobalPtr, src: ArrayBufferView): void {
    p = gp(p, 'putNbi')
    const b = bytes(src)
    const rc = this.rma.putNbi(p.task, p.addr, b)
    if (rc !== 0) throw rangeError(this.core, rc, 'putNbi', p.task, p.addr, b.length)
  }
  /** A get that `syncAll` completes. */
  getNbi(p: GlobalPtr, dst: ArrayBufferView): void {
    p = gp(p, 'getNbi')
    const b = bytes(dst)
    const rc = this.rma.getNbi(p.task, p.addr, b)
    if (rc !== 0) throw rangeError(this.core, rc, 'getNbi', p.task, p.addr, b.length)
  }
  /** Completes every implicit put and get. */
  syncAll(): void {
    this.rma.syncAll()
  }
  /**
   * Waits until every implicit operation of this task is complete: the Nbi puts (the data is at
   * the target) and gets (the data is here), non-fetching atomics (done at the target). As
   * OpenSHMEM's `shmem_quiet` and UPC's `upc_fence`. Operations with a handle complete by it.
   */
  quiet(): void {
    this.core.quiet()
  }
  /**
   * Orders this task's implicit puts and non-fetching atomics: those issued before it are done
   * at their targets before any issued after it (OpenSHMEM's `shmem_fence`). Here it completes
   * them, as `quiet` does.
   */
  fence(): void {
    this.core.quiet()
  }
  /** Strided put: `count` blocks of `blockBytes`, from `src` every `srcStride` bytes to `p` every `dstStride`. */
  putStrided(p: GlobalPtr, dstStride: number, src: ArrayBufferView, srcStride: number, blockBytes: number, count: number): void {
    p = gp(p, 'putStrided')
    check(this.rma.putStrided(p.task, p.addr, dstStride, bytes(src), srcStride, blockBytes, count), 'putStrided')
  }
  /** Strided get: `count` blocks of `blockBytes` from `p` every `srcStride` bytes into `dst` every `dstStride`. */
  getStrided(p: GlobalPtr, srcStride: number, dst: ArrayBufferView, dstStride: number, blockBytes: number, count: number): void {
    p = gp(p, 'getStrided')
    check(this.rma.getStrided(p.task, p.addr, srcStride, bytes(dst), dstStride, blockBytes, count), 'getStrided')
  }
  /** Indexed put: piece k of `srcs` to address `addrs[k]` of `task`. */
  putIndexed(task: number, addrs: ArrayLike<number>, srcs: readonly ArrayBufferView[]): void {
    const a = numbers(addrs, 'putIndexed')
    const v = viewsOf(srcs)
    const rc = this.rma.putIndexed(task, a, v)
    if (rc !== 0)
      throw indexedError(
        this.core,
        rc,
        'putIndexed',
        task,
        a,
        v.map((b) => b.length),
      )
  }
  /** Indexed get: address `addrs[k]` of `task` into piece k of `dsts`. */
  getIndexed(task: number, addrs: ArrayLike<number>, dsts: readonly ArrayBufferView[]): void {
    const a = numbers(addrs, 'getIndexed')
    const v = viewsOf(dsts)
    const rc = this.rma.getIndexed(task, a, v)
    if (rc !== 0)
      throw indexedError(
        this.core,
        rc,
        'getIndexed',
        task,
        a,
        v.map((b) => b.length),
      )
  }

  // ───────────────────────────── atomics ─────────────────────────────

  /**
   * An AtomicOp on the 32-bit integer at `p` (4-byte aligned); returns the old value (CAS: the old
   * value too; it swapped when that equals `a`, and `b` is the new value). Operands are integers
   * (wrapped to int32). MIN and MAX are signed. ERR_BAD_ARG (op, operand or pointer), ERR_BAD_TASK,
   * ERR_OUT_OF_SEGMENT, ERR_NULL_PTR, ERR_ALIGN (docs/pgas.md, "Atomics").
   */
  atomic32(op: number, p: GlobalPtr<NumArray>, a: number, b = 0): number {
    return this.atomicN(AtomicKind.I32, op, p, a, b, 'atomic32')
  }
  /** An AtomicOp on the 64-bit integer at `p` (8-byte aligned), with bigint operands (a number: ERR_BAD_ARG); returns the old value. */
  atomic64(op: number, p: GlobalPtr<NumArray>, a: bigint, b = 0n): bigint {
    if (!(p instanceof GlobalPtr)) throw new PgasError(S.ERR_BAD_ARG, 'atomic64: not a GlobalPtr')
    const v = this.atomics.op64(op, p.task, p.addr, a, b)
    const rc = this.atomics.status
    if (rc !== 0) throw atomicError(this.core, rc, 'atomic64', AtomicKind.I64, op, p.task, p.addr, a, b, false)
    return v
  }
  /**
   * An AtomicOp on the signed 8-bit integer at `p` (any address; values as an Int8Array's: the
   * operands wrap to int8); returns the old value. Co-located: `Atomics` on the byte; elsewhere a
   * compare-and-swap loop on the aligned 32-bit word that holds it (the other bytes untouched).
   */
  atomic8(op: number, p: GlobalPtr<NumArray>, a: number, b = 0): number {
    return this.atomicN(AtomicKind.I8, op, p, a, b, 'atomic8')
  }
  /** `atomic8` on the signed 16-bit integer at `p` (2-byte aligned, else ERR_ALIGN). */
  atomic16(op: number, p: GlobalPtr<NumArray>, a: number, b = 0): number {
    return this.atomicN(AtomicKind.I16, op, p, a, b, 'atomic16')
  }
  /**
   * An AtomicOp on the float32 at `p` (4-byte aligned): ADD, MIN, MAX (`Math.min`/`max`), SWAP,
   * CAS, LOAD, STORE (AND, OR, XOR: ERR_BAD_ARG); returns the old value. ADD, MIN and MAX are a
   * compare-and-swap loop on the bits; CAS compares bits (-0 is not 0; a NaN matches its own bits).
   */
  atomicF32(op: number, p: GlobalPtr<NumArray>, a: number, b = 0): number {
    return this.atomicN(AtomicKind.F32, op, p, a, b, 'atomicF32')
  }
  /** `atomicF32` on the float64 at `p` (8-byte aligned). */
  atomicF64(op: number, p: GlobalPtr<NumArray>, a: number, b = 0): number {
    return this.atomicN(AtomicKind.F64, op, p, a, b, 'atomicF64')
  }
  /**
   * Non-fetching atomics (OpenSHMEM's `shmem_atomic_add`, UPC++'s non-fetching ops): ADD, AND, OR,
   * XOR, MIN, MAX or STORE of `a` (floats: ADD, MIN, MAX, STORE; SWAP, CAS, LOAD: ERR_BAD_ARG),
   * the result not returned. Co-located: done on return. On another process's task a 32- or
   * 64-bit integer's ADD, OR and STORE and a float's STORE are started only, and done at the target
   * by the next `quiet` or `fence` (no order among them before that); the others are
   * compare-and-swap loops, done on return.
   */
  atomic32Nf(op: number, p: GlobalPtr<NumArray>, a: number): void {
    this.atomicNf(AtomicKind.I32, op, p, a, 'atomic32Nf')
  }
  /** `atomic32Nf` on the 64-bit integer at `p` (a bigint operand). */
  atomic64Nf(op: number, p: GlobalPtr<NumArray>, a: bigint): void {
    this.atomicNf(AtomicKind.I64, op, p, a, 'atomic64Nf')
  }
  /** `atomic32Nf` on the 8-bit integer at `p`: always a compare-and-swap loop on another process's task, done on return. */
  atomic8Nf(op: number, p: GlobalPtr<NumArray>, a: number): void {
    this.atomicNf(AtomicKind.I8, op, p, a, 'atomic8Nf')
  }
  /** `atomic32Nf` on the 16-bit integer at `p` (as `atomic8Nf`, done on return). */
  atomic16Nf(op: number, p: GlobalPtr<NumArray>, a: number): void {
    this.atomicNf(AtomicKind.I16, op, p, a, 'atomic16Nf')
  }
  /** `atomic32Nf` on the float32 at `p`: ADD, MIN, MAX (done on return) or STORE (remote: started only). */
  atomicF32Nf(op: number, p: GlobalPtr<NumArray>, a: number): void {
    this.atomicNf(AtomicKind.F32, op, p, a, 'atomicF32Nf')
  }
  /** `atomicF32Nf` on the float64 at `p`. */
  atomicF64Nf(op: number, p: GlobalPtr<NumArray>, a: number): void {
    this.atomicNf(AtomicKind.F64, op, p, a, 'atomicF64Nf')
  }
  private atomicN(kind: number, op: number, p: GlobalPtr<NumArray>, a: number, b: number, what: string): number {
    if (!(p instanceof GlobalPtr)) throw new PgasError(S.ERR_BAD_ARG, `${what}: not a GlobalPtr`)
    const v = this.atomics.opN(kind, op, p.task, p.addr, a, b)
    const rc = this.atomics.status
    if (rc !== 0) throw atomicError(this.core, rc, what, kind, op, p.task, p.addr, a, b, false)
    return v
  }
  private atomicNf(kind: number, op: number, p: GlobalPtr<NumArray>, a: number | bigint, what: string): void {
    if (!(p instanceof GlobalPtr)) throw new PgasError(S.ERR_BAD_ARG, `${what}: not a GlobalPtr`)
    const rc = this.atomics.nf(kind, op, p.task, p.addr, a)
    if (rc !== 0) throw atomicError(this.core, rc, what, kind, op, p.task, p.addr, a, 0, true)
  }
  fetchAdd(p: GlobalPtr<NumArray>, v: number): number {
    return this.atomic32(AtomicOp.ADD, p, v)
  }
  compareAndSwap(p: GlobalPtr<NumArray>, expected: number, v: number): number {
    return this.atomic32(AtomicOp.CAS, p, expected, v)
  }
}

/** `p` when it is a global pointer, else the PgasError ERR_BAD_ARG. */
export function gp(p: GlobalPtr, what: string): GlobalPtr {
  if (p instanceof GlobalPtr) return p
  throw new PgasError(S.ERR_BAD_ARG, `${what}: ${String(p)} is not a GlobalPtr`)
}

/** The bytes of a typed array or DataView, else the PgasError ERR_BAD_ARG. */
export function bytes(b: ArrayBufferView): Uint8Array {
  if (ArrayBuffer.isView(b)) return bytesOf(b)
  throw new PgasError(S.ERR_BAD_ARG, `${String(b)} is not a typed array or DataView`)
}

export function viewsOf(bs: readonly ArrayBufferView[]): Uint8Array[] {
  if (!Array.isArray(bs)) throw new PgasError(S.ERR_BAD_ARG, 'not an array of buffers')
  return bs.map(bytes)
}

/** `h` when it is an operation's handle, else the PgasError ERR_BAD_HANDLE. */
function handle(h: OpHandle, what: string): OpHandle {
  if (h instanceof OpHandle) return h
  throw new PgasError(S.ERR_BAD_HANDLE, `${what}: ${String(h)} is not an operation's handle`)
}

/** `a` when it is an array or typed array of numbers, else the PgasError ERR_BAD_ARG. */
function numbers(a: ArrayLike<number>, what: string): ArrayLike<number> {
  if (Array.isArray(a) || (ArrayBuffer.isView(a) && !(a instanceof DataView))) return a
  throw new PgasError(S.ERR_BAD_ARG, `${what}: addresses are not an array`)
}
