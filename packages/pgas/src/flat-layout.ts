/**
 * The flat face's layout arithmetic and pointers-to-shared, on plain numbers (re-exported by
 * flat.ts). Pure functions: they need no runtime (they work before `pgas_init`), allocate
 * nothing, and answer ERR_BAD_ARG (ERR_BAD_TASK for a task out of range) for bad input.
 *
 * A layout is (kind: LayoutCode, block, length, tasks); `block` counts for BLOCK_CYCLIC only.
 * A pointer-to-shared is three int32 words, [task, phase, addr] (UPC's thread, phase and address
 * field), into the array an array descriptor (descriptor.ts) describes; indices run 0 … length,
 * one past the last element included.
 */
import { DESC_HEADER, D_BLOCK, D_ELEM, D_LENGTH, D_TASKS, checkHeader } from './descriptor.js'
import { effectiveBlock, globalIndexOf, locate, localCountOf, maxLocalCountOf } from './layout.js'
import { PgasStatus as S } from './status.js'

function words(a: unknown, n: number): boolean {
  return a instanceof Int32Array && a.length >= n
}

/** Where element `index` (0 … length) of the layout lies: out[0] = task, out[1] = phase (index within its block), out[2] = local index (elements into the task's part). */
export function pgas_layout_locate(kind: number, block: number, length: number, tasks: number, index: number, out: Int32Array): number {
  const b = effectiveBlock(kind, block, length, tasks)
  if (b < 0 || !Number.isInteger(index) || index < 0 || index > length || !words(out, 3)) return S.ERR_BAD_ARG
  locate(b, tasks, index, out)
  return S.OK
}

/** The global index of local element `localIndex` of task `task` in the layout: out[0]. ERR_BAD_ARG when it is past the end (beyond length). */
export function pgas_layout_index(kind: number, block: number, length: number, tasks: number, task: number, localIndex: number, out: Int32Array): number {
  const b = effectiveBlock(kind, block, length, tasks)
  if (b < 0 || !words(out, 1)) return S.ERR_BAD_ARG
  if (!Number.isInteger(task) || task < 0 || task >= tasks) return S.ERR_BAD_TASK
  if (!Number.isInteger(localIndex) || localIndex < 0) return S.ERR_BAD_ARG
  const g = globalIndexOf(b, tasks, task, localIndex)
  if (g > length) return S.ERR_BAD_ARG
  out[0] = g
  return S.OK
}

/** out[0] = elements task `task` owns, out[1] = elements every task allocates (the most any owns), out[2] = the layout's block (effective). */
export function pgas_layout_count(kind: number, block: number, length: number, tasks: number, task: number, out: Int32Array): number {
  const b = effectiveBlock(kind, block, length, tasks)
  if (b < 0 || !words(out, 3)) return S.ERR_BAD_ARG
  if (!Number.isInteger(task) || task < 0 || task >= tasks) return S.ERR_BAD_TASK
  out[0] = localCountOf(b, tasks, length, task)
  out[1] = maxLocalCountOf(b, tasks, length)
  out[2] = b
  return S.OK
}

/** Writes the pointer to element `i` of `desc`'s array into `out` (a checked header and index). */
function put(desc: ArrayLike<number>, i: number, out: Int32Array): void {
  const p = desc[D_TASKS]!
  locate(desc[D_BLOCK]!, p, i, out)
  out[2] = desc[DESC_HEADER + out[0]!]! + out[2]! * desc[D_ELEM]!
}

/** The global index a pointer-to-shared points at, or −status when it is no pointer into `desc`'s array. */
function indexOf(desc: ArrayLike<number>, sptr: Int32Array): number {
  if (!words(sptr, 3)) return -S.ERR_BAD_ARG
  const p = desc[D_TASKS]!
  const t = sptr[0]!
  if (t < 0 || t >= p) return -S.ERR_BAD_TASK
  const eb = desc[D_ELEM]!
  const b = desc[D_BLOCK]!
  const off = sptr[2]! - desc[DESC_HEADER + t]!
  if (off < 0 || off % eb !== 0) return -S.ERR_BAD_ARG
  const j = off / eb
  if (j % b !== sptr[1]) return -S.ERR_BAD_ARG
  const g = globalIndexOf(b, p, t, j)
  return g > desc[D_LENGTH]! ? -S.ERR_BAD_ARG : g
}

/** The pointer-to-shared of element `index` (0 … length) of the array `desc` describes: out = [task, phase, addr]. */
export function pgas_sptr_at(desc: ArrayLike<number>, index: number, out: Int32Array): number {
  if (checkHeader(desc) !== S.OK || !words(out, 3)) return S.ERR_BAD_ARG
  if (!Number.isInteger(index) || index < 0 || index > desc[D_LENGTH]!) return S.ERR_BAD_ARG
  put(desc, index, out)
  return S.OK
}

/** The global index pointer-to-shared `sptr` points at: out[0]. */
export function pgas_sptr_index(desc: ArrayLike<number>, sptr: Int32Array, out: Int32Array): number {
  if (checkHeader(desc) !== S.OK || !words(out, 1)) return S.ERR_BAD_ARG
  const g = indexOf(desc, sptr)
  if (g < 0) return -g
  out[0] = g
  return S.OK
}

/**
 * `sptr` stepped `n` elements along the array's global order (across to the next task at a block's
 * end; negative: back) into `out` (which may be `sptr`): ERR_BAD_ARG when that leaves 0 … length.
 */
export function pgas_sptr_add(desc: ArrayLike<number>, sptr: Int32Array, n: number, out: Int32Array): number {
  if (checkHeader(desc) !== S.OK || !words(out, 3)) return S.ERR_BAD_ARG
  const g = indexOf(desc, sptr)
  if (g < 0) return -g
  const i = g + n
  if (!Number.isInteger(n) || i < 0 || i > desc[D_LENGTH]!) return S.ERR_BAD_ARG
  put(desc, i, out)
  return S.OK
}

/** Elements from `b` to `a` in the array's global order (index of a − index of b): out[0]. */
export function pgas_sptr_diff(desc: ArrayLike<number>, a: Int32Array, b: Int32Array, out: Int32Array): number {
  if (checkHeader(desc) !== S.OK || !words(out, 1)) return S.ERR_BAD_ARG
  const ga = indexOf(desc, a)
  if (ga < 0) return -ga
  const gb = indexOf(desc, b)
  if (gb < 0) return -gb
  out[0] = ga - gb
  return S.OK
}
