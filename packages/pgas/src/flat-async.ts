/**
 * The flat face's Promise forms: each resolves with a PgasStatus (0 = success), never rejects;
 * results go where the blocking forms put them. They act on this task's runtime (`pgas_init`).
 */
import { Pgas } from './pgas.js'
import { GlobalPtr } from './gptr.js'
import type { NumArray } from './reduce-ops.js'
import { bytesOf } from './reduce-ops.js'
import { PgasStatus as S, pgasStatusOf } from './status.js'

/** The status of a settled promise of the idiomatic face (a PgasError's status; anything else ERR_LAPI). */
async function status(f: (p: Pgas) => Promise<unknown>): Promise<number> {
  const p = Pgas.current()
  if (p === null) return S.ERR_NOT_INIT
  try {
    await f(p)
    return S.OK
  } catch (e) {
    const s = pgasStatusOf(e)
    if (s !== undefined) return s
    return e instanceof TypeError || e instanceof RangeError ? S.ERR_BAD_ARG : S.ERR_LAPI
  }
}

function piece(buf: ArrayBufferView, off: number, len: number): Uint8Array | null {
  if (!ArrayBuffer.isView(buf) || !Number.isInteger(off) || !Number.isInteger(len) || off < 0 || len < 0 || off + len > buf.byteLength) return null
  return bytesOf(buf).subarray(off, off + len)
}

/**
 * Puts `len` bytes of `src` from `off` at (task, addr); resolves when they are at the target. With
 * `remoteFn`, that remote function runs at the target after the data landed, with `remoteArgs`.
 */
export async function pgas_put_async(
  task: number,
  addr: number,
  src: ArrayBufferView,
  off: number,
  len: number,
  remoteFn?: number | string,
  remoteArgs?: readonly unknown[],
): Promise<number> {
  const b = piece(src, off, len)
  if (b === null) return S.ERR_BAD_ARG
  const cx = remoteFn === undefined ? undefined : { remote: { fn: remoteFn, args: remoteArgs ?? [] } }
  return await status(async (p) => {
    await p.putAsync(new GlobalPtr(task, addr), b, cx)
  })
}
/** Gets `len` bytes at (task, addr) into `dst` from `off`; resolves when they are here. */
export async function pgas_get_async(task: number, addr: number, dst: ArrayBufferView, off: number, len: number): Promise<number> {
  const b = piece(dst, off, len)
  if (b === null) return S.ERR_BAD_ARG
  return await status(async (p) => {
    await p.getAsync(new GlobalPtr(task, addr), b)
  })
}
/** `pgas_atomic32` as a promise: the old value in `old[0]`. */
export async function pgas_atomic32_async(op: number, task: number, addr: number, a: number, b: number, old: Int32Array): Promise<number> {
  if (!(old instanceof Int32Array) || old.length < 1) return Pgas.current() === null ? S.ERR_NOT_INIT : S.ERR_BAD_ARG
  return await status(async (p) => {
    old[0] = await p.atomic32Async(op, new GlobalPtr(task, addr), a, b)
  })
}
/** `pgas_atomic64` as a promise: the old value in `old[0]`. */
export async function pgas_atomic64_async(op: number, task: number, addr: number, a: bigint, b: bigint, old: BigInt64Array): Promise<number> {
  if (!(old instanceof BigInt64Array) || old.length < 1) return Pgas.current() === null ? S.ERR_NOT_INIT : S.ERR_BAD_ARG
  return await status(async (p) => {
    old[0] = await p.atomic64Async(op, new GlobalPtr(task, addr), a, b)
  })
}
/** Calls remote function `fn` on `task`; resolves with its status, the result (or failure message) in `result.value`. */
export async function pgas_rpc_async(task: number, fn: number | string, args: readonly unknown[], result: { value: unknown }): Promise<number> {
  if (!Array.isArray(args) || result === null || typeof result !== 'object') return S.ERR_BAD_ARG
  const p = Pgas.current()
  if (p === null) return S.ERR_NOT_INIT
  const h = p.rpcs.call(task, fn, args)
  const rc = await p.rpcs.waitAsync(h)
  result.value = h.result
  return rc
}
/** The barrier, without blocking the event loop. */
export async function pgas_barrier_async(): Promise<number> {
  return await status(async (p) => {
    await p.barrierAsync()
  })
}
export async function pgas_bcast_async(buf: NumArray, root: number): Promise<number> {
  return await status(async (p) => {
    await p.bcastAsync(buf, root)
  })
}
export async function pgas_reduce_async(send: NumArray, recv: NumArray | null, op: number, root: number): Promise<number> {
  return await status(async (p) => {
    await p.reduceAsync(send, recv, op, root)
  })
}
export async function pgas_allreduce_async(send: NumArray, recv: NumArray, op: number): Promise<number> {
  return await status(async (p) => {
    await p.allreduceAsync(send, recv, op)
  })
}
export async function pgas_gather_async(send: NumArray, recv: NumArray | null, root: number): Promise<number> {
  return await status(async (p) => {
    await p.gatherAsync(send, recv, root)
  })
}
export async function pgas_allgather_async(send: NumArray, recv: NumArray): Promise<number> {
  return await status(async (p) => {
    await p.allgatherAsync(send, recv)
  })
}
export async function pgas_alltoall_async(send: NumArray, recv: NumArray): Promise<number> {
  return await status(async (p) => {
    await p.alltoallAsync(send, recv)
  })
}
export async function pgas_alltoallv_async(
  send: NumArray,
  sendCounts: ArrayLike<number>,
  sendDispls: ArrayLike<number>,
  recv: NumArray,
  recvCounts: ArrayLike<number>,
  recvDispls: ArrayLike<number>,
): Promise<number> {
  return await status(async (p) => {
    await p.alltoallvAsync(send, sendCounts, sendDispls, recv, recvCounts, recvDispls)
  })
}
export async function pgas_scan_async(send: NumArray, recv: NumArray, op: number): Promise<number> {
  return await status(async (p) => {
    await p.scanAsync(send, recv, op)
  })
}
export async function pgas_exscan_async(send: NumArray, recv: NumArray, op: number): Promise<number> {
  return await status(async (p) => {
    await p.exscanAsync(send, recv, op)
  })
}
export async function pgas_scatter_async(send: NumArray | null, recv: NumArray, root: number): Promise<number> {
  return await status(async (p) => {
    await p.scatterAsync(send, recv, root)
  })
}
