/**
 * Copies between any two places of global memory and fills, issued by any task (UPC's
 * `upc_memcpy` and `upc_memset`): neither end need be the caller's. Where both ends are in this
 * process's memory the bytes move directly (copyWithin, set, fill); where one is, it is the
 * buffer of one put or get (rma.ts, in pieces when long; a get into the caller's own segment is
 * one LAPI Get into place). Where neither is, the bytes pass through the caller in pieces of at
 * most COPY_PIECE bytes, a get of the next piece in flight while the last one is put (two pieces
 * of the own segment, whatever the length). Blocking: done when every byte is at its
 * destination. Overlapping ranges of one task behave as memmove.
 */
import { LapiError, LapiStatus } from '@amlapi/lapi'
import type { Core } from './core.js'
import type { OpHandle, Rma } from './rma.js'
import { PgasStatus as S } from './status.js'

/** Bytes a piece of a copy or fill through the caller. */
export const COPY_PIECE = 128 << 10
/** Puts of a fill in flight at once. */
const FILL_WINDOW = 4

export class Copier {
  private readonly core: Core
  private readonly rma: Rma
  /** A fill's bytes (made on the first fill of another process's task; puts do not stage them). */
  private pattern: Uint8Array | null = null
  private readonly inFlight: Array<OpHandle | null> = new Array<OpHandle | null>(FILL_WINDOW).fill(null)
  private filling = false

  constructor(core: Core, rma: Rma) {
    this.core = core
    this.rma = rma
  }

  /** Copies `n` bytes from `srcAddr` of task `srcTask` to `dstAddr` of task `dstTask`. */
  copy(dstTask: number, dstAddr: number, srcTask: number, srcAddr: number, n: number): number {
    if (!Number.isInteger(n) || n < 0) return S.ERR_BAD_ARG
    let rc = this.core.checkRange(dstTask, dstAddr, n)
    if (rc === 0) rc = this.core.checkRange(srcTask, srcAddr, n)
    if (rc !== 0 || n === 0) return rc
    const sseg = this.core.u8[srcTask] ?? null
    const dseg = this.core.u8[dstTask] ?? null
    if (sseg !== null && dseg !== null) {
      if (srcTask === dstTask) dseg.copyWithin(dstAddr, srcAddr, srcAddr + n)
      else dseg.set(sseg.subarray(srcAddr, srcAddr + n), dstAddr)
      return S.OK
    }
    if (sseg !== null) return this.rma.put(dstTask, dstAddr, sseg.subarray(srcAddr, srcAddr + n))
    if (dstTask === this.core.rank) return this.getInto(srcTask, srcAddr, dstAddr, n)
    if (dseg !== null) return this.rma.get(srcTask, srcAddr, dseg.subarray(dstAddr, dstAddr + n))
    return this.through(dstTask, dstAddr, srcTask, srcAddr, n)
  }

  /** Sets `n` bytes at `addr` of task `task` to `byte` (0 … 255). */
  fill(task: number, addr: number, byte: number, n: number): number {
    if (!Number.isInteger(byte) || byte < 0 || byte > 255 || !Number.isInteger(n) || n < 0) return S.ERR_BAD_ARG
    const rc = this.core.checkRange(task, addr, n)
    if (rc !== 0 || n === 0) return rc
    const seg = this.core.u8[task] ?? null
    if (seg !== null) {
      seg.fill(byte, addr, addr + n)
      return S.OK
    }
    const piece = Math.min(n, COPY_PIECE)
    // (a fill nested in another's wait, from a handler, gets buffers of its own)
    const nested = this.filling
    const buf = (nested ? new Uint8Array(piece) : (this.pattern ??= new Uint8Array(COPY_PIECE)).subarray(0, piece)).fill(byte)
    const hs = nested ? new Array<OpHandle | null>(FILL_WINDOW).fill(null) : this.inFlight
    this.filling = true
    try {
      return this.fillRemote(task, addr, n, buf, hs)
    } finally {
      this.filling = nested
    }
  }

  /** Puts `buf` (`byte`s) over `n` bytes at `addr` of `task`: every put reads the same bytes, copied out as it is issued, up to FILL_WINDOW in flight. */
  private fillRemote(task: number, addr: number, n: number, buf: Uint8Array, hs: Array<OpHandle | null>): number {
    const piece = buf.length
    let st: number = S.OK
    let k = 0
    for (let off = 0; off < n; off += piece, k = (k + 1) % FILL_WINDOW) {
      const old = hs[k]
      if (old !== null && old !== undefined) {
        hs[k] = null
        st = this.rma.wait(old)
      }
      if (st !== S.OK) break
      const h = this.rma.putNb(task, addr + off, off + piece <= n ? buf : buf.subarray(0, n - off))
      if (h.status !== S.OK) {
        st = h.status
        break
      }
      hs[k] = h
    }
    for (let j = 0; j < FILL_WINDOW; j++) {
      const h = hs[j]
      if (h === null || h === undefined) continue
      hs[j] = null
      const r = this.rma.wait(h)
      if (st === S.OK) st = r
    }
    return st
  }

  /** One LAPI Get of `n` bytes into this task's own segment at `own`: in place, no staging copy. */
  private getInto(srcTask: number, srcAddr: number, own: number, n: number): number {
    const c = this.core.counter()
    try {
      this.core.lapi.get(srcTask, n, srcAddr, own, { orgCntr: c })
    } catch (e) {
      this.core.release(c)
      return lapiCode(e)
    }
    c.wait(1)
    this.core.release(c)
    return S.OK
  }

  /**
   * Neither end in this process: a get of each piece into the caller's segment, then its put,
   * the next piece's get in flight meanwhile. Pieces go from the end backwards where the
   * destination overlaps the source from above (memmove), else from the start. Without room in
   * the segment for two pieces, one piece at a time through a private buffer (LAPI stages it).
   */
  private through(dstTask: number, dstAddr: number, srcTask: number, srcAddr: number, n: number): number {
    const piece = Math.min(n, COPY_PIECE)
    const back = srcTask === dstTask && dstAddr > srcAddr && dstAddr < srcAddr + n
    const count = Math.ceil(n / piece)
    const l = this.core.lapi
    let sc = 0
    try {
      sc = l.malloc(2 * piece)
    } catch {
      sc = 0
    }
    if (sc === 0) {
      const buf = new Uint8Array(piece)
      let st: number = S.OK
      for (let k = 0; k < count && st === S.OK; k++) {
        const b = buf.subarray(0, len(back, n, piece, k))
        st = this.rma.get(srcTask, srcAddr + lo(back, n, piece, k), b)
        if (st === S.OK) st = this.rma.put(dstTask, dstAddr + lo(back, n, piece, k), b)
      }
      return st
    }
    const got = this.core.counter()
    const put = this.core.counter()
    let st: number = S.OK
    // (operations started and waited for: after a failure, what was started completes first)
    let gi = 0
    let gw = 0
    let pi = 0
    let pw = 0
    const gx = { orgCntr: got }
    const px = { cmplCntr: put }
    try {
      l.get(srcTask, len(back, n, piece, 0), srcAddr + lo(back, n, piece, 0), sc, gx)
      gi++
      for (let k = 0; k < count; k++) {
        got.wait(1)
        gw++
        // (the next get lands in the other half; this half is reused once its put is done)
        if (k + 1 < count) {
          l.get(srcTask, len(back, n, piece, k + 1), srcAddr + lo(back, n, piece, k + 1), sc + ((k + 1) % 2) * piece, gx)
          gi++
        }
        l.put(dstTask, len(back, n, piece, k), dstAddr + lo(back, n, piece, k), sc + (k % 2) * piece, px)
        pi++
        put.wait(1)
        pw++
      }
    } catch (e) {
      st = lapiCode(e)
      if (gi > gw) got.wait(gi - gw)
      if (pi > pw) put.wait(pi - pw)
    }
    this.core.release(got)
    this.core.release(put)
    l.free(sc)
    return st
  }
}

/** Where piece k of a copy of `n` bytes in pieces of `piece` starts: from the end backwards when `back`. */
function lo(back: boolean, n: number, piece: number, k: number): number {
  return back ? Math.max(0, n - (k + 1) * piece) : k * piece
}
/** Piece k's length. */
function len(back: boolean, n: number, piece: number, k: number): number {
  return back ? n - k * piece - Math.max(0, n - (k + 1) * piece) : Math.min(n, (k + 1) * piece) - k * piece
}

/** The status of an error LAPI threw. */
function lapiCode(e: unknown): number {
  if (e instanceof LapiError && e.status === LapiStatus.ERR_MEMORY_EXHAUSTED) return S.ERR_NOMEM
  return S.ERR_LAPI
}
