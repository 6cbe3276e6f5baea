/**
 * Put and get: blocking, non-blocking with handles, and implicit (completed together by
 * `syncAll`); contiguous, strided and indexed (vector). A co-located target (a task of this
 * process) is copied to and from directly; any other goes by LAPI's one-sided Put and Get, a put
 * complete when the target has the data (LAPI's completion counter), a get when it has arrived.
 */
import { LapiError, LapiStatus, VecType, type Counter, type lapi_vec_t } from '@amlapi/lapi'
import type { Core } from './core.js'
import { PgasStatus as S } from './status.js'

/** A non-blocking operation: done when its counter reached `expect` (null counter: done at once). */
export class OpHandle {
  counter: Counter | null
  expect: number
  /** Non-zero when the operation could not be started: the status `wait` reports. */
  status: number

  constructor(counter: Counter | null, expect: number, status: number) {
    this.counter = counter
    this.expect = expect
    this.status = status
  }
}

const DONE = new OpHandle(null, 0, 0)
/** Pieces of a long blocking transfer, bytes, and how many may be in flight (see `Rma.blocking`). */
const STREAM_PIECE = 512 << 10
const STREAM_WINDOW = 4
/** `direct`'s answer when LAPI must move the bytes (not a status code). */
const REMOTE = -1

/** Waits for `h` and gives its counter back; returns its status. A completed handle may be waited for again. */
export function waitHandle(core: Core, h: OpHandle): number {
  const c = h.counter
  if (c !== null) {
    c.wait(h.expect)
    h.counter = null
    core.release(c)
  }
  return h.status
}

export class Rma {
  private readonly core: Core
  /** The counters argument of LAPI's calls, one object reused (a put or get allocates nothing here). */
  private readonly xc: { cmplCntr?: Counter; orgCntr?: Counter; tgtCntr?: number } = {}

  constructor(core: Core) {
    this.core = core
  }

  private cmpl(c: Counter): typeof this.xc {
    const x = this.xc
    x.cmplCntr = c
    x.orgCntr = undefined
    x.tgtCntr = undefined
    return x
  }

  private org(c: Counter): typeof this.xc {
    const x = this.xc
    x.cmplCntr = undefined
    x.orgCntr = c
    x.tgtCntr = undefined
    return x
  }

  private signal(tgt: number, c: Counter): typeof this.xc {
    const x = this.xc
    x.cmplCntr = undefined
    x.orgCntr = c
    x.tgtCntr = tgt
    return x
  }

  /**
   * Checks a transfer of `buf` to (put) or from `addr` of task `task`, and does it at once where
   * no message is needed (a co-located task, or no bytes): OK then, REMOTE when LAPI must move
   * it (`issue`), or the status of bad arguments.
   */
  private direct(put: boolean, task: number, addr: number, buf: Uint8Array): number {
    const rc = this.core.checkRange(task, addr, buf.length)
    if (rc !== 0) return rc
    const seg = this.core.u8[task]
    if (seg !== null) {
      if (put) seg.set(buf, addr)
      else buf.set(seg.subarray(addr, addr + buf.length))
      return S.OK
    }
    return buf.length === 0 ? S.OK : REMOTE
  }

  /**
   * Starts LAPI's Put (complete at the target) or Get (arrived) of `buf`, counted by `c`: OK, or
   * ERR_NOMEM when the own segment has no room for the staging copy of a heap buffer.
   */
  private issue(put: boolean, task: number, addr: number, buf: Uint8Array, c: Counter): number {
    try {
      if (put) this.core.lapi.put(task, buf.length, addr, buf, this.cmpl(c))
      else this.core.lapi.get(task, buf.length, addr, buf, this.org(c))
    } catch (e) {
      return codeOf(e)
    }
    return S.OK
  }

  /**
   * A blocking put or get. One longer than STREAM_PIECE goes in pieces, at most STREAM_WINDOW of
   * them in flight, and fewer while the own segment has no room for another piece's staging copy
   * (a private buffer is staged there piece by piece): a transfer of any length needs room for one
   * piece only, where a single LAPI Get of a private buffer stages it whole.
   */
  private blocking(put: boolean, task: number, addr: number, buf: Uint8Array): number {
    const rc = this.direct(put, task, addr, buf)
    if (rc !== REMOTE) return rc
    const c = this.core.counter()
    const len = buf.length
    // (pieces issued, and completions taken: a counter's wait takes what it waited for off it)
    let issued = 0
    let done = 0
    let st: number = S.OK
    if (len <= STREAM_PIECE) {
      st = this.issue(put, task, addr, buf, c)
      if (st === S.OK) issued = 1
    } else {
      for (let off = 0; off < len; ) {
        const end = off + STREAM_PIECE < len ? off + STREAM_PIECE : len
        if (issued - done >= STREAM_WINDOW) {
          c.wait(1)
          done++
        }
        st = this.issue(put, task, addr + off, buf.subarray(off, end), c)
        if (st !== S.OK) {
          // (no room for this piece's staging copy: once a piece in flight is done, its copy is freed)
          if (issued === done) break
          c.wait(1)
          done++
          st = S.OK
          continue
        }
        issued++
        off = end
      }
    }
    if (issued > done) c.wait(issued - done)
    this.core.release(c)
    return st
  }

  /** A non-blocking put or get. */
  private started(put: boolean, task: number, addr: number, buf: Uint8Array): OpHandle {
    const rc = this.direct(put, task, addr, buf)
    if (rc === S.OK) return DONE
    if (rc !== REMOTE) return new OpHandle(null, 0, rc)
    const c = this.core.counter()
    const st = this.issue(put, task, addr, buf, c)
    if (st !== S.OK) {
      this.core.release(c)
      return new OpHandle(null, 0, st)
    }
    return new OpHandle(c, 1, 0)
  }

  /** Copies `src` to `addr` of task `task`; returns when the target has it. */
  put(task: number, addr: number, src: Uint8Array): number {
    return this.blocking(true, task, addr, src)
  }

  /** Copies `dst.length` bytes at `addr` of task `task` into `dst`; returns when they are there. */
  get(task: number, addr: number, dst: Uint8Array): number {
    return this.blocking(false, task, addr, dst)
  }

  /** Starts a put; `src` must stay unchanged until the handle is complete. */
  putNb(task: number, addr: number, src: Uint8Array): OpHandle {
    return this.started(true, task, addr, src)
  }

  /** Starts a get into `dst`, which is filled when the handle is complete. */
  getNb(task: number, addr: number, dst: Uint8Array): OpHandle {
    return this.started(false, task, addr, dst)
  }

  /**
   * A put that also moves a counter at the target when the data is there (LAPI's target counter:
   * `cntrAddr`, in the target's segment), by LAPI on every path, as only LAPI's own updates wake a
   * task that waits on the counter. The handle completes when `src` may be reused.
   */
  putSignal(task: number, addr: number, src: Uint8Array, cntrAddr: number): OpHandle {
    let rc = this.core.checkRange(task, addr, src.length)
    if (rc === 0) rc = this.core.checkRange(task, cntrAddr, 8)
    if (rc === 0 && cntrAddr % 4 !== 0) rc = S.ERR_ALIGN
    if (rc !== 0) return new OpHandle(null, 0, rc)
    const c = this.core.counter()
    let st: number = S.OK
    try {
      this.core.lapi.put(task, src.length, addr, src, this.signal(cntrAddr, c))
    } catch (e) {
      st = codeOf(e)
    }
    if (st !== S.OK) {
      this.core.release(c)
      return new OpHandle(null, 0, st)
    }
    return new OpHandle(c, 1, 0)
  }

  /** Whether `h` is complete (a look, with a round of progress first). */
  test(h: OpHandle): boolean {
    const c = h.counter
    if (c === null) return true
    this.core.progress()
    return c.get() >= h.expect
  }

  /** Waits for `h`; returns its status. A completed handle may be waited for again. */
  wait(h: OpHandle): number {
    return waitHandle(this.core, h)
  }

  /** Waits for every handle of `hs`; returns the first non-zero status, or OK. */
  waitAll(hs: readonly OpHandle[]): number {
    let rc = 0
    for (const h of hs) {
      const r = this.wait(h)
      if (rc === 0) rc = r
    }
    return rc
  }

  /** A put completed by the next `syncAll` (nothing to wait for per operation). */
  putNbi(task: number, addr: number, src: Uint8Array): number {
    const rc = this.direct(true, task, addr, src)
    if (rc !== REMOTE) return rc
    const st = this.issue(true, task, addr, src, this.core.implicitCounter())
    if (st === S.OK) this.core.issuedImplicit()
    return st
  }

  /** A get completed by the next `syncAll`. */
  getNbi(task: number, addr: number, dst: Uint8Array): number {
    const rc = this.direct(false, task, addr, dst)
    if (rc !== REMOTE) return rc
    const st = this.issue(false, task, addr, dst, this.core.implicitCounter())
    if (st === S.OK) this.core.issuedImplicit()
    return st
  }

  /** Waits for every implicit operation issued so far (the Nbi puts and gets among them). */
  syncAll(): void {
    this.core.quiet()
  }

  /**
   * Indexed put: piece k of `srcs` goes to `addrs[k]` of task `task` (one LAPI vector Put across
   * processes). Blocking.
   */
  putIndexed(task: number, addrs: ArrayLike<number>, srcs: readonly Uint8Array[]): number {
    const n = addrs.length
    if (srcs.length !== n) return S.ERR_BAD_ARG
    for (let k = 0; k < n; k++) {
      const rc = this.core.checkRange(task, addrs[k]!, srcs[k]!.length)
      if (rc !== 0) return rc
    }
    const seg = this.core.u8[task]
    if (seg !== null) {
      for (let k = 0; k < n; k++) seg.set(srcs[k]!, addrs[k]!)
      return S.OK
    }
    const { tgt, org } = vectors(addrs, srcs)
    if (tgt.num_vecs === 0) return S.OK
    const c = this.core.counter()
    let st: number = S.OK
    try {
      this.core.lapi.putv(task, tgt, org, this.cmpl(c))
    } catch (e) {
      st = codeOf(e)
    }
    if (st === S.OK) c.wait(1)
    this.core.release(c)
    return st
  }

  /** Indexed get: `addrs[k]` of task `task` into piece k of `dsts`. Blocking. */
  getIndexed(task: number, addrs: ArrayLike<number>, dsts: readonly Uint8Array[]): number {
    const n = addrs.length
    if (dsts.length !== n) return S.ERR_BAD_ARG
    for (let k = 0; k < n; k++) {
      const rc = this.core.checkRange(task, addrs[k]!, dsts[k]!.length)
      if (rc !== 0) return rc
    }
    const seg = this.core.u8[task]
    if (seg !== null) {
      for (let k = 0; k < n; k++) dsts[k]!.set(seg.subarray(addrs[k]!, addrs[k]! + dsts[k]!.length))
      return S.OK
    }
    const { tgt, org } = vectors(addrs, dsts)
    if (tgt.num_vecs === 0) return S.OK
    const c = this.core.counter()
    let st: number = S.OK
    try {
      this.core.lapi.getv(task, tgt, org, this.org(c))
    } catch (e) {
      st = codeOf(e)
    }
    if (st === S.OK) c.wait(1)
    this.core.release(c)
    return st
  }

  /**
   * Strided put: `count` blocks of `blockBytes`, block k from `src` at k·`srcStride` to `addr` +
   * k·`dstStride` of task `task`. Blocking.
   */
  putStrided(task: number, addr: number, dstStride: number, src: Uint8Array, srcStride: number, blockBytes: number, count: number): number {
    const pieces = stridedPieces(addr, dstStride, src, srcStride, blockBytes, count)
    if (typeof pieces === 'number') return pieces
    return this.putIndexed(task, pieces.addrs, pieces.views)
  }

  /** Strided get: the mirror of `putStrided`, into `dst`. Blocking. */
  getStrided(task: number, addr: number, srcStride: number, dst: Uint8Array, dstStride: number, blockBytes: number, count: number): number {
    const pieces = stridedPieces(addr, srcStride, dst, dstStride, blockBytes, count)
    if (typeof pieces === 'number') return pieces
    return this.getIndexed(task, pieces.addrs, pieces.views)
  }
}

/** The target and origin I/O vectors of an indexed transfer (pieces of length 0 left out). */
function vectors(addrs: ArrayLike<number>, bufs: readonly Uint8Array[]): { tgt: lapi_vec_t; org: lapi_vec_t } {
  const info: number[] = []
  const oinfo: Uint8Array[] = []
  const len: number[] = []
  for (let k = 0; k < addrs.length; k++) {
    const b = bufs[k]!
    if (b.length === 0) continue
    info.push(addrs[k]!)
    oinfo.push(b)
    len.push(b.length)
  }
  return {
    tgt: { vec_type: VecType.LAPI_GEN_IOVECTOR, num_vecs: info.length, info, len },
    org: { vec_type: VecType.LAPI_GEN_IOVECTOR, num_vecs: info.length, info: oinfo, len: len.slice() },
  }
}

/** The addresses and local views of a strided transfer, or a status for bad arguments. */
function stridedPieces(
  addr: number,
  remoteStride: number,
  local: Uint8Array,
  localStride: number,
  blockBytes: number,
  count: number,
): { addrs: number[]; views: Uint8Array[] } | number {
  if (![remoteStride, localStride, blockBytes, count].every(Number.isInteger) || count < 0 || blockBytes < 0) return S.ERR_BAD_ARG
  if (count > 0 && (remoteStride < blockBytes || localStride < blockBytes)) return S.ERR_BAD_ARG
  if (count > 0 && (count - 1) * localStride + blockBytes > local.length) return S.ERR_BAD_ARG
  const addrs: number[] = []
  const views: Uint8Array[] = []
  for (let k = 0; k < count; k++) {
    addrs.push(addr + k * remoteStride)
    views.push(local.subarray(k * localStride, k * localStride + blockBytes))
  }
  return { addrs, views }
}

/** The status of what a LAPI call threw: ERR_NOMEM for no room to stage, ERR_LAPI for another LapiError; anything else is rethrown. */
function codeOf(e: unknown): number {
  if (e instanceof LapiError) return e.status === LapiStatus.ERR_MEMORY_EXHAUSTED ? S.ERR_NOMEM : S.ERR_LAPI
  throw e
}
