/**
 * The receive side (a layer of the runtime: runtime.ts): am2's LAPI header handler and its
 * in-place receiver of one-packet messages, which it registers in LAPI's handler table. They read
 * every arriving message (compact or full header, packed payload or LAPI data), check it in
 * AMUDP's order (tag, handler, length and segment, sender) and queue its token on the receiving
 * bundle: ready at once, or pending until its LAPI data has landed (the Medium's buffer, the
 * endpoint's segment). A refused message is queued to go back; a reply or a returned request frees
 * its request's instance; a reply that arrives while its own bundle drives the dispatcher runs its
 * handler at once, without the queue (no other handler runs from here).
 */
import { RetFlag, type Addr, type Lapi, type lapi_return_info_t, type Ref } from '@amlapi/lapi'
import { AM_MAX_SHORT, AmFault } from './constants.js'
import * as copy from './copy.js'
import { Invoker } from './invoke.js'
import type { Endpoint, Token } from './objects.js'
import * as types from './types.js'
import {
  CAT_LONG,
  CAT_MASK,
  CAT_MEDIUM,
  CAT_SHORT,
  COMPACT_MAX_ARGS,
  HDR_BYTES,
  K_AUTO,
  K_COMPACT,
  K_GET,
  K_PACKED,
  K_REQUEST,
  K_RETURNED,
  O_ARGS,
  O_DST,
  O_HANDLER,
  O_KIND,
  O_NARGS,
  O_NBYTES,
  O_OFF,
  O_OFF2,
  O_SLOT,
  O_SRC,
  O_STATUS,
  O_TAG_HI,
  O_TAG_LO,
  COMPACT_WORDS,
  CW_SLOT,
  HW_ENDPOINTS,
  HW_NBYTES,
  HW_OFF,
  HW_OFF2,
  HW_SLOT,
  HW_TAG_HI,
  HW_TAG_LO,
  compactBytes,
  compactBytesFor,
  compactPayloadAt,
  headerBytes,
} from './wire.js'

// What this file reads of types.ts and copy.ts, as module constants: TurboFan folds a module's own
// constants into the code that reads them, but loads an imported binding from its cell, with a
// hole check, at every use (the per-message paths read these).
const { copyBytes, emptyBuf, views } = copy
const { MAX_LONG, MAX_MEDIUM, MAX_NEST, SLOT_MSG, T_QUEUED, T_REPLY } = types

/** The arriving messages of this task. */
export class Receiver extends Invoker {
  /** am2's handle in LAPI's handler table (the message slot). */
  protected readonly hMsg: number
  /** LAPI's completion handler of a message with LAPI data: its token is ready. */
  protected readonly onComplete: (h: number, info: unknown) => void
  /** The token `receive` left pending (waiting for its data), for deliverLocal and onShortData. */
  protected lastPending: Token | null = null
  private rdvBuf: ArrayBufferLike | null = null
  private rdv: DataView | null = null
  private rdvU8: Uint8Array | null = null

  constructor(lapi: Lapi) {
    super(lapi)
    this.onComplete = (_h: number, info: unknown) => {
      const t = info as Token
      if (t.state === T_QUEUED) t.queue!.markReady(t.node)
    }
    this.hMsg = lapi.setLibraryHandler(
      SLOT_MSG,
      (_h: number, uhdr: Uint8Array, uhdrLen: number, info: lapi_return_info_t, comp: Ref<unknown>, uinfo: Ref<unknown>) =>
        this.onMessage(uhdr, uhdrLen, info, comp, uinfo),
    )
    // one-packet LAPI messages (compact headers, full ones, with or without LAPI data; little-endian hosts only) are read in place
    lapi.setLibraryShortHandler(SLOT_MSG, (w, a, uhdrLen, dataLen, src) => this.onShortMessage(w, a, uhdrLen, dataLen, src))
  }

  /**
   * `u8.byteOffset`, kept for the last array asked about: reading it is a call in Node 20 (~11 ns),
   * and the arrays are the same few (LAPI's header scratch views, the inbox).
   */
  private offOf(u8: Uint8Array): number {
    if (u8 !== this.offU8) {
      this.offU8 = u8
      this.offVal = u8.byteOffset
    }
    return this.offVal
  }

  private offU8: Uint8Array | null = null
  private offVal = 0

  /** A DataView of `u8`'s buffer (the last one made is kept). */
  protected dvOf(u8: Uint8Array): DataView {
    // keyed by the array first: `.buffer` is a call into the runtime in Node 20 (LAPI hands its
    // header handlers the same few scratch views, and a typed array never changes its buffer)
    if (u8 === this.rdvU8) return this.rdv!
    this.rdvU8 = u8
    if (u8.buffer !== this.rdvBuf) {
      this.rdvBuf = u8.buffer
      this.rdv = new DataView(u8.buffer)
    }
    return this.rdv!
  }

  /** am2's LAPI header handler. */
  private onMessage(uhdr: Uint8Array, uhdrLen: number, info: lapi_return_info_t, comp: Ref<unknown>, uinfo: Ref<unknown>): Uint8Array | Addr | null {
    if (uhdrLen < HDR_BYTES) return null
    const landing = this.receive(uhdr, this.dvOf(uhdr), this.offOf(uhdr), uhdrLen, info.src, info.msg_len, comp, uinfo, true)
    if (landing !== null) info.ret_flags = RetFlag.LAPI_SEND_REPLY
    return landing
  }

  /**
   * am2's in-place receiver of LAPI's one-packet messages (Lapi.setLibraryShortHandler), read
   * straight from the packet's slot: a Short under the compact header (onCompact), a Medium or Long
   * under it (onCompactData), a full header without arguments or payload (32 bytes) by words, any
   * other full header (arguments, a packed payload) through the byte views of the inbox, as the
   * header handler reads its copy, and a full header with LAPI data behind it (an unpacked
   * payload that fits one packet: onShortData). The words are the little-endian layout of wire.ts
   * (LAPI uses such packets on little-endian hosts only).
   */
  private onShortMessage(w: Int32Array, a: number, uhdrLen: number, dataLen: number, src: number): void {
    const w0 = w[a]!
    if ((w0 & K_COMPACT) !== 0) {
      this.onCompact(w, a, w0, uhdrLen, dataLen, src)
      return
    }
    const nargs = (w0 >>> 16) & 0xff
    if (uhdrLen < HDR_BYTES) return
    if (dataLen !== 0) {
      this.onShortData(w, a, uhdrLen, dataLen, src)
      return
    }
    if (nargs !== 0 || uhdrLen !== HDR_BYTES) {
      // (a header that claims more than the packet holds is dropped there, as by the header handler)
      const u8 = this.inboxU8Of(w)
      this.receive(u8, this.ipView!, 4 * a, uhdrLen, src, 0, null, null, true)
      return
    }
    // a header alone: with nothing behind it, no payload is ever read from the packet (`accept`
    // gets no byte view)
    const kind = w0 & 0xff
    const t = this.wordToken(w, a, w0, kind & ~K_PACKED, 0, (kind & K_RETURNED) !== 0 ? w0 >>> 24 : 0, src)
    t.nbytes = w[a + HW_NBYTES]! >>> 0
    t.slot = w[a + HW_SLOT]!
    t.off = w[a + HW_OFF]! >>> 0
    t.off2 = w[a + HW_OFF2]! >>> 0
    this.accept(t, kind, null, 4 * a + HDR_BYTES, 4 * a + uhdrLen, 0, null, null, true)
  }

  /**
   * A full header with its payload as LAPI data in the same packet (an unpacked Medium or Long, or
   * a GetXfer's data, of at most a packet): checked and queued as by the header handler, then the
   * data is copied from the packet into its landing place (the Medium's buffer, the segment) and
   * the token is ready, with no LAPI landing copy and no completion handler.
   */
  private onShortData(w: Int32Array, a: number, uhdrLen: number, dataLen: number, src: number): void {
    const u8 = this.inboxU8Of(w)
    const landing = this.receive(u8, this.ipView!, 4 * a, uhdrLen, src, dataLen, null, null, true)
    const t = this.lastPending
    this.lastPending = null
    if (landing === null || t === null) return
    // (accept checked that the data is the payload the header announces, and where it lands)
    const from = 4 * a + uhdrLen
    if (typeof landing === 'number') copyBytes(this.segAll, landing, u8, from, dataLen)
    else copyBytes(landing, 0, u8, from, dataLen)
    this.onComplete(0, t)
  }

  /**
   * The inbox's bytes, and `ipView` its DataView (made once: LAPI hands in-place receivers one
   * Int32Array per inbox; not through dvOf, whose one entry the header handler's views keep).
   */
  private inboxU8Of(w: Int32Array): Uint8Array {
    if (w !== this.ipWords) {
      this.ipWords = w
      this.ipBytes = new Uint8Array(w.buffer)
      this.ipView = new DataView(w.buffer)
    }
    return this.ipBytes!
  }

  private ipWords: Int32Array | null = null
  private ipBytes: Uint8Array | null = null
  private ipView: DataView | null = null

  /**
   * A token for a header read by words at word `a` of `w` (`w0` its first word): the fields the
   * full and the compact layout share (kind word, endpoints, tag); the caller reads the rest.
   */
  private wordToken(w: Int32Array, a: number, w0: number, kind: number, nargs: number, status: number, src: number): Token {
    const t = this.takeToken()
    t.kind = kind
    t.handler = (w0 >>> 8) & 0xff
    t.nargs = nargs
    t.status = status
    t.fault = 0
    t.srcTask = src
    // (the compact header has these three at the same words: CW_ENDPOINTS, CW_TAG_LO, CW_TAG_HI)
    const w1 = w[a + HW_ENDPOINTS]!
    t.dstId = w1 & 0xffff
    t.srcId = w1 >>> 16
    t.tagLo = w[a + HW_TAG_LO]! >>> 0
    t.tagHi = w[a + HW_TAG_HI]! >>> 0
    t.peer = -1
    return t
  }

  /**
   * A Short with the compact header (wire.ts), read by words where it lies, like onShortMessage
   * (a Medium or Long: onCompactData). Anything else with K_COMPACT (LAPI data, a flag a compact
   * header never has, a length that does not match its arguments) is dropped.
   */
  private onCompact(w: Int32Array, a: number, w0: number, uhdrLen: number, dataLen: number, src: number): void {
    const nargs = (w0 >>> 16) & 0xff
    const kind = w0 & 0xff & ~K_COMPACT
    if ((kind & CAT_MASK) !== CAT_SHORT) {
      this.onCompactData(w, a, w0, uhdrLen, dataLen, src)
      return
    }
    if (dataLen !== 0 || nargs > COMPACT_MAX_ARGS || uhdrLen !== compactBytes(nargs) || (kind & (K_GET | K_RETURNED | K_PACKED)) !== 0) return
    const t = this.wordToken(w, a, w0, kind, nargs, 0, src)
    t.nbytes = 0
    t.slot = w[a + CW_SLOT]!
    t.off = 0
    t.off2 = 0
    const args = t.args
    for (let i = 0; i < nargs; i++) args[i] = w[a + COMPACT_WORDS + i]!
    // (nothing follows the header: the payload's start and the message's end are one place)
    const end = 4 * a + uhdrLen
    this.accept(t, kind, null, end, end, 0, null, null, true)
  }

  /**
   * A Medium or Long with the compact header, read like onCompact; its payload is read from the
   * packet by `accept`, as a packed one's. One with LAPI data, a flag a compact header never has, or
   * a length that does not match its arguments and payload count is dropped.
   */
  private onCompactData(w: Int32Array, a: number, w0: number, uhdrLen: number, dataLen: number, src: number): void {
    const nargs = (w0 >>> 16) & 0xff
    const kind = w0 & 0xff & ~K_COMPACT
    const cat = kind & CAT_MASK
    if (dataLen !== 0 || nargs > COMPACT_MAX_ARGS || cat === 3 || (kind & (K_GET | K_RETURNED | K_PACKED)) !== 0) return
    // (uhdrLen is at most a packet, so a count that does not match it cannot overflow the sum)
    const p = a + COMPACT_WORDS + nargs
    const nbytes = w[p]! >>> 0
    if (uhdrLen !== compactBytesFor(nargs, cat, nbytes)) return
    const t = this.wordToken(w, a, w0, kind, nargs, 0, src)
    t.nbytes = nbytes
    t.slot = w[a + CW_SLOT]!
    t.off = cat === CAT_LONG ? w[p + 1]! >>> 0 : 0
    t.off2 = 0
    const args = t.args
    for (let i = 0; i < nargs; i++) args[i] = w[a + COMPACT_WORDS + i]!
    const hb = 4 * a + compactPayloadAt(nargs, cat)
    this.accept(t, kind | K_PACKED, this.inboxU8Of(w), hb, hb + nbytes, 0, null, null, true)
  }

  /**
   * One arriving message (its header at `b` of `u8`): checks it and queues its token. Returns where
   * its LAPI data lands (then the token waits, pending, for `onComplete`), or null. `direct`: it
   * came through LAPI's dispatcher (the header handler, or the in-place receiver reading the
   * packet where it lies), so a reply may run at once (see `accept`).
   */
  protected receive(
    u8: Uint8Array,
    dv: DataView,
    b: number,
    len: number,
    src: number,
    dataLen: number,
    comp: Ref<unknown> | null,
    uinfo: Ref<unknown> | null,
    direct: boolean,
  ): Uint8Array | Addr | null {
    const nargs = u8[b + O_NARGS]!
    if (nargs > AM_MAX_SHORT || len < headerBytes(nargs)) return null
    const kind = u8[b + O_KIND]!
    // a compact header only travels in one-packet messages, which the in-place receiver reads
    if ((kind & K_COMPACT) !== 0) return null
    const t = this.fill(this.takeToken(), u8, dv, b, src, kind, nargs)
    return this.accept(t, kind, u8, b + headerBytes(nargs), b + len, dataLen, comp, uinfo, direct)
  }

  /**
   * The checks and the queueing of an arriving message read into token `t` (`kind`: its header's
   * kind byte, with K_PACKED when a payload follows in the packet; a packed payload starts at byte
   * `hb` of `u8`'s buffer and the message ends at byte `end`; `u8` is null only for a message with
   * nothing behind its header). `direct`: it came through LAPI's dispatcher, so a reply may run at
   * once. Returns where LAPI data lands (a message with `comp`), or null.
   */
  private accept(
    t: Token,
    kind: number,
    u8: Uint8Array | null,
    hb: number,
    end: number,
    dataLen: number,
    comp: Ref<unknown> | null,
    uinfo: Ref<unknown> | null,
    direct: boolean,
  ): Uint8Array | Addr | null {
    const nbytes = t.nbytes
    const ep = this.endpoints[t.dstId]
    const returned = (kind & K_RETURNED) !== 0
    if (ep === undefined) {
      // our endpoint is gone: a returned message is dropped (as AMUDP), and so is an automatic
      // reply, which the sender's program never sent and its handler 0 must not hear of
      if (returned || (kind & K_AUTO) !== 0) {
        this.release(t)
        return null
      }
      t.fault = AmFault.EBADENDPOINT
      this.returns.push(t)
      return null
    }
    t.ep = ep
    const src = t.srcTask
    if (returned) {
      // one of ours came back: free its instance, then handler 0
      if ((kind & K_REQUEST) !== 0) this.releaseSlot(ep, t.slot)
      t.peer = ep.peerOf(src * 65536 + t.srcId)
      this.enqueue(t, ep.bundle, true)
      return null
    }
    if ((kind & K_REQUEST) === 0) this.releaseSlot(ep, t.slot) // a reply is the acknowledgement
    // AMUDP's order: tag, handler, length/segment, sender
    const cat = kind & CAT_MASK
    if ((kind & K_AUTO) !== 0) {
      this.release(t) // the automatic reply runs no handler: freeing the instance was all of it
      return null
    }
    let fault = 0
    if (!ep.acceptsTag(t.tagLo, t.tagHi)) {
      fault = AmFault.EBADTAG
    } else if ((kind & K_GET) !== 0) {
      if (ep.segLen === 0) fault = AmFault.EBADSEGOFF
      else if (cat !== CAT_LONG || t.off2 + nbytes > ep.segLen) fault = AmFault.EBADLENGTH
    } else if (t.handler === 0 || ep.handlers[t.handler] === null) {
      fault = AmFault.EBADHANDLER
    } else if (cat === CAT_SHORT) {
      if (nbytes !== 0) fault = AmFault.EBADLENGTH
    } else if (cat === CAT_MEDIUM) {
      if (nbytes > MAX_MEDIUM) fault = AmFault.EBADLENGTH
    } else if (cat === CAT_LONG) {
      if (nbytes > MAX_LONG) fault = AmFault.EBADLENGTH
      else if (ep.segLen === 0) fault = nbytes === 0 ? 0 : AmFault.EBADSEGOFF
      else if (t.off + nbytes > ep.segLen) fault = AmFault.EBADLENGTH
    } else {
      fault = AmFault.EBADARGS
    }
    t.peer = ep.peerOf(src * 65536 + t.srcId)
    if (fault === 0 && t.peer < 0) fault = AmFault.EBADENDPOINT
    // unpacked: the LAPI data must be exactly the payload the header announces
    if (fault === 0 && (kind & (K_PACKED | K_GET)) === 0 && cat !== CAT_SHORT && dataLen !== nbytes) fault = AmFault.EBADLENGTH
    if (fault !== 0) {
      t.fault = fault
      this.enqueue(t, ep.bundle, true)
      return null
    }
    // (with nbytes > 0 the payload is packed behind the header in `u8`, which then is not null)
    if (
      (kind & K_REQUEST) === 0 &&
      this.direct === ep.bundle &&
      direct &&
      this.nest < MAX_NEST &&
      (nbytes === 0 || cat === CAT_SHORT || (kind & K_PACKED) !== 0) &&
      hb + nbytes <= end
    ) {
      this.runReplyNow(t, ep, cat === CAT_LONG ? null : nbytes === 0 ? emptyBuf : views.get(u8!, hb - this.offOf(u8!), nbytes), u8, hb)
      return null
    }
    if (nbytes === 0 || cat === CAT_SHORT || (kind & K_GET) !== 0) {
      this.enqueue(t, ep.bundle, true)
      return null
    }
    if ((kind & K_PACKED) !== 0) {
      if (hb + nbytes > end) {
        t.fault = AmFault.EBADLENGTH
        this.enqueue(t, ep.bundle, true)
        return null
      }
      const from = hb - this.offOf(u8!)
      if (cat === CAT_MEDIUM) copyBytes(this.bufferFor(t, nbytes), 0, u8!, from, nbytes)
      else copyBytes(ep.segU8!, t.off, u8!, from, nbytes)
      this.enqueue(t, ep.bundle, true)
      return null
    }
    // the payload follows as LAPI data: it lands, then the completion handler makes the token ready
    const landing: Uint8Array | Addr = cat === CAT_MEDIUM ? this.bufferFor(t, nbytes) : ep.segAddr >= 0 ? ep.segAddr + t.off : ep.segView(t.off, nbytes)
    this.enqueue(t, ep.bundle, false)
    if (comp !== null) {
      comp.value = this.onComplete
      uinfo!.value = t
    } else this.lastPending = t
    return landing
  }

  /**
   * Runs a reply handler from inside the LAPI header handler (the dispatcher runs on behalf of this
   * bundle): `buf` views the payload in the packet (a Long's is copied into the segment first).
   * Reply handlers cannot send, so nothing here re-enters LAPI. An error it throws is kept and
   * rethrown when the dispatcher returns (LAPI would report it as a header handler failure).
   */
  private runReplyNow(t: Token, ep: Endpoint, buf: Uint8Array | null, u8: Uint8Array | null, hb: number): void {
    if (buf === null) {
      if (t.nbytes > 0) ep.segU8!.set(views.get(u8!, hb - this.offOf(u8!), t.nbytes), t.off)
      buf = t.nbytes === 0 ? emptyBuf : ep.segView(t.off, t.nbytes)
    }
    const outer = this.running
    this.running = t
    this.nest++
    t.state = T_REPLY
    try {
      this.invokeWith(t, ep, buf)
    } catch (e) {
      this.handlerThrew(t, e)
      if (this.directError === null) this.directError = e
    } finally {
      this.nest--
      this.running = outer
      this.directRuns++
      this.release(t)
    }
  }

  /** Reads the header into token `t` (its endpoint is set by `accept`). */
  private fill(t: Token, u8: Uint8Array, dv: DataView, b: number, src: number, kind: number, nargs: number): Token {
    t.kind = kind & ~K_PACKED
    t.handler = u8[b + O_HANDLER]!
    t.nargs = nargs
    t.status = (kind & K_RETURNED) !== 0 ? u8[b + O_STATUS]! : 0
    t.fault = 0
    t.srcTask = src
    t.srcId = dv.getUint16(b + O_SRC, true)
    t.dstId = dv.getUint16(b + O_DST, true)
    t.tagLo = dv.getUint32(b + O_TAG_LO, true)
    t.tagHi = dv.getUint32(b + O_TAG_HI, true)
    t.nbytes = dv.getUint32(b + O_NBYTES, true)
    t.slot = dv.getInt32(b + O_SLOT, true)
    t.off = dv.getUint32(b + O_OFF, true)
    t.off2 = dv.getUint32(b + O_OFF2, true)
    t.peer = -1
    const a = t.args
    for (let i = 0; i < nargs; i++) a[i] = dv.getInt32(b + O_ARGS + 4 * i, true)
    return t
  }
}
