/**
 * Pointers into shared arrays that carry their phase (UPC's pointer-to-shared: thread, phase,
 * address): a global pointer that also knows its array and the global index it points at, so that
 * stepping it follows the array's layout — n elements further in the array's global order, across
 * to the next task at a block's end. `task`, `phase` and `addr` are UPC's `upc_threadof`,
 * `upc_phaseof` and `upc_addrfield`. A pointer may point one past the last element (index =
 * length), as in C; dereferencing it there is the caller's error.
 */
import { GlobalPtr } from './gptr.js'
import { locate } from './layout.js'
import type { NumArray } from './reduce-ops.js'
import type { SharedArray } from './shared-array.js'
import { PgasError, PgasStatus as S } from './status.js'

/** Where an index lies (task, phase, local index): scratch of the constructor. */
const at = new Int32Array(3)

function place<T extends NumArray>(array: SharedArray<T>, i: number): number {
  const l = array.layout
  locate(l.block, l.tasks, i, at)
  return array.bases[at[0]!]! + at[2]! * array.elemBytes
}

export class SharedPtr<T extends NumArray> extends GlobalPtr<T> {
  /** The array it points into. */
  readonly array: SharedArray<T>
  /** The global index of the element it points at (0 … length). */
  readonly globalIndex: number
  private readonly ph: number

  /** A pointer to element `i` of `array` (0 ≤ i ≤ length, not checked here: `SharedArray.ptrAt` checks). */
  constructor(array: SharedArray<T>, i: number) {
    const addr = place(array, i)
    super(at[0]!, addr, array.type)
    this.ph = at[1]!
    this.array = array
    this.globalIndex = i
  }

  /** The element's position within its block (UPC's `upc_phaseof`). */
  override get phase(): number {
    return this.ph
  }

  /** The pointer `n` elements further in the array's global order (negative: back); ERR_BAD_ARG outside 0 … length. */
  override add(n: number): SharedPtr<T> {
    // (n checked before the sum: a BigInt cannot be added to the index)
    if (!Number.isInteger(n))
      throw new PgasError(
        S.ERR_BAD_ARG,
        `SharedPtr.add(${String(n)})`,
        `n ${typeof n === 'bigint' ? `${String(n)}n is a BigInt, but a count of elements is a number` : `${String(n)} is not a whole number`}`,
      )
    const i = this.globalIndex + n
    if (i < 0 || i > this.array.length)
      throw new PgasError(
        S.ERR_BAD_ARG,
        `SharedPtr.add(${n})`,
        `index ${this.globalIndex} + ${n} = ${i} is out of range for a shared array of length ${this.array.length} (0 to ${this.array.length})`,
      )
    return new SharedPtr(this.array, i)
  }

  /** Elements from `other` to this pointer in the array's global order; ERR_BAD_ARG unless both point into the same array. */
  override diff(other: GlobalPtr<NumArray>): number {
    if (!(other instanceof SharedPtr) || !this.array.sameAs(other.array)) throw new PgasError(S.ERR_BAD_ARG, 'SharedPtr.diff: pointers into different arrays')
    return this.globalIndex - other.globalIndex
  }

  /** Into the same array: by global index (UPC's relational operators); otherwise by task, then address. */
  override compare(other: GlobalPtr<NumArray>): number {
    if (other instanceof SharedPtr && this.array.sameAs(other.array)) return Math.sign(this.globalIndex - other.globalIndex)
    return super.compare(other)
  }

  override toString(): string {
    return `${this.task}:${this.addr}[${this.phase}]`
  }
}
