/**
 * The errors of a misused manager: a size that is not a byte count, and an address that is not
 * the start of a live region, told apart (NULL, outside, interior, freed, never handed out) from
 * the off-band metadata. Slow paths only: they run when an error is reported.
 */
import { BufMgrError, BufMgrErrorCode } from './errors.js'
import { ALIGN_SHIFT, S_NB, S_SIZE, S_UNIT } from './layout.js'
import type { SlabTable } from './slabs.js'
import { BlockState } from './tlsf.js'

/** The error for a size that is not a non-negative safe integer. */
export function badSize(nbytes: unknown): BufMgrError {
  return new BufMgrError(
    BufMgrErrorCode.BAD_SIZE,
    typeof nbytes === 'bigint'
      ? `bufmgr: size ${String(nbytes)}n is a BigInt, but a size is a number of bytes: pass ${Number(nbytes)}`
      : `bufmgr: size must be a non-negative safe integer number of bytes, got ${String(nbytes)}`,
  )
}

/**
 * The error for an address that is not a live region start.
 * @param addr         [in] the address given
 * @param op           [in] the method it was given to, for the message
 * @param start        [in] first managed byte offset
 * @param managedBytes [in] bytes under management
 * @param slabs        [in] the manager's slab table (with `meta` and the coalescing allocator)
 */
export function misuseError(addr: unknown, op: string, start: number, managedBytes: number, slabs: SlabTable): BufMgrError {
  const NA = BufMgrErrorCode.NOT_ALLOCATED
  if (typeof addr === 'bigint') return new BufMgrError(NA, `bufmgr: ${op}(${String(addr)}n): a BigInt, but an address is a number`)
  if (typeof addr !== 'number' || !Number.isSafeInteger(addr)) {
    return new BufMgrError(NA, `bufmgr: ${op}(${String(addr)}): not an address`)
  }
  if (addr === 0) return new BufMgrError(NA, `bufmgr: ${op}(0): 0 is NULL, never handed out`)
  const off = addr - start
  if (off < 0 || off >= managedBytes) {
    return new BufMgrError(NA, `bufmgr: ${op}(${addr}): outside the managed range [${start}, ${start + managedBytes})`)
  }
  const m = slabs.meta
  const bits = slabs.bits
  const heap = slabs.heap
  const granule = slabs.granule
  const g = off >>> (31 - Math.clz32(granule))
  const o = m[slabs.slabOf + g]!
  let regionStart = -1
  let regionSize = 0
  if (o !== 0) {
    const size = m[o + S_SIZE]!
    const first = start + (m[o + S_UNIT]! << ALIGN_SHIFT)
    const b = Math.floor((addr - first) / size)
    const bs = first + b * size
    // bs is a block start of this slab (addr is in it, so b ≥ 0): whether a live region starts there
    const ub = (bs - start) >>> ALIGN_SHIFT
    if (b < m[o + S_NB]! && bs !== addr && (m[bits + (ub >>> 4)]! & (1 << ((ub & 15) << 1))) !== 0) {
      regionStart = bs
      regionSize = size
    }
  } else {
    const h = heap.headOf(g)
    if (heap.state[h] === BlockState.LARGE) {
      regionStart = start + h * granule
      regionSize = heap.tag[h]! * granule
    }
  }
  if (regionStart >= 0 && regionStart !== addr) {
    return new BufMgrError(BufMgrErrorCode.INTERIOR, `bufmgr: ${op}(${addr}): inside the live region at ${regionStart} (${regionSize} bytes), not its start`)
  }
  const u = off >>> ALIGN_SHIFT
  if (u << ALIGN_SHIFT === off && (m[bits + (u >>> 4)]! & (2 << ((u & 15) << 1))) !== 0) {
    return new BufMgrError(BufMgrErrorCode.DOUBLE_FREE, `bufmgr: ${op}(${addr}): the region was already freed`)
  }
  return new BufMgrError(NA, `bufmgr: ${op}(${addr}): no region was handed out at this address`)
}
