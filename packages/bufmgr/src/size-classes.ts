/**
 * Size classes. Requests of 0..256 bytes use 16 classes in 16-byte steps (16, 32, …, 256); above
 * that, every power-of-two range (2^k, 2^(k+1)] is cut into 4 classes of step 2^(k-2)
 * (320, 384, 448, 512, 640, 768, 896, 1024, 1280, …). The worst-case internal waste is 15 bytes
 * below 256 bytes and under 25 % above. The class of a size is found with `Math.clz32`, without
 * a loop.
 */

/** Alignment of every region handed out, in bytes (a multiple of 8, as the API promises). */
export const ALIGNMENT = 16

/** log2(ALIGNMENT). */
export const ALIGN_SHIFT = 4

/** Largest size served by the 16-byte-step classes. */
export const SMALL_LIMIT = 256

/** Number of 16-byte-step classes. */
export const SMALL_CLASSES = 16

/** Largest allowed `maxClassSize`, in bytes. */
export const MAX_CLASS_LIMIT = 65536

/**
 * Index of the size class that serves a request of `n` bytes. O(1).
 * @param n [in] bytes requested, 0 ≤ n ≤ MAX_CLASS_LIMIT (0 is served by the 16-byte class)
 * @retval the class index (0 for 0..16 bytes)
 */
export function classIndexOf(n: number): number {
  if (n <= SMALL_LIMIT) return n === 0 ? 0 : ((n + 15) >>> 4) - 1
  const m = n - 1
  const log = 31 - Math.clz32(m)
  return SMALL_CLASSES + ((log - 8) << 2) + ((m >>> (log - 2)) & 3)
}

/**
 * Size in bytes of the class with index `idx` (the inverse of {@link classIndexOf}).
 * @param idx [in] a class index
 * @retval the class size in bytes, a multiple of 16
 */
export function classSizeOf(idx: number): number {
  if (idx < SMALL_CLASSES) return (idx + 1) << 4
  const k = idx - SMALL_CLASSES
  const log = 8 + (k >>> 2)
  return (1 << log) + (((k & 3) + 1) << (log - 2))
}
