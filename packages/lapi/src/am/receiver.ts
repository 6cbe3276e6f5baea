/**
 * The target side of a one-packet active message: a SHORT or BARE packet read word by word
 * (`onShort`), handed to a library's in-place receiver or to the header handler (`onePacket`,
 * which also serves a whole message in one HEAD packet), its data landed where the handler said,
 * and the message completed (am/completions.ts). Holds what header handlers are given (the scratch
 * copy of the user header, the return-info record) and, per source, the finished message ids and
 * the messages in progress.
 */
import { CtlFlag, ErrClass, RetFlag } from '../base/constants.js'
import { copyBuf, copySeg, copyWords, WORD_COPY } from '../base/copy.js'
import { LapiStatus as S } from '../base/status.js'
import { BARE_HEADER_BYTES, SHORT_HEADER_BYTES, SW_CMPL_CNTR, SW_HANDLER, SW_LENS, SW_MSG_ID, SW_SRC, SW_TGT_CNTR } from '../transport/packet.js'
import type { HandlerTable } from '../core/handler-table.js'
import { unregisteredWhy } from '../core/explain.js'
import type { ContextState } from '../core/state.js'
import type { Counters } from '../sync/counters.js'
import type { UserCode } from '../sync/user-code.js'
import type { compl_hndlr_t, Ref } from '../base/types.js'
import type { Completions } from './completions.js'
import { SourceState } from './received.js'
import { ReturnInfo } from './return-info.js'
import type { AmState } from './state.js'
import type { hdr_hndlr_t, short_hndlr_t } from './types.js'
import { SHORT_WORD0, shortRoomFor } from './wire.js'

/** What a header handler's answer is (landingKind); LAPI codes are above these. */
export const LAND_NONE = 0
export const LAND_SEG = 1
export const LAND_BUF = 2

export class Receiver {
  private readonly c: ContextState
  private readonly a: AmState
  private readonly table: HandlerTable
  private readonly counters: Counters
  private readonly user: UserCode
  private readonly done: Completions
  private readonly maxUhdr: number
  /** Per source: finished message ids and messages in progress. */
  readonly sources: SourceState[] = []
  // scratch for handler arguments (no allocation per message)
  readonly uhdrScratch: Uint8Array
  /** The same memory as uhdrScratch, by words (SHORT user headers are copied word by word). */
  private readonly uhdrScratch32: Int32Array
  readonly uhdrViews: Array<Uint8Array | undefined> = []
  readonly retInfo: ReturnInfo
  readonly compRef: Ref<compl_hndlr_t | null> = { value: null }
  readonly infoRef: Ref<unknown> = { value: null }
  /** Messages an in-place receiver took (Lapi.setLibraryShortHandler). */
  inPlaceCompleted = 0
  // Constants of the per-message paths, read as fields: V8 does not fold a module's constants
  // into the code of these methods (callgrind: each use was a context-slot load with a hole and a
  // type check, against one load from `this`, whose map the code has checked already).
  private readonly shortWord0 = SHORT_WORD0
  /** Most user-header + data bytes a SHORT packet carries (shortRoomFor). */
  private readonly shortRoom: number
  private readonly wordCopy = WORD_COPY
  private readonly shortHeaderBytes = SHORT_HEADER_BYTES
  private readonly bareHeaderBytes = BARE_HEADER_BYTES

  constructor(s: ContextState, a: AmState, inboxU8: Uint8Array, table: HandlerTable, counters: Counters, user: UserCode, done: Completions) {
    this.c = s
    this.a = a
    this.table = table
    this.counters = counters
    this.user = user
    this.done = done
    this.maxUhdr = s.config.maxUhdrSz
    this.shortRoom = shortRoomFor(s.config.maxPktSz)
    for (let t = 0; t < s.numTasks; t++) this.sources.push(new SourceState())
    this.uhdrScratch = new Uint8Array(s.config.maxUhdrSz)
    this.uhdrScratch32 = new Int32Array(this.uhdrScratch.buffer)
    this.retInfo = new ReturnInfo(s.config.maxPktSz, inboxU8)
    // (a test of the ids' wrap starts every pair of tasks just before it)
    const first = s.config.chaos?.firstId ?? 0
    if (first !== 0) for (const src of this.sources) src.done.below = first
  }

  /**
   * A SHORT packet, a whole small Amsend (its first word checked by drain): read word by word; the
   * header handler runs and the message completes in this call. Malformed ones are dropped and counted.
   */
  onShort(u8: Uint8Array, i32: Int32Array, off: number, w0: number): void {
    const c = this.c
    // a BARE packet (w0 is BARE_WORD0) has no counter words: its user header starts 8 bytes sooner
    const bare = w0 !== this.shortWord0
    const p = off >> 2
    const src = i32[p + SW_SRC]!
    if (src >>> 0 >= c.numTasks) {
      this.a.dropped++
      return
    }
    const s = this.sources[src]!
    const id = i32[p + SW_MSG_ID]! >>> 0
    if (s.done.has(id)) {
      this.a.duplicates++
      return
    }
    const lens = i32[p + SW_LENS]!
    const len = lens & 0xffff
    const uhdrLen = lens >>> 16
    const tgtCntr = bare ? 0 : i32[p + SW_TGT_CNTR]!
    const cmplCntr = bare ? 0 : i32[p + SW_CMPL_CNTR]!
    const size = c.segmentSize
    if (
      len >>> 0 > this.shortRoom ||
      uhdrLen >>> 0 > len ||
      uhdrLen > this.maxUhdr ||
      (tgtCntr & 3) !== 0 ||
      (tgtCntr >>> 0) + 4 > size ||
      (cmplCntr & 3) !== 0 ||
      (cmplCntr >>> 0) + 4 > size
    ) {
      this.a.dropped++
      return
    }
    const at = off + (bare ? this.bareHeaderBytes : this.shortHeaderBytes)
    const hidx = i32[p + SW_HANDLER]!
    const raw = this.table.shortHandlerAt(hidx)
    if (raw !== null) {
      this.inPlace(s, src, id, raw, i32, at >> 2, uhdrLen, len - uhdrLen, tgtCntr, cmplCntr)
      return
    }
    const uh = this.uhdrScratch
    // uhdr_len is a multiple of 8 (the sender checks; a packet that says otherwise goes by bytes);
    // a long one goes through Uint8Array.set (a word loop costs ~0.5 ns a byte, set ~30 ns and a memcpy)
    if ((uhdrLen & 3) === 0 && uhdrLen <= this.wordCopy) copyWords(this.uhdrScratch32, 0, i32, at, uhdrLen)
    else copyBuf(uh, 0, u8, at, uhdrLen, false)
    const uhView = this.view(this.uhdrViews, uh, uhdrLen)
    const fn = this.table.handlerAt(hidx)
    if (fn === null) {
      // not registered here: discarded, reported; the origin's completion counter still moves
      this.user.reportError(S.ERR_HDR_HNDLR_NULL, ErrClass.AM_ERR, src, undefined, unregisteredWhy(hidx, this.table.handlers, this.table.ranges))
      this.done.completeOne(s, src, id, null, null, false, 0, cmplCntr)
      return
    }
    this.onePacket(s, src, id, fn as unknown as hdr_hndlr_t, uhView, uhdrLen, u8, i32, at + uhdrLen, len - uhdrLen, tgtCntr, cmplCntr)
  }

  /**
   * A SHORT packet for a library's in-place receiver (`short_hndlr_t`): no user-header copy, no
   * return info; it runs as a header handler and the message completes when it returns.
   */
  private inPlace(
    s: SourceState,
    src: number,
    id: number,
    fn: short_hndlr_t,
    i32: Int32Array,
    at: number,
    uhdrLen: number,
    dataLen: number,
    tgtCntr: number,
    cmplCntr: number,
  ): void {
    const c = this.c
    // (the library may run its users' code from here, as a header handler may: see onePacket)
    this.counters.flushAbsorbed()
    c.inHeaderHandler = 1
    try {
      fn(i32, at, uhdrLen, dataLen, src)
    } catch (e) {
      c.inHeaderHandler = 0
      this.user.reportError(S.ERR_UNKNOWN, ErrClass.AM_ERR, src, e, 'an in-place receiver')
      this.done.completeOne(s, src, id, null, null, false, 0, cmplCntr)
      return
    }
    c.inHeaderHandler = 0
    this.inPlaceCompleted++
    this.done.completeOne(s, src, id, null, null, false, tgtCntr, cmplCntr)
  }

  /**
   * The fast path: a whole Amsend in one packet, nothing of it seen before. No per-message record:
   * the header handler runs, the data lands, and the message completes in this call.
   */
  onePacket(
    s: SourceState,
    src: number,
    id: number,
    fn: hdr_hndlr_t,
    uhView: Uint8Array,
    uhdrLen: number,
    u8: Uint8Array,
    i32: Int32Array | null,
    dataOff: number,
    msgLen: number,
    tgtCntr: number,
    cmplCntr: number,
  ): void {
    const c = this.c
    const comp = this.compRef
    comp.value = null
    const inf = this.infoRef
    inf.value = null
    const ri = this.retInfo
    ri.arm(msgLen, src, u8, i32, dataOff)
    let landing: unknown
    // user code is about to run while a counter wait may hold bumps back: put them in memory
    this.counters.flushAbsorbed()
    c.inHeaderHandler = 1
    try {
      landing = fn(c.handle, uhView, uhdrLen, ri, comp, inf)
    } catch (e) {
      c.inHeaderHandler = 0
      ri.disarm()
      this.user.reportError(S.ERR_UNKNOWN, ErrClass.AM_ERR, src, e, 'a header handler')
      this.done.completeOne(s, src, id, null, null, false, 0, cmplCntr)
      return
    }
    c.inHeaderHandler = 0
    ri.disarm()
    // the most common answer first: nothing lands and nothing runs later (what follows would come
    // to the same, through the flags and landingKind)
    if (landing === null && comp.value === null) {
      this.done.completeOne(s, src, id, null, null, false, tgtCntr, cmplCntr)
      return
    }
    if (ri.ctl_flags === CtlFlag.LAPI_BURY_MSG) landing = null
    const where = this.landingKind(landing, msgLen)
    if (where > LAND_BUF) {
      this.user.reportError(where, ErrClass.AM_ERR, src, undefined, 'the landing a header handler gave')
      this.done.completeOne(s, src, id, null, null, false, 0, cmplCntr)
      return
    }
    if (msgLen > 0) {
      if (where === LAND_SEG) copySeg(c.seg.u8[c.taskId]!, landing as number, u8, dataOff, msgLen)
      else if (where === LAND_BUF) copyBuf(landing as Uint8Array, 0, u8, dataOff, msgLen, false)
    }
    const compl = typeof comp.value === 'function' ? comp.value : null
    this.done.completeOne(s, src, id, compl, inf.value, (ri.ret_flags & RetFlag.LAPI_SEND_REPLY) !== 0, tgtCntr, cmplCntr)
  }

  /**
   * What a header handler's answer means for a message of `msgLen` bytes: LAND_NONE (null, 0,
   * undefined: drop the data), LAND_SEG (an Addr of the own segment that can hold it), LAND_BUF (a
   * Uint8Array that can), or the LAPI code to report (> LAND_BUF).
   */
  landingKind(landing: unknown, msgLen: number): number {
    if (landing === null || landing === undefined || landing === 0) return LAND_NONE
    if (typeof landing === 'number') {
      return Number.isInteger(landing) && landing > 0 && landing + msgLen <= this.c.segmentSize ? LAND_SEG : S.ERR_TGT_EXTENT
    }
    if (landing instanceof Uint8Array) return landing.length >= msgLen ? LAND_BUF : S.ERR_TGT_EXTENT
    return S.ERR_TGT_ADDR_NULL
  }

  /** A view of the first `len` bytes of `buf`, kept in `cache` by length. */
  view(cache: Array<Uint8Array | undefined>, buf: Uint8Array, len: number): Uint8Array {
    let v = cache[len]
    if (v === undefined) {
      v = buf.subarray(0, len)
      cache[len] = v
    }
    return v
  }
}
