/**
 * Byte copies between segments and caller buffers. Small copies run a loop, so the hot path
 * allocates no view; larger ones are one `copyWithin` or `Uint8Array.prototype.set` (memcpy).
 */

import { ViewCache } from './views.js'

/** The source views of large copies (cached, so a copy allocates nothing once its range was seen). */
const views = new ViewCache()

/** Copies at or below this many bytes use a loop (no view allocated); above, one `set`. */
export const SMALL_COPY = 256

/**
 * memmove of `n` bytes between two segment views (the same view when the task is the same, else
 * views of different SharedArrayBuffers). Small copies run a loop, so the hot path allocates no
 * view; larger ones are one `copyWithin` or `Uint8Array.prototype.set`.
 */
export function copySeg (dst: Uint8Array, d: number, src: Uint8Array, so: number, n: number): void {
  if (n <= SMALL_COPY && (dst !== src || d + n <= so || so + n <= d)) {
    for (let i = 0; i < n; i++) dst[d + i] = src[so + i]!
  } else if (dst === src) {
    dst.copyWithin(d, so, so + n)
  } else {
    dst.set(views.get(src, so, n), d)
  }
}

/**
 * Copies `n` bytes where one side is a caller's Uint8Array. When the transfer stays in the own
 * segment the caller's array may view the same memory, so `set` (which handles overlap) is used.
 */
export function copyBuf (dst: Uint8Array, d: number, src: Uint8Array, so: number, n: number, mayAlias: boolean): void {
  if (n <= SMALL_COPY && !mayAlias) {
    for (let i = 0; i < n; i++) dst[d + i] = src[so + i]!
  } else {
    dst.set(views.get(src, so, n), d)
  }
}

/** memmove between any two byte views (vectors, packets); overlap-safe. */
export function copy (dst: Uint8Array, d: number, src: Uint8Array, so: number, n: number): void {
  if (dst === src) dst.copyWithin(d, so, so + n)
  else if (n <= SMALL_COPY && dst.buffer !== src.buffer) for (let i = 0; i < n; i++) dst[d + i] = src[so + i]!
  else dst.set(views.get(src, so, n), d)
}
