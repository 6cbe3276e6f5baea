/**
 * @packageDocumentation
 * The flat face of `@amlapi/pgas`, for compilers and C-style code: plain numbers and typed arrays
 * in, a PgasStatus out (0 = success), results through one-element typed arrays, handles and locks
 * as small integers. It runs the same parts as the idiomatic face, on this task's runtime
 * (`pgas_init`).
 *
 * @example
 * ```js
 * import * as P from '@amlapi/pgas/flat'
 * P.pgas_init()
 * const me = P.pgas_rank(), n = P.pgas_size()
 * const addrs = new Int32Array(n)
 * P.pgas_alloc_all(8, addrs)                                     // 8 bytes on every task
 * P.pgas_put((me + 1) % n, addrs[(me + 1) % n], new Float64Array([me]), 0, 8)
 * P.pgas_barrier()
 * P.pgas_finalize()
 * ```
 */
import type { SegmentMemory } from '@amlapi/lapi'
import { Pgas, type SignalCounter } from './pgas.js'
import { AtomicKind, AtomicOp } from './atomics.js'
import { NOT_READY } from './barrier.js'
import { GlobalPtr } from './gptr.js'
import type { PgasLock } from './lock.js'
import type { NumArray } from './reduce-ops.js'
import { bytesOf } from './reduce-ops.js'
import type { OpHandle } from './rma.js'
import type { RemoteFn, RpcHandle } from './rpc.js'
import { PgasStatus as S, pgasStatusOf } from './status.js'

export { PgasStatus, pgasStatusName } from './status.js'
export * from './flat-async.js'
export * from './flat-teams.js'
export { AtomicOp } from './atomics.js'
export { ReduceOp } from './reduce-ops.js'
export { BarrierFlag } from './barrier.js'
export { LayoutCode } from './layout.js'
export { ElemType, DESC_HEADER } from './descriptor.js'
export { pgas_layout_locate, pgas_layout_index, pgas_layout_count, pgas_sptr_at, pgas_sptr_index, pgas_sptr_add, pgas_sptr_diff } from './flat-layout.js'
/** What `pgas_barrier_try` returns while some task has not notified. */
export const PGAS_NOT_READY = NOT_READY

let P: Pgas | null = null
const ops = new Map<number, OpHandle>()
const calls = new Map<number, RpcHandle>()
const locks: PgasLock[] = []
const signals: SignalCounter[] = []
let nextHandle = 1

function rt(): Pgas | null {
  // (one runtime per task for both faces: one started or finalized through the idiomatic face is
  // this face's too)
  if (P === null || P.isFinalized) P = Pgas.current()
  return P
}
/** Whether `a` can take a result in its first element: an Int32Array of one element or more (every `out`, `done` and `got`). */
function isOut(a: unknown): a is Int32Array {
  return a instanceof Int32Array && a.length >= 1
}
function id(): number {
  const h = nextHandle
  nextHandle = (nextHandle + 1) | 0 || 1
  return h
}

/** A byte view of `len` bytes at `off` of `buf`, or null when out of range. */
function piece(buf: ArrayBufferView, off: number, len: number): Uint8Array | null {
  if (!ArrayBuffer.isView(buf) || !Number.isInteger(off) || !Number.isInteger(len) || off < 0 || len < 0 || off + len > buf.byteLength) return null
  return bytesOf(buf).subarray(off, off + len)
}

/** Runs `f`, turning a thrown PgasError (or any error) into its code. */
function code(f: () => void): number {
  if (rt() === null) return S.ERR_NOT_INIT
  try {
    f()
    return S.OK
  } catch (e) {
    const s = pgasStatusOf(e)
    if (s !== undefined) return s
    // (an argument of the wrong type met where it was used)
    return e instanceof TypeError || e instanceof RangeError ? S.ERR_BAD_ARG : S.ERR_LAPI
  }
}

/** The error `code` turns into ERR_BAD_ARG. */
function badArg(): Error {
  return Object.assign(new Error('bad argument'), { name: 'PgasError', status: S.ERR_BAD_ARG })
}

/** Collective: starts the runtime (on the open LAPI context, or a new one). */
export function pgas_init(): number {
  try {
    P = Pgas.init()
    return S.OK
  } catch {
    return S.ERR_LAPI
  }
}
/** Collective: completes implicit operations, a barrier, then stops the runtime. */
export function pgas_finalize(): number {
  const r = code(() => P!.finalize())
  P = null
  return r
}
export function pgas_rank(): number {
  return rt()?.rank ?? -1
}
export function pgas_size(): number {
  return rt()?.size ?? -1
}
/** Runs handlers and remote calls that came. */
export function pgas_progress(): number {
  return code(() => P!.progress())
}
/** 1 when task `t` is of this process (plain loads and stores reach it), else 0. */
export function pgas_is_local(t: number): number {
  return rt()?.isLocal(t) === true ? 1 : 0
}

/** `nbytes` of this task's segment; its address in `out[0]`. */
export function pgas_alloc(nbytes: number, out: Int32Array): number {
  if (!isOut(out)) return rt() === null ? S.ERR_NOT_INIT : S.ERR_BAD_ARG
  return code(() => {
    out[0] = P!.alloc(nbytes).addr
  })
}
export function pgas_free(addr: number): number {
  return code(() => P!.free(new GlobalPtr(P!.rank, addr)))
}
/**
 * This task's segment as a shared WebAssembly.Memory, for code compiled to WebAssembly: byte `a`
 * of it is this task's address `a`. Null where the segment is a plain buffer, or before init.
 */
export function pgas_segment_memory(): SegmentMemory | null {
  return rt()?.segmentMemory ?? null
}
/** Collective: `nbytes` on every task; `out[t]` = task t's address. */
export function pgas_alloc_all(nbytes: number, out: Int32Array): number {
  return code(() => {
    if (out.length < P!.size) throw Object.assign(new Error(), { name: 'PgasError', status: S.ERR_BAD_ARG })
    P!.allocAll(nbytes).forEach((p, t) => {
      out[t] = p.addr
    })
  })
}
/** Collective: frees this task's part of a `pgas_alloc_all` (after a barrier). */
export function pgas_free_all(addr: number): number {
  return code(() => {
    P!.barrier()
    P!.free(new GlobalPtr(P!.rank, addr))
  })
}
/**
 * One task (`upc_global_alloc`): a shared array of `length` elements of ElemType `type` (`elemBytes`
 * each; any size for BYTES) laid out by LayoutCode `kind` (`block`: BLOCK_CYCLIC's) over every
 * task, the others allocating in their progress; its descriptor into `desc` (DESC_HEADER + P words).
 */
export function pgas_global_alloc(type: number, elemBytes: number, kind: number, block: number, length: number, desc: Int32Array): number {
  return rt()?.galloc.allocDesc(type, elemBytes, kind, block, length, desc) ?? S.ERR_NOT_INIT
}
/** Collective (`upc_all_alloc`): the same array made by every task at once; the descriptor on every task. */
export function pgas_all_alloc(type: number, elemBytes: number, kind: number, block: number, length: number, desc: Int32Array): number {
  return rt()?.galloc.allAllocDesc(type, elemBytes, kind, block, length, desc) ?? S.ERR_NOT_INIT
}
/** One task (`upc_free`): frees every task's part of the array `desc` describes. */
export function pgas_global_free(desc: Int32Array): number {
  return rt()?.galloc.freeDesc(desc) ?? S.ERR_NOT_INIT
}
/** Copies `n` bytes from (srcTask, srcAddr) to (dstTask, dstAddr), wherever both are (`upc_memcpy`); blocking; overlapping ranges: as memmove. */
export function pgas_copy(dstTask: number, dstAddr: number, srcTask: number, srcAddr: number, n: number): number {
  return rt()?.copier.copy(dstTask, dstAddr, srcTask, srcAddr, n) ?? S.ERR_NOT_INIT
}
/** Sets `n` bytes at (task, addr) to `byte` (0 … 255; `upc_memset`); blocking. */
export function pgas_fill(task: number, addr: number, byte: number, n: number): number {
  return rt()?.copier.fill(task, addr, byte, n) ?? S.ERR_NOT_INIT
}

export function pgas_put(task: number, addr: number, src: ArrayBufferView, off: number, len: number): number {
  const p = rt()
  if (p === null) return S.ERR_NOT_INIT
  const b = piece(src, off, len)
  if (b === null) return S.ERR_BAD_ARG
  return p.rma.put(task, addr, b)
}
export function pgas_get(task: number, addr: number, dst: ArrayBufferView, off: number, len: number): number {
  const p = rt()
  if (p === null) return S.ERR_NOT_INIT
  const b = piece(dst, off, len)
  if (b === null) return S.ERR_BAD_ARG
  return p.rma.get(task, addr, b)
}
function nb(h: OpHandle, out: Int32Array): number {
  if (h.status !== 0) return h.status
  const k = id()
  ops.set(k, h)
  out[0] = k
  return S.OK
}
/** Starts a put; the handle in `out[0]`. */
export function pgas_put_nb(task: number, addr: number, src: ArrayBufferView, off: number, len: number, out: Int32Array): number {
  const p = rt()
  if (p === null) return S.ERR_NOT_INIT
  const b = piece(src, off, len)
  if (b === null || !isOut(out)) return S.ERR_BAD_ARG
  return nb(p.rma.putNb(task, addr, b), out)
}
export function pgas_get_nb(task: number, addr: number, dst: ArrayBufferView, off: number, len: number, out: Int32Array): number {
  const p = rt()
  if (p === null) return S.ERR_NOT_INIT
  const b = piece(dst, off, len)
  if (b === null || !isOut(out)) return S.ERR_BAD_ARG
  return nb(p.rma.getNb(task, addr, b), out)
}
/** `done[0]` = 1 when handle `h` completed (it stays valid until waited for). */
export function pgas_test(h: number, done: Int32Array): number {
  const p = rt()
  if (p === null) return S.ERR_NOT_INIT
  const o = ops.get(h)
  if (o === undefined) return S.ERR_BAD_HANDLE
  if (!isOut(done)) return S.ERR_BAD_ARG
  done[0] = p.rma.test(o) ? 1 : 0
  return S.OK
}
/** Waits for handle `h` and releases it. */
export function pgas_wait(h: number): number {
  const p = rt()
  if (p === null) return S.ERR_NOT_INIT
  const o = ops.get(h)
  if (o === undefined) return S.ERR_BAD_HANDLE
  ops.delete(h)
  return p.rma.wait(o)
}
/** Waits for the first `n` handles of `hs`. */
export function pgas_wait_all(hs: Int32Array, n: number): number {
  if (rt() === null) return S.ERR_NOT_INIT
  if (!(hs instanceof Int32Array) || !Number.isInteger(n) || n < 0 || n > hs.length) return S.ERR_BAD_ARG
  let rc = 0
  for (let i = 0; i < n; i++) {
    const r = pgas_wait(hs[i]!)
    if (rc === 0) rc = r
  }
  return rc
}
export function pgas_put_nbi(task: number, addr: number, src: ArrayBufferView, off: number, len: number): number {
  const p = rt()
  if (p === null) return S.ERR_NOT_INIT
  const b = piece(src, off, len)
  if (b === null) return S.ERR_BAD_ARG
  return p.rma.putNbi(task, addr, b)
}
export function pgas_get_nbi(task: number, addr: number, dst: ArrayBufferView, off: number, len: number): number {
  const p = rt()
  if (p === null) return S.ERR_NOT_INIT
  const b = piece(dst, off, len)
  if (b === null) return S.ERR_BAD_ARG
  return p.rma.getNbi(task, addr, b)
}
export function pgas_sync_all(): number {
  return code(() => P!.syncAll())
}
/** Waits until every implicit operation of this task is complete (`shmem_quiet`, `upc_fence`). */
export function pgas_quiet(): number {
  return code(() => P!.quiet())
}
/** Implicit puts and non-fetching atomics issued before it are done before any issued after it (`shmem_fence`). */
export function pgas_fence(): number {
  return code(() => P!.fence())
}
export function pgas_put_strided(
  task: number,
  addr: number,
  dstStride: number,
  src: ArrayBufferView,
  off: number,
  srcStride: number,
  blockBytes: number,
  count: number,
): number {
  const p = rt()
  if (p === null) return S.ERR_NOT_INIT
  if (!ArrayBuffer.isView(src) || !Number.isInteger(off) || off < 0 || off > src.byteLength) return S.ERR_BAD_ARG
  return p.rma.putStrided(task, addr, dstStride, bytesOf(src).subarray(off), srcStride, blockBytes, count)
}
export function pgas_get_strided(
  task: number,
  addr: number,
  srcStride: number,
  dst: ArrayBufferView,
  off: number,
  dstStride: number,
  blockBytes: number,
  count: number,
): number {
  const p = rt()
  if (p === null) return S.ERR_NOT_INIT
  if (!ArrayBuffer.isView(dst) || !Number.isInteger(off) || off < 0 || off > dst.byteLength) return S.ERR_BAD_ARG
  return p.rma.getStrided(task, addr, srcStride, bytesOf(dst).subarray(off), dstStride, blockBytes, count)
}

/** Collective: a new signal counter on every task; its number in `out[0]`. */
export function pgas_signal_new(out: Int32Array): number {
  // (collective: made on every task first, so a bad `out` on one task leaves no other waiting)
  return code(() => {
    signals.push(P!.newSignalCounter())
    if (!isOut(out)) throw badArg()
    out[0] = signals.length - 1
  })
}
/** Starts a put that moves signal counter `sig` at `task` when the data is there; the handle (complete when `src` may be reused) in `out[0]`. */
export function pgas_put_signal(task: number, addr: number, src: ArrayBufferView, off: number, len: number, sig: number, out: Int32Array): number {
  const p = rt()
  if (p === null) return S.ERR_NOT_INIT
  const sc = signals[sig]
  if (sc === undefined) return S.ERR_BAD_HANDLE
  const b = piece(src, off, len)
  if (b === null || !isOut(out)) return S.ERR_BAD_ARG
  return nb(p.rma.putSignal(task, addr, b, sc.addrs[task] ?? -1), out)
}
/** Waits until `n` signals came to this task's counter `sig` (and takes them off). */
export function pgas_signal_wait(sig: number, n: number): number {
  const sc = signals[sig]
  if (sc === undefined) return S.ERR_BAD_HANDLE
  if (!Number.isInteger(n) || n < 0) return S.ERR_BAD_ARG
  return code(() => sc.wait(n))
}

/**
 * An AtomicOp on the 32-bit integer at (task, addr) with operand `a` (CAS: `a` expected, `b` new;
 * otherwise `b` is ignored); the old value in `old[0]`. ERR_BAD_ARG (op, operand, `old` not an
 * Int32Array), ERR_BAD_TASK, ERR_OUT_OF_SEGMENT, ERR_ALIGN.
 */
export function pgas_atomic32(op: number, task: number, addr: number, a: number, b: number, old: Int32Array): number {
  return rt()?.atomics.toArray(AtomicKind.I32, op, task, addr, a, b, old) ?? S.ERR_NOT_INIT
}
/** The same on the 64-bit integer at (task, addr), 8-byte aligned: bigint operands, `old` a BigInt64Array. */
export function pgas_atomic64(op: number, task: number, addr: number, a: bigint, b: bigint, old: BigInt64Array): number {
  return rt()?.atomics.toArray(AtomicKind.I64, op, task, addr, a, b, old) ?? S.ERR_NOT_INIT
}
/** The same on the signed 8-bit integer at (task, addr), any address; `old` an Int8Array. */
export function pgas_atomic8(op: number, task: number, addr: number, a: number, b: number, old: Int8Array): number {
  return rt()?.atomics.toArray(AtomicKind.I8, op, task, addr, a, b, old) ?? S.ERR_NOT_INIT
}
/** The same on the signed 16-bit integer at (task, addr), 2-byte aligned; `old` an Int16Array. */
export function pgas_atomic16(op: number, task: number, addr: number, a: number, b: number, old: Int16Array): number {
  return rt()?.atomics.toArray(AtomicKind.I16, op, task, addr, a, b, old) ?? S.ERR_NOT_INIT
}
/** The same on the float32 at (task, addr), 4-byte aligned: ADD, MIN, MAX, SWAP, CAS (by bits), LOAD, STORE; `old` a Float32Array. */
export function pgas_atomic_f32(op: number, task: number, addr: number, a: number, b: number, old: Float32Array): number {
  return rt()?.atomics.toArray(AtomicKind.F32, op, task, addr, a, b, old) ?? S.ERR_NOT_INIT
}
/** The same on the float64 at (task, addr), 8-byte aligned; `old` a Float64Array. */
export function pgas_atomic_f64(op: number, task: number, addr: number, a: number, b: number, old: Float64Array): number {
  return rt()?.atomics.toArray(AtomicKind.F64, op, task, addr, a, b, old) ?? S.ERR_NOT_INIT
}
/**
 * Non-fetching atomics: ADD, AND, OR, XOR, MIN, MAX or STORE of `a` (floats: ADD, MIN, MAX,
 * STORE), no result. Remote 32/64-bit integer ADD, OR, STORE and float STORE complete at the
 * next `pgas_quiet`/`pgas_fence`; the others (and co-located targets) complete before returning.
 */
export function pgas_atomic32_nf(op: number, task: number, addr: number, a: number): number {
  return rt()?.atomics.nf(AtomicKind.I32, op, task, addr, a) ?? S.ERR_NOT_INIT
}
export function pgas_atomic64_nf(op: number, task: number, addr: number, a: bigint): number {
  return rt()?.atomics.nf(AtomicKind.I64, op, task, addr, a) ?? S.ERR_NOT_INIT
}
export function pgas_atomic8_nf(op: number, task: number, addr: number, a: number): number {
  return rt()?.atomics.nf(AtomicKind.I8, op, task, addr, a) ?? S.ERR_NOT_INIT
}
export function pgas_atomic16_nf(op: number, task: number, addr: number, a: number): number {
  return rt()?.atomics.nf(AtomicKind.I16, op, task, addr, a) ?? S.ERR_NOT_INIT
}
export function pgas_atomic_f32_nf(op: number, task: number, addr: number, a: number): number {
  return rt()?.atomics.nf(AtomicKind.F32, op, task, addr, a) ?? S.ERR_NOT_INIT
}
export function pgas_atomic_f64_nf(op: number, task: number, addr: number, a: number): number {
  return rt()?.atomics.nf(AtomicKind.F64, op, task, addr, a) ?? S.ERR_NOT_INIT
}
/** fetch-add of `v` to the 32-bit word at (task, addr). */
export function pgas_fetch_add32(task: number, addr: number, v: number, old: Int32Array): number {
  return pgas_atomic32(AtomicOp.ADD, task, addr, v, 0, old)
}

export function pgas_barrier(): number {
  return rt()?.bar.barrier() ?? S.ERR_NOT_INIT
}
export function pgas_barrier_notify(id: number, flags: number): number {
  return rt()?.bar.notify(id, flags) ?? S.ERR_NOT_INIT
}
export function pgas_barrier_wait(id: number, flags: number): number {
  return rt()?.bar.wait(id, flags) ?? S.ERR_NOT_INIT
}
/** `pgas_barrier_wait` that does not block: PGAS_NOT_READY while some task has not notified. */
export function pgas_barrier_try(id: number, flags: number): number {
  return rt()?.bar.tryWait(id, flags) ?? S.ERR_NOT_INIT
}

/** Collective: a new lock whose word lives on task `home`; its number in `out[0]`. */
export function pgas_lock_new(home: number, out: Int32Array): number {
  return code(() => {
    locks.push(P!.newLock(home))
    if (!isOut(out)) throw badArg()
    out[0] = locks.length - 1
  })
}
export function pgas_lock(l: number): number {
  const k = locks[l]
  return k === undefined ? S.ERR_BAD_HANDLE : rt() === null ? S.ERR_NOT_INIT : k.acquire()
}
/** `got[0]` = 1 when the lock was free and is now this task's. */
export function pgas_trylock(l: number, got: Int32Array): number {
  const k = locks[l]
  if (k === undefined) return S.ERR_BAD_HANDLE
  if (!isOut(got)) return S.ERR_BAD_ARG
  got[0] = k.tryAcquire() ? 1 : 0
  return k.status
}
export function pgas_unlock(l: number): number {
  const k = locks[l]
  return k === undefined ? S.ERR_BAD_HANDLE : k.release()
}
/** Collective: frees lock `l` (a barrier first); its number then answers ERR_BAD_HANDLE. */
export function pgas_lock_free(l: number): number {
  const k = locks[l]
  if (k === undefined) return S.ERR_BAD_HANDLE
  const rc = code(() => P!.freeLock(k))
  if (k.isFreed) delete locks[l]
  return rc
}

export function pgas_bcast(buf: NumArray, root: number): number {
  return rt()?.coll.bcast(buf, root) ?? S.ERR_NOT_INIT
}
export function pgas_reduce(send: NumArray, recv: NumArray | null, op: number, root: number): number {
  return rt()?.coll.reduce(send, recv, op, root) ?? S.ERR_NOT_INIT
}
export function pgas_allreduce(send: NumArray, recv: NumArray, op: number): number {
  return rt()?.coll.allreduce(send, recv, op) ?? S.ERR_NOT_INIT
}
export function pgas_gather(send: NumArray, recv: NumArray | null, root: number): number {
  return rt()?.coll.gather(send, recv, root) ?? S.ERR_NOT_INIT
}
export function pgas_allgather(send: NumArray, recv: NumArray): number {
  return rt()?.coll.allgather(send, recv) ?? S.ERR_NOT_INIT
}
export function pgas_alltoall(send: NumArray, recv: NumArray): number {
  return rt()?.coll.alltoall(send, recv) ?? S.ERR_NOT_INIT
}
export function pgas_alltoallv(
  send: NumArray,
  sendCounts: ArrayLike<number>,
  sendDispls: ArrayLike<number>,
  recv: NumArray,
  recvCounts: ArrayLike<number>,
  recvDispls: ArrayLike<number>,
): number {
  return rt()?.coll.alltoallv(send, sendCounts, sendDispls, recv, recvCounts, recvDispls) ?? S.ERR_NOT_INIT
}
export function pgas_scan(send: NumArray, recv: NumArray, op: number): number {
  return rt()?.coll.scan(send, recv, op, false) ?? S.ERR_NOT_INIT
}
export function pgas_exscan(send: NumArray, recv: NumArray, op: number): number {
  return rt()?.coll.scan(send, recv, op, true) ?? S.ERR_NOT_INIT
}

/** Registers remote function `id` (a number 0..65535 or a name of 1 to 256 characters; the same on every task); `null` removes it. */
export function pgas_rpc_register(id: number | string, fn: RemoteFn | null): number {
  return rt()?.rpcs.register(id, fn) ?? S.ERR_NOT_INIT
}
/**
 * Starts a call of remote function `fn` (an id or a name) on `task` with `args`; its handle in
 * `out[0]`. A code here means the call was not sent (a bad task, function id or argument); what the
 * function did is `pgas_rpc_wait`'s to say.
 */
export function pgas_rpc(task: number, fn: number | string, args: readonly unknown[], out: Int32Array): number {
  const p = rt()
  if (p === null) return S.ERR_NOT_INIT
  if (!Array.isArray(args) || !isOut(out)) return S.ERR_BAD_ARG
  const h = p.rpcs.call(task, fn, args)
  if (!h.sent) return h.status
  const k = id()
  calls.set(k, h)
  out[0] = k
  return S.OK
}
/**
 * Waits for call `h` and releases the handle; its result in `result.value`, or for a failure the
 * message (the remote error's, for ERR_RPC_FAILED), and the function's status returned.
 */
export function pgas_rpc_wait(h: number, result: { value: unknown }): number {
  const p = rt()
  if (p === null) return S.ERR_NOT_INIT
  const c = calls.get(h)
  if (c === undefined) return S.ERR_BAD_HANDLE
  if (result === null || typeof result !== 'object') return S.ERR_BAD_ARG
  calls.delete(h)
  const rc = p.rpcs.wait(c)
  result.value = c.result
  return rc
}
/** `done[0]` = 1 when call `h` has its answer (the handle stays valid until waited for). */
export function pgas_rpc_test(h: number, done: Int32Array): number {
  const p = rt()
  if (p === null) return S.ERR_NOT_INIT
  const c = calls.get(h)
  if (c === undefined) return S.ERR_BAD_HANDLE
  if (!isOut(done)) return S.ERR_BAD_ARG
  if (!c.done) p.progress()
  done[0] = c.done ? 1 : 0
  return S.OK
}
/** Collective: this task's part of a new distributed object, `value`; its number (the same on every task) in `out[0]`. */
export function pgas_dist_new(value: unknown, out: Int32Array): number {
  const p = rt()
  if (p === null) return S.ERR_NOT_INIT
  if (!isOut(out)) return S.ERR_BAD_ARG
  out[0] = p.distObject(value).id
  return S.OK
}
/** This task's part of distributed object `d` in `result.value`. */
export function pgas_dist_get(d: number, result: { value: unknown }): number {
  const p = rt()
  if (p === null) return S.ERR_NOT_INIT
  const o = p.dists.get(d)
  if (o === undefined) return S.ERR_BAD_HANDLE
  if (result === null || typeof result !== 'object') return S.ERR_BAD_ARG
  result.value = o.value
  return S.OK
}
/** Sets this task's part of distributed object `d`. */
export function pgas_dist_set(d: number, value: unknown): number {
  const p = rt()
  if (p === null) return S.ERR_NOT_INIT
  const o = p.dists.get(d)
  if (o === undefined) return S.ERR_BAD_HANDLE
  o.value = value
  return S.OK
}
/** Task `task`'s part of distributed object `d` in `result.value` (blocking; progress runs meanwhile). */
export function pgas_dist_fetch(d: number, task: number, result: { value: unknown }): number {
  const p = rt()
  if (p === null) return S.ERR_NOT_INIT
  const o = p.dists.get(d)
  if (o === undefined) return S.ERR_BAD_HANDLE
  if (result === null || typeof result !== 'object') return S.ERR_BAD_ARG
  return code(() => {
    result.value = o.fetchSync(task)
  })
}
/** Removes this task's part of distributed object `d` (later fetches of it answer ERR_STATE). */
export function pgas_dist_destroy(d: number): number {
  const p = rt()
  if (p === null) return S.ERR_NOT_INIT
  const o = p.dists.get(d)
  if (o === undefined) return S.ERR_BAD_HANDLE
  o.destroy()
  return S.OK
}
/** Calls remote function `fn` on `task` without a result. */
export function pgas_rpc_noreply(task: number, fn: number | string, args: readonly unknown[]): number {
  return rt()?.rpcs.callNoReply(task, fn, args) ?? S.ERR_NOT_INIT
}
