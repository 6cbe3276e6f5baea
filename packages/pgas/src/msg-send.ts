/**
 * The sending side of the tagged messages (messages.ts): a message of at most SHORT_MAX bytes is
 * written in place into the target's inbox (one LAPI packet); a larger one to a task of this
 * process goes by reference when its bytes are in this task's segment (the receiver copies them
 * straight into its receive's buffer), else through a channel (channels.ts); to a task of another
 * process it goes as a LAPI active message (whose rendezvous pulls bytes in the segment in place).
 */
import type { Counter } from '@amlapi/lapi'
import { WaitCall } from '@amlapi/lapi'
import { ChannelSend, type Channels } from './channels.js'
import type { Core } from './core.js'
import { OpHandle, waitHandle } from './rma.js'
import { PgasStatus as S } from './status.js'

/** Bytes of a message's user header: four int32 (sequence, round and kind, argument, REF or 0). */
export const UHDR = 16
/** The user header's last word: 0, or REF for a message by reference (its data: address, length, counter). */
export const REF = 1
export const REF_BYTES = 12
/** Data that goes in place in one packet (the rest of a packet is larger; this keeps it to small messages). */
const SHORT_MAX = 512
/** The handle of a send complete when it returned. */
const SENT = new OpHandle(null, 0, 0)

export class Sends {
  private readonly core: Core
  private readonly chan: Channels
  /** The LAPI handler of the messages. */
  private readonly hdr: number
  /** This task's segment (data in it is sent by address). */
  private readonly mySegment: ArrayBufferLike | null
  private readonly uhdr = new Int32Array(UHDR / 4)
  private readonly uhdr8 = new Uint8Array(this.uhdr.buffer)
  /** The channel send a wait is for. */
  private sending: ChannelSend | null = null
  private readonly sentCond = (): boolean => this.sending!.done || this.chan.pump(performance.now())

  constructor(core: Core, chan: Channels, hdr: number) {
    this.core = core
    this.chan = chan
    this.hdr = hdr
    this.mySegment = core.u8[core.rank]?.buffer ?? null
  }

  /** Sends `data` to `tgt` as round `round` of `seq`, saying (kind, arg); returns at once: `data` must stay unchanged until the handle is complete. */
  sendNb(tgt: number, seq: number, round: number, kind: number, arg: number, data: Uint8Array): OpHandle {
    const w1 = (round & 0xfff) | ((kind & 0xfffff) << 12)
    if (data.length <= SHORT_MAX) {
      // (one packet, written in place into the target's inbox: no copy, no counter; refused when
      // the ring is full or the target is not on this path, and then sent as below)
      const l = this.core.lapi
      const i = l.prepareShortData(tgt, this.hdr, UHDR, data.length)
      if (i >= 0) {
        const pw = l.preparedWords
        pw[i] = seq
        pw[i + 1] = w1
        pw[i + 2] = arg
        pw[i + 3] = 0
        if (data.length > 0) l.preparedBytes.set(data, 4 * i + UHDR)
        if (l.commitShort()) return SENT
      }
    }
    // (bytes in this task's segment go by address: to a task of this process by reference, to
    // others by LAPI's rendezvous, which pulls them out of the segment in place; other bytes to a
    // task of this process go through a channel)
    const inSegment = data.buffer === this.mySegment && data.byteOffset > 0
    const u = this.uhdr
    u[0] = seq
    u[1] = w1
    u[2] = arg
    u[3] = 0
    if (data.length > SHORT_MAX && this.core.isLocal(tgt) && tgt !== this.core.rank) {
      if (inSegment) return this.sendRef(tgt, seq, w1, arg, data)
      if (this.chan.reaches(tgt)) return this.chan.send(tgt, seq, w1, arg, data)
    }
    const c: Counter = this.core.counter()
    const rc = this.core.lapi.amsendCode(tgt, this.hdr, this.uhdr8, UHDR, data.length === 0 ? null : inSegment ? data.byteOffset : data, data.length, c)
    if (rc !== 0) {
      this.core.release(c)
      return new OpHandle(null, 0, S.ERR_LAPI)
    }
    return new OpHandle(c, 1, 0)
  }

  /** Sends `data` (in this task's segment) to co-located `tgt` by reference: complete when `tgt` copied it. */
  private sendRef(tgt: number, seq: number, w1: number, arg: number, data: Uint8Array): OpHandle {
    const c: Counter = this.core.counter()
    const l = this.core.lapi
    const i = l.prepareShortData(tgt, this.hdr, UHDR, REF_BYTES)
    if (i >= 0) {
      const pw = l.preparedWords
      pw[i] = seq
      pw[i + 1] = w1
      pw[i + 2] = arg
      pw[i + 3] = REF
      pw[i + 4] = data.byteOffset
      pw[i + 5] = data.length
      pw[i + 6] = c.addr
      if (l.commitShort()) return new OpHandle(c, 1, 0)
    }
    const u = this.uhdr
    u[3] = REF
    const r = this.ref3
    r[0] = data.byteOffset
    r[1] = data.length
    r[2] = c.addr
    const rc = l.amsendCode(tgt, this.hdr, this.uhdr8, UHDR, this.ref8, REF_BYTES, 0)
    u[3] = 0
    if (rc !== 0) {
      this.core.release(c)
      return new OpHandle(null, 0, S.ERR_LAPI)
    }
    return new OpHandle(c, 1, 0)
  }

  private readonly ref3 = new Int32Array(3)
  private readonly ref8 = new Uint8Array(this.ref3.buffer)

  /** Waits for a send handle, once (a channel's handle is then used again). */
  wait(h: OpHandle): number {
    if (h instanceof ChannelSend) {
      if (!h.done) {
        const outer = this.sending
        this.sending = h
        this.chan.waiting(true)
        try {
          do this.core.lapi.waitUntil(this.sentCond, WaitCall.PGAS_OP)
          while (!h.done)
        } finally {
          this.chan.waiting(false)
          this.sending = outer
        }
      }
      const st = h.status
      this.chan.recycle(h)
      return st
    }
    return waitHandle(this.core, h)
  }
}
