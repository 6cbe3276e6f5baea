/**
 * Global pointers: a task and a byte address in that task's segment. Immutable; arithmetic makes
 * new ones. The flat face passes the two numbers instead.
 */
export class GlobalPtr {
  readonly task: number
  readonly addr: number

  constructor (task: number, addr: number) {
    this.task = task
    this.addr = addr
  }

  /** The pointer `bytes` further in the same task's segment. */
  add (bytes: number): GlobalPtr { return new GlobalPtr(this.task, this.addr + bytes) }

  /** The pointer `n` elements of `elemBytes` further. */
  index (n: number, elemBytes: number): GlobalPtr { return new GlobalPtr(this.task, this.addr + n * elemBytes) }

  /** Bytes from `other` to this pointer (both in the same task's segment). */
  diff (other: GlobalPtr): number {
    if (other.task !== this.task) throw new RangeError('GlobalPtr.diff: pointers into different tasks')
    return this.addr - other.addr
  }

  equals (other: GlobalPtr): boolean { return this.task === other.task && this.addr === other.addr }

  toString (): string { return `${this.task}:${this.addr}` }
}
