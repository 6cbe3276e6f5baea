/**
 * How a shared array's elements are spread over tasks. Block-cyclic with block size b deals the
 * elements out in blocks of b, round-robin over the tasks: element i is in block ⌊i/b⌋, owned by
 * task ⌊i/b⌋ mod P, at phase i mod b of its block and local index (⌊i/b⌋ div P)·b + i mod b.
 * Cyclic is b = 1; blocked is b = ⌈n/P⌉ (each task one contiguous piece, the last ones possibly
 * shorter or empty). The functions on plain numbers (`effectiveBlock`, `locate`, `globalIndexOf`,
 * `localCountOf`) are what the flat face and pointer arithmetic use: they allocate nothing.
 */
export type LayoutKind = 'blocked' | 'cyclic' | 'block-cyclic'

/** The layout kinds as numbers (the flat face and array descriptors). */
export const LayoutCode = { BLOCKED: 0, CYCLIC: 1, BLOCK_CYCLIC: 2 } as const
const KINDS: readonly LayoutKind[] = ['blocked', 'cyclic', 'block-cyclic']

/** The kind of a LayoutCode, or null for another number. */
export function kindOfCode(code: number): LayoutKind | null {
  return Number.isInteger(code) ? (KINDS[code] ?? null) : null
}
/** The LayoutCode of a kind. */
export function codeOfKind(kind: LayoutKind): number {
  return KINDS.indexOf(kind)
}

/**
 * The block size of a layout (kind a LayoutCode; `block` counts for block-cyclic only), or −1
 * when the arguments make no layout (an unknown kind, a length or task count or block out of range).
 */
export function effectiveBlock(kind: number, block: number, length: number, tasks: number): number {
  if (!Number.isSafeInteger(length) || length < 0 || length > 0x7fffffff || !Number.isSafeInteger(tasks) || tasks < 1) return -1
  if (kind === LayoutCode.BLOCKED) return Math.max(1, Math.ceil(length / tasks))
  if (kind === LayoutCode.CYCLIC) return 1
  if (kind === LayoutCode.BLOCK_CYCLIC) return Number.isSafeInteger(block) && block >= 1 && block <= 0x7fffffff ? block : -1
  return -1
}

/** Where global index `i` lies (block `b`, P = `tasks`): out[at] = task, out[at + 1] = phase, out[at + 2] = local index. */
export function locate(b: number, tasks: number, i: number, out: Int32Array, at = 0): void {
  const blk = Math.floor(i / b)
  const phase = i - blk * b
  out[at] = blk % tasks
  out[at + 1] = phase
  out[at + 2] = Math.floor(blk / tasks) * b + phase
}

/** The global index of task `t`'s local element `j` (block `b`, P = `tasks`). */
export function globalIndexOf(b: number, tasks: number, t: number, j: number): number {
  const lb = Math.floor(j / b)
  return (lb * tasks + t) * b + (j - lb * b)
}

/** Elements task `t` owns. */
export function localCountOf(b: number, tasks: number, length: number, t: number): number {
  const fullBlocks = Math.floor(length / b)
  const rest = length % b
  // (blocks t, t + P, t + 2P, … of the full ones, plus the partial last block if it is t's)
  let n = (fullBlocks > t ? Math.floor((fullBlocks - 1 - t) / tasks) + 1 : 0) * b
  if (rest > 0 && fullBlocks % tasks === t) n += rest
  return n
}

/** The most elements any task owns: task 0's, as blocks are dealt out from task 0. */
export function maxLocalCountOf(b: number, tasks: number, length: number): number {
  return localCountOf(b, tasks, length, 0)
}

export class Layout {
  readonly kind: LayoutKind
  /** Elements in the array. */
  readonly length: number
  /** Tasks it is spread over. */
  readonly tasks: number
  /** Elements per block. */
  readonly block: number

  constructor(kind: LayoutKind, length: number, tasks: number, block = 1) {
    if (!Number.isSafeInteger(length) || length < 0 || length > 0x7fffffff) throw new RangeError(`Layout: length ${length}`)
    if (!Number.isSafeInteger(tasks) || tasks < 1) throw new RangeError(`Layout: tasks ${tasks}`)
    const b = effectiveBlock(codeOfKind(kind), block, length, tasks)
    if (b < 0) throw new RangeError(`Layout: ${String(kind)}, block ${block}`)
    this.kind = kind
    this.length = length
    this.tasks = tasks
    this.block = b
  }

  /** The LayoutCode of its kind. */
  get code(): number {
    return codeOfKind(this.kind)
  }

  /** The task that owns element `i`. */
  owner(i: number): number {
    return Math.floor(i / this.block) % this.tasks
  }

  /** Element `i`'s position within its block. */
  phase(i: number): number {
    return i % this.block
  }

  /** Element `i`'s index in its owner's local part. */
  localIndex(i: number): number {
    const b = this.block
    const blk = Math.floor(i / b)
    return Math.floor(blk / this.tasks) * b + (i % b)
  }

  /** The global index of task `t`'s local element `j`. */
  globalIndex(t: number, j: number): number {
    return globalIndexOf(this.block, this.tasks, t, j)
  }

  /** Elements task `t` owns. */
  localCount(t: number): number {
    return localCountOf(this.block, this.tasks, this.length, t)
  }

  /** The most elements any task owns (the size every task allocates). */
  maxLocalCount(): number {
    return maxLocalCountOf(this.block, this.tasks, this.length)
  }
}
