/**
 * Zero-filling of regions (`alloc(n, true)`, or a manager with `zeroFill`), fast in an
 * ArrayBuffer and in a SharedArrayBuffer alike.
 */

/** Zero-fills up to this many bytes with a loop of 8-byte stores. */
const SMALL_ZERO = 512
let zeroViewsCache: Uint8Array[] | undefined
/** Views of 2^k zero bytes, k = 9..16, over one 64 KiB ArrayBuffer shared by all managers. */
function zeroViews(): Uint8Array[] {
  if (zeroViewsCache === undefined) {
    const zeros = new ArrayBuffer(65536)
    zeroViewsCache = []
    for (let n = SMALL_ZERO; n <= 65536; n *= 2) zeroViewsCache.push(new Uint8Array(zeros, 0, n))
  }
  return zeroViewsCache
}

/** Zeroes regions of one buffer. Internal to the package. */
export class Zeroer {
  // `declare`d fields, all set in the constructor (see BufferManager).
  declare private readonly bytes: Uint8Array
  /** The buffer as 8-byte words (its whole 8-byte prefix): regions are 16-byte aligned. */
  declare private readonly words: Float64Array
  /** Whether the buffer is a SharedArrayBuffer (its TypedArray fill stores element by element). */
  declare private readonly shared: boolean

  /** @param buffer [in] the managed buffer */
  constructor(buffer: ArrayBuffer | SharedArrayBuffer) {
    this.bytes = new Uint8Array(buffer)
    this.words = new Float64Array(buffer, 0, Math.floor(buffer.byteLength / 8))
    this.shared = Object.prototype.toString.call(buffer) === '[object SharedArrayBuffer]'
  }

  /**
   * Zeroes `size` bytes at `addr` (both multiples of 16). Up to 512 bytes: a loop of 8-byte
   * stores. Above, in an ArrayBuffer: `fill` (a memset). In a SharedArrayBuffer, `fill` stores
   * element by element (0.3 ns a byte), while `set` from a zero array copies words, so the region
   * is zeroed with `set` from zero views of 2^k bytes (k = 9..16), largest first.
   */
  zero(addr: number, size: number): void {
    let a = addr
    const end = addr + size
    if (size > SMALL_ZERO) {
      if (!this.shared) {
        this.bytes.fill(0, addr, end)
        return
      }
      const views = zeroViews()
      for (let k = views.length - 1; k >= 0; k--) {
        const v = views[k]!
        while (end - a >= v.length) {
          this.bytes.set(v, a)
          a += v.length
        }
      }
    }
    const w = this.words
    for (let i = a >>> 3, e = end >>> 3; i < e; i++) w[i] = 0
  }
}
