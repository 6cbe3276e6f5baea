/**
 * The idiomatic face: one `Pgas` per task, over the task's LAPI context. Methods throw PgasError
 * (its `status` a PgasStatus) where the flat face (flat.ts) returns the code. Both run the same parts:
 * rma.ts, atomics.ts, messages.ts, barrier.ts, collectives.ts, rpc.ts, lock.ts, shared-array.ts;
 * teams (team.ts: `world`) and the collectives into shared arrays (shared-collectives.ts).
 * Memory, put and get, and atomics are PgasBase's (pgas-base.ts).
 */
import { Lapi } from '@amlapi/lapi'
import { BarrierFlag, NOT_READY } from './barrier.js'
import { type GlobalPtr, setPointerRuntime } from './gptr.js'
import { PgasLock } from './lock.js'
import type { NumArray } from './reduce-ops.js'
import { type RemoteFn, RPC_NAME_MAX, RpcHandle } from './rpc.js'
import type { DistObject } from './dist-object.js'
import type { PutCompletion } from './async-ops.js'
import type { SharedArray } from './shared-array.js'
import { type IntoSource, allgatherInto, alltoallInto, bcastInto, reduceInto, scatterInto } from './shared-collectives.js'
import { type Team, worldTeam } from './team.js'
import { PgasError, PgasStatus as S, check } from './status.js'
import { collError, taskWhy } from './explain.js'
import { PgasBase, gp, bytes, SignalCounter, type LayoutSpec } from './pgas-base.js'

export { SignalCounter, type LayoutSpec }

let current: Pgas | null = null
// (global pointers ask it where their task is: isLocal, local)
setPointerRuntime(() => current?.core ?? null)

export class Pgas extends PgasBase {
  private finalized = false

  private constructor(lapi: Lapi) {
    super(lapi)
  }

  /**
   * Collective: starts the runtime on this task's LAPI context (`lapi`, else the open one, else a
   * new one), and returns when every task has (its handlers are then in place everywhere).
   */
  static init(lapi?: Lapi): Pgas {
    if (current !== null) return current
    const l = lapi ?? Lapi.current() ?? Lapi.init()
    const p = new Pgas(l)
    l.gfence()
    current = p
    return p
  }

  /** The runtime of this task, or null before `init`. */
  static current(): Pgas | null {
    return current
  }

  /**
   * Collective: completes this task's implicit operations, a barrier, then the runtime stops: every
   * method of it, and of what it made (shared arrays, locks), answers ERR_NOT_INIT after (the LAPI
   * context stays the program's). A second call does nothing; `Pgas.init` starts a new runtime.
   */
  finalize(): void {
    if (this.finalized) return
    this.syncAll()
    this.barrier()
    this.finalized = true
    this.core.closed = true
    if (current === this) current = null
    for (const proto of [Pgas.prototype, PgasBase.prototype] as object[]) {
      for (const k of Object.getOwnPropertyNames(proto)) {
        const d = Object.getOwnPropertyDescriptor(proto, k)
        if (k === 'constructor' || k === 'finalize' || typeof d?.value !== 'function' || Object.hasOwn(this, k)) continue
        Object.defineProperty(this, k, {
          value: () => {
            throw new PgasError(S.ERR_NOT_INIT, `${k} (after finalize)`)
          },
        })
      }
    }
  }

  /** Whether `finalize` has run. */
  get isFinalized(): boolean {
    return this.finalized
  }

  /**
   * The world team: every task, ranked as the tasks are. Its collectives are this object's; its
   * `split` and `splitStrided` make the other teams (team.ts).
   */
  get world(): Team {
    return worldTeam(this)
  }

  // ───────────────────────────── remote procedure calls ─────────────────────────────

  /**
   * Registers `fn` as remote function `id`: a number 0..65535 or a name (1 to 256 characters), the
   * same on every task; `null` removes it. `fn` is called with the arguments and, last, the calling
   * task; what it returns (or the promise's value) is the answer.
   */
  registerRpc(id: number | string, fn: RemoteFn | null): void {
    const rc = this.rpcs.register(id, fn)
    if (rc === 0) return
    const why =
      fn !== null && typeof fn !== 'function'
        ? `what is registered must be a function or null, not ${typeof fn}`
        : typeof id === 'string'
          ? `the name ${JSON.stringify(id.length > 40 ? `${id.slice(0, 40)}…` : id)} (${id.length} characters) must have 1 to ${RPC_NAME_MAX} characters and not begin with \\0`
          : `the id ${String(id)} must be a whole number from 0 to 65535, or a name`
    throw new PgasError(rc, 'registerRpc', why)
  }
  /** Calls remote function `id` on `task`; resolves with its result (progress runs meanwhile, without blocking the event loop). */
  async rpcAsync(task: number, id: number | string, ...args: unknown[]): Promise<unknown> {
    const h = this.rpcs.call(task, id, args)
    return rpcResult(h, await this.rpcs.waitAsync(h), `rpc ${String(id)} on task ${task}`, task, this.size)
  }
  /**
   * @deprecated Call `rpcAsync` (the same call: a Promise form ends in `Async`); `rpc` goes in the
   * release after 0.1.0. (The blocking form is `rpcSync` meanwhile.)
   */
  async rpc(task: number, id: number | string, ...args: unknown[]): Promise<unknown> {
    return await this.rpcAsync(task, id, ...args)
  }
  /** Calls remote function `id` on `task` and blocks until its result comes (serving calls to this task meanwhile). */
  rpcSync(task: number, id: number | string, ...args: unknown[]): unknown {
    const h = this.rpcs.call(task, id, args)
    return rpcResult(h, this.rpcs.wait(h), `rpc ${String(id)} on task ${task}`, task, this.size)
  }
  /** Starts a call; `rpcWait` completes it. A call refused before it was sent throws here. */
  rpcNb(task: number, id: number | string, ...args: unknown[]): RpcHandle {
    const h = this.rpcs.call(task, id, args)
    if (!h.sent) rpcResult(h, h.status, `rpcNb ${String(id)} on task ${task}`, task, this.size)
    return h
  }
  /** Completes a call started by `rpcNb`; returns its result. */
  rpcWait(h: RpcHandle): unknown {
    if (!(h instanceof RpcHandle)) throw new PgasError(S.ERR_BAD_HANDLE, 'rpcWait')
    return rpcResult(h, this.rpcs.wait(h), 'rpc')
  }
  /** The same without blocking the event loop. */
  async rpcWaitAsync(h: RpcHandle): Promise<unknown> {
    if (!(h instanceof RpcHandle)) throw new PgasError(S.ERR_BAD_HANDLE, 'rpcWaitAsync')
    return rpcResult(h, await this.rpcs.waitAsync(h), 'rpc')
  }
  /** Whether the call of `h` has its answer (a round of progress first). */
  rpcTest(h: RpcHandle): boolean {
    if (!(h instanceof RpcHandle)) throw new PgasError(S.ERR_BAD_HANDLE, 'rpcTest')
    if (!h.done) this.progress()
    return h.done
  }
  /** Calls remote function `id` on `task` without a result. */
  rpcNoReply(task: number, id: number | string, ...args: unknown[]): void {
    const rc = this.rpcs.callNoReply(task, id, args)
    if (rc !== 0) throw new PgasError(rc, 'rpcNoReply', rc === S.ERR_BAD_TASK ? taskWhy(task, this.size) : undefined)
  }

  /**
   * Collective (every task, in the same order): this task's part of a distributed object (UPC++'s
   * `dist_object`), `value`; the others' parts by `fetch`/`fetchSync` with a task number.
   */
  distObject<T>(value: T): DistObject<T> {
    return this.dists.make(value)
  }

  // ───────────────────────────── synchronisation ─────────────────────────────

  /** A barrier of all tasks (anonymous unless `id` is given). Throws ERR_BARRIER_MISMATCH when ids differ. */
  barrier(id?: number): void {
    check(this.bar.barrier(id ?? 0, id === undefined ? BarrierFlag.ANONYMOUS : 0), 'barrier')
  }
  /**
   * The barrier without blocking the event loop: what a task that serves remote procedures
   * returning promises uses (they settle only in its event loop, which a blocking wait holds up).
   */
  async barrierAsync(id?: number): Promise<void> {
    const flags = id === undefined ? BarrierFlag.ANONYMOUS : 0
    check(this.bar.notify(id ?? 0, flags), 'barrierAsync')
    check(await this.bar.waitAsync(id ?? 0, flags), 'barrierAsync')
  }
  /** Split-phase barrier, first half: GASNet's barrier_notify (flags: BarrierFlag). */
  barrierNotify(id = 0, flags = 0): void {
    check(this.bar.notify(id, flags), 'barrierNotify')
  }
  /** Second half: blocks until every task notified. */
  barrierWait(id = 0, flags = 0): void {
    check(this.bar.wait(id, flags), 'barrierWait')
  }
  /** Second half without blocking: false while some task has not notified. */
  barrierTry(id = 0, flags = 0): boolean {
    const rc = this.bar.tryWait(id, flags)
    if (rc === NOT_READY) return false
    check(rc, 'barrierTry')
    return true
  }
  /** Collective: a new lock whose word lives on task `home`. */
  newLock(home = 0): PgasLock {
    if (!Number.isInteger(home) || home < 0 || home >= this.size) throw new PgasError(S.ERR_BAD_TASK, 'newLock', taskWhy(home, this.size, 'home task'))
    return new PgasLock(this.core, this.atomics, home)
  }
  /** Takes `lock` (in turn). */
  lock(l: PgasLock): void {
    check(lockOf(l, 'lock').acquire(), 'lock')
  }
  /** Takes `lock` if free. */
  tryLock(l: PgasLock): boolean {
    const got = lockOf(l, 'tryLock').tryAcquire()
    check(l.status, 'tryLock')
    return got
  }
  /** Gives `lock` up. */
  unlock(l: PgasLock): void {
    check(lockOf(l, 'unlock').release(), 'unlock')
  }
  /**
   * Collective: frees `l` (UPC's `upc_lock_free`): a barrier, then every task gives back its part
   * (segment memory, counters). After it the lock answers ERR_STATE. ERR_BAD_ARG: not a lock.
   */
  freeLock(l: PgasLock): void {
    if (!(l instanceof PgasLock)) throw new PgasError(S.ERR_BAD_ARG, 'freeLock')
    if (l.isFreed) throw new PgasError(S.ERR_STATE, 'freeLock (freed already)')
    this.barrier()
    check(l.free(), 'freeLock')
  }

  // ───────────────────────────── Promise forms ─────────────────────────────
  // (they wait without blocking the event loop; an error rejects with the PgasError)

  /**
   * Puts `src` at `p`; resolves when the data is at the target (then `src` may be reused). With
   * `cx.remote`, the function runs at the target after the data landed (UPC++'s `remote_cx::as_rpc`).
   */
  async putAsync(p: GlobalPtr, src: ArrayBufferView, cx?: PutCompletion): Promise<void> {
    p = gp(p, 'putAsync')
    await this.asyncOps.put(p.task, p.addr, bytes(src), cx, 'putAsync')
  }
  /** Gets `dst.byteLength` bytes at `p` into `dst`; resolves when they are there. */
  async getAsync(p: GlobalPtr, dst: ArrayBufferView): Promise<void> {
    p = gp(p, 'getAsync')
    await this.asyncOps.get(p.task, p.addr, bytes(dst), 'getAsync')
  }
  /** `atomic32` as a promise (a remote atomic waits for its answer in the call: LAPI's Rmw). */
  async atomic32Async(op: number, p: GlobalPtr, a: number, b = 0): Promise<number> {
    return this.atomic32(op, p, a, b)
  }
  /** `atomic64` as a promise. */
  async atomic64Async(op: number, p: GlobalPtr, a: bigint, b = 0n): Promise<bigint> {
    return this.atomic64(op, p, a, b)
  }
  /**
   * The Promise forms of the collectives: a barrier that does not block the event loop (every task
   * there), then the collective. Every task calls the Promise form of the same collective.
   */
  async bcastAsync(buf: NumArray, root = 0): Promise<void> {
    await this.world.bcastAsync(buf, root)
  }
  async reduceAsync(send: NumArray, recv: NumArray | null, op: number, root = 0): Promise<void> {
    await this.world.reduceAsync(send, recv, op, root)
  }
  async allreduceAsync(send: NumArray, recv: NumArray, op: number): Promise<void> {
    await this.world.allreduceAsync(send, recv, op)
  }
  async gatherAsync(send: NumArray, recv: NumArray | null, root = 0): Promise<void> {
    await this.world.gatherAsync(send, recv, root)
  }
  async allgatherAsync(send: NumArray, recv: NumArray): Promise<void> {
    await this.world.allgatherAsync(send, recv)
  }
  async alltoallAsync(send: NumArray, recv: NumArray): Promise<void> {
    await this.world.alltoallAsync(send, recv)
  }
  async alltoallvAsync(
    send: NumArray,
    sendCounts: ArrayLike<number>,
    sendDispls: ArrayLike<number>,
    recv: NumArray,
    recvCounts: ArrayLike<number>,
    recvDispls: ArrayLike<number>,
  ): Promise<void> {
    await this.world.alltoallvAsync(send, sendCounts, sendDispls, recv, recvCounts, recvDispls)
  }
  async scanAsync(send: NumArray, recv: NumArray, op: number): Promise<void> {
    await this.world.scanAsync(send, recv, op)
  }
  async exscanAsync(send: NumArray, recv: NumArray, op: number): Promise<void> {
    await this.world.exscanAsync(send, recv, op)
  }
  async scatterAsync(send: NumArray | null, recv: NumArray, root = 0): Promise<void> {
    await this.world.scatterAsync(send, recv, root)
  }

  // ───────────────────────────── collectives ─────────────────────────────

  bcast(buf: NumArray, root = 0): void {
    const rc = this.coll.bcast(buf, root)
    if (rc !== 0) throw collError(rc, 'bcast', root, this.size)
  }
  reduce(send: NumArray, recv: NumArray | null, op: number, root = 0): void {
    const rc = this.coll.reduce(send, recv, op, root)
    if (rc !== 0) throw collError(rc, 'reduce', root, this.size)
  }
  allreduce(send: NumArray, recv: NumArray, op: number): void {
    check(this.coll.allreduce(send, recv, op), 'allreduce')
  }
  gather(send: NumArray, recv: NumArray | null, root = 0): void {
    const rc = this.coll.gather(send, recv, root)
    if (rc !== 0) throw collError(rc, 'gather', root, this.size)
  }
  allgather(send: NumArray, recv: NumArray): void {
    check(this.coll.allgather(send, recv), 'allgather')
  }
  alltoall(send: NumArray, recv: NumArray): void {
    check(this.coll.alltoall(send, recv), 'alltoall')
  }
  alltoallv(
    send: NumArray,
    sendCounts: ArrayLike<number>,
    sendDispls: ArrayLike<number>,
    recv: NumArray,
    recvCounts: ArrayLike<number>,
    recvDispls: ArrayLike<number>,
  ): void {
    check(this.coll.alltoallv(send, sendCounts, sendDispls, recv, recvCounts, recvDispls), 'alltoallv')
  }
  scan(send: NumArray, recv: NumArray, op: number): void {
    check(this.coll.scan(send, recv, op, false), 'scan')
  }
  exscan(send: NumArray, recv: NumArray, op: number): void {
    check(this.coll.scan(send, recv, op, true), 'exscan')
  }
  /** Block t of the root's `send` (P × recv.length elements; null elsewhere) into task t's `recv`. */
  scatter(send: NumArray | null, recv: NumArray, root = 0): void {
    const rc = this.coll.scatter(send, recv, root)
    if (rc !== 0) throw collError(rc, 'scatter', root, this.size)
  }

  // ───────────────────────── collectives into shared arrays (shared-collectives.ts) ─────────────────────────

  /** Every task's part of `dst` ← the root's `src` (a part's length; null elsewhere): upc_all_broadcast. */
  bcastInto<T extends NumArray>(dst: SharedArray<T>, src: T | null, root = 0): void {
    check(bcastInto(this.coll, dst, src, root), 'bcastInto')
  }
  /** Task t's part of `dst` ← block t of the root's `src` (P parts' length; null elsewhere): upc_all_scatter. */
  scatterInto<T extends NumArray>(dst: SharedArray<T>, src: T | null, root = 0): void {
    check(scatterInto(this.coll, dst, src, root), 'scatterInto')
  }
  /** Every task's part of `dst` ← every task's `src` (a part's length / P), in task order: upc_all_gather_all. */
  allgatherInto<T extends NumArray>(dst: SharedArray<T>, src: IntoSource<T>): void {
    check(allgatherInto(this.coll, dst, src), 'allgatherInto')
  }
  /** Block s of task t's part of `dst` ← block t of task s's `src` (a part's length): upc_all_exchange. */
  alltoallInto<T extends NumArray>(dst: SharedArray<T>, src: IntoSource<T>): void {
    check(alltoallInto(this.coll, dst, src), 'alltoallInto')
  }
  /** Element `index` of `dst` (at its owner) ← every element of `src` combined with `op`: upc_all_reduce. */
  reduceInto<T extends NumArray>(dst: SharedArray<T>, index: number, src: SharedArray<T>, op: number): void {
    check(reduceInto(this.coll, dst, index, src, op), 'reduceInto')
  }
}

/** A call's result, or the PgasError of its status (with the remote message where there is one). */
function rpcResult(h: RpcHandle, rc: number, what: string, task?: unknown, size?: number): unknown {
  if (rc === S.ERR_BAD_TASK && size !== undefined) throw new PgasError(rc, what, taskWhy(task, size))
  if (rc !== 0) throw new PgasError(rc, `${what}${typeof h.result === 'string' ? `: ${h.result}` : ''}`)
  return h.result
}

/** `l` when it is a lock, else the PgasError ERR_BAD_ARG. */
function lockOf(l: PgasLock, what: string): PgasLock {
  if (l instanceof PgasLock) return l
  throw new PgasError(S.ERR_BAD_ARG, `${what}: ${String(l)} is not a lock`)
}
