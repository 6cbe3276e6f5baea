/**
 * The byte stream of a LAPI vector (IOVECTOR, STRIDED_XFER, GENERIC) as the active messages and
 * the network's vector transfers see it: its total length, where each piece starts in the stream,
 * and which piece holds a stream offset. Pure functions of a checked vector.
 */
import { VecType } from '../base/constants.js'
import type { lapi_vec_t } from '../base/types.js'

/** Total bytes described by a (checked) vector. */
export function vecBytes(v: lapi_vec_t): number {
  if (v.vec_type === VecType.LAPI_GEN_STRIDED_XFER) return v.num_vecs * (v.info[1] as number)
  let t = 0
  for (let i = 0; i < v.num_vecs; i++) t += v.len![i]!
  return t
}

/** Stream offset where each piece starts, plus the total at the end. */
export function pieceOffsets(v: lapi_vec_t): number[] {
  const o = new Array<number>(v.num_vecs + 1)
  let t = 0
  for (let i = 0; i < v.num_vecs; i++) {
    o[i] = t
    t += v.vec_type === VecType.LAPI_GEN_STRIDED_XFER ? (v.info[1] as number) : v.len![i]!
  }
  o[v.num_vecs] = t
  return o
}

/** Index of the piece holding stream offset `pos` (binary search over piece starts). */
export function findPiece(offsets: number[], pos: number): number {
  let lo = 0
  let hi = offsets.length - 2
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if (offsets[mid]! <= pos) lo = mid
    else hi = mid - 1
  }
  return lo
}
