/**
 * Byte copies between segments, inbox rings and caller buffers. Every copy here is a memmove.
 *
 * What is cheapest depends on the size (measured on Node 20): `Uint8Array.prototype.set` costs a
 * fixed ~30 ns plus a cached sub-range view, a byte loop ~1.5–2 ns a byte, a loop over Int32
 * words of two SharedArrayBuffer views ~0.5 ns a byte. So: small aligned copies between shared
 * views go word by word (`copyShared`), tiny unaligned ones byte by byte, the rest through `set`
 * (or `copyWithin` inside one buffer), which allocates nothing once its range was seen.
 */

import { ViewCache } from '@amlapi/bufmgr'

/** The source views of large copies (cached, so a copy allocates nothing once its range was seen). */
const views = new ViewCache()

/** Copies at or below this many bytes use a byte loop (no view); above, one `set`. */
export const SMALL_COPY = 16

/** Word-aligned copies between shared views at or below this many bytes use an Int32 loop. */
export const WORD_COPY = 256

/**
 * A copy of at most WORD_COPY bytes whose offsets vary too much for a cached view (frames in a
 * stream's buffers): four bytes at a time through DataViews, which need no alignment, where the
 * source has one (`sv` over the same bytes as `s8`), then byte by byte. Makes no view.
 */
export function copySmall(dv: DataView, d8: Uint8Array, d: number, sv: DataView | null, s8: Uint8Array, so: number, n: number): void {
  let k = 0
  if (sv !== null) for (; k + 4 <= n; k += 4) dv.setInt32(d + k, sv.getInt32(so + k, true), true)
  for (; k < n; k++) d8[d + k] = s8[so + k]!
}

/**
 * memmove of `n` bytes between two segment views (the same view when the task is the same, else
 * views of different SharedArrayBuffers).
 */
export function copySeg(dst: Uint8Array, d: number, src: Uint8Array, so: number, n: number): void {
  if (n <= SMALL_COPY && (dst !== src || d + n <= so || so + n <= d)) {
    for (let i = 0; i < n; i++) dst[d + i] = src[so + i]!
  } else if (dst === src) {
    dst.copyWithin(d, so, so + n)
  } else {
    dst.set(views.get(src, so, n), d)
  }
}

/**
 * memmove of `n` bytes between two shared views (segments, inbox rings), each given with its
 * Int32Array twin over the same memory: a word loop when the copy is small and both offsets and
 * the length are multiples of 4, else `copySeg`.
 */
export function copyShared(d8: Uint8Array, d32: Int32Array, d: number, s8: Uint8Array, s32: Int32Array, so: number, n: number): void {
  if (n <= WORD_COPY && ((d | so | n) & 3) === 0 && (d8 !== s8 || d + n <= so || so + n <= d)) {
    copyWords(d32, d, s32, so, n)
  } else {
    copySeg(d8, d, s8, so, n)
  }
}

/**
 * Copies `n` bytes word by word: `d`, `so` and `n` are multiples of 4 and the ranges do not
 * overlap (the caller checked).
 */
export function copyWords(d32: Int32Array, d: number, s32: Int32Array, so: number, n: number): void {
  const dw = d >> 2
  const sw = so >> 2
  const w = n >> 2
  for (let i = 0; i < w; i++) d32[dw + i] = s32[sw + i]!
}

/**
 * Copies `n` bytes where one side is a caller's Uint8Array. When the transfer stays in the own
 * segment the caller's array may view the same memory, so `set` (which handles overlap) is used.
 */
export function copyBuf(dst: Uint8Array, d: number, src: Uint8Array, so: number, n: number, mayAlias: boolean): void {
  if (n <= SMALL_COPY && !mayAlias) {
    for (let i = 0; i < n; i++) dst[d + i] = src[so + i]!
  } else {
    dst.set(views.get(src, so, n), d)
  }
}

/** memmove between any two byte views (vectors, packets); overlap-safe. */
export function copy(dst: Uint8Array, d: number, src: Uint8Array, so: number, n: number): void {
  if (dst === src) dst.copyWithin(d, so, so + n)
  else if (n <= SMALL_COPY && dst.buffer !== src.buffer) for (let i = 0; i < n; i++) dst[d + i] = src[so + i]!
  else dst.set(views.get(src, so, n), d)
}
