/**
 * A pool of free records (a stack) whose storage is never given back, for the per-message paths:
 * the same as lapi's (packages/lapi/src/free-list.ts, which says why an array with pop() and push()
 * allocates whenever it is emptied, until V8 has optimized the code that pops).
 */
export class FreeList<T> {
  private readonly items: Array<T | undefined> = []
  private n = 0

  /** Records held. */
  get size(): number {
    return this.n
  }

  /** A free record, or undefined when there is none. */
  take(): T | undefined {
    if (this.n === 0) return undefined
    const x = this.items[--this.n]
    this.items[this.n] = undefined
    return x
  }

  /** Gives `x` back. */
  give(x: T): void {
    this.items[this.n++] = x
  }
}
