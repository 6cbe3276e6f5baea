/**
 * The way out of the active-message layer for every packet of the common format (HEAD, DATA, CTS,
 * FIN, PULLED): reserves a slot of the target's ring (or a test-transport buffer), writes the
 * common header, copies the payload in from a local buffer or an origin vector, and publishes it.
 * A full ring is back-pressure: the send takes packets in from the own inbox meanwhile (so two
 * tasks sending to each other both drain) and waits for the target to free a slot. Also the
 * origin's completion of a send (`sendDone`: origin counter, send-completion handler).
 */
import { ErrClass, VecType } from '../base/constants.js'
import { copyBuf, copySeg } from '../base/copy.js'
import { TASK_STATE, TaskState, WAIT_RING, WaitCall, ringDoorbell, taskWord } from '../layout/control.js'
import {
  BODY_PACKET,
  PACKET_HEADER_BYTES,
  PACKET_VERSION,
  P_FLAGS,
  P_LEN,
  P_MSG_ID,
  P_MSG_LEN,
  P_OFFSET,
  P_SRC,
  P_TYPE,
  P_VERSION,
} from '../transport/packet.js'
import type { OutRing } from '../transport/ring.js'
import type { Rings } from '../core/rings.js'
import type { ContextState } from '../core/state.js'
import type { Progress } from '../core/types.js'
import type { Counters } from '../sync/counters.js'
import type { Idler } from '../sync/idle.js'
import type { UserCode } from '../sync/user-code.js'
import type { Addr, lapi_vec_t, LocalBuf, scompl_hndlr_t } from '../base/types.js'
import type { ChaosBuf, ChaosTransport } from './chaos.js'
import type { AmState } from './state.js'
import { findPiece } from './vectors.js'
import { D_COUNT, D_INDEX, H_CMPL_CNTR, H_DESC_LEN, H_HANDLER, H_TGT_CNTR, H_UHDR_LEN, H_VEC_NUM, H_VEC_TYPE, T_AM_DATA, T_AM_HEAD } from './wire.js'

export class Outgoing {
  private readonly s: ContextState
  private readonly a: AmState
  private readonly rings: Rings
  private readonly chaos: ChaosTransport
  private readonly counters: Counters
  private readonly user: UserCode
  private readonly idler: Idler
  /**
   * The dispatcher, which a send blocked on a full ring runs to take packets in (`waitForSlot`);
   * built after this part (`attach`). The field exists, as null, from the start, so that attaching
   * it changes no object's shape.
   */
  private dispatcher: Progress | null = null
  private readonly taskId: number
  private readonly ctl: Int32Array
  private readonly seg: Uint8Array[]
  private readonly outbox: OutRing[]
  private readonly maxPkt: number
  /** 1 over the test transport (ChaosTransport.on). */
  private readonly chaotic: number
  /** The memory of the packet being written (beginPacket/beginBody set them), and its target. */
  wu8: Uint8Array
  wdv: DataView
  private wtgt = 0
  private chaosBuf: ChaosBuf | null = null

  constructor(s: ContextState, a: AmState, rings: Rings, chaos: ChaosTransport, idler: Idler, counters: Counters, user: UserCode) {
    this.s = s
    this.a = a
    this.rings = rings
    this.chaos = chaos
    this.idler = idler
    this.counters = counters
    this.user = user
    this.taskId = s.taskId
    this.ctl = s.ctl
    this.seg = s.seg.u8
    this.outbox = rings.outbox
    this.maxPkt = s.config.maxPktSz
    this.chaotic = chaos.on
    // the writer views point at the current packet's memory (beginPacket sets them)
    this.wu8 = rings.outbox[s.taskId]!.u8
    this.wdv = rings.outbox[s.taskId]!.dv
  }

  /** Gives the way out the dispatcher a send blocked on a full ring runs. */
  attach(dispatcher: Progress): void {
    this.dispatcher = dispatcher
  }

  /** Writes a HEAD packet's header at `off` of the current packet (fields 48/52: vector or pull data). */
  writeHead(
    off: number,
    flags: number,
    len: number,
    id: number,
    msgLen: number,
    hidx: number,
    uhdrLen: number,
    tgtCntr: number,
    cmplCntr: number,
    w48: number,
    w52: number,
    descLen: number,
  ): void {
    const dv = this.wdv
    this.writeHeader(dv, off, T_AM_HEAD, flags, len, id, 0, msgLen)
    dv.setUint32(off + H_HANDLER, hidx, true)
    dv.setUint32(off + H_UHDR_LEN, uhdrLen, true)
    dv.setUint32(off + H_TGT_CNTR, tgtCntr, true)
    dv.setUint32(off + H_CMPL_CNTR, cmplCntr, true)
    dv.setUint32(off + H_VEC_TYPE, w48, true)
    dv.setUint32(off + H_VEC_NUM, w52, true)
    dv.setUint32(off + H_DESC_LEN, descLen, true)
  }

  /**
   * Sends bytes [pos, total) of a message as DATA packets, numbered from `index`, read from `data`
   * (a local buffer) or gathered from the vector `vec`.
   */
  sendData(tgt: number, id: number, pos: number, total: number, index: number, data: LocalBuf, vec: lapi_vec_t | null, offsets: number[] | null): void {
    if (pos >= total) return
    // (packets: ceil(rest / maxPkt) from exact divisions, whose quotient code V8 has not optimized yet
    // keeps a small integer, where a fraction would be boxed in a heap number, 16 bytes a message)
    const rest = total - pos
    const count = index + (rest - (rest % this.maxPkt)) / this.maxPkt + (rest % this.maxPkt === 0 ? 0 : 1)
    for (; pos < total; index++) {
      const n = total - pos < this.maxPkt ? total - pos : this.maxPkt
      const off = this.beginPacket(tgt)
      this.writeHeader(this.wdv, off, T_AM_DATA, 0, n, id, pos, total)
      this.wdv.setUint32(off + D_INDEX, index, true)
      this.wdv.setUint32(off + D_COUNT, count, true)
      if (vec !== null) this.gather(vec, offsets!, pos, this.wu8, off + PACKET_HEADER_BYTES, n)
      else this.copyIn(this.wu8, off + PACKET_HEADER_BYTES, data, pos, n)
      this.endPacket()
      pos += n
    }
  }

  /** The origin buffers may be reused: origin counter, send-completion handler. */
  sendDone(tgt: number, orgCntr: Addr, shdlr: scompl_hndlr_t | null, sinfo: unknown): void {
    this.a.sendCompleted++
    if (orgCntr !== 0) this.counters.bumpLocal(orgCntr)
    if (shdlr !== null) this.user.runSendHandler(shdlr, sinfo, tgt, ErrClass.AM_ERR)
  }

  /** Copies `n` bytes of a local buffer (from byte `so` of it) to `dst` at `d`. */
  copyIn(dst: Uint8Array, d: number, src: LocalBuf, so: number, n: number): void {
    if (typeof src === 'number') copySeg(dst, d, this.seg[this.taskId]!, src + so, n)
    else copyBuf(dst, d, src!, so, n, false)
  }

  /** Copies stream bytes [pos, pos+n) of an origin vector into dst. */
  gather(v: lapi_vec_t, offsets: number[], pos: number, dst: Uint8Array, d: number, n: number): void {
    const own = this.seg[this.taskId]!
    let i = findPiece(offsets, pos)
    while (n > 0) {
      const pieceStart = offsets[i]!
      const pieceLen = offsets[i + 1]! - pieceStart
      const inPiece = pos - pieceStart
      const take = pieceLen - inPiece < n ? pieceLen - inPiece : n
      if (take > 0) {
        if (v.vec_type === VecType.LAPI_GEN_STRIDED_XFER) {
          const base = (v.info[0] as number) + i * (v.info[2] as number)
          copySeg(dst, d, own, base + inPiece, take)
        } else {
          const a = v.info[i]!
          if (typeof a === 'number') copySeg(dst, d, own, a + inPiece, take)
          else copyBuf(dst, d, a, inPiece, take, false)
        }
        d += take
        pos += take
        n -= take
      }
      i++
    }
  }

  // ─────────────────────────────── packets out ───────────────────────────────

  /** The common header of a packet at `off`: its first 16 bytes, the stream offset and the message length. */
  writeHeader(dv: DataView, off: number, type: number, flags: number, len: number, id: number, offset: number, msgLen: number): void {
    this.writeCommon(dv, off, type, flags, len, id)
    dv.setUint32(off + P_OFFSET, offset, true)
    dv.setUint32(off + P_OFFSET + 4, 0, true)
    dv.setUint32(off + P_MSG_LEN, msgLen, true)
    dv.setUint32(off + P_MSG_LEN + 4, 0, true)
  }

  /** The first 16 bytes of the common header. */
  private writeCommon(dv: DataView, off: number, type: number, flags: number, len: number, id: number): void {
    dv.setUint8(off + P_VERSION, PACKET_VERSION)
    dv.setUint8(off + P_TYPE, type)
    dv.setUint16(off + P_FLAGS, flags, true)
    dv.setUint32(off + P_SRC, this.taskId, true)
    dv.setUint32(off + P_LEN, len, true)
    dv.setUint32(off + P_MSG_ID, id, true)
  }

  /**
   * Reserves a slot for one packet of the common format to `tgt` and returns the packet's offset
   * in `this.wu8`/`this.wdv` (the body's first word is set to 0: not a SHORT packet).
   */
  beginPacket(tgt: number): number {
    const b = this.beginBody(tgt)
    this.wdv.setUint32(b, 0, true)
    return b + BODY_PACKET
  }

  /**
   * Reserves a slot for one packet to `tgt` and returns its body's offset in `this.wu8`/`this.wdv`
   * (the test transport: 0 in a buffer of the body's size). A full ring is back-pressure: take
   * packets in from the own inbox (so two tasks sending to each other both drain) and wait for the
   * target to free a slot.
   */
  beginBody(tgt: number): number {
    if (this.chaotic) {
      this.wtgt = tgt
      const b = this.chaos.take()
      this.chaosBuf = b
      this.wu8 = b.bytes
      this.wdv = b.dv
      return 0
    }
    const w = this.outbox[tgt]!
    let off = w.reserve()
    // waiting for a slot takes packets in, which may send (CTS): set the writer state after it
    if (off < 0) off = this.waitForSlot(tgt)
    this.wtgt = tgt
    this.wu8 = w.u8
    this.wdv = w.dv
    return off
  }

  /** Publishes the packet begun last (the test transport: holds it back). */
  endPacket(): void {
    const tgt = this.wtgt
    if (this.chaotic) {
      this.chaos.hold(tgt, this.chaosBuf!)
      this.chaosBuf = null
    } else {
      this.outbox[tgt]!.publish()
      this.announce(tgt)
    }
    const rings = this.rings
    if (rings.tailsHeld) rings.publishTails()
  }

  /** Whether a packet to `tgt` can be written now, without waiting for room (the test transport: always). */
  hasRoom(tgt: number): boolean {
    return this.chaotic !== 0 || this.outbox[tgt]!.reserve() >= 0
  }

  /** Tells `tgt` a packet is in its inbox. */
  private announce(tgt: number): void {
    ringDoorbell(this.ctl, tgt)
  }

  /** Waits (taking packets in) until the way to `tgt` has a free slot; returns its body offset. */
  waitForSlot(tgt: number): number {
    const w = this.outbox[tgt]!
    const s = this.s
    const d = this.dispatcher!
    const idler = this.idler
    let spinStart = 0
    s.sendBlocked++
    try {
      for (;;) {
        d.poll(true)
        const off = w.reserve()
        if (off >= 0) return off
        const st = Atomics.load(this.ctl, taskWord(tgt, TASK_STATE))
        if (st === TaskState.EXITED || st === TaskState.FAILED) {
          throw new Error(`task ${tgt} has left the job; task ${this.taskId} cannot send to it (its inbox is full)`)
        }
        spinStart = idler.idle(spinStart, WAIT_RING, WaitCall.SEND, null, 0, tgt)
      }
    } finally {
      s.sendBlocked--
      idler.waitDone(spinStart)
    }
  }
}
