/**
 * The send side on the wire (a layer of the runtime: runtime.ts): writes an AM-2 message
 * (request, reply, automatic reply, GetXfer data, returned message) and hands it to LAPI the
 * cheapest way it fits: under the compact header or a full one written by words straight into a
 * one-packet LAPI message, packed (the payload behind the header in the LAPI user header), or with
 * the payload as LAPI data; a message to an endpoint of this task goes through the receive side
 * without LAPI. What may be sent (the checks, flow control) is decided above, in request.ts and
 * poll.ts.
 */
import { Query, WaitCall, type Lapi } from '@amlapi/lapi'
import { AmStatus } from './constants.js'
import * as copy from './copy.js'
import type { Endpoint, Token } from './objects.js'
import { Receiver } from './receive.js'
import {
  CAT_LONG,
  CAT_MASK,
  CAT_SHORT,
  COMPACT_MAX_ARGS,
  HDR_BYTES,
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
  CW_ENDPOINTS,
  CW_KIND,
  CW_SLOT,
  CW_TAG_HI,
  CW_TAG_LO,
  HDR_WORDS,
  HW_ENDPOINTS,
  HW_KIND,
  HW_NBYTES,
  HW_OFF,
  HW_OFF2,
  HW_SLOT,
  HW_TAG_HI,
  HW_TAG_LO,
  compactBytes,
  compactPayloadAt,
  headerBytes,
} from './wire.js'

// What this file reads of types.ts and copy.ts, as module constants: TurboFan folds a module's own
// constants into the code that reads them, but loads an imported binding from its cell, with a
// hole check, at every use (the per-message paths read these).
const { copyBytes, views } = copy

const S = AmStatus

/** The sends of this task. */
export class Sender extends Receiver {
  readonly maxUhdr: number
  /** LAPI's MAX_PKT_SZ: a header and an unpacked payload within it may go as one prepared packet. */
  private readonly maxPkt: number
  private readonly sendU8: Uint8Array
  private readonly sendDv: DataView
  private orgExpected = 0
  private readonly orgCond: () => boolean

  constructor(lapi: Lapi) {
    super(lapi)
    this.maxUhdr = lapi.query(Query.MAX_UHDR_SZ)
    this.maxPkt = lapi.query(Query.MAX_PKT_SZ)
    this.sendU8 = new Uint8Array(this.maxUhdr)
    this.sendDv = new DataView(this.sendU8.buffer)
    this.orgCond = () => Atomics.load(this.orgI32, 0) >= this.orgExpected
  }

  /** The largest payload that travels packed behind a header with `nargs` arguments. */
  packedLimit(nargs: number): number {
    return this.maxUhdr - headerBytes(nargs)
  }

  /**
   * Writes the header and sends: packed into the LAPI user header when it fits, else as LAPI data;
   * to an endpoint of this task, straight into its queue. `dataLen` is the payload that travels,
   * `nbytes` the header's byte count (they differ for a GetXfer request, which carries none).
   */
  protected send(
    ep: Endpoint,
    task: number,
    id: number,
    tagLo: number,
    tagHi: number,
    kind: number,
    handler: number,
    nargs: number,
    args: Int32Array,
    src: unknown,
    dataLen: number,
    getBytes: number,
    off: number,
    off2: number,
    slot: number,
  ): number {
    const u8 = this.sendU8
    const dv = this.sendDv
    const hb = headerBytes(nargs)
    const local = task === this.taskId
    // a reply (or a GetXfer's data) to a task that has left the job has nobody to reach: drop it
    if (!local && (kind & K_REQUEST) === 0 && !this.lapi.taskAliveHint(task)) return S.OK
    // a Short, and a packed Medium or Long (a payload within packedLimit: the boundary is the full
    // header's, whichever header the message goes with), under the compact header; and a header
    // alone without arguments (32 bytes): written straight into a one-packet LAPI message. (The
    // Short has its own branch and function, the same as before Mediums and Longs took this way:
    // sharing them, the Short's round trip measured 6 % longer, its code no longer compiled whole.)
    if (!local && getBytes === 0) {
      if ((kind & (CAT_MASK | K_GET | K_RETURNED)) === CAT_SHORT) {
        if (nargs <= COMPACT_MAX_ARGS && this.sendCompact(task, kind, handler, nargs, args, id, ep.id, tagLo, tagHi, slot)) return S.OK
      } else if ((kind & (K_GET | K_RETURNED)) === 0 && nargs <= COMPACT_MAX_ARGS && dataLen <= this.packedLimit(nargs)) {
        if (this.sendCompactData(task, kind, handler, nargs, args, id, ep.id, tagLo, tagHi, slot, src, dataLen, off)) return S.OK
      } else if (dataLen === 0 && nargs === 0 && this.sendPrepared(task, kind, handler, id, ep.id, tagLo, tagHi, slot, off, off2)) {
        return S.OK
      } else if (
        (kind & K_RETURNED) === 0 &&
        dataLen > 0 &&
        hb + dataLen <= this.maxPkt &&
        this.sendPreparedData(task, kind, handler, nargs, args, id, ep.id, tagLo, tagHi, slot, src, dataLen, off, off2)
      ) {
        return S.OK
      }
    }
    const packed = dataLen === 0 || (dataLen <= this.packedLimit(nargs) && (kind & K_GET) === 0)
    if (packed && dataLen > 0) kind |= K_PACKED
    this.writeHeader(kind, handler, nargs, 0, id, ep.id, tagLo, tagHi, dataLen + getBytes, slot, off, off2, args)
    let len = hb
    if (packed && dataLen > 0) {
      this.copyFrom(u8, hb, src, dataLen)
      len = (hb + dataLen + 7) & ~7
    }
    if (local) {
      this.deliverLocal(u8, dv, len, packed ? null : src, packed ? 0 : dataLen)
      return S.OK
    }
    if (packed) {
      const rc = this.lapi.amsendCode(task, this.hMsg, u8, len, null, 0, 0)
      return rc === 0 ? S.OK : S.ERR_RESOURCE
    }
    // the payload as LAPI data: make sure the caller may reuse `src` when we return
    let data = src as Uint8Array | number
    if (data instanceof Uint8Array && data.buffer === this.segBuffer) data = data.byteOffset
    if (Atomics.load(this.orgI32, 0) === this.orgExpected && this.orgExpected > 1 << 30) {
      Atomics.store(this.orgI32, 0, 0)
      this.orgExpected = 0
    }
    this.orgExpected++
    const rc = this.lapi.amsendCode(task, this.hMsg, u8, len, data, dataLen, this.orgCntr)
    if (rc !== 0) {
      this.orgExpected--
      return S.ERR_RESOURCE
    }
    if (Atomics.load(this.orgI32, 0) < this.orgExpected) this.lapi.waitUntil(this.orgCond, WaitCall.AM_REQUEST_BUFFER)
    return S.OK
  }

  /**
   * A message that is its header alone (no arguments, no payload: 32 bytes), written by words
   * straight into a one-packet LAPI message (Lapi.prepareShort/commitShort: no staging copy). The
   * words are the little-endian layout of wire.ts (the path exists on little-endian hosts only).
   * Returns false when LAPI could not take it this way (nothing was sent).
   */
  private sendPrepared(
    task: number,
    kind: number,
    handler: number,
    dstId: number,
    srcId: number,
    tagLo: number,
    tagHi: number,
    slot: number,
    off: number,
    off2: number,
  ): boolean {
    const lapi = this.lapi
    const at = lapi.prepareShort(task, this.hMsg, HDR_BYTES)
    if (at < 0) return false
    const w = lapi.preparedWords
    w[at + HW_KIND] = kind | (handler << 8) // O_NARGS 0, O_STATUS 0
    w[at + HW_ENDPOINTS] = dstId | (srcId << 16)
    w[at + HW_TAG_LO] = tagLo
    w[at + HW_TAG_HI] = tagHi
    w[at + HW_NBYTES] = 0
    w[at + HW_SLOT] = slot
    w[at + HW_OFF] = off
    w[at + HW_OFF2] = off2
    return lapi.commitShort()
  }

  /**
   * An unpacked Medium or Long (or a GetXfer's data) that fits one LAPI packet with its full
   * header: the header and arguments written by words and the `nbytes` of payload from `src` (a
   * checked Uint8Array, or an address in this task's segment) copied straight into the packet as
   * its LAPI data (Lapi.prepareShortData): no staging copy of the header, and the caller's memory is
   * free once this returns (the copy is done), so no origin counter either. Returns false when LAPI
   * could not take it this way (nothing was sent).
   */
  private sendPreparedData(
    task: number,
    kind: number,
    handler: number,
    nargs: number,
    args: Int32Array,
    dstId: number,
    srcId: number,
    tagLo: number,
    tagHi: number,
    slot: number,
    src: unknown,
    nbytes: number,
    off: number,
    off2: number,
  ): boolean {
    const lapi = this.lapi
    const hb = headerBytes(nargs)
    const at = lapi.prepareShortData(task, this.hMsg, hb, nbytes)
    if (at < 0) return false
    const w = lapi.preparedWords
    w[at + HW_KIND] = kind | (handler << 8) | (nargs << 16) // O_STATUS 0
    w[at + HW_ENDPOINTS] = dstId | (srcId << 16)
    w[at + HW_TAG_LO] = tagLo | 0
    w[at + HW_TAG_HI] = tagHi | 0
    w[at + HW_NBYTES] = nbytes | 0
    w[at + HW_SLOT] = slot | 0
    w[at + HW_OFF] = off | 0
    w[at + HW_OFF2] = off2 | 0
    for (let i = 0; i < nargs; i++) w[at + HDR_WORDS + i] = args[i]!
    if ((nargs & 1) !== 0) w[at + HDR_WORDS + nargs] = 0 // padding to a multiple of 8
    this.copyFrom(lapi.preparedBytes, 4 * at + hb, src, nbytes)
    return lapi.commitShort()
  }

  /**
   * A Short of at most COMPACT_MAX_ARGS arguments with the compact header (wire.ts), written by
   * words straight into a one-packet LAPI message, like sendPrepared. Returns false when LAPI
   * could not take it this way (nothing was sent).
   */
  private sendCompact(
    task: number,
    kind: number,
    handler: number,
    nargs: number,
    args: Int32Array,
    dstId: number,
    srcId: number,
    tagLo: number,
    tagHi: number,
    slot: number,
  ): boolean {
    const lapi = this.lapi
    const at = lapi.prepareShort(task, this.hMsg, compactBytes(nargs))
    if (at < 0) return false
    const w = lapi.preparedWords
    w[at + CW_KIND] = kind | K_COMPACT | (handler << 8) | (nargs << 16)
    w[at + CW_ENDPOINTS] = dstId | (srcId << 16)
    // (| 0: an int32 goes into the word as it is; a number V8 cannot prove one would take a
    // conversion through a double)
    w[at + CW_TAG_LO] = tagLo | 0
    w[at + CW_TAG_HI] = tagHi | 0
    w[at + CW_SLOT] = slot | 0
    for (let i = 0; i < nargs; i++) w[at + COMPACT_WORDS + i] = args[i]!
    if ((nargs & 1) === 0) w[at + COMPACT_WORDS + nargs] = 0 // padding to a multiple of 8
    return lapi.commitShort()
  }

  /**
   * A Medium or Long (`kind`) with the compact header (wire.ts): its arguments, its `nbytes` of
   * payload from `src` (a checked Uint8Array, or an address in this task's segment) and a Long's
   * destination offset `off`, written straight into a one-packet LAPI message like sendCompact (the
   * payload from the caller's memory into the packet: no staging copy). Returns false when LAPI
   * could not take it this way (nothing was sent).
   */
  private sendCompactData(
    task: number,
    kind: number,
    handler: number,
    nargs: number,
    args: Int32Array,
    dstId: number,
    srcId: number,
    tagLo: number,
    tagHi: number,
    slot: number,
    src: unknown,
    nbytes: number,
    off: number,
  ): boolean {
    const lapi = this.lapi
    const cat = kind & CAT_MASK
    const pay = compactPayloadAt(nargs, cat)
    const bytes = (pay + nbytes + 7) & ~7
    const at = lapi.prepareShort(task, this.hMsg, bytes)
    if (at < 0) return false
    const w = lapi.preparedWords
    w[at + CW_KIND] = kind | K_COMPACT | (handler << 8) | (nargs << 16)
    w[at + CW_ENDPOINTS] = dstId | (srcId << 16)
    w[at + CW_TAG_LO] = tagLo | 0
    w[at + CW_TAG_HI] = tagHi | 0
    w[at + CW_SLOT] = slot | 0
    for (let i = 0; i < nargs; i++) w[at + COMPACT_WORDS + i] = args[i]!
    const p = at + COMPACT_WORDS + nargs
    w[p] = nbytes | 0
    if (cat === CAT_LONG) w[p + 1] = off | 0
    const q = at + (pay >> 2)
    if (q > p + (cat === CAT_LONG ? 2 : 1)) w[q - 1] = 0 // the padding before the payload
    // the words the payload ends in are zeroed first: its last bytes overwrite them, the rest is padding
    const end = at + (bytes >> 2)
    for (let k = q + (nbytes >> 2); k < end; k++) w[k] = 0
    if (nbytes > 0) this.copyFrom(lapi.preparedBytes, 4 * q, src, nbytes)
    return lapi.commitShort()
  }

  /**
   * Copies the `n` bytes of a checked payload source `src` (an address in this task's segment, or
   * a Uint8Array from its start) into `d8` at `d`, a buffer that cannot overlap it (the staging
   * buffer, a packet).
   */
  private copyFrom(d8: Uint8Array, d: number, src: unknown, n: number): void {
    if (typeof src === 'number') copyBytes(d8, d, this.segAll, src, n)
    else copyBytes(d8, d, src as Uint8Array, 0, n)
  }

  /** A message to an endpoint of this task: through the same receive path, without LAPI. */
  private deliverLocal(u8: Uint8Array, dv: DataView, len: number, src: unknown, dataLen: number): void {
    const landing = this.receive(u8, dv, 0, len, this.taskId, dataLen, null, null, false)
    const t = this.lastPending
    this.lastPending = null
    if (landing === null || t === null) return
    if (dataLen > 0) {
      const from = typeof src === 'number' ? views.get(this.segAll, src, dataLen) : views.get(src as Uint8Array, 0, dataLen)
      if (typeof landing === 'number') this.segAll.set(from, landing)
      else landing.set(from)
    }
    this.onComplete(0, t)
  }

  /** Sends a refused message back to its sender (header and arguments), marked returned with its status. */
  protected sendReturn(t: Token): void {
    const len = this.writeHeader(t.kind | K_RETURNED, t.handler, t.nargs, t.fault, t.srcId, t.dstId, t.tagLo, t.tagHi, t.nbytes, t.slot, t.off, t.off2, t.args)
    if (t.srcTask === this.taskId) {
      this.deliverLocal(this.sendU8, this.sendDv, len, null, 0)
      return
    }
    if (!this.lapi.taskAlive(t.srcTask)) return
    this.lapi.amsendCode(t.srcTask, this.hMsg, this.sendU8, len, null, 0, 0)
  }

  /**
   * Writes the AM-2 header and the arguments into the send buffer (wire.ts); returns their bytes
   * (a multiple of 8: an odd argument count is followed by 4 zero bytes).
   */
  private writeHeader(
    kind: number,
    handler: number,
    nargs: number,
    status: number,
    dstId: number,
    srcId: number,
    tagLo: number,
    tagHi: number,
    nbytes: number,
    slot: number,
    off: number,
    off2: number,
    args: Int32Array,
  ): number {
    const u8 = this.sendU8
    const dv = this.sendDv
    u8[O_KIND] = kind
    u8[O_HANDLER] = handler
    u8[O_NARGS] = nargs
    u8[O_STATUS] = status
    dv.setUint16(O_DST, dstId, true)
    dv.setUint16(O_SRC, srcId, true)
    dv.setUint32(O_TAG_LO, tagLo, true)
    dv.setUint32(O_TAG_HI, tagHi, true)
    dv.setUint32(O_NBYTES, nbytes, true)
    dv.setInt32(O_SLOT, slot, true)
    dv.setUint32(O_OFF, off, true)
    dv.setUint32(O_OFF2, off2, true)
    for (let i = 0; i < nargs; i++) dv.setInt32(O_ARGS + 4 * i, args[i]!, true)
    const hb = headerBytes(nargs)
    if (hb > HDR_BYTES + 4 * nargs) dv.setUint32(HDR_BYTES + 4 * nargs, 0, true)
    return hb
  }
}
