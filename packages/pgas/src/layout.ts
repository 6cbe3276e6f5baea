/**
 * How a shared array's elements are spread over tasks. Block-cyclic with block size b deals the
 * elements out in blocks of b, round-robin over the tasks: element i is in block ⌊i/b⌋, owned by
 * task ⌊i/b⌋ mod P, at local index (⌊i/b⌋ div P)·b + i mod b. Cyclic is b = 1; blocked is
 * b = ⌈n/P⌉ (each task one contiguous piece, the last ones possibly shorter or empty).
 */
export type LayoutKind = 'blocked' | 'cyclic' | 'block-cyclic'

export class Layout {
  readonly kind: LayoutKind
  /** Elements in the array. */
  readonly length: number
  /** Tasks it is spread over. */
  readonly tasks: number
  /** Elements per block. */
  readonly block: number

  constructor (kind: LayoutKind, length: number, tasks: number, block = 1) {
    if (!Number.isSafeInteger(length) || length < 0) throw new RangeError(`Layout: length ${length}`)
    if (!Number.isSafeInteger(tasks) || tasks < 1) throw new RangeError(`Layout: tasks ${tasks}`)
    this.kind = kind
    this.length = length
    this.tasks = tasks
    if (kind === 'blocked') this.block = Math.max(1, Math.ceil(length / tasks))
    else if (kind === 'cyclic') this.block = 1
    else {
      if (!Number.isSafeInteger(block) || block < 1) throw new RangeError(`Layout: block ${block}`)
      this.block = block
    }
  }

  /** The task that owns element `i`. */
  owner (i: number): number { return Math.floor(i / this.block) % this.tasks }

  /** Element `i`'s index in its owner's local part. */
  localIndex (i: number): number {
    const b = this.block
    const blk = Math.floor(i / b)
    return Math.floor(blk / this.tasks) * b + (i % b)
  }

  /** The global index of task `t`'s local element `j`. */
  globalIndex (t: number, j: number): number {
    const b = this.block
    const lb = Math.floor(j / b)
    return (lb * this.tasks + t) * b + (j % b)
  }

  /** Elements task `t` owns. */
  localCount (t: number): number {
    const b = this.block
    const fullBlocks = Math.floor(this.length / b)
    const rest = this.length % b
    // (blocks t, t + P, t + 2P, … of the full ones, plus the partial last block if it is t's)
    let n = (fullBlocks > t ? Math.floor((fullBlocks - 1 - t) / this.tasks) + 1 : 0) * b
    if (rest > 0 && fullBlocks % this.tasks === t) n += rest
    return n
  }

  /** The most elements any task owns (the size every task allocates). */
  maxLocalCount (): number {
    let m = 0
    for (let t = 0; t < this.tasks; t++) m = Math.max(m, this.localCount(t))
    return m
  }
}
