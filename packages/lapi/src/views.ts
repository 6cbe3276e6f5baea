/**
 * Sub-range views without allocation in steady state (for hot paths of lapi and layered libraries).
 */

/**
 * Views of byte ranges by (buffer, byte offset, length), so that handing out and copying through
 * sub-ranges allocates nothing once the ranges in use have been seen. Bounded per buffer.
 */
export class ViewCache {
  private readonly byBuffer = new Map<ArrayBufferLike, Map<number, Uint8Array>>()
  /** The buffer of the last lookup and its views (copies come in runs on one buffer). */
  private lastBuf: ArrayBufferLike | null = null
  private lastMap: Map<number, Uint8Array> | null = null

  /** `n` bytes of `u8` from its index `off` (a cached view). */
  get (u8: Uint8Array, off: number, n: number): Uint8Array {
    if (off === 0 && n === u8.length) return u8
    const buf = u8.buffer
    let m = buf === this.lastBuf ? this.lastMap! : this.byBuffer.get(buf)
    if (m === undefined) {
      if (this.byBuffer.size >= 64) this.byBuffer.clear()
      m = new Map()
      this.byBuffer.set(buf, m)
    }
    this.lastBuf = buf
    this.lastMap = m
    const abs = u8.byteOffset + off
    // a small-integer key (a double key would be boxed, i.e. allocated, on every lookup); a
    // collision just replaces the entry
    const key = (Math.imul(abs, 0x9e3779b1) ^ n) & 0x3fffffff
    let v = m.get(key)
    if (v === undefined || v.byteOffset !== abs || v.length !== n) {
      if (m.size >= 4096) m.clear()
      v = new Uint8Array(buf, abs, n)
      m.set(key, v)
    }
    return v
  }
}
