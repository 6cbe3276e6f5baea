/**
 * A pool of free records (a stack) whose storage is never given back, for the per-message paths.
 *
 * An array used as a pool with pop() and push() allocates whenever it is emptied: V8's pop builtin,
 * which interpreted, baseline and not yet optimized code calls, drops the backing store of an array
 * popped to length 0 (once it has grown), so the next push allocates a new one (152 bytes), once a
 * message where one record is taken and given back at a time. Optimized code pops without shrinking,
 * so this showed only while V8 was still tiering the hot path up, which takes longer on Node 24 and
 * 26 (V8 13.6, 14.6) than on 20 and 22: test/fixtures/am2/noalloc.mjs measured it there. A count
 * beside an array that only grows allocates in no tier.
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
