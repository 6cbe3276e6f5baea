/**
 * One-sided operations on a task of another process, the origin's half: Put, Get, Rmw and their
 * vector forms become packets toward the network (transport/packet.ts, T_NET_*), which the
 * target's agent performs on the target's segment — the target task's thread takes no part. The
 * answers come back to this process's agent, which writes Get data straight into this task's
 * segment and bumps its counters; what only this thread can finish (a Uint8Array to fill, a
 * completion handler, an Rmw's old value) comes to this task's dispatcher as T_NET_DONE.
 *
 * Counters keep their LAPI meaning: a Put's origin counter moves once its data is in the ring,
 * written or queued (the buffer may be reused), its target counter when the target's agent wrote the data, its
 * completion counter when the agent's acknowledgement is back; a Get's origin counter when the
 * data is here. Each operation is outstanding for the fence until its acknowledgement or answer
 * is back (`OutRing.markSent` / the network state's LANDED_AT).
 */
import { ErrClass, VecType } from '../base/constants.js'
import { vecBytes } from '../am/vectors.js'
import type { RemoteHost as Context } from '../core/types.js'
import { copyBuf, copySeg } from '../base/copy.js'
import { FreeList } from '../base/free-list.js'
import { WaitCall, ringDoorbell } from '../layout/control.js'
import { NS_LANDED_AT } from '../layout/job-spec.js'
import { LapiStatus as S } from '../base/status.js'
import {
  BODY_PACKET,
  F_ACK,
  F_LAST,
  F_NOTIFY,
  N_OP,
  N_ORG_ADDR,
  N_ORG_CNTR,
  N_TGT_ADDR,
  N_TGT_CNTR,
  N_VAL0,
  N_VAL1,
  N_COUNTER,
  PACKET_HEADER_BYTES,
  P_MSG_ID,
  T_NET_BUMP,
  T_NET_GET,
  T_NET_PUT,
  T_NET_RMW,
  writePacketHeader,
} from '../transport/packet.js'
import type { Addr, compl_hndlr_t, lapi_vec_t, LocalBuf, Ref, scompl_hndlr_t } from '../base/types.js'

/** A remote Get or Rmw waiting for its T_NET_DONE. Pooled. */
class PendingOp {
  tgt = 0
  /** Where a Get's data waits in the own segment (a staging copy when `buf` or `vec` is set), or 0. */
  staged: Addr = 0
  len = 0
  buf: Uint8Array | null = null
  vec: lapi_vec_t | null = null
  orgCntr: Addr = 0
  chndlr: compl_hndlr_t | null = null
  cinfo: unknown = null
  prev: Ref<number> | Ref<bigint> | null = null
  /** 32 or 64 for an Rmw (its old value's width), 0 for a Get. */
  width = 0
  /** The operation's id (P_MSG_ID of its packets and of its T_NET_DONE). */
  id = 0
}

/** Packets of a multi-packet Put published between two kicks of the network engine. */
const KICK_PACKETS = 16
/** Puts of at least this many bytes go as chunks written straight from their source (NetEngine.putDirect). */
const DIRECT_MIN = 32 << 10

export class RemoteOps {
  private readonly c: Context
  private readonly maxPkt: number
  private readonly pending = new Map<number, PendingOp>()
  private readonly pool = new FreeList<PendingOp>()
  private nextOp = 1

  constructor(c: Context) {
    this.c = c
    this.maxPkt = c.config.maxPktSz
  }

  /** Operations waiting for an answer (a waiting task keeps making progress for them). */
  get waiting(): number {
    return this.pending.size
  }

  /** The id of the last Get or Rmw that waits for an answer here. */
  lastId = 0

  /** Whether the next chunk of a large Put can go (nothing waits to be written, and room toward its target). */
  private readonly netDrained = (): boolean => this.c.net!.putDirectReady(this.directTgt, this.directLen)
  private directTgt = 0
  private directLen = 0

  /** The operation `answered` asks about (one predicate, kept: a wait allocates nothing). */
  private awaited = 0
  private readonly answered = (): boolean => !this.pending.has(this.awaited)

  /** Waits, making progress, until operation `id` has its answer (0, or the wait's LAPI code). */
  waitAnswer(id: number): number {
    if (!this.pending.has(id)) return S.SUCCESS
    const outer = this.awaited
    this.awaited = id
    try {
      return this.c.waitUntil(this.answered, WaitCall.RMW)
    } finally {
      this.awaited = outer
    }
  }

  // ───────────────────────────── packets out ─────────────────────────────

  /** Reserves a packet toward `tgt` (waiting, and dispatching, while the way is full); returns its offset. */
  private begin(tgt: number, type: number, flags: number, len: number, id: number, offset: number, msgLen: number): number {
    const w = this.c.outbox[tgt]!
    let b = w.reserve()
    if (b < 0) b = this.c.am.waitForSlot(tgt)
    const dv = w.dv
    dv.setUint32(b, 0, true)
    const off = b + BODY_PACKET
    writePacketHeader(dv, off, type, flags, this.c.taskId, len, id, offset, msgLen)
    return off
  }

  private end(tgt: number): void {
    this.c.outbox[tgt]!.publish()
    ringDoorbell(this.c.ctl, tgt)
  }

  /**
   * Puts `len` bytes of `src` (an Addr of the own segment or a buffer; `so` its start) at `tgtAddr`
   * of `tgt`'s segment; the last packet carries `flags` and the counters. A large Put goes in
   * chunks written straight from `src` (NetEngine.putDirect), a small one as ring packets.
   */
  private putPackets(tgt: number, tgtAddr: Addr, src: LocalBuf, so: number, len: number, tgtCntr: Addr, cmplCntr: Addr, flags: number): void {
    const c = this.c
    const net = c.net
    if (len < DIRECT_MIN || net === null || src === null) {
      this.putRing(tgt, tgtAddr, src, so, 0, len, len, tgtCntr, cmplCntr, flags)
      return
    }
    const data = typeof src === 'number' ? c.seg.u8[c.taskId]! : src
    const base = typeof src === 'number' ? src + so : so
    const chunk = net.putChunk(tgt)
    let pos = 0
    do {
      const n = len - pos < chunk ? len - pos : chunk
      const last = pos + n >= len
      // while the connection is busy: wait (making progress) until what waits for it is written,
      // then try again; a send that may not wait (in a header handler) takes the ring instead
      while (!net.putDirect(c.taskId, tgt, last ? flags | F_LAST : 0, tgtAddr, pos, len, last ? tgtCntr : 0, last ? cmplCntr : 0, data, base + pos, n)) {
        this.directTgt = tgt
        this.directLen = n
        if (c.waitUntil(this.netDrained, WaitCall.SEND) !== S.SUCCESS) {
          this.putRing(tgt, tgtAddr, src, so, pos, pos + n, len, tgtCntr, cmplCntr, flags)
          break
        }
      }
      pos += n
    } while (pos < len)
  }

  /** Bytes [from, to) of a Put of `len` bytes as ring packets (the one that ends at `len` the last). */
  private putRing(
    tgt: number,
    tgtAddr: Addr,
    src: LocalBuf,
    so: number,
    from: number,
    to: number,
    len: number,
    tgtCntr: Addr,
    cmplCntr: Addr,
    flags: number,
  ): void {
    const c = this.c
    const own = c.seg.u8[c.taskId]!
    let pos = from
    let k = 0
    do {
      const n = to - pos < this.maxPkt ? to - pos : this.maxPkt
      const last = pos + n >= len
      const off = this.begin(tgt, T_NET_PUT, last ? flags | F_LAST : 0, n, 0, pos, len)
      const w = c.outbox[tgt]!
      w.dv.setUint32(off + N_TGT_ADDR, tgtAddr, true)
      if (last) {
        w.dv.setUint32(off + N_TGT_CNTR, tgtCntr, true)
        w.dv.setUint32(off + N_ORG_CNTR, cmplCntr, true)
      }
      if (n > 0) {
        if (typeof src === 'number') copySeg(w.u8, off + PACKET_HEADER_BYTES, own, src + so + pos, n)
        else copyBuf(w.u8, off + PACKET_HEADER_BYTES, src!, so + pos, n, false)
      }
      // (the packets of one message go to the network together: a kick writes what waits, so
      // one per KICK_PACKETS packets and one for the last of the range make a write per batch)
      if (pos + n >= to || ++k === KICK_PACKETS) {
        k = 0
        this.end(tgt)
      } else this.c.outbox[tgt]!.publish()
      pos += n
    } while (pos < to)
  }

  // ───────────────────────────── operations ─────────────────────────────

  /** LAPI_Put to a remote task (arguments checked). */
  put(
    tgt: number,
    len: number,
    tgtAddr: Addr,
    org: LocalBuf,
    tgtCntr: Addr,
    orgCntr: Addr,
    cmplCntr: Addr,
    shdlr: scompl_hndlr_t | null,
    sinfo: unknown,
  ): number {
    const c = this.c
    c.outbox[tgt]!.markSent()
    this.putPackets(tgt, tgtAddr, org, 0, len, tgtCntr, cmplCntr, F_ACK)
    if (orgCntr !== 0) c.bumpLocal(orgCntr)
    if (shdlr !== null) c.runSendHandler(shdlr, sinfo, tgt, ErrClass.PUT_ERR)
    return S.SUCCESS
  }

  /** The data of a rendezvous the target asked for with CTS: straight into its segment (no counters: FIN follows). */
  putData(tgt: number, landing: Addr, data: LocalBuf, len: number): void {
    this.putPackets(tgt, landing, data, 0, len, 0, 0, 0)
  }

  /** A counter of a remote task moves by one (an active message's completion counter at its origin). */
  bump(tgt: number, cntr: Addr): void {
    const off = this.begin(tgt, T_NET_BUMP, 0, 0, 0, 0, 0)
    this.c.outbox[tgt]!.dv.setUint32(off + N_COUNTER, cntr, true)
    this.end(tgt)
  }

  /** LAPI_Get from a remote task (arguments checked). */
  get(tgt: number, len: number, tgtAddr: Addr, org: LocalBuf, tgtCntr: Addr, orgCntr: Addr, chndlr: compl_hndlr_t | null, cinfo: unknown): number {
    const c = this.c
    if (typeof org === 'number' && chndlr === null) {
      // the agent writes the data and bumps the origin counter: nothing for this thread to do
      c.outbox[tgt]!.markSent()
      this.getPacket(tgt, tgtAddr, len, tgtCntr, org, orgCntr, 0, 0)
      return S.SUCCESS
    }
    let staged = 0
    if (typeof org !== 'number' && len > 0) {
      staged = c.mem.alloc(len)
      if (staged === 0) return S.ERR_MEMORY_EXHAUSTED
    }
    const p = this.record(tgt)
    p.staged = staged
    p.len = len
    p.buf = typeof org === 'number' ? null : org
    p.orgCntr = orgCntr
    p.chndlr = chndlr
    p.cinfo = cinfo
    c.outbox[tgt]!.markSent()
    this.getPacket(tgt, tgtAddr, len, tgtCntr, typeof org === 'number' ? org : staged, 0, F_NOTIFY, p.id)
    return S.SUCCESS
  }

  private getPacket(tgt: number, tgtAddr: Addr, len: number, tgtCntr: Addr, orgAddr: Addr, orgCntr: Addr, flags: number, id: number): void {
    const off = this.begin(tgt, T_NET_GET, flags, 0, id, 0, len)
    const dv = this.c.outbox[tgt]!.dv
    dv.setUint32(off + N_TGT_ADDR, tgtAddr, true)
    dv.setUint32(off + N_TGT_CNTR, tgtCntr, true)
    dv.setUint32(off + N_ORG_ADDR, orgAddr, true)
    dv.setUint32(off + N_ORG_CNTR, orgCntr, true)
    this.end(tgt)
  }

  /** LAPI_Rmw on a remote task (arguments checked; int32 operands, sent as int64 without a bigint). */
  rmw32(
    op: number,
    tgt: number,
    tgtVar: Addr,
    v0: number,
    v1: number,
    prev: Ref<number> | null,
    orgCntr: Addr,
    shdlr: scompl_hndlr_t | null,
    sinfo: unknown,
  ): number {
    const dv = this.rmwPacket(op, tgt, tgtVar, 32, prev, orgCntr)
    const off = this.rmwAt
    dv.setInt32(off + N_VAL0, v0, true)
    dv.setInt32(off + N_VAL0 + 4, v0 >> 31, true)
    dv.setInt32(off + N_VAL1, v1, true)
    dv.setInt32(off + N_VAL1 + 4, v1 >> 31, true)
    return this.rmwSent(tgt, shdlr, sinfo)
  }

  /** LAPI_Rmw64 on a remote task (arguments checked). */
  rmw64(
    op: number,
    tgt: number,
    tgtVar: Addr,
    v0: bigint,
    v1: bigint,
    prev: Ref<bigint> | null,
    orgCntr: Addr,
    shdlr: scompl_hndlr_t | null,
    sinfo: unknown,
  ): number {
    const dv = this.rmwPacket(op, tgt, tgtVar, 64, prev, orgCntr)
    dv.setBigInt64(this.rmwAt + N_VAL0, v0, true)
    dv.setBigInt64(this.rmwAt + N_VAL1, v1, true)
    return this.rmwSent(tgt, shdlr, sinfo)
  }

  /** Where rmwPacket put the packet's header. */
  private rmwAt = 0

  /** Records an Rmw and begins its packet (operands to be written at rmwAt + N_VAL0 / N_VAL1). */
  private rmwPacket(op: number, tgt: number, tgtVar: Addr, width: number, prev: Ref<number> | Ref<bigint> | null, orgCntr: Addr): DataView {
    const c = this.c
    const p = this.record(tgt)
    p.width = width
    p.prev = prev
    p.orgCntr = orgCntr
    c.outbox[tgt]!.markSent()
    const off = this.begin(tgt, T_NET_RMW, 0, 0, p.id, 0, 0)
    const dv = c.outbox[tgt]!.dv
    dv.setUint32(off + N_TGT_ADDR, tgtVar, true)
    dv.setUint32(off + N_OP, op | (width << 8), true)
    this.rmwAt = off
    return dv
  }

  private rmwSent(tgt: number, shdlr: scompl_hndlr_t | null, sinfo: unknown): number {
    this.end(tgt)
    if (shdlr !== null) this.c.runSendHandler(shdlr, sinfo, tgt, ErrClass.RMW_ERR)
    return S.SUCCESS
  }

  /**
   * LAPI_Putv to a remote task (vectors checked): the origin pieces gathered into a staging copy in
   * the own segment (the target pieces cut the stream differently), then one Put per target piece;
   * the last carries the counters and the acknowledgement.
   */
  putv(
    tgt: number,
    tgtVec: lapi_vec_t,
    orgVec: lapi_vec_t,
    tgtCntr: Addr,
    orgCntr: Addr,
    cmplCntr: Addr,
    shdlr: scompl_hndlr_t | null,
    sinfo: unknown,
  ): number {
    const c = this.c
    const total = vecBytes(orgVec)
    let staged = 0
    if (total > 0) {
      staged = c.mem.alloc(total)
      if (staged === 0) return S.ERR_MEMORY_EXHAUSTED
      const own = c.seg.u8[c.taskId]!
      let at = staged
      for (let i = 0; i < orgVec.num_vecs; i++) {
        const a = pieceStart(orgVec, i)
        const n = pieceLen(orgVec, i)
        if (typeof a === 'number') copySeg(own, at, own, a, n)
        else copyBuf(own, at, a, 0, n, false)
        at += n
      }
    }
    c.outbox[tgt]!.markSent()
    const last = lastPiece(tgtVec)
    let at = 0
    for (let i = 0; i <= last; i++) {
      const n = pieceLen(tgtVec, i)
      if (n === 0) continue
      const end = i === last
      this.putPackets(tgt, pieceStart(tgtVec, i) as number, staged, at, n, end ? tgtCntr : 0, end ? cmplCntr : 0, end ? F_ACK : 0)
      at += n
    }
    if (last < 0) this.putPackets(tgt, 0, null, 0, 0, tgtCntr, cmplCntr, F_ACK)
    // (the data is in the ring toward the network, written, or queued: the staging copy may go)
    if (staged !== 0) c.mem.free(staged)
    if (orgCntr !== 0) c.bumpLocal(orgCntr)
    if (shdlr !== null) c.runSendHandler(shdlr, sinfo, tgt, ErrClass.PUT_ERR)
    return S.SUCCESS
  }

  /** LAPI_Getv from a remote task (vectors checked): the target pieces into a staging copy, scattered when the last is in. */
  getv(tgt: number, tgtVec: lapi_vec_t, orgVec: lapi_vec_t, tgtCntr: Addr, orgCntr: Addr, chndlr: compl_hndlr_t | null, cinfo: unknown): number {
    const c = this.c
    const total = vecBytes(tgtVec)
    let staged = 0
    if (total > 0) {
      staged = c.mem.alloc(total)
      if (staged === 0) return S.ERR_MEMORY_EXHAUSTED
    }
    const p = this.record(tgt)
    p.staged = staged
    p.len = total
    p.vec = orgVec
    p.orgCntr = orgCntr
    p.chndlr = chndlr
    p.cinfo = cinfo
    c.outbox[tgt]!.markSent()
    const last = lastPiece(tgtVec)
    if (last < 0) this.getPacket(tgt, 0, 0, tgtCntr, staged, 0, F_NOTIFY, p.id)
    let at = 0
    for (let i = 0; i <= last; i++) {
      const n = pieceLen(tgtVec, i)
      if (n === 0) continue
      const end = i === last
      this.getPacket(tgt, pieceStart(tgtVec, i) as number, n, end ? tgtCntr : 0, staged + at, 0, end ? F_NOTIFY : 0, end ? p.id : 0)
      at += n
    }
    return S.SUCCESS
  }

  // ───────────────────────────── answers ─────────────────────────────

  private record(tgt: number): PendingOp {
    const p = this.pool.take() ?? new PendingOp()
    p.tgt = tgt
    let id = this.nextOp
    while (this.pending.has(id)) id = (id + 1) >>> 0 || 1
    this.nextOp = (id + 1) >>> 0 || 1
    this.pending.set(id, p)
    p.id = id
    this.lastId = id
    return p
  }

  /**
   * T_NET_DONE from this task's agent: the remote Get or Rmw `P_MSG_ID` is complete. Returns 0, or 1
   * for a packet that names no pending operation (dropped and counted by the caller).
   */
  onDone(dv: DataView, off: number): number {
    const id = dv.getUint32(off + P_MSG_ID, true)
    const p = this.pending.get(id)
    if (p === undefined) return 1
    this.pending.delete(id)
    const c = this.c
    if (p.width !== 0) {
      if (p.prev !== null) {
        if (p.width === 32) (p.prev as Ref<number>).value = dv.getInt32(off + N_VAL0, true)
        else (p.prev as Ref<bigint>).value = dv.getBigInt64(off + N_VAL0, true)
      }
    } else if (p.staged !== 0) {
      const own = c.seg.u8[c.taskId]!
      if (p.buf !== null) copySeg(p.buf, 0, own, p.staged, p.len)
      else if (p.vec !== null) {
        const v = p.vec
        let at = p.staged
        for (let i = 0; i < v.num_vecs; i++) {
          const a = pieceStart(v, i)
          const n = pieceLen(v, i)
          if (typeof a === 'number') copySeg(own, a, own, at, n)
          else copySeg(a, 0, own, at, n)
          at += n
        }
      }
      c.mem.free(p.staged)
    }
    const tgt = p.tgt
    const chndlr = p.chndlr
    const cinfo = p.cinfo
    const orgCntr = p.orgCntr
    p.buf = null
    p.vec = null
    p.chndlr = null
    p.cinfo = null
    p.prev = null
    p.staged = 0
    p.width = 0
    this.pool.give(p)
    // complete for the fence now that this thread has finished it (the agent counted nothing)
    Atomics.add(c.netState!, NS_LANDED_AT + tgt, 1)
    if (chndlr !== null) c.runComplHandler(chndlr, cinfo, tgt, ErrClass.GET_ERR)
    if (orgCntr !== 0) c.bumpLocal(orgCntr)
    return 0
  }
}

/** Where piece `i` of a (checked) vector starts: an Addr, or an origin's buffer. */
function pieceStart(v: lapi_vec_t, i: number): Addr | Uint8Array {
  return v.vec_type === VecType.LAPI_GEN_STRIDED_XFER ? (v.info[0] as number) + i * (v.info[2] as number) : v.info[i]!
}

/** Bytes of piece `i` of a (checked) vector. */
function pieceLen(v: lapi_vec_t, i: number): number {
  return v.vec_type === VecType.LAPI_GEN_STRIDED_XFER ? (v.info[1] as number) : v.len![i]!
}

/** Index of the last piece with data, or -1 when none has any. */
function lastPiece(v: lapi_vec_t): number {
  for (let i = v.num_vecs - 1; i >= 0; i--) if (pieceLen(v, i) > 0) return i
  return -1
}
