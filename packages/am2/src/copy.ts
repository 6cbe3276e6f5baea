/**
 * The views and copies of this thread's AM-2 runtime: one `ViewCache` for every sub-range view
 * it takes (segments, the Medium arena, packets, sources; no allocation in steady state), the
 * payload copy, and the empty payload of Short messages.
 */
import { ViewCache } from '@amlapi/bufmgr'

/** The views of this thread (segments, the Medium arena, packets, sources). */
export const views = new ViewCache()

/** The payload a handler gets for a Short message or an empty Medium or Long. */
export const emptyBuf = new Uint8Array(0)

/**
 * Payloads of at most this many bytes are copied by a loop of byte stores. Uint8Array.prototype.set
 * with a view of the range costs ~25 ns whatever the size up to a few hundred bytes; a byte loop
 * into a SharedArrayBuffer ~2 ns a byte (measured on Node 20: 8 B 18 ns, 16 B 35 ns).
 */
const LOOP_COPY = 8

/** Copies `n` bytes of `s8` from index `s` into `d8` at index `d` (ranges checked by the caller). */
export function copyBytes(d8: Uint8Array, d: number, s8: Uint8Array, s: number, n: number): void {
  if (n <= LOOP_COPY) {
    for (let i = 0; i < n; i++) d8[d + i] = s8[s + i]!
    return
  }
  d8.set(views.get(s8, s, n), d)
}
