/**
 * The target side of an active message of the common format (HEAD, DATA, FIN): the header handler
 * runs on the HEAD, which says where the data lands (an Addr of the own segment, a Uint8Array, a
 * target vector, or nowhere); DATA packets are placed by offset (scattered into a vector), those
 * that come before their HEAD stashed, duplicates recognised per packet and dropped; a rendezvous
 * is pulled from the origin's segment or asked for with CTS. When every byte is in place the
 * message completes (am/completions.ts). A message whose handler is missing, throws or gives a
 * landing that cannot hold it is discarded and reported.
 */
import { CtlFlag, ErrClass, RetFlag, VecType } from '../base/constants.js'
import { copyBuf, copySeg } from '../base/copy.js'
import { FreeList } from '../base/free-list.js'
import { LapiStatus as S } from '../base/status.js'
import { PACKET_HEADER_BYTES, P_FLAGS, P_MSG_ID, P_MSG_LEN, P_OFFSET } from '../transport/packet.js'
import type { Checks } from '../core/checks.js'
import type { HandlerTable } from '../core/handler-table.js'
import { unregisteredWhy } from '../core/explain.js'
import type { ContextState } from '../core/state.js'
import type { Counters } from '../sync/counters.js'
import type { UserCode } from '../sync/user-code.js'
import type { lapi_vec_t } from '../base/types.js'
import type { Completions } from './completions.js'
import { LAND_BUF, LAND_NONE, LAND_SEG, type Receiver } from './receiver.js'
import { RecvMsg, type SourceState } from './received.js'
import type { Rendezvous } from './rendezvous.js'
import type { AmState } from './state.js'
import type { hdr_hndlr_t } from './types.js'
import { findPiece, pieceOffsets } from './vectors.js'
import {
  CTS_DIRECT,
  CTS_DISCARD,
  CTS_STREAM,
  D_COUNT,
  D_INDEX,
  F_AMV,
  F_PULL,
  F_RNDV,
  H_CMPL_CNTR,
  H_DESC_LEN,
  H_HANDLER,
  H_PULL_ORG,
  H_PULL_SRC,
  H_TGT_CNTR,
  H_UHDR_LEN,
  H_VEC_NUM,
  H_VEC_TYPE,
} from './wire.js'

export class Reassembly {
  private readonly c: ContextState
  private readonly a: AmState
  private readonly rx: Receiver
  private readonly done: Completions
  private readonly rndv: Rendezvous
  private readonly table: HandlerTable
  private readonly checks: Checks
  private readonly counters: Counters
  private readonly user: UserCode
  private readonly pool = new FreeList<RecvMsg>()
  /** Pooled duplicate bitmaps by log2 of their byte length, so steady traffic allocates none. */
  private readonly bitmaps: Array<FreeList<Uint8Array>> = []

  constructor(
    s: ContextState,
    a: AmState,
    rx: Receiver,
    done: Completions,
    rndv: Rendezvous,
    table: HandlerTable,
    checks: Checks,
    counters: Counters,
    user: UserCode,
  ) {
    this.c = s
    this.a = a
    this.rx = rx
    this.done = done
    this.rndv = rndv
    this.table = table
    this.checks = checks
    this.counters = counters
    this.user = user
  }

  private getMsg(s: SourceState, src: number, id: number, msgLen: number): RecvMsg {
    let m = s.inProgress.get(id)
    if (m === undefined) {
      m = this.pool.take() ?? new RecvMsg()
      m.src = src
      m.id = id
      m.msgLen = msgLen
      s.inProgress.set(id, m)
    }
    return m
  }

  /** A HEAD packet: the header handler runs (a whole one-packet message completes here). */
  onHead(u8: Uint8Array, dv: DataView, off: number, src: number, len: number): void {
    const c = this.c
    const rx = this.rx
    const s = rx.sources[src]!
    const id = dv.getUint32(off + P_MSG_ID, true)
    if (s.done.has(id)) {
      this.a.duplicates++
      return
    }
    const msgLen = dv.getUint32(off + P_MSG_LEN, true)
    const flags = dv.getUint16(off + P_FLAGS, true)
    const uhdrLen = dv.getUint32(off + H_UHDR_LEN, true)
    const descLen = dv.getUint32(off + H_DESC_LEN, true)
    if (uhdrLen > c.config.maxUhdrSz || uhdrLen + descLen > len) {
      this.a.dropped++
      return
    }
    const existing = s.inProgress.size === 0 ? undefined : s.inProgress.get(id)
    if (existing !== undefined && existing.headSeen) {
      this.a.duplicates++
      return
    }
    const hidx = dv.getUint32(off + H_HANDLER, true)
    const tgtCntr = dv.getUint32(off + H_TGT_CNTR, true)
    const cmplCntr = dv.getUint32(off + H_CMPL_CNTR, true)
    const dataOff = off + PACKET_HEADER_BYTES + uhdrLen + descLen
    const first = len - uhdrLen - descLen
    const rndv = (flags & F_RNDV) !== 0
    // (a pull reads the origin's segment: only a task of this process can ask for one)
    if (rndv && (flags & F_PULL) !== 0 && c.local[src] === 0) {
      this.a.dropped++
      return
    }
    // uhdr → scratch (valid during the call only)
    const uh = rx.uhdrScratch
    copyBuf(uh, 0, u8, off + PACKET_HEADER_BYTES, uhdrLen, false)
    const uhView = rx.view(rx.uhdrViews, uh, uhdrLen)
    const fn = this.table.handlerAt(hidx)
    if (existing === undefined && !rndv && first === msgLen && (flags & F_AMV) === 0 && fn !== null) {
      rx.onePacket(s, src, id, fn as unknown as hdr_hndlr_t, uhView, uhdrLen, u8, null, dataOff, msgLen, tgtCntr, cmplCntr)
      return
    }
    const m = existing ?? this.getMsg(s, src, id, msgLen)
    m.headSeen = true
    m.rndv = rndv
    m.tgtCntr = tgtCntr
    m.cmplCntr = cmplCntr
    if (rndv && (flags & F_PULL) !== 0) {
      m.pullSrc = dv.getUint32(off + H_PULL_SRC, true)
      m.pullOrg = dv.getUint32(off + H_PULL_ORG, true)
    }
    if (fn === null) {
      this.user.reportError(S.ERR_HDR_HNDLR_NULL, ErrClass.AM_ERR, src, undefined, unregisteredWhy(hidx, this.table.handlers, this.table.ranges))
      this.failMessage(m, s, rndv ? 0 : first)
      return
    }
    const comp = rx.compRef
    comp.value = null
    const inf = rx.infoRef
    inf.value = null
    let landing: unknown
    c.inHeaderHandler = 1
    try {
      if ((flags & F_AMV) !== 0) {
        const lens = this.readLenVec(dv, off + PACKET_HEADER_BYTES + uhdrLen, dv.getUint32(off + H_VEC_TYPE, true), dv.getUint32(off + H_VEC_NUM, true))
        this.counters.flushAbsorbed()
        landing = (fn as unknown as (...a: unknown[]) => unknown)(c.handle, uhView, uhdrLen, lens, comp, inf)
        m.landing = -3
        if (landing !== null && landing !== undefined) {
          const rc = this.acceptTargetVec(m, landing, dv.getUint32(off + H_VEC_TYPE, true), lens)
          if (rc !== 0) {
            c.inHeaderHandler = 0
            this.user.reportError(rc, ErrClass.AM_ERR, src, undefined, 'the landing a header handler gave')
            this.failMessage(m, s, rndv ? 0 : first)
            return
          }
        }
      } else {
        const ri = rx.retInfo
        ri.arm(msgLen, src, !rndv && first === msgLen ? u8 : null, null, dataOff)
        this.counters.flushAbsorbed()
        landing = (fn as unknown as hdr_hndlr_t)(c.handle, uhView, uhdrLen, ri, comp, inf)
        ri.disarm()
        m.inline = (ri.ret_flags & RetFlag.LAPI_SEND_REPLY) !== 0
        if (ri.ctl_flags === CtlFlag.LAPI_BURY_MSG) landing = null
        const rc = this.acceptLanding(m, landing)
        if (rc !== 0) {
          c.inHeaderHandler = 0
          this.user.reportError(rc, ErrClass.AM_ERR, src, undefined, 'the landing a header handler gave')
          this.failMessage(m, s, rndv ? 0 : first)
          return
        }
      }
    } catch (e) {
      c.inHeaderHandler = 0
      rx.retInfo.disarm()
      this.user.reportError(S.ERR_UNKNOWN, ErrClass.AM_ERR, src, e, 'a header handler')
      this.failMessage(m, s, rndv ? 0 : first)
      return
    }
    c.inHeaderHandler = 0
    m.compl = typeof comp.value === 'function' ? comp.value : null
    m.uinfo = inf.value
    if (rndv && (flags & F_PULL) !== 0) {
      // copy the data ourselves, straight out of the origin's segment (one copy), then tell it
      const from = m.pullSrc
      if (m.landing !== -2 && from + msgLen <= c.segmentSize) {
        if (m.landing >= 0) copySeg(c.seg.u8[c.taskId]!, m.landing, c.seg.u8[src]!, from, msgLen)
        else copyBuf(m.buf!, 0, c.seg.u8[src]!, from, msgLen, false)
      }
      if (m.pullOrg !== 0) this.counters.bump(src, m.pullOrg)
      this.rndv.sendPulled(src, id)
      m.got = msgLen
      this.landed(m, s)
      return
    }
    if (rndv) {
      // ask the origin for the data: straight into the segment, as packets, or not at all
      const mode = m.landing >= 0 ? CTS_DIRECT : m.landing === -2 ? CTS_DISCARD : CTS_STREAM
      this.rndv.sendCts(src, id, m.landing >= 0 ? m.landing : 0, mode)
      if (mode === CTS_DISCARD) {
        m.got = msgLen
        this.landed(m, s)
      }
      return
    }
    if (first > 0) this.place(m, 0, u8, dataOff, first)
    this.unstash(m)
    if (m.got >= m.msgLen) this.landed(m, s)
  }

  /** A DATA packet: placed by its offset, or stashed when its HEAD has not come yet. */
  onData(u8: Uint8Array, dv: DataView, off: number, src: number, len: number): void {
    const s = this.rx.sources[src]!
    const id = dv.getUint32(off + P_MSG_ID, true)
    if (s.done.has(id)) {
      this.a.duplicates++
      return
    }
    const msgLen = dv.getUint32(off + P_MSG_LEN, true)
    const pos = dv.getUint32(off + P_OFFSET, true)
    const index = dv.getUint32(off + D_INDEX, true)
    const count = dv.getUint32(off + D_COUNT, true)
    if (pos + len > msgLen || index >= count || count > 1 + Math.ceil(msgLen / 8)) {
      this.a.dropped++
      return
    }
    const m = this.getMsg(s, src, id, msgLen)
    if (m.seen === null || m.packets !== count) {
      if (m.seen !== null) this.releaseBitmap(m.seen)
      m.seen = this.takeBitmap(count)
      m.packets = count
    }
    const bit = 1 << (index & 7)
    if ((m.seen[index >> 3]! & bit) !== 0) {
      this.a.duplicates++
      return
    }
    m.seen[index >> 3]! |= bit
    if (!m.headSeen) {
      // before its HEAD: keep the bytes until the landing buffer is known
      if (m.stash === null) {
        m.stash = new Uint8Array(msgLen)
        m.stashed = []
      }
      copyBuf(m.stash, pos, u8, off + PACKET_HEADER_BYTES, len, false)
      m.stashed!.push(pos, len)
      return
    }
    this.place(m, pos, u8, off + PACKET_HEADER_BYTES, len)
    if (m.got >= m.msgLen) this.landed(m, s)
  }

  /** A FIN packet: the origin copied a rendezvous's data into this segment (CTS_DIRECT). */
  onFin(dv: DataView, off: number, src: number): void {
    const s = this.rx.sources[src]!
    const id = dv.getUint32(off + P_MSG_ID, true)
    if (s.done.has(id)) {
      this.a.duplicates++
      return
    }
    const m = s.inProgress.get(id)
    if (m === undefined || !m.headSeen || !m.rndv) {
      this.a.dropped++
      return
    }
    m.got = m.msgLen
    this.landed(m, s)
  }

  private takeBitmap(bits: number): Uint8Array {
    const bytes = (bits + 7) >> 3
    const k = 32 - Math.clz32(bytes - 1)
    const b = (this.bitmaps[k] ??= new FreeList()).take()
    if (b === undefined) return new Uint8Array(1 << k)
    b.fill(0)
    return b
  }

  private releaseBitmap(b: Uint8Array): void {
    const k = 31 - Math.clz32(b.length)
    const list = (this.bitmaps[k] ??= new FreeList())
    if (list.size < 64) list.give(b)
  }

  /** Places the data that came before the HEAD, now that the landing buffer is known. */
  private unstash(m: RecvMsg): void {
    const r = m.stashed
    if (r === null) return
    const st = m.stash!
    m.stash = null
    m.stashed = null
    for (let i = 0; i < r.length; i += 2) this.place(m, r[i]!, st, r[i]!, r[i + 1]!)
  }

  /** Writes stream bytes [pos, pos+n) of message m (from src[so..]) into its landing place. */
  private place(m: RecvMsg, pos: number, src: Uint8Array, so: number, n: number): void {
    m.got += n
    if (m.landing >= 0) copySeg(this.c.seg.u8[this.c.taskId]!, m.landing + pos, src, so, n)
    else if (m.landing === -1) copyBuf(m.buf!, pos, src, so, n, false)
    else if (m.landing === -3 && m.vec !== null) this.scatter(m, pos, src, so, n)
  }

  private scatter(m: RecvMsg, pos: number, src: Uint8Array, so: number, n: number): void {
    const v = m.vec!
    const offsets = m.vecOffsets!
    if (pos >= m.vecCap) return
    if (pos + n > m.vecCap) n = m.vecCap - pos
    const own = this.c.seg.u8[this.c.taskId]!
    let i = findPiece(offsets, pos)
    while (n > 0 && i < offsets.length - 1) {
      const start = offsets[i]!
      const inPiece = pos - start
      const room = offsets[i + 1]! - start - inPiece
      const take = room < n ? room : n
      if (take > 0) {
        if (v.vec_type === VecType.LAPI_GEN_STRIDED_XFER) {
          copySeg(own, (v.info[0] as number) + i * (v.info[2] as number) + inPiece, src, so, take)
        } else {
          const a = v.info[i]!
          if (typeof a === 'number') copySeg(own, a + inPiece, src, so, take)
          else copyBuf(a, inPiece, src, so, take, false)
        }
        pos += take
        so += take
        n -= take
      }
      i++
    }
  }

  private acceptLanding(m: RecvMsg, landing: unknown): number {
    const where = this.rx.landingKind(landing, m.msgLen)
    if (where === LAND_SEG) m.landing = landing as number
    else if (where === LAND_BUF) {
      m.landing = -1
      m.buf = landing as Uint8Array
    } else if (where === LAND_NONE) m.landing = -2
    else return where
    return 0
  }

  private acceptTargetVec(m: RecvMsg, landing: unknown, orgType: number, lens: number[]): number {
    if (typeof landing !== 'object' || landing === null) return S.ERR_TGT_VEC_NULL
    const v = landing as lapi_vec_t
    const rc = this.checks.checkOneVec(v, false)
    if (rc !== 0) return rc
    if (v.vec_type !== orgType) return S.ERR_VEC_TYPE_DIFF
    if (orgType !== VecType.LAPI_GEN_GENERIC) {
      if (v.num_vecs !== lens.length) return S.ERR_VEC_NUM_DIFF
      if (orgType === VecType.LAPI_GEN_STRIDED_XFER) {
        if (lens.length > 0 && v.info[1] !== lens[0]) return S.ERR_VEC_LEN_DIFF
      } else {
        for (let i = 0; i < lens.length; i++) if (v.len![i] !== lens[i]) return S.ERR_VEC_LEN_DIFF
      }
    }
    m.vec = v
    m.vecOffsets = pieceOffsets(v)
    m.vecCap = m.vecOffsets[m.vecOffsets.length - 1]!
    return 0
  }

  private readLenVec(dv: DataView, p: number, type: number, num: number): number[] {
    const lens: number[] = new Array<number>(num)
    if (type === VecType.LAPI_GEN_STRIDED_XFER) {
      const block = dv.getUint32(p + 4, true)
      for (let i = 0; i < num; i++) lens[i] = block
    } else for (let i = 0; i < num; i++) lens[i] = dv.getUint32(p + 4 * i, true)
    return lens
  }

  /**
   * The message is discarded: no landing, no completion handler, no target counter. `inHead` is
   * the data its HEAD carried; data that came earlier (stashed) or comes later is counted, not kept.
   */
  private failMessage(m: RecvMsg, s: SourceState, inHead: number): void {
    m.landing = -2
    m.compl = null
    m.tgtCntr = 0
    m.got += inHead
    if (m.rndv && m.pullSrc >= 0) {
      if (m.pullOrg !== 0) this.counters.bump(m.src, m.pullOrg)
      this.rndv.sendPulled(m.src, m.id)
      m.got = m.msgLen
    } else if (m.rndv) {
      this.rndv.sendCts(m.src, m.id, 0, CTS_DISCARD)
      m.got = m.msgLen
    } else if (m.stashed !== null) {
      for (let i = 1; i < m.stashed.length; i += 2) m.got += m.stashed[i]!
      m.stash = null
      m.stashed = null
    }
    if (m.got >= m.msgLen) this.landed(m, s)
  }

  /** Every byte of m is in place (or discarded): the message completes, and its record is reused. */
  private landed(m: RecvMsg, s: SourceState): void {
    if (!m.headSeen) return
    s.inProgress.delete(m.id)
    this.done.completeOne(s, m.src, m.id, m.compl, m.uinfo, m.inline, m.tgtCntr, m.cmplCntr)
    if (m.seen !== null) this.releaseBitmap(m.seen)
    m.reset()
    this.pool.give(m)
  }
}
