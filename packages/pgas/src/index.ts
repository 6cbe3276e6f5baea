/**
 * @packageDocumentation
 * `@amlapi/pgas`: the runtime layer a PGAS language or library targets, over `@amlapi/lapi`:
 * global pointers and shared arrays (blocked, cyclic, block-cyclic), put and get (blocking,
 * non-blocking with handles, implicit, strided, indexed), remote atomics, remote procedure calls,
 * split-phase barriers with ids, fair locks, collectives on typed arrays and into shared arrays,
 * and teams (ordered subsets of the tasks, split from the world, with collectives of their own). Co-located tasks
 * are reached through shared memory directly, others with LAPI's one-sided operations and active
 * messages. This is the idiomatic face (methods throw `PgasError`); `@amlapi/pgas/flat` is the
 * flat one (status codes).
 *
 * @example
 * ```js
 * import { Pgas, ReduceOp } from '@amlapi/pgas'
 * const pg = Pgas.init()
 * const a = pg.sharedArray(Float64Array, 1000, { kind: 'cyclic' })
 * for (let i = pg.rank; i < a.length; i += pg.size) a.set(i, i)    // each task its own elements
 * pg.barrier()
 * const sum = new Float64Array([a.localView().reduce((s, x) => s + x, 0)])
 * pg.allreduce(sum, sum, ReduceOp.SUM)                            // 499500 everywhere
 * pg.finalize()
 * ```
 */
export { Pgas, SignalCounter, type LayoutSpec } from './pgas.js'
export { GlobalPtr } from './gptr.js'
export { Layout, LayoutCode, type LayoutKind } from './layout.js'
export { SharedArray, type NumArrayCtor } from './shared-array.js'
export { SharedPtr } from './shared-ptr.js'
export { ElemType, DESC_HEADER } from './descriptor.js'
export { COPY_PIECE } from './copy.js'
export { OpHandle } from './rma.js'
export { RpcHandle, RPC_NAME_MAX, type RemoteFn } from './rpc.js'
export { DistObject } from './dist-object.js'
export type { PutCompletion } from './async-ops.js'
export { PgasLock } from './lock.js'
export { AtomicOp, type AtomicOpCode } from './atomics.js'
export { ReduceOp, type ReduceOpCode, type NumArray } from './reduce-ops.js'
export { BarrierFlag } from './barrier.js'
export { Team } from './team.js'
export { TEAM_IDS } from './messages.js'
export type { IntoSource } from './shared-collectives.js'
export { AmlapiError } from '@amlapi/lapi'
export { PgasStatus, PgasError, pgasStatusName, type PgasStatusCode } from './status.js'
export {
  BCAST_TREE_MAX,
  ALLREDUCE_RD_MAX,
  GATHER_TREE_MAX,
  ALLGATHER_RD_MAX,
  ALLTOALL_LINEAR_MAX,
} from './collectives.js'
