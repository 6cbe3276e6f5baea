/**
 * Argument checks shared by the fast paths of the context (Put) and the active messages (SHORT
 * sends): cheap enough to inline, and strict: anything they do not accept goes to the general
 * path, which returns the documented code.
 */
import type { Addr } from './types.js'

/** A counter argument that needs no further look: 0, or an aligned word inside a segment of `seg` bytes. */
export function counterOk(c: Addr, seg: number): boolean {
  return c >>> 0 === c && (c & 3) === 0 && c + 4 <= seg
}
