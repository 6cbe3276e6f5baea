/**
 * Sub-range views without allocation in steady state, for the copy paths of lapi and the libraries
 * layered on it (am2): a view of bytes of a buffer, handed out again for the same range.
 */

/** Entries kept per buffer at most (then its table starts again). */
const MAX_ENTRIES = 4096
/** Arrays whose buffer, byte offset and table are remembered (replaced in turn). */
const RECENT = 4

/** One cached view and the range it covers. */
interface Entry {
  abs: number
  n: number
  v: Uint8Array
}

/**
 * Views of byte ranges by (buffer, byte offset, length), so that handing out and copying through
 * sub-ranges allocates nothing once the ranges in use have been seen. Bounded per buffer (MAX_ENTRIES
 * ranges, then its table starts again).
 *
 * A typed array's `buffer` and `byteOffset` never change, and in Node 20 reading either is a call
 * (~11–16 ns, more than the rest of a lookup), so the last few arrays looked up are remembered with
 * them; the entries keep their range beside the view, for the same reason.
 */
export class ViewCache {
  private readonly byBuffer = new Map<ArrayBufferLike, Map<number, Entry>>()
  private readonly recentU8: Array<Uint8Array | null> = new Array<Uint8Array | null>(RECENT).fill(null)
  private readonly recentBuf: Array<ArrayBufferLike | null> = new Array<ArrayBufferLike | null>(RECENT).fill(null)
  private readonly recentTable: Array<Map<number, Entry> | null> = new Array<Map<number, Entry> | null>(RECENT).fill(null)
  private readonly recentOff: number[] = new Array<number>(RECENT).fill(0)
  private nextRecent = 0

  /** `n` bytes of `u8` from its index `off` (a cached view). */
  get(u8: Uint8Array, off: number, n: number): Uint8Array {
    if (off === 0 && n === u8.length) return u8
    let i = 0
    while (i < RECENT && this.recentU8[i] !== u8) i++
    if (i === RECENT) i = this.remember(u8)
    const abs = this.recentOff[i]! + off
    const table = this.recentTable[i]!
    // a small-integer key (a double key would be boxed, i.e. allocated, on every lookup); a
    // collision just replaces the entry
    const k = (Math.imul(abs, 0x9e3779b1) ^ n) & 0x3fffffff
    const e = table.get(k)
    if (e !== undefined && e.abs === abs && e.n === n) return e.v
    if (table.size >= MAX_ENTRIES) table.clear()
    const v = new Uint8Array(this.recentBuf[i]!, abs, n)
    table.set(k, { abs, n, v })
    return v
  }

  /** Remembers `u8` (its buffer, offset and the buffer's table) in place of the oldest; returns its index. */
  private remember(u8: Uint8Array): number {
    const buf = u8.buffer
    let table = this.byBuffer.get(buf)
    if (table === undefined) {
      if (this.byBuffer.size >= 64) {
        this.byBuffer.clear()
        this.recentTable.fill(null)
        this.recentU8.fill(null)
        this.recentBuf.fill(null)
      }
      table = new Map<number, Entry>()
      this.byBuffer.set(buf, table)
    }
    const i = this.nextRecent
    this.nextRecent = (i + 1) % RECENT
    this.recentU8[i] = u8
    this.recentBuf[i] = buf
    this.recentTable[i] = table
    this.recentOff[i] = u8.byteOffset
    return i
  }
}
