/**
 * The flat face of teams (team.ts), of scatter, and of the collectives into shared arrays
 * (shared-collectives.ts); re-exported by flat.ts. A team is a small integer: PGAS_TEAM_WORLD (0)
 * is the world, a split gives the next number (never one given before, so a stale number is
 * ERR_BAD_HANDLE, not another team); PGAS_TEAM_NULL (-1) is "no team". A shared array is its
 * descriptor (descriptor.ts). Functions that answer a number (rank, size) answer a failure as
 * the negated status (−ERR_BAD_HANDLE, −ERR_NOT_INIT).
 */
import { Pgas } from './pgas.js'
import type { NumArray } from './reduce-ops.js'
import type { SharedArray } from './shared-array.js'
import { allgatherInto, alltoallInto, bcastInto, reduceInto, scatterInto } from './shared-collectives.js'
import { PgasStatus as S, pgasStatusOf } from './status.js'
import type { Team } from './team.js'

/** The world team's number. */
export const PGAS_TEAM_WORLD = 0
/** What a split gives a task that is in no new team. */
export const PGAS_TEAM_NULL = -1

/** Per runtime, its teams by number (null: destroyed). */
const TABLES = new WeakMap<Pgas, Array<Team | null>>()

function table(p: Pgas): Array<Team | null> {
  let t = TABLES.get(p)
  if (t === undefined) {
    t = [p.world]
    TABLES.set(p, t)
  }
  return t
}

/** The running runtime, or null. */
function rt(): Pgas | null {
  const p = Pgas.current()
  return p === null || p.isFinalized ? null : p
}

/** Team `t` of the running runtime, or the status that says why not. */
function team(t: number): Team | number {
  const p = rt()
  if (p === null) return S.ERR_NOT_INIT
  const tm = Number.isInteger(t) && t >= 0 ? table(p)[t] : undefined
  if (tm === undefined || tm === null) return S.ERR_BAD_HANDLE
  return tm.usable() || tm
}

function isOut(a: unknown): a is Int32Array {
  return a instanceof Int32Array && a.length >= 1
}

/** The world team's number (PGAS_TEAM_WORLD). */
export function pgas_team_world(): number {
  return PGAS_TEAM_WORLD
}

/**
 * Collective over team `parent`: the members that give the same `color` form a new team, ranked
 * by (`key`, rank in `parent`) (MPI_Comm_split). Its number in `out[0]`, or PGAS_TEAM_NULL for a
 * negative color. ERR_BAD_ARG (on every member, when one gave a color or key that is not a 32-bit
 * integer), ERR_COLL_MISMATCH, ERR_NOMEM (no team id free), ERR_BAD_HANDLE.
 */
export function pgas_team_split(parent: number, color: number, key: number, out: Int32Array): number {
  const tm = team(parent)
  if (typeof tm === 'number') return tm
  return made(tm, tm.splitRc(color, key, false, 0, 0, 0, isOut(out)), out)
}

/**
 * Collective over team `parent`: the members of ranks start, start + stride, …, start + (size −
 * 1)·stride form a new team in that order (shmem_team_split_strided); its number in `out[0]`, or
 * PGAS_TEAM_NULL on the others. Every member passes the same arguments (else ERR_COLL_MISMATCH).
 */
export function pgas_team_split_strided(parent: number, start: number, stride: number, size: number, out: Int32Array): number {
  const tm = team(parent)
  if (typeof tm === 'number') return tm
  return made(tm, tm.splitRc(0, 0, true, start, stride, size, isOut(out)), out)
}

/** Numbers the team a split made (or says it made none) in `out[0]`. */
function made(parent: Team, rc: number, out: Int32Array): number {
  if (rc !== S.OK) return rc
  const t = parent.made
  if (t === null) {
    out[0] = PGAS_TEAM_NULL
    return S.OK
  }
  const tab = table(rt()!)
  tab.push(t)
  out[0] = tab.length - 1
  return S.OK
}

/** This task's rank in team `t`, or −ERR_BAD_HANDLE / −ERR_NOT_INIT. */
export function pgas_team_rank(t: number): number {
  const tm = team(t)
  return typeof tm === 'number' ? -tm : tm.rank
}
/** The number of tasks in team `t`, or −ERR_BAD_HANDLE / −ERR_NOT_INIT. */
export function pgas_team_size(t: number): number {
  const tm = team(t)
  return typeof tm === 'number' ? -tm : tm.size
}

/**
 * The rank in team `to` of rank `rank` of team `from` into `out[0]`, or -1 when that task is not
 * in `to` (shmem_team_translate_pe; with PGAS_TEAM_WORLD either way, the task ↔ team rank).
 * ERR_BAD_TASK for a rank outside `from`.
 */
export function pgas_team_translate(from: number, rank: number, to: number, out: Int32Array): number {
  const a = team(from)
  if (typeof a === 'number') return a
  const b = team(to)
  if (typeof b === 'number') return b
  if (!isOut(out)) return S.ERR_BAD_ARG
  if (!Number.isInteger(rank) || rank < 0 || rank >= a.size) return S.ERR_BAD_TASK
  out[0] = a.translate(rank, b)
  return S.OK
}

/** Collective over team `t`: a barrier, then the team is gone (its number ERR_BAD_HANDLE from then on). The world: ERR_BAD_ARG. */
export function pgas_team_destroy(t: number): number {
  const tm = team(t)
  if (typeof tm === 'number') return tm
  const rc = tm.destroyRc()
  if (t !== PGAS_TEAM_WORLD) table(rt()!)[t] = null
  return rc
}

/** A barrier of team `t`'s members. */
export function pgas_team_barrier(t: number): number {
  const tm = team(t)
  return typeof tm === 'number' ? tm : tm.bar.barrier()
}

// (the collectives on team t: as pgas_bcast … pgas_exscan, with the team's ranks and roots)

export function pgas_team_bcast(t: number, buf: NumArray, root: number): number {
  const tm = team(t)
  return typeof tm === 'number' ? tm : tm.coll.bcast(buf, root, tm.group)
}
export function pgas_team_reduce(t: number, send: NumArray, recv: NumArray | null, op: number, root: number): number {
  const tm = team(t)
  return typeof tm === 'number' ? tm : tm.coll.reduce(send, recv, op, root, tm.group)
}
export function pgas_team_allreduce(t: number, send: NumArray, recv: NumArray, op: number): number {
  const tm = team(t)
  return typeof tm === 'number' ? tm : tm.coll.allreduce(send, recv, op, tm.group)
}
export function pgas_team_scatter(t: number, send: NumArray | null, recv: NumArray, root: number): number {
  const tm = team(t)
  return typeof tm === 'number' ? tm : tm.coll.scatter(send, recv, root, tm.group)
}
export function pgas_team_gather(t: number, send: NumArray, recv: NumArray | null, root: number): number {
  const tm = team(t)
  return typeof tm === 'number' ? tm : tm.coll.gather(send, recv, root, tm.group)
}
export function pgas_team_allgather(t: number, send: NumArray, recv: NumArray): number {
  const tm = team(t)
  return typeof tm === 'number' ? tm : tm.coll.allgather(send, recv, tm.group)
}
export function pgas_team_alltoall(t: number, send: NumArray, recv: NumArray): number {
  const tm = team(t)
  return typeof tm === 'number' ? tm : tm.coll.alltoall(send, recv, tm.group)
}
export function pgas_team_alltoallv(
  t: number,
  send: NumArray,
  sendCounts: ArrayLike<number>,
  sendDispls: ArrayLike<number>,
  recv: NumArray,
  recvCounts: ArrayLike<number>,
  recvDispls: ArrayLike<number>,
): number {
  const tm = team(t)
  return typeof tm === 'number' ? tm : tm.coll.alltoallv(send, sendCounts, sendDispls, recv, recvCounts, recvDispls, tm.group)
}
export function pgas_team_scan(t: number, send: NumArray, recv: NumArray, op: number): number {
  const tm = team(t)
  return typeof tm === 'number' ? tm : tm.coll.scan(send, recv, op, false, tm.group)
}
export function pgas_team_exscan(t: number, send: NumArray, recv: NumArray, op: number): number {
  const tm = team(t)
  return typeof tm === 'number' ? tm : tm.coll.scan(send, recv, op, true, tm.group)
}

/** Scatter over every task: block t of the root's `send` (P × recv.length elements; null elsewhere) into task t's `recv`. */
export function pgas_scatter(send: NumArray | null, recv: NumArray, root: number): number {
  return rt()?.coll.scatter(send, recv, root) ?? S.ERR_NOT_INIT
}

// (the collectives into shared arrays, every task; `dst` and a shared `src` as descriptors)

/** The shared array `desc` describes (a view: nothing allocated), or the status that says why not. */
function arrayOf(p: Pgas, desc: unknown): SharedArray<NumArray> | number {
  if (!(desc instanceof Int32Array)) return S.ERR_BAD_ARG
  try {
    return p.sharedArrayFrom(desc)
  } catch (e) {
    return pgasStatusOf(e) ?? S.ERR_BAD_ARG
  }
}

/** Every task's part of `dst` ← the root's `src` (a part's length; null elsewhere): upc_all_broadcast. */
export function pgas_bcast_into(dst: Int32Array, src: NumArray | null, root: number): number {
  const p = rt()
  if (p === null) return S.ERR_NOT_INIT
  const d = arrayOf(p, dst)
  return typeof d === 'number' ? d : bcastInto(p.coll, d, src, root)
}
/** Task t's part of `dst` ← block t of the root's `src` (P parts' length; null elsewhere): upc_all_scatter. */
export function pgas_scatter_into(dst: Int32Array, src: NumArray | null, root: number): number {
  const p = rt()
  if (p === null) return S.ERR_NOT_INIT
  const d = arrayOf(p, dst)
  return typeof d === 'number' ? d : scatterInto(p.coll, d, src, root)
}
/** Every task's part of `dst` ← every task's `src` (a part's length / P), in task order: upc_all_gather_all. */
export function pgas_allgather_into(dst: Int32Array, src: NumArray): number {
  const p = rt()
  if (p === null) return S.ERR_NOT_INIT
  const d = arrayOf(p, dst)
  return typeof d === 'number' ? d : allgatherInto(p.coll, d, src)
}
/** Block s of task t's part of `dst` ← block t of task s's `src` (a part's length): upc_all_exchange. */
export function pgas_alltoall_into(dst: Int32Array, src: NumArray): number {
  const p = rt()
  if (p === null) return S.ERR_NOT_INIT
  const d = arrayOf(p, dst)
  return typeof d === 'number' ? d : alltoallInto(p.coll, d, src)
}
/** Element `index` of `dst` (at its owner) ← every element of the shared array `src` combined with `op`: upc_all_reduce. */
export function pgas_reduce_into(dst: Int32Array, index: number, src: Int32Array, op: number): number {
  const p = rt()
  if (p === null) return S.ERR_NOT_INIT
  const d = arrayOf(p, dst)
  if (typeof d === 'number') return d
  const s = arrayOf(p, src)
  return typeof s === 'number' ? s : reduceInto(p.coll, d, index, s, op)
}

/**
 * A team's Promise forms (team numbers as in `pgas_team_*`): a barrier of the team that does not
 * block the event loop, then the collective; each resolves with the collective's status.
 */
export async function pgas_team_barrier_async(t: number): Promise<number> {
  return await teamStatus(t, async () => 0)
}
export async function pgas_team_bcast_async(t: number, buf: NumArray, root: number): Promise<number> {
  return await teamStatus(t, async () => pgas_team_bcast(t, buf, root))
}
export async function pgas_team_reduce_async(t: number, send: NumArray, recv: NumArray | null, op: number, root: number): Promise<number> {
  return await teamStatus(t, async () => pgas_team_reduce(t, send, recv, op, root))
}
export async function pgas_team_allreduce_async(t: number, send: NumArray, recv: NumArray, op: number): Promise<number> {
  return await teamStatus(t, async () => pgas_team_allreduce(t, send, recv, op))
}
export async function pgas_team_scatter_async(t: number, send: NumArray | null, recv: NumArray, root: number): Promise<number> {
  return await teamStatus(t, async () => pgas_team_scatter(t, send, recv, root))
}
export async function pgas_team_gather_async(t: number, send: NumArray, recv: NumArray | null, root: number): Promise<number> {
  return await teamStatus(t, async () => pgas_team_gather(t, send, recv, root))
}
export async function pgas_team_allgather_async(t: number, send: NumArray, recv: NumArray): Promise<number> {
  return await teamStatus(t, async () => pgas_team_allgather(t, send, recv))
}
export async function pgas_team_alltoall_async(t: number, send: NumArray, recv: NumArray): Promise<number> {
  return await teamStatus(t, async () => pgas_team_alltoall(t, send, recv))
}
export async function pgas_team_alltoallv_async(
  t: number,
  send: NumArray,
  sendCounts: ArrayLike<number>,
  sendDispls: ArrayLike<number>,
  recv: NumArray,
  recvCounts: ArrayLike<number>,
  recvDispls: ArrayLike<number>,
): Promise<number> {
  return await teamStatus(t, async () => pgas_team_alltoallv(t, send, sendCounts, sendDispls, recv, recvCounts, recvDispls))
}
export async function pgas_team_scan_async(t: number, send: NumArray, recv: NumArray, op: number): Promise<number> {
  return await teamStatus(t, async () => pgas_team_scan(t, send, recv, op))
}
export async function pgas_team_exscan_async(t: number, send: NumArray, recv: NumArray, op: number): Promise<number> {
  return await teamStatus(t, async () => pgas_team_exscan(t, send, recv, op))
}

/** A barrier of team `t` without blocking the event loop, then `f`'s status (or the barrier's). */
async function teamStatus(t: number, f: () => Promise<number>): Promise<number> {
  const tm = team(t)
  if (typeof tm === 'number') return tm
  try {
    await tm.barrierAsync()
  } catch (e) {
    return pgasStatusOf(e) ?? S.ERR_LAPI
  }
  return await f()
}
