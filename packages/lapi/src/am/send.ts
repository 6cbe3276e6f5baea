/**
 * The origin side of LAPI_Amsend and LAPI_Amsendv (docs/lapi.md, "Active messages"). A message of
 * at most a packet whose data stays within the rendezvous threshold goes as one SHORT packet
 * (`sendShort`: the checks in their cheapest form, the packet written by words); a larger one
 * goes **eager** (a HEAD with the user header and the first data, then DATA packets) or, above
 * `rndvThreshold`, by **rendezvous**: the HEAD says where the data lies in this task's segment (the
 * caller's Addr, or a staging copy of a Uint8Array) and the target pulls it (am/rendezvous.ts).
 * An Amsendv gathers its vector into eager packets. Also the negotiated-payload send of layered
 * libraries: `prepareShort`/`prepareShortData` reserve a BARE packet whose words the caller
 * writes, `commitShort` sends it.
 */
import { VecType } from '../base/constants.js'
import { WORD_COPY, copyBuf } from '../base/copy.js'
import { ringDoorbell } from '../layout/control.js'
import { LapiStatus as S } from '../base/status.js'
import {
  BARE_HEADER_BYTES,
  PACKET_HEADER_BYTES,
  SHORT_HEADER_BYTES,
  SW_CMPL_CNTR,
  SW_HANDLER,
  SW_KIND,
  SW_LENS,
  SW_MSG_ID,
  SW_SRC,
  SW_TGT_CNTR,
} from '../transport/packet.js'
import type { OutRing } from '../transport/ring.js'
import type { Checks } from '../core/checks.js'
import type { HandlerTable } from '../core/handler-table.js'
import type { Rings } from '../core/rings.js'
import type { ContextState } from '../core/state.js'
import type { HandlerFn } from '../core/types.js'
import type { Counters } from '../sync/counters.js'
import type { Addr, lapi_vec_t, LocalBuf, scompl_hndlr_t } from '../base/types.js'
import type { Outgoing } from './outgoing.js'
import type { Rendezvous } from './rendezvous.js'
import type { AmState } from './state.js'
import { pieceOffsets, vecBytes } from './vectors.js'
import {
  BARE_WORD0,
  F_AMV,
  F_PULL,
  F_RNDV,
  LINE_ROOM,
  LITTLE_ENDIAN,
  SHORT_WORD0,
  S_CMPL_CNTR,
  S_HANDLER,
  S_LENS,
  S_MSG_ID,
  S_SRC,
  S_TGT_CNTR,
  shortRoomFor,
} from './wire.js'

export class Sender {
  private readonly c: ContextState
  private readonly a: AmState
  private readonly rings: Rings
  private readonly out: Outgoing
  private readonly rndv: Rendezvous
  private readonly checks: Checks
  private readonly table: HandlerTable
  private readonly counters: Counters
  private readonly outbox: OutRing[]
  private readonly maxPkt: number
  private readonly maxUhdr: number
  /** Size of the handler table (valid indices are 1 … handlerSlots - 1). */
  private readonly handlerSlots: number
  private readonly nextId: Uint32Array
  /** Int32 views of the ArrayBuffers that Uint8Array user headers and data came from (one each; null: copied by bytes). */
  private readonly srcWords = new WeakMap<ArrayBufferLike, Int32Array | null>()
  /** The Uint8Array source `shortCopy` saw last, its byte offset and its buffer's words (null: by bytes). */
  private lastSrcU8: Uint8Array | null = null
  private lastSrcOff = 0
  private lastSrcWords: Int32Array | null = null
  // Constants of the per-message paths, read as fields: V8 does not fold a module's constants
  // into the code of these methods (callgrind: each use was a context-slot load with a hole and a
  // type check, against one load from `this`, whose map the code has checked already).
  /** 1 where the SHORT send paths may run (a little-endian host, not the test transport), else 0. */
  private readonly shortSend: number
  private readonly shortWord0 = SHORT_WORD0
  private readonly bareWord0 = BARE_WORD0
  /**
   * Most user-header + data bytes a SHORT packet carries (shortRoomFor), and of them the most data
   * (the rendezvous threshold: more goes by rendezvous).
   */
  private readonly shortRoom: number
  private readonly shortData: number
  private readonly lineRoom = LINE_ROOM
  private readonly wordCopy = WORD_COPY
  private readonly shortHeaderBytes = SHORT_HEADER_BYTES
  private readonly bareHeaderBytes = BARE_HEADER_BYTES
  private readonly success = S.SUCCESS

  constructor(
    s: ContextState,
    a: AmState,
    rings: Rings,
    out: Outgoing,
    rndv: Rendezvous,
    checks: Checks,
    table: HandlerTable,
    counters: Counters,
    chaos: number,
  ) {
    this.c = s
    this.a = a
    this.rings = rings
    this.out = out
    this.rndv = rndv
    this.checks = checks
    this.table = table
    this.counters = counters
    this.outbox = rings.outbox
    this.maxPkt = s.config.maxPktSz
    this.maxUhdr = s.config.maxUhdrSz
    this.shortRoom = shortRoomFor(this.maxPkt)
    this.shortData = s.config.rndvThreshold
    this.handlerSlots = table.ranges.size
    this.nextId = new Uint32Array(s.numTasks)
    this.shortSend = chaos === 0 && LITTLE_ENDIAN ? 1 : 0
    // (a test of the ids' wrap starts every pair of tasks just before it)
    const first = s.config.chaos?.firstId ?? 0
    if (first !== 0) this.nextId.fill(first)
  }

  /**
   * LAPI_Amsend / the AM member of LAPI_Xfer. `hdr` is a handler-table index valid at the target
   * (or a function registered here, SPMD style). The common one-packet message (a handler index,
   * uhdr + data within a packet, no rendezvous, no send-completion handler, a free slot) is
   * checked and written by `sendShort`; everything else, and every call it has a doubt about, by
   * `amsendAny`.
   */
  amsend(
    tgt: number,
    hdr: number | HandlerFn | null,
    uhdr: LocalBuf,
    uhdrLen: number,
    udata: LocalBuf,
    udataLen: number,
    tgtCntr: Addr,
    orgCntr: Addr,
    cmplCntr: Addr,
    shdlr: scompl_hndlr_t | null,
    sinfo: unknown,
  ): number {
    if (shdlr === null && typeof hdr === 'number' && this.sendShort(tgt, hdr, uhdr, uhdrLen, udata, udataLen, tgtCntr, orgCntr, cmplCntr) !== 0) {
      return this.success
    }
    return this.amsendAny(tgt, hdr, uhdr, uhdrLen, udata, udataLen, tgtCntr, orgCntr, cmplCntr, shdlr, sinfo)
  }

  /**
   * The SHORT fast path: every check of `checkSend` and the length checks, in their cheapest form,
   * then the packet written (the header fields by words, then uhdr and data: see `shortCopy`)
   * and published.
   * Returns 1 when it sent the message, 0 with nothing sent when anything is unusual (bad
   * arguments included: `amsendAny` finds them and returns their codes), or when the target's
   * ring is full (it waits there). (A call declined after the target's check may have written the
   * first word of the free slot it reserved: unpublished, so nothing anyone reads.) (A number, not
   * a boolean: the caller tests the result of a call it does not inline, and a boolean's test would
   * be a full truthiness check.)
   */
  private sendShort(
    tgt: number,
    hdr: number,
    uhdr: LocalBuf,
    uhdrLen: number,
    udata: LocalBuf,
    udataLen: number,
    tgtCntr: Addr,
    orgCntr: Addr,
    cmplCntr: Addr,
  ): number {
    const c = this.c
    if (this.shortSend === 0 || c.inHeaderHandler !== 0) return 0
    // Every number is taken as an int32 once and compared with what was passed (strictly: a
    // fraction, a string or anything else fails), so that what follows is int32 arithmetic and
    // the stores into the slot need no conversion. (Counters as counterOk has them, written out:
    // a call of it here is not inlined, and its boolean result costs a full truthiness test.)
    const t = tgt | 0
    const h = hdr | 0
    const ul = uhdrLen | 0
    const dl = udataLen | 0
    const tc = tgtCntr | 0
    const oc = orgCntr | 0
    const cc = cmplCntr | 0
    if (t !== tgt || t >>> 0 >= c.numTasks) return 0
    const w = this.outbox[t]!
    const off = w.reserve()
    if (off < 0) return 0
    const i32 = w.i32
    const p = off >> 2
    // The slot's first store comes before the other checks: its line is in the target's cache (a
    // waiting target reads the next slot's STAMP there), and getting it back is a round trip
    // between the cores that the publishing store would wait for; started here, it overlaps the
    // checks. (Nothing is published until STAMP is: a message refused below leaves the slot free.)
    i32[p + SW_KIND] = this.shortWord0
    if (h !== hdr || ul !== uhdrLen || dl !== udataLen || tc !== tgtCntr || oc !== orgCntr || cc !== cmplCntr) return 0
    const size = c.segmentSize
    if (
      (ul | dl | tc | oc | cc) < 0 ||
      h <= 0 ||
      h >= this.handlerSlots ||
      ((ul & 7) | ((tc | oc | cc) & 3)) !== 0 ||
      ul + dl > this.shortRoom ||
      dl > this.shortData ||
      ul > this.maxUhdr ||
      tc + 4 > size ||
      oc + 4 > size ||
      cc + 4 > size ||
      c.purged[t] !== 0
    )
      return 0
    const k = this.checks
    if ((ul > 0 && k.checkLocal(uhdr, ul) !== 0) || k.checkLocal(udata, dl) !== 0) return 0
    i32[p + SW_SRC] = c.taskId
    i32[p + SW_LENS] = (ul + dl) | (ul << 16)
    i32[p + SW_HANDLER] = h
    i32[p + SW_TGT_CNTR] = tc
    i32[p + SW_CMPL_CNTR] = cc
    const at = off + this.shortHeaderBytes
    if (ul > 0) this.shortCopy(w.u8, i32, at, uhdr, ul)
    if (dl > 0) this.shortCopy(w.u8, i32, at + ul, udata, dl)
    // the id last: a message counts as sent (for the fence and the target's duplicate window)
    // only once nothing can fail any more
    i32[p + SW_MSG_ID] = this.nextMessage(t)
    w.publish()
    // this thread cannot be asleep in Atomics.wait; its promise waits count themselves
    if (t !== c.taskId || c.asyncSleepers !== 0) ringDoorbell(c.ctl, t)
    this.a.sendCompleted++
    if (oc !== 0) this.counters.bumpLocal(oc)
    const rings = this.rings
    if (rings.tailsHeld !== 0) rings.publishTails()
    return 1
  }

  /** The ring of a SHORT packet that prepareShort reserved and commitShort has not sent yet, or null. */
  private prepRing: OutRing | null = null
  private prepTgt = 0
  /** Word index of the prepared packet, and the ring's packet count when it was reserved. */
  private prepWord = 0
  private prepSeq = 0

  /**
   * Negotiated-payload send, first half (`Lapi.prepareShort`): reserves a packet to `tgt` for
   * handler index `hdr` with `uhdrLen` bytes of user header, no data and no counters (a BARE
   * packet: a SHORT one without its counter words), writes its LAPI header and returns the index
   * in `preparedWords` of the first user-header word, which the caller writes. Returns -1 when the
   * fast path cannot take the message now (see `sendShort`; a full ring included): the caller then
   * sends it with `amsend`. Its checks and header words
   * mirror `sendShort`'s on purpose: with both on one shared helper, TurboFan's inlining budget no
   * longer covered LAPI_Amsend's fast path (callgrind: about 240 more instructions per Amsend).
   */
  prepareShort(tgt: number, hdr: number, uhdrLen: number): number {
    const c = this.c
    this.prepRing = null // (an earlier preparation not committed is abandoned, also by a refusal)
    if (this.shortSend === 0 || c.inHeaderHandler !== 0) return -1
    // (int32s taken once and compared strictly, as in sendShort)
    const t = tgt | 0
    if (t !== tgt || t >>> 0 >= c.numTasks) return -1
    const w = this.outbox[t]!
    const off = w.reserve()
    if (off < 0) return -1
    const i32 = w.i32
    const p = off >> 2
    // (the slot's first store before the other checks, as in sendShort)
    i32[p + SW_KIND] = this.bareWord0
    const h = hdr | 0
    const ul = uhdrLen | 0
    if (h !== hdr || ul !== uhdrLen) return -1
    if (ul < 0 || h <= 0 || h >= this.handlerSlots || (ul & 7) !== 0 || ul > this.shortRoom || ul > this.maxUhdr || c.purged[t] !== 0) return -1
    i32[p + SW_SRC] = c.taskId
    i32[p + SW_LENS] = ul | (ul << 16)
    i32[p + SW_HANDLER] = h
    this.prepRing = w
    this.prepTgt = t
    this.prepWord = p
    this.prepSeq = w.published
    return p + (this.bareHeaderBytes >> 2)
  }

  /**
   * Negotiated-payload send with data (`Lapi.prepareShortData`): prepareShort for a message of
   * `uhdrLen` bytes of user header followed by `dataLen` bytes of data in the same BARE packet
   * (together at most a packet; the data at most the rendezvous threshold). Returns the index in
   * `preparedWords` of the first user-header word (the data starts `uhdrLen` bytes after it), or
   * -1 as prepareShort. (Its own function, not a parameter of prepareShort: that one stays as small
   * as it was, for the callers it is compiled into. With prepareShort written as a call of this
   * one, AM-2's Short round trip measured 13 % longer: medians 0.525 against 0.462 µs, 12 runs each.)
   */
  prepareShortData(tgt: number, hdr: number, uhdrLen: number, dataLen: number): number {
    const c = this.c
    this.prepRing = null
    if (this.shortSend === 0 || c.inHeaderHandler !== 0) return -1
    const t = tgt | 0
    if (t !== tgt || t >>> 0 >= c.numTasks) return -1
    const w = this.outbox[t]!
    const off = w.reserve()
    if (off < 0) return -1
    const i32 = w.i32
    const p = off >> 2
    i32[p + SW_KIND] = this.bareWord0
    const h = hdr | 0
    const ul = uhdrLen | 0
    const dl = dataLen | 0
    if (h !== hdr || ul !== uhdrLen || dl !== dataLen) return -1
    if (
      (ul | dl) < 0 ||
      h <= 0 ||
      h >= this.handlerSlots ||
      (ul & 7) !== 0 ||
      ul + dl > this.shortRoom ||
      dl > this.shortData ||
      ul > this.maxUhdr ||
      c.purged[t] !== 0
    )
      return -1
    i32[p + SW_SRC] = c.taskId
    i32[p + SW_LENS] = (ul + dl) | (ul << 16)
    i32[p + SW_HANDLER] = h
    this.prepRing = w
    this.prepTgt = t
    this.prepWord = p
    this.prepSeq = w.published
    return p + (this.bareHeaderBytes >> 2)
  }

  /** The words of the packet prepareShort reserved (the target's inbox; valid until commitShort). */
  get preparedWords(): Int32Array {
    const w = this.prepRing
    if (w === null) throw new Error('preparedWords: no packet is prepared (prepareShort returned -1, or it was committed)')
    return w.i32
  }

  /** The bytes of the inbox preparedWords views (valid until commitShort). */
  get preparedBytes(): Uint8Array {
    const w = this.prepRing
    if (w === null) throw new Error('preparedBytes: no packet is prepared (prepareShort returned -1, or it was committed)')
    return w.u8
  }

  /**
   * Negotiated-payload send, second half: gives the prepared packet its message id and sends it.
   * Returns false (nothing sent) when there is none, or when a packet went out on the same ring
   * since it was prepared (that send may have reused the slot): the caller sends it with `amsend`.
   */
  commitShort(): boolean {
    const w = this.prepRing
    if (w === null) return false
    this.prepRing = null
    if (w.published !== this.prepSeq) return false
    const c = this.c
    const tgt = this.prepTgt
    w.i32[this.prepWord + SW_MSG_ID] = this.nextMessage(tgt)
    w.publish()
    // this thread cannot be asleep in Atomics.wait; its promise waits count themselves
    if (tgt !== c.taskId || c.asyncSleepers !== 0) ringDoorbell(c.ctl, tgt)
    this.a.sendCompleted++
    const rings = this.rings
    if (rings.tailsHeld) rings.publishTails()
    return true
  }

  /**
   * Copies n bytes (at most a packet) of a checked local buffer into a ring slot: by words when
   * the source is aligned and n at most WORD_COPY (a run of byte stores into a line another core
   * holds fills the store buffer and stalls the sender), by bytes when it is not and n is at most
   * LINE_ROOM, else with one Uint8Array.set (copyIn: ~30 ns, then memcpy speed).
   */
  private shortCopy(d8: Uint8Array, d32: Int32Array, d: number, src: LocalBuf, n: number): void {
    if (n > this.wordCopy) {
      this.out.copyIn(d8, d, src, 0, n)
      return
    }
    if (typeof src === 'number') {
      // (the word loop written here, not a call of copyWords: this is inlined into sendShort,
      // whose inlining budget does not cover copyWords, and a call costs ~90 instructions)
      if (((src | n) & 3) === 0) {
        const s32 = this.c.mySeg32
        const dw = d >> 2
        const sw = src >> 2
        for (let i = 0; i < n >> 2; i++) d32[dw + i] = s32[sw + i]!
      } else if (n <= this.lineRoom) {
        const s8 = this.c.seg.u8[this.c.taskId]!
        for (let i = 0; i < n; i++) d8[d + i] = s8[src + i]!
      } else this.out.copyIn(d8, d, src, 0, n)
      return
    }
    const s8 = src!
    // the last source array's words and offset are remembered: `.buffer` is a call into the
    // runtime in Node 20 (a typed array always views the same buffer at the same offset)
    let w: Int32Array | null
    let so: number
    if (s8 === this.lastSrcU8) {
      w = this.lastSrcWords
      so = this.lastSrcOff
    } else {
      so = s8.byteOffset
      w = (so & 3) === 0 ? this.wordsOf(s8.buffer) : null
      this.lastSrcU8 = s8
      this.lastSrcOff = so
      this.lastSrcWords = w
    }
    if (w !== null && (n & 3) === 0) {
      const dw = d >> 2
      const sw = so >> 2
      for (let i = 0; i < n >> 2; i++) d32[dw + i] = w[sw + i]!
      return
    }
    if (n <= this.lineRoom) for (let i = 0; i < n; i++) d8[d + i] = s8[i]!
    else this.out.copyIn(d8, d, s8, 0, n)
  }

  /**
   * An Int32Array over the whole of `buf` (made once per buffer), or null for a resizable or
   * growable buffer: its length may change (and need not be a multiple of 4), so its bytes are
   * copied one by one.
   */
  private wordsOf(buf: ArrayBufferLike): Int32Array | null {
    let w = this.srcWords.get(buf)
    if (w === undefined) {
      const b = buf as ArrayBufferLike & { resizable?: boolean; growable?: boolean }
      w = b.resizable === true || b.growable === true ? null : new Int32Array(buf, 0, buf.byteLength >> 2)
      this.srcWords.set(buf, w)
    }
    return w
  }

  /** LAPI_Amsend in general (see `amsend`). */
  amsendAny(
    tgt: number,
    hdr: number | HandlerFn | null,
    uhdr: LocalBuf,
    uhdrLen: number,
    udata: LocalBuf,
    udataLen: number,
    tgtCntr: Addr,
    orgCntr: Addr,
    cmplCntr: Addr,
    shdlr: scompl_hndlr_t | null,
    sinfo: unknown,
  ): number {
    const c = this.c
    const out = this.out
    let rc = this.checkSend(tgt, hdr, uhdr, uhdrLen, tgtCntr, orgCntr, cmplCntr)
    if (rc !== 0) return rc
    if (typeof udataLen !== 'number' || !Number.isInteger(udataLen) || udataLen < 0 || udataLen > 0x7fffffff) return S.ERR_DATA_LEN
    rc = this.checks.checkLocal(udata, udataLen)
    if (rc !== 0) return rc
    const hidx = this.sendHandler
    const id = this.nextMessage(tgt)
    if (uhdrLen + udataLen <= this.shortRoom && udataLen <= this.shortData && LITTLE_ENDIAN) {
      // the whole message in one SHORT packet (sendShort declined it: a send-completion handler, a
      // function for a handler, a full ring; or the test transport)
      const off = out.beginBody(tgt)
      const dv = out.wdv
      dv.setUint32(off, SHORT_WORD0, true)
      dv.setUint32(off + S_SRC, c.taskId, true)
      dv.setUint32(off + S_LENS, (uhdrLen + udataLen) | (uhdrLen << 16), true)
      dv.setUint32(off + S_MSG_ID, id, true)
      dv.setUint32(off + S_HANDLER, hidx, true)
      dv.setUint32(off + S_TGT_CNTR, tgtCntr ?? 0, true)
      dv.setUint32(off + S_CMPL_CNTR, cmplCntr ?? 0, true)
      if (uhdrLen > 0) out.copyIn(out.wu8, off + SHORT_HEADER_BYTES, uhdr, 0, uhdrLen)
      if (udataLen > 0) out.copyIn(out.wu8, off + SHORT_HEADER_BYTES + uhdrLen, udata, 0, udataLen)
      out.endPacket()
      out.sendDone(tgt, orgCntr ?? 0, shdlr, sinfo)
      return S.SUCCESS
    }
    const rndv = udataLen > c.config.rndvThreshold
    // A rendezvous is pulled by the target straight from this task's segment: from the caller's
    // Addr, or from a staging copy of a Uint8Array (then the caller's buffer is free at once). When
    // no staging room is left, the target asks for the data with CTS instead.
    let pullSrc = -1
    let staged = 0
    // (a task of another process cannot pull from here: it asks with CTS, the data goes on the wire once)
    if (rndv && c.local[tgt] === 1) {
      if (typeof udata === 'number') pullSrc = udata
      else {
        staged = c.mem.alloc(udataLen)
        if (staged !== 0) {
          copyBuf(c.seg.u8[c.taskId]!, staged, udata!, 0, udataLen, false)
          pullSrc = staged
        }
      }
    }
    const pull = pullSrc >= 0
    const room = this.maxPkt - uhdrLen
    const first = rndv ? 0 : udataLen < room ? udataLen : room
    const off = out.beginPacket(tgt)
    out.writeHead(
      off,
      rndv ? (pull ? F_RNDV | F_PULL : F_RNDV) : 0,
      uhdrLen + first,
      id,
      udataLen,
      hidx,
      uhdrLen,
      tgtCntr ?? 0,
      cmplCntr ?? 0,
      pull ? pullSrc : 0,
      pull && staged === 0 && shdlr === null ? (orgCntr ?? 0) : 0,
      0,
    )
    if (uhdrLen > 0) out.copyIn(out.wu8, off + PACKET_HEADER_BYTES, uhdr, 0, uhdrLen)
    if (first > 0) out.copyIn(out.wu8, off + PACKET_HEADER_BYTES + uhdrLen, udata, 0, first)
    // (a rendezvous to another process: its data waits for the target's CTS, so the request goes
    // at once, not held back for a burst, which would also wake the agent to write it)
    const urgent = rndv && c.local[tgt] === 0 ? c.net : null
    urgent?.holdSends()
    out.endPacket()
    urgent?.releaseSends()
    if (rndv) {
      if (staged !== 0) {
        // the caller's buffer is free now; the staging copy goes when the target has pulled it
        out.sendDone(tgt, orgCntr ?? 0, shdlr, sinfo)
        this.rndv.addPending(tgt, id, null, udataLen, 0, null, null, staged)
      } else {
        // pulled from the caller's Addr, or sent on CTS. A pull without a send-completion handler
        // has the target bump the origin counter; with one, PULLED does both here, handler first
        this.rndv.addPending(tgt, id, udata, udataLen, orgCntr ?? 0, shdlr, sinfo, 0)
      }
      return S.SUCCESS
    }
    out.sendData(tgt, id, first, udataLen, 1, udata, null, null)
    out.sendDone(tgt, orgCntr ?? 0, shdlr, sinfo)
    return S.SUCCESS
  }

  /** LAPI_Amsendv / the AMV member of LAPI_Xfer: gathers `orgVec` into packets (always eager). */
  amsendv(
    tgt: number,
    hdr: number | HandlerFn | null,
    uhdr: LocalBuf,
    uhdrLen: number,
    orgVec: lapi_vec_t | null,
    tgtCntr: Addr,
    orgCntr: Addr,
    cmplCntr: Addr,
    shdlr: scompl_hndlr_t | null,
    sinfo: unknown,
  ): number {
    let rc = this.checkSend(tgt, hdr, uhdr, uhdrLen, tgtCntr, orgCntr, cmplCntr)
    if (rc !== 0) return rc
    rc = this.checks.checkOneVec(orgVec, true)
    if (rc !== 0) return rc
    const out = this.out
    const v = orgVec!
    const strided = v.vec_type === VecType.LAPI_GEN_STRIDED_XFER
    const descLen = strided ? 8 : 4 * v.num_vecs
    if (uhdrLen + descLen > this.maxPkt) return S.ERR_ORG_VEC_LEN
    const total = vecBytes(v)
    if (total > 0x7fffffff) return S.ERR_DATA_LEN
    const hidx = this.sendHandler
    const id = this.nextMessage(tgt)
    const offsets = pieceOffsets(v)
    const room = this.maxPkt - uhdrLen - descLen
    const first = total < room ? total : room
    const off = out.beginPacket(tgt)
    out.writeHead(off, F_AMV, uhdrLen + descLen + first, id, total, hidx, uhdrLen, tgtCntr ?? 0, cmplCntr ?? 0, v.vec_type, v.num_vecs, descLen)
    const dv = out.wdv
    let p = off + PACKET_HEADER_BYTES
    if (uhdrLen > 0) out.copyIn(out.wu8, p, uhdr, 0, uhdrLen)
    p += uhdrLen
    if (strided) {
      dv.setUint32(p, v.num_vecs, true)
      dv.setUint32(p + 4, v.info[1] as number, true)
    } else {
      for (let i = 0; i < v.num_vecs; i++) dv.setUint32(p + 4 * i, v.len![i]!, true)
    }
    p += descLen
    if (first > 0) out.gather(v, offsets, 0, out.wu8, p, first)
    out.endPacket()
    out.sendData(tgt, id, first, total, 1, null, v, offsets)
    out.sendDone(tgt, orgCntr ?? 0, shdlr, sinfo)
    return S.SUCCESS
  }

  /** The handler index the last successful checkSend resolved. */
  private sendHandler = 0

  /** The checks every active-message send makes; 0 or the LAPI code. Sets `sendHandler`. */
  private checkSend(tgt: number, hdr: number | HandlerFn | null, uhdr: LocalBuf, uhdrLen: number, tgtCntr: Addr, orgCntr: Addr, cmplCntr: Addr): number {
    const k = this.checks
    if (this.c.inHeaderHandler) return S.ERR_POLLING_NET
    let rc = k.checkTarget(tgt)
    if (rc !== 0) return rc
    const hidx = this.handlerIndex(hdr)
    if (hidx <= 0) return S.ERR_HDR_HNDLR_NULL
    rc = this.checkUhdr(uhdr, uhdrLen)
    if (rc !== 0) return rc
    if (!k.isCounterOpt(tgtCntr) || !k.isCounterOpt(orgCntr) || !k.isCounterOpt(cmplCntr)) return S.ERR_CNTR_NULL
    this.sendHandler = hidx
    return 0
  }

  /** A new message id to `tgt`, counted as outstanding until its data has landed there. */
  private nextMessage(tgt: number): number {
    const id = this.nextId[tgt]!
    this.nextId[tgt] = id + 1
    this.outbox[tgt]!.markSent()
    return id
  }

  private handlerIndex(hdr: number | HandlerFn | null): number {
    if (typeof hdr === 'function') return this.table.indexOfHandler(hdr)
    if (typeof hdr === 'number' && Number.isInteger(hdr) && hdr > 0 && hdr < this.table.ranges.size) return hdr
    return -1
  }

  private checkUhdr(uhdr: LocalBuf, uhdrLen: number): number {
    if (typeof uhdrLen !== 'number' || !Number.isInteger(uhdrLen) || uhdrLen < 0 || uhdrLen > this.c.config.maxUhdrSz) return S.ERR_UHDR_LEN
    if ((uhdrLen & 7) !== 0) return S.ERR_UHDR_LEN
    if (uhdrLen > 0 && (uhdr === null || uhdr === undefined || uhdr === 0)) return S.ERR_UHDR_NULL
    if (uhdrLen === 0) return 0
    const rc = this.checks.checkLocal(uhdr, uhdrLen)
    return rc === S.ERR_ORG_ADDR_NULL ? S.ERR_UHDR_NULL : rc
  }
}
