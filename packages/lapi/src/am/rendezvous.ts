/**
 * The rendezvous protocol of a large Amsend (docs/lapi.md, "Active messages"): the origin's record
 * of each send that waits for its target, and the control packets both sides exchange. The target
 * pulls the data straight from the origin's segment and answers PULLED (the origin frees its
 * staging copy or finishes the send); where it cannot, it asks with CTS, and the origin copies the
 * data into the target's segment (then FIN), streams it as DATA packets, or drops it.
 */
import { copyBuf, copySeg } from '../base/copy.js'
import { P_MSG_ID } from '../transport/packet.js'
import type { RemoteOps } from '../net/remote-ops.js'
import type { ContextState } from '../core/state.js'
import type { Addr, LocalBuf, scompl_hndlr_t } from '../base/types.js'
import { FreeList } from '../base/free-list.js'
import { IdTable } from '../base/id-table.js'
import type { Outgoing } from './outgoing.js'
import type { AmState } from './state.js'
import { C_LANDING, C_MODE, CTS_DIRECT, CTS_STREAM, T_AM_CTS, T_AM_FIN, T_AM_PULLED } from './wire.js'

/** A rendezvous send waiting for its target (pooled). */
class PendingSend {
  tgt = 0
  id = 0
  data: LocalBuf = null
  len = 0
  orgCntr: Addr = 0
  shdlr: scompl_hndlr_t | null = null
  sinfo: unknown = null
  /** Staging copy in the own segment (a Uint8Array's data, for the target to pull), or 0. */
  staged: Addr = 0
}

export class Rendezvous {
  private readonly c: ContextState
  private readonly a: AmState
  private readonly out: Outgoing
  private readonly remote: RemoteOps
  /** Rendezvous sends waiting for their target, by target task, then message id. */
  private readonly pending: Array<IdTable<PendingSend>> = []
  private readonly pendingPool = new FreeList<PendingSend>()
  /** CTS packets received, to act on at the next top-level round: [src, id, landing, mode] × n. */
  readonly ctsQueue: number[] = []
  /** CTS and PULLED packets to send once their ring has room: [kind, tgt, id, landing, mode] × n. */
  private readonly ctlQueue: number[] = []

  constructor(s: ContextState, a: AmState, out: Outgoing, remote: RemoteOps) {
    this.c = s
    this.a = a
    this.out = out
    this.remote = remote
  }

  // ─────────────────────────────── target side ───────────────────────────────

  /**
   * Asks the origin `src` for the data of message `id`: into `landing` of this segment, as packets,
   * or not at all (`mode`). Called while the dispatcher takes packets in, it waits for no room: a
   * full ring toward `src` defers it (`flushControl`), since waiting there, where the dispatcher
   * cannot take packets in, would hold two tasks sending to each other for ever.
   */
  sendCts(src: number, id: number, landing: number, mode: number): void {
    if (this.ctlQueue.length > 0 || !this.out.hasRoom(src)) {
      this.ctlQueue.push(T_AM_CTS, src, id, landing, mode)
      return
    }
    this.writeControl(T_AM_CTS, src, id, landing, mode)
  }

  /** Tells the origin `src` that the data of message `id` was pulled (deferred as `sendCts` is). */
  sendPulled(src: number, id: number): void {
    if (this.ctlQueue.length > 0 || !this.out.hasRoom(src)) {
      this.ctlQueue.push(T_AM_PULLED, src, id, 0, 0)
      return
    }
    this.writeControl(T_AM_PULLED, src, id, 0, 0)
  }

  /** Whether CTS or PULLED packets wait for room. */
  get controlPending(): boolean {
    return this.ctlQueue.length > 0
  }

  /** Sends the deferred CTS and PULLED packets whose ring has room now, in order; the rest wait. */
  flushControl(): void {
    const q = this.ctlQueue
    let kept = 0
    for (let i = 0; i < q.length; i += 5) {
      const kind = q[i]!
      const tgt = q[i + 1]!
      if (this.out.hasRoom(tgt)) {
        this.writeControl(kind, tgt, q[i + 2]!, q[i + 3]!, q[i + 4]!)
        continue
      }
      for (let k = 0; k < 5; k++) q[kept + k] = q[i + k]!
      kept += 5
    }
    q.length = kept
  }

  private writeControl(kind: number, tgt: number, id: number, landing: number, mode: number): void {
    const out = this.out
    const off = out.beginPacket(tgt)
    out.writeHeader(out.wdv, off, kind, 0, 0, id, 0, 0)
    if (kind === T_AM_CTS) {
      out.wdv.setUint32(off + C_LANDING, landing, true)
      out.wdv.setUint32(off + C_MODE, mode, true)
    }
    out.endPacket()
  }

  // ─────────────────────────────── origin side ───────────────────────────────

  /** Records a rendezvous send to `tgt` that waits for its target (a pooled record). */
  addPending(tgt: number, id: number, data: LocalBuf, len: number, orgCntr: Addr, shdlr: scompl_hndlr_t | null, sinfo: unknown, staged: Addr): void {
    const p = this.pendingPool.take() ?? new PendingSend()
    p.tgt = tgt
    p.id = id
    p.data = data
    p.len = len
    p.orgCntr = orgCntr
    p.shdlr = shdlr
    p.sinfo = sinfo
    p.staged = staged
    ;(this.pending[tgt] ??= new IdTable<PendingSend>()).set(id, p)
  }

  /** The rendezvous send `id` to `tgt` still waiting, or undefined. */
  private pendingSend(tgt: number, id: number): PendingSend | undefined {
    const t = this.pending[tgt]
    return t === undefined ? undefined : t.get(id)
  }

  /** Removes a rendezvous send's record and gives it back to the pool (its fields are read before). */
  private dropPending(p: PendingSend): void {
    this.pending[p.tgt]!.delete(p.id)
    p.data = null
    p.shdlr = null
    p.sinfo = null
    this.pendingPool.give(p)
  }

  /** A CTS packet: queued, to act on at the next top-level dispatcher round (`runCts`). */
  onCts(dv: DataView, off: number, src: number): void {
    const id = dv.getUint32(off + P_MSG_ID, true)
    if (this.pendingSend(src, id) === undefined) {
      this.a.duplicates++
      return
    }
    this.ctsQueue.push(src, id, dv.getUint32(off + C_LANDING, true), dv.getUint32(off + C_MODE, true))
  }

  /** Acts on received CTS packets: copy straight into the target, stream, or drop. */
  runCts(): number {
    const q = this.ctsQueue
    const out = this.out
    let n = 0
    // (sending below may take packets in and queue more CTS: the loop sees them too)
    for (let i = 0; i < q.length; i += 4) {
      const src = q[i]!
      const id = q[i + 1]!
      const landing = q[i + 2]!
      const mode = q[i + 3]!
      const p = this.pendingSend(src, id)
      if (p === undefined) continue
      // (the record goes back to the pool first: sending below may start rendezvous that take it)
      const tgt = p.tgt
      const data = p.data
      const len = p.len
      const orgCntr = p.orgCntr
      const shdlr = p.shdlr
      const sinfo = p.sinfo
      this.dropPending(p)
      n++
      const c = this.c
      if (mode === CTS_DIRECT) {
        if (landing + len <= c.segmentSize) {
          // straight into the target's segment: ours to copy for a task of this process; for one
          // of another process its process's engine writes it there, and FIN follows on the same path
          if (c.local[tgt] === 0) this.remote.putData(tgt, landing, data, len)
          else if (typeof data === 'number') copySeg(c.seg.u8[tgt]!, landing, c.seg.u8[c.taskId]!, data, len)
          else copyBuf(c.seg.u8[tgt]!, landing, data!, 0, len, tgt === c.taskId)
        }
        out.sendDone(tgt, orgCntr, shdlr, sinfo)
        const o = out.beginPacket(tgt)
        out.writeHeader(out.wdv, o, T_AM_FIN, 0, 0, id, 0, len)
        out.endPacket()
      } else if (mode === CTS_STREAM) {
        out.sendData(tgt, id, 0, len, 0, data, null, null)
        out.sendDone(tgt, orgCntr, shdlr, sinfo)
      } else {
        out.sendDone(tgt, orgCntr, shdlr, sinfo)
      }
    }
    q.length = 0
    return n
  }

  /** The target has pulled a rendezvous: free the staging copy, or finish the send. */
  onPulled(dv: DataView, off: number, src: number): void {
    const id = dv.getUint32(off + P_MSG_ID, true)
    const p = this.pendingSend(src, id)
    if (p === undefined) {
      this.a.duplicates++
      return
    }
    const staged = p.staged
    const shdlr = p.shdlr
    const sinfo = p.sinfo
    const tgt = p.tgt
    const orgCntr = p.orgCntr
    this.dropPending(p)
    if (staged !== 0) {
      this.c.mem.free(staged)
      return
    }
    // pulled from the caller's Addr: without a handler the target has bumped the origin counter;
    // with one the counter moves here, with the handler (a waiter sees both done)
    if (shdlr === null) this.a.sendCompleted++
    else this.out.sendDone(tgt, orgCntr, shdlr, sinfo)
  }
}
