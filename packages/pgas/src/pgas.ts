/**
 * The idiomatic face: one `Pgas` per task, over the task's LAPI context. Methods throw PgasError
 * (its `code` a PgasStatus) where the flat face (flat.ts) returns the code. Both run the same parts:
 * rma.ts, atomics.ts, messages.ts, barrier.ts, collectives.ts, rpc.ts, lock.ts, shared-array.ts.
 */
import { Lapi, type Counter, type SegmentMemory } from '@amlapi/lapi'
import { AtomicOp, RemoteAtomics } from './atomics.js'
import { Barrier, BarrierFlag, NOT_READY } from './barrier.js'
import { Collectives } from './collectives.js'
import { Core } from './core.js'
import { GlobalPtr } from './gptr.js'
import { Layout, type LayoutKind } from './layout.js'
import { PgasLock } from './lock.js'
import { Messages } from './messages.js'
import { type NumArray, bytesOf } from './reduce-ops.js'
import { type OpHandle, Rma } from './rma.js'
import { SharedBlocks } from './shared-block.js'
import { ShmSync } from './shm-sync.js'
import { type RemoteFn, Rpc, type RpcHandle } from './rpc.js'
import { type NumArrayCtor, SharedArray } from './shared-array.js'
import { PgasError, PgasStatus as S, check } from './status.js'

/** How a shared array is laid out: a kind, and for block-cyclic the block size. */
export interface LayoutSpec { kind: LayoutKind, block?: number }

let current: Pgas | null = null

/**
 * A counter on every task that `putSignal`s move at their target: a task waits on its own for the
 * puts it expects (halo exchanges: data and "it is there" in one message).
 */
export class SignalCounter {
  /** Every task's counter address, index = task. */
  readonly addrs: readonly number[]
  private readonly mine: Counter
  constructor (mine: Counter, addrs: readonly number[]) { this.mine = mine; this.addrs = addrs }
  /** Waits until `n` signals came (and takes them off). */
  wait (n = 1): void { this.mine.wait(n) }
  /** Signals that came and were not waited for yet. */
  get value (): number { return this.mine.get() }
}

export class Pgas {
  /** @internal */ readonly core: Core
  /** @internal */ readonly rma: Rma
  /** @internal */ readonly atomics: RemoteAtomics
  /** @internal */ readonly blocks: SharedBlocks
  /** @internal */ readonly msg: Messages
  /** @internal */ readonly sync: ShmSync
  /** @internal */ readonly bar: Barrier
  /** @internal */ readonly coll: Collectives
  /** @internal */ readonly rpcs: Rpc
  private finalized = false

  private constructor (lapi: Lapi) {
    this.core = new Core(lapi)
    this.rma = new Rma(this.core)
    this.atomics = new RemoteAtomics(this.core)
    this.blocks = new SharedBlocks(this.core)
    this.msg = new Messages(this.core, this.blocks)
    this.sync = new ShmSync(this.core, this.blocks, () => this.msg.unblock())
    this.bar = new Barrier(this.core, this.msg, this.sync)
    this.coll = new Collectives(this.core, this.msg, this.sync)
    this.rpcs = new Rpc(this.core)
  }

  /**
   * Collective: starts the runtime on this task's LAPI context (`lapi`, else the open one, else a
   * new one), and returns when every task has (its handlers are then in place everywhere).
   */
  static init (lapi?: Lapi): Pgas {
    if (current !== null) return current
    const l = lapi ?? Lapi.current() ?? Lapi.init()
    const p = new Pgas(l)
    l.gfence()
    current = p
    return p
  }

  /** The runtime of this task, or null before `init`. */
  static current (): Pgas | null { return current }

  /** Collective: a barrier, then the runtime stops (the LAPI context stays the program's). */
  finalize (): void {
    if (this.finalized) return
    this.syncAll()
    this.barrier()
    this.finalized = true
    if (current === this) current = null
  }

  get lapi (): Lapi { return this.core.lapi }
  get rank (): number { return this.core.rank }
  get size (): number { return this.core.size }

  /** Runs handlers and remote procedure calls that came (a program that computes should call it now and then). */
  progress (): void { this.core.progress() }

  // ───────────────────────────── memory ─────────────────────────────

  /** `bytes` of this task's segment (zero-filled), as a global pointer. */
  alloc (bytes: number): GlobalPtr {
    if (!Number.isInteger(bytes) || bytes < 0) throw new PgasError(S.ERR_BAD_ARG, 'alloc')
    try { return new GlobalPtr(this.rank, this.core.lapi.malloc(Math.max(1, bytes))) } catch { throw new PgasError(S.ERR_NOMEM, 'alloc') }
  }

  /** Frees what `alloc` gave this task. */
  free (p: GlobalPtr): void {
    if (p.task !== this.rank) throw new PgasError(S.ERR_BAD_TASK, 'free (only the owner frees)')
    try { this.core.lapi.free(p.addr) } catch { throw new PgasError(S.ERR_BAD_ARG, 'free') }
  }

  /** Collective: `bytes` on every task; every task gets all the pointers (index = task). */
  allocAll (bytes: number): GlobalPtr[] {
    if (!Number.isInteger(bytes) || bytes < 0) throw new PgasError(S.ERR_BAD_ARG, 'allocAll')
    let a = -1
    try { a = this.core.lapi.malloc(Math.max(1, bytes)) } catch { a = -1 }
    const all = this.core.lapi.addressInit(a)
    if (all.some((x) => x < 0)) { if (a >= 0) this.core.lapi.free(a); throw new PgasError(S.ERR_NOMEM, 'allocAll') }
    return all.map((x, t) => new GlobalPtr(t, x))
  }

  /** Collective: frees what `allocAll` gave (a barrier first: no task may still be using it). */
  freeAll (ptrs: readonly GlobalPtr[]): void {
    this.barrier()
    this.free(ptrs[this.rank]!)
  }

  /** Collective: a shared array of `length` elements of `type`, laid out by `layout` (default blocked). */
  sharedArray<T extends NumArray> (type: NumArrayCtor<T>, length: number, layout: LayoutSpec = { kind: 'blocked' }): SharedArray<T> {
    let l: Layout
    try { l = new Layout(layout.kind, length, this.size, layout.block ?? 1) } catch { throw new PgasError(S.ERR_BAD_ARG, 'sharedArray') }
    return new SharedArray(this.core, this.rma, type, l)
  }

  /** Whether task `t` is of this process (its memory reachable by plain loads and stores). */
  isLocal (t: number): boolean { return t >= 0 && t < this.size && this.core.isLocal(t) }

  /** A live view of `bytes` at `p` when its task is of this process, else null (the owner's part of a global object, or a co-located one's). */
  localView (p: GlobalPtr, bytes: number): Uint8Array | null {
    check(this.core.checkRange(p.task, p.addr, bytes), 'localView')
    const seg = this.core.u8[p.task]
    return seg === null || seg === undefined ? null : seg.subarray(p.addr, p.addr + bytes)
  }

  /**
   * This task's segment as a shared WebAssembly.Memory (`Lapi.segmentMemory`), for WebAssembly
   * kernels that work on the task's part of global objects in place: a pointer `p` of this task is
   * byte `p.addr` of it. Undefined where the segment is a plain buffer.
   */
  get segmentMemory (): SegmentMemory | undefined { return this.core.lapi.segmentMemory }

  // ───────────────────────────── data movement ─────────────────────────────

  /** Copies `src` to `p`; returns when it is there. */
  put (p: GlobalPtr, src: ArrayBufferView): void { check(this.rma.put(p.task, p.addr, bytesOf(src)), 'put') }
  /** Copies `dst.byteLength` bytes at `p` into `dst`. */
  get (p: GlobalPtr, dst: ArrayBufferView): void { check(this.rma.get(p.task, p.addr, bytesOf(dst)), 'get') }
  /** Starts a put (`src` unchanged until the handle completes). */
  putNb (p: GlobalPtr, src: ArrayBufferView): OpHandle { return this.started(this.rma.putNb(p.task, p.addr, bytesOf(src)), 'putNb') }
  /** Starts a get. */
  getNb (p: GlobalPtr, dst: ArrayBufferView): OpHandle { return this.started(this.rma.getNb(p.task, p.addr, bytesOf(dst)), 'getNb') }
  private started (h: OpHandle, what: string): OpHandle { check(h.status, what); return h }
  /** Collective: a new signal counter on every task. */
  newSignalCounter (): SignalCounter {
    const c = this.core.lapi.counter()
    return new SignalCounter(c, this.core.lapi.addressInit(c.addr))
  }
  /** Starts a put of `src` to `p` that moves `sc` at `p`'s task when it is there; the handle completes when `src` may be reused. */
  putSignal (p: GlobalPtr, src: ArrayBufferView, sc: SignalCounter): OpHandle {
    return this.started(this.rma.putSignal(p.task, p.addr, bytesOf(src), sc.addrs[p.task] ?? -1), 'putSignal')
  }
  /** Whether `h` completed. */
  test (h: OpHandle): boolean { return this.rma.test(h) }
  /** Waits for `h`. */
  wait (h: OpHandle): void { check(this.rma.wait(h), 'wait') }
  /** Waits for all of `hs`. */
  waitAll (hs: readonly OpHandle[]): void { check(this.rma.waitAll(hs), 'waitAll') }
  /** A put that `syncAll` completes. */
  putNbi (p: GlobalPtr, src: ArrayBufferView): void { check(this.rma.putNbi(p.task, p.addr, bytesOf(src)), 'putNbi') }
  /** A get that `syncAll` completes. */
  getNbi (p: GlobalPtr, dst: ArrayBufferView): void { check(this.rma.getNbi(p.task, p.addr, bytesOf(dst)), 'getNbi') }
  /** Completes every implicit put and get. */
  syncAll (): void { this.rma.syncAll() }
  /**
   * Waits until every implicit operation of this task is complete: the Nbi puts (the data is at
   * the target) and gets (the data is here), non-fetching atomics (done at the target). As
   * OpenSHMEM's `shmem_quiet` and UPC's `upc_fence`. Operations with a handle complete by it.
   */
  quiet (): void { this.core.quiet() }
  /**
   * Orders this task's implicit puts and non-fetching atomics: those issued before it are done
   * at their targets before any issued after it (OpenSHMEM's `shmem_fence`). Here it completes
   * them, as `quiet` does.
   */
  fence (): void { this.core.quiet() }
  /** Strided put: `count` blocks of `blockBytes`, from `src` every `srcStride` bytes to `p` every `dstStride`. */
  putStrided (p: GlobalPtr, dstStride: number, src: ArrayBufferView, srcStride: number, blockBytes: number, count: number): void {
    check(this.rma.putStrided(p.task, p.addr, dstStride, bytesOf(src), srcStride, blockBytes, count), 'putStrided')
  }
  /** Strided get: `count` blocks of `blockBytes` from `p` every `srcStride` bytes into `dst` every `dstStride`. */
  getStrided (p: GlobalPtr, srcStride: number, dst: ArrayBufferView, dstStride: number, blockBytes: number, count: number): void {
    check(this.rma.getStrided(p.task, p.addr, srcStride, bytesOf(dst), dstStride, blockBytes, count), 'getStrided')
  }
  /** Indexed put: piece k of `srcs` to address `addrs[k]` of `task`. */
  putIndexed (task: number, addrs: ArrayLike<number>, srcs: readonly ArrayBufferView[]): void { check(this.rma.putIndexed(task, addrs, srcs.map(bytesOf)), 'putIndexed') }
  /** Indexed get: address `addrs[k]` of `task` into piece k of `dsts`. */
  getIndexed (task: number, addrs: ArrayLike<number>, dsts: readonly ArrayBufferView[]): void { check(this.rma.getIndexed(task, addrs, dsts.map(bytesOf)), 'getIndexed') }

  // ───────────────────────────── atomics ─────────────────────────────

  /** An AtomicOp on the 32-bit word at `p`; returns the old value. */
  atomic32 (op: number, p: GlobalPtr, a: number, b = 0): number {
    const v = this.atomics.op32(op, p.task, p.addr, a, b)
    check(this.atomics.status, 'atomic32')
    return v
  }
  /** An AtomicOp on the 64-bit word at `p`; returns the old value. */
  atomic64 (op: number, p: GlobalPtr, a: bigint, b = 0n): bigint {
    const v = this.atomics.op64(op, p.task, p.addr, a, b)
    check(this.atomics.status, 'atomic64')
    return v
  }
  fetchAdd (p: GlobalPtr, v: number): number { return this.atomic32(AtomicOp.ADD, p, v) }
  compareAndSwap (p: GlobalPtr, expected: number, v: number): number { return this.atomic32(AtomicOp.CAS, p, expected, v) }

  // ───────────────────────────── remote procedure calls ─────────────────────────────

  /** Registers `fn` as remote function `id` (the same on every task). */
  registerRpc (id: number, fn: RemoteFn | null): void { check(this.rpcs.register(id, fn), 'registerRpc') }
  /** Calls remote function `id` on `task`; resolves with its result (progress runs meanwhile, without blocking the event loop). */
  async rpc (task: number, id: number, ...args: unknown[]): Promise<unknown> {
    const h = this.rpcs.call(task, id, args)
    const rc = await this.rpcs.waitAsync(h)
    if (rc !== 0) throw new PgasError(rc, `rpc ${id} on task ${task}${typeof h.result === 'string' ? `: ${h.result}` : ''}`)
    return h.result
  }
  /** Calls remote function `id` on `task` and blocks until its result comes. */
  rpcSync (task: number, id: number, ...args: unknown[]): unknown {
    const h = this.rpcs.call(task, id, args)
    const rc = this.rpcs.wait(h)
    if (rc !== 0) throw new PgasError(rc, `rpc ${id} on task ${task}${typeof h.result === 'string' ? `: ${h.result}` : ''}`)
    return h.result
  }
  /** Starts a call; `rpcWait` completes it. */
  rpcNb (task: number, id: number, ...args: unknown[]): RpcHandle { return this.rpcs.call(task, id, args) }
  /** Completes a call started by `rpcNb`; returns its result. */
  rpcWait (h: RpcHandle): unknown {
    const rc = this.rpcs.wait(h)
    if (rc !== 0) throw new PgasError(rc, `rpc${typeof h.result === 'string' ? `: ${h.result}` : ''}`)
    return h.result
  }
  /** Calls remote function `id` on `task` without a result. */
  rpcNoReply (task: number, id: number, ...args: unknown[]): void { check(this.rpcs.callNoReply(task, id, args), 'rpcNoReply') }

  // ───────────────────────────── synchronisation ─────────────────────────────

  /** A barrier of all tasks (anonymous unless `id` is given). Throws ERR_BARRIER_MISMATCH when ids differ. */
  barrier (id?: number): void { check(this.bar.barrier(id ?? 0, id === undefined ? BarrierFlag.ANONYMOUS : 0), 'barrier') }
  /**
   * The barrier without blocking the event loop: what a task that serves remote procedures
   * returning promises uses (they settle only in its event loop, which a blocking wait holds up).
   */
  async barrierAsync (id?: number): Promise<void> {
    const flags = id === undefined ? BarrierFlag.ANONYMOUS : 0
    check(this.bar.notify(id ?? 0, flags), 'barrierAsync')
    check(await this.bar.waitAsync(id ?? 0, flags), 'barrierAsync')
  }
  /** Split-phase barrier, first half: GASNet's barrier_notify (flags: BarrierFlag). */
  barrierNotify (id = 0, flags = 0): void { check(this.bar.notify(id, flags), 'barrierNotify') }
  /** Second half: blocks until every task notified. */
  barrierWait (id = 0, flags = 0): void { check(this.bar.wait(id, flags), 'barrierWait') }
  /** Second half without blocking: false while some task has not notified. */
  barrierTry (id = 0, flags = 0): boolean {
    const rc = this.bar.tryWait(id, flags)
    if (rc === NOT_READY) return false
    check(rc, 'barrierTry')
    return true
  }
  /** Collective: a new lock whose word lives on task `home`. */
  newLock (home = 0): PgasLock {
    if (!Number.isInteger(home) || home < 0 || home >= this.size) throw new PgasError(S.ERR_BAD_TASK, 'newLock')
    return new PgasLock(this.core, this.atomics, home)
  }
  /** Takes `lock` (in turn). */
  lock (l: PgasLock): void { check(l.acquire(), 'lock') }
  /** Takes `lock` if free. */
  tryLock (l: PgasLock): boolean { return l.tryAcquire() }
  /** Gives `lock` up. */
  unlock (l: PgasLock): void { check(l.release(), 'unlock') }

  // ───────────────────────────── collectives ─────────────────────────────

  bcast (buf: NumArray, root = 0): void { check(this.coll.bcast(buf, root), 'bcast') }
  reduce (send: NumArray, recv: NumArray | null, op: number, root = 0): void { check(this.coll.reduce(send, recv, op, root), 'reduce') }
  allreduce (send: NumArray, recv: NumArray, op: number): void { check(this.coll.allreduce(send, recv, op), 'allreduce') }
  gather (send: NumArray, recv: NumArray | null, root = 0): void { check(this.coll.gather(send, recv, root), 'gather') }
  allgather (send: NumArray, recv: NumArray): void { check(this.coll.allgather(send, recv), 'allgather') }
  alltoall (send: NumArray, recv: NumArray): void { check(this.coll.alltoall(send, recv), 'alltoall') }
  alltoallv (send: NumArray, sendCounts: ArrayLike<number>, sendDispls: ArrayLike<number>, recv: NumArray, recvCounts: ArrayLike<number>, recvDispls: ArrayLike<number>): void {
    check(this.coll.alltoallv(send, sendCounts, sendDispls, recv, recvCounts, recvDispls), 'alltoallv')
  }
  scan (send: NumArray, recv: NumArray, op: number): void { check(this.coll.scan(send, recv, op, false), 'scan') }
  exscan (send: NumArray, recv: NumArray, op: number): void { check(this.coll.scan(send, recv, op, true), 'exscan') }
}
