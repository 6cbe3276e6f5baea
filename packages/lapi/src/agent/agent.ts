/**
 * The agent: this process's progress engine for the network (docs/transports.md, "The agent"). It
 * runs in the process's main thread beside the task workers and:
 *
 *   - takes the packets the tasks put into their rings toward the network and sends each, as a
 *     frame, to the process that holds its destination task;
 *   - takes frames from the other processes and either performs them itself on the target task's
 *     memory — Put, Get, Rmw, counter bumps, acknowledgements: one-sided, the target's thread takes
 *     no part — or puts them into the target task's network ring (active messages, and the
 *     T_NET_DONE it makes for a task whose Get or Rmw needs its own thread to finish);
 *   - acknowledges the messages that landed here (the origins' fences count them);
 *   - completes the barrier (and the all-gathers riding on it) with the other agents: each agent
 *     reports when its tasks have all arrived; rank 0 releases everyone;
 *   - carries task exits and the job's abort to the other processes, and notices a lost one.
 *
 * It waits on its doorbell (control block AGENT_BELL) with Atomics.waitAsync, so it sleeps in the
 * event loop until a task rings it or a socket has data. Bad input from the network — a frame for
 * a task not here, a packet whose source is not of the sending process, an address outside a
 * segment, a bad type — is dropped and counted (`stats().dropped`), never performed.
 */
import type { Logger } from 'pino'
import { RmwOp } from '../constants.js'
import {
  T_STATE, TaskState, W_AGENT_BELL, W_AGENT_SLEEPING, W_BAR_GEN, W_BAR_LOCAL, abortJob, controlLayout, ringCounter, ringDoorbell, taskWord,
} from '../job/control.js'
import { NET_DIRTY, NET_DROPPED, NET_LANDED_AT, netLandedFrom, netTagOffset, placement, type JobSpec } from '../job/spec.js'
import { BACKPRESSURE, FRAME_CONTROL, FRAME_PACKET, type Transport } from '../transport/contract.js'
import { decodeBody, encodeMessage, field } from '../transport/messages.js'
import {
  BODY_PACKET, F_LAST, F_NOTIFY, N_COUNT, N_COUNTER, N_OP, N_ORG_ADDR, N_ORG_CNTR, N_TGT_ADDR, N_TGT_CNTR, N_VAL0, N_VAL1,
  PACKET_HEADER_BYTES, PACKET_VERSION, P_FLAGS, P_LEN, P_MSG_ID, P_MSG_LEN, P_OFFSET, P_SRC, P_TYPE, P_VERSION,
  T_AM_BARE, T_AM_SHORT, T_NET_ACK, T_NET_BUMP, T_NET_DONE, T_NET_GET, T_NET_GETR, T_NET_PUT, T_NET_RMW, T_NET_RMWR, packetBodyBytes,
} from '../transport/packet.js'
import { RingReader, RingWriter } from '../transport/ring.js'

const SHORT_WORD0 = PACKET_VERSION | (T_AM_SHORT << 8)
const BARE_WORD0 = PACKET_VERSION | (T_AM_BARE << 8)

export interface AgentOptions {
  spec: Omit<JobSpec, 'taskId'>
  rank: number
  transport: Transport
  log: Logger
  /** The job is over for this process: a peer was lost or sent an abort (`task`: the lost or failed task, or -1). */
  onAbort: (task: number, reason: string) => void
}

/** What the agent has done (every field only grows). */
export interface AgentStats {
  packetsOut: number
  packetsIn: number
  /** Frames or packets dropped as malformed or misaddressed. */
  dropped: number
  acksSent: number
  wakes: number
}

/** A local task's ends, as the agent sees them. */
interface LocalTask {
  id: number
  out: RingReader
  netIn: RingWriter
  u8: Uint8Array
  i32: Int32Array
  i64: BigInt64Array
  dv: DataView
  state: Int32Array
  /** LANDED_FROM[src] as last acknowledged, per task. */
  acked: Int32Array
}

export class Agent {
  private readonly o: AgentOptions
  private readonly spec: Omit<JobSpec, 'taskId'>
  private readonly ctl: Int32Array
  private readonly n: number
  private readonly procs: number
  private readonly lo: number
  private readonly tasks: LocalTask[] = []
  /** Process of each task. */
  private readonly procOf: Int32Array
  private readonly segSize: number
  private readonly tag: number
  private readonly bodyRoom: number
  /** A packet the agent writes itself (acks, Get replies, Rmw replies, DONE). */
  private readonly scratch: Uint8Array
  private readonly sdv: DataView
  private readonly gatherF64: Uint8Array
  private readonly gatherI64: Uint8Array
  private running = false
  private flushQueued = false
  /** Peers whose frames wait for room in a task's network ring. */
  private readonly paused = new Set<number>()
  /** The barrier generation this process has reported complete (or -1). */
  private reportedBar = -1
  /** Rank 0: arrivals per generation. */
  private readonly arrivals = new Map<number, number>()
  private writable = true
  readonly st: AgentStats = { packetsOut: 0, packetsIn: 0, dropped: 0, acksSent: 0, wakes: 0 }

  constructor (o: AgentOptions) {
    this.o = o
    const spec = o.spec
    this.spec = spec
    this.ctl = new Int32Array(spec.control)
    this.n = spec.numTasks
    this.procs = spec.processes
    this.lo = spec.firstTask
    this.segSize = spec.config.segmentSize
    this.tag = netTagOffset(spec.ring)
    this.bodyRoom = spec.ring.slotBytes - 4
    this.procOf = new Int32Array(this.n)
    for (let p = 0; p < this.procs; p++) {
      const { first, count } = placement(this.n, this.procs, p)
      for (let t = first; t < first + count; t++) this.procOf[t] = p
    }
    for (let t = spec.firstTask; t < spec.firstTask + spec.localTasks; t++) {
      const seg = spec.segments[t]!
      this.tasks.push({
        id: t,
        out: new RingReader(spec.netOut[t]!, spec.netRing, 0),
        netIn: new RingWriter(spec.inboxes[t]!, spec.ring, spec.localTasks),
        u8: new Uint8Array(seg),
        i32: new Int32Array(seg),
        i64: new BigInt64Array(seg, 0, seg.byteLength >>> 3),
        dv: new DataView(seg),
        state: new Int32Array(spec.netState[t]!),
        acked: new Int32Array(this.n),
      })
    }
    this.scratch = new Uint8Array(spec.ring.slotBytes)
    this.sdv = new DataView(this.scratch.buffer)
    const layout = controlLayout(this.n)
    this.gatherF64 = new Uint8Array(spec.control, layout.gatherF64, 16 * this.n)
    this.gatherI64 = new Uint8Array(spec.control, layout.gatherI64, 16 * this.n)
  }

  stats (): AgentStats { return { ...this.st } }

  /** Starts serving the tasks' rings (after the transport is connected). */
  start (): void {
    if (this.running) return
    this.running = true
    void this.loop()
  }

  /** Stops the loop (the transport is closed by its owner). */
  stop (): void {
    this.running = false
    Atomics.add(this.ctl, W_AGENT_BELL, 1)
    Atomics.notify(this.ctl, W_AGENT_BELL)
  }

  private async loop (): Promise<void> {
    const ctl = this.ctl
    while (this.running) {
      this.pump()
      const seen = Atomics.load(ctl, W_AGENT_BELL)
      Atomics.store(ctl, W_AGENT_SLEEPING, 1)
      if (this.hasWork() || !this.running) { Atomics.store(ctl, W_AGENT_SLEEPING, 0); continue }
      const r = Atomics.waitAsync(ctl, W_AGENT_BELL, seen)
      if (r.async) await r.value
      Atomics.store(ctl, W_AGENT_SLEEPING, 0)
      this.st.wakes++
    }
  }

  private hasWork (): boolean {
    if (this.paused.size > 0) return true
    if (Atomics.load(this.ctl, W_BAR_LOCAL) !== this.reportedBar && Atomics.load(this.ctl, W_BAR_LOCAL) !== 0) return true
    for (const t of this.tasks) {
      if (this.writable && t.out.nonEmpty) return true
      if (Atomics.load(t.state, NET_DIRTY) !== 0) return true
    }
    return false
  }

  /** One round: the tasks' packets out, acknowledgements, a barrier report, refused frames again. */
  pump (): void {
    for (const p of [...this.paused]) { this.paused.delete(p); this.o.transport.resume(p) }
    if (this.writable) for (const t of this.tasks) this.drainOut(t)
    for (const t of this.tasks) if (Atomics.load(t.state, NET_DIRTY) !== 0) this.sendAcks(t)
    const bar = Atomics.load(this.ctl, W_BAR_LOCAL)
    if (bar !== 0 && bar !== this.reportedBar) { this.reportedBar = bar; this.arrive(bar) }
    this.o.transport.flush()
  }

  /** Sends every packet task `t` put toward the network. */
  private drainOut (t: LocalTask): void {
    const r = t.out
    const n = r.available()
    if (n === 0) return
    const tr = this.o.transport
    const u8 = r.u8
    const dv = r.dv
    let k = 0
    for (; k < n; k++) {
      const off = r.front()
      const dst = dv.getInt32(off + this.tag, true)
      const len = packetBodyBytes(dv, off)
      if ((dst >>> 0) >= this.n || this.procOf[dst] === this.o.rank) {
        this.st.dropped++
      } else {
        this.st.packetsOut++
        if (this.o.log.isLevelEnabled('trace')) this.o.log.trace({ from: t.id, dst, len }, 'packet out')
        // (a packet whose header claims more than its slot goes as the whole slot: its receiver drops and counts it)
        const rc = tr.send(this.procOf[dst]!, FRAME_PACKET, dst, u8, off, len <= this.bodyRoom ? len : this.bodyRoom)
        r.release(0, 1)
        if (rc === BACKPRESSURE) { this.writable = false; k++; break }
        continue
      }
      r.release(0, 1)
    }
    r.publishTail()
    // the task may be waiting for room
    ringDoorbell(this.ctl, t.id)
  }

  /** The transport's queues drained: take the tasks' packets again. */
  onWritable (): void {
    this.writable = true
    this.pump()
  }

  /** Acknowledges the messages of remote tasks that landed at `t` since the last acknowledgement. */
  private sendAcks (t: LocalTask): void {
    Atomics.store(t.state, NET_DIRTY, 0)
    for (let src = 0; src < this.n; src++) {
      if (this.procOf[src] === this.o.rank) continue
      const now = Atomics.load(t.state, netLandedFrom(this.n, src))
      const d = (now - t.acked[src]!) | 0
      if (d === 0) continue
      t.acked[src] = now
      this.ack(t.id, src, d, 0)
    }
  }

  /** Tells task `to` (remote) that `count` of its messages landed at `from`, and bumps its counter `cntr`. */
  private ack (from: number, to: number, count: number, cntr: number): void {
    const off = this.begin(T_NET_ACK, 0, from, 0, 0, 0, 0)
    this.sdv.setUint32(off + N_COUNT, count, true)
    this.sdv.setUint32(off + N_ORG_CNTR, cntr, true)
    this.sendScratch(to, off, 0)
    this.st.acksSent++
  }

  /** Writes a common header into the scratch packet; returns the packet's offset in it. */
  private begin (type: number, flags: number, src: number, len: number, id: number, offset: number, msgLen: number): number {
    const d = this.sdv
    d.setUint32(0, 0, true)
    const off = BODY_PACKET
    d.setUint8(off + P_VERSION, PACKET_VERSION)
    d.setUint8(off + P_TYPE, type)
    d.setUint16(off + P_FLAGS, flags, true)
    d.setUint32(off + P_SRC, src, true)
    d.setUint32(off + P_LEN, len, true)
    d.setUint32(off + P_MSG_ID, id, true)
    d.setUint32(off + P_OFFSET, offset, true)
    d.setUint32(off + P_OFFSET + 4, 0, true)
    d.setUint32(off + P_MSG_LEN, msgLen, true)
    d.setUint32(off + P_MSG_LEN + 4, 0, true)
    for (let k = 32; k < PACKET_HEADER_BYTES; k += 4) d.setUint32(off + k, 0, true)
    return off
  }

  /** Sends the scratch packet (with `len` payload bytes) to remote task `to`. */
  private sendScratch (to: number, off: number, len: number): void {
    if (this.o.transport.send(this.procOf[to]!, FRAME_PACKET, to, this.scratch, 0, off + PACKET_HEADER_BYTES + len) === BACKPRESSURE) this.writable = false
    this.scheduleFlush()
  }

  private scheduleFlush (): void {
    if (this.flushQueued) return
    this.flushQueued = true
    queueMicrotask(() => { this.flushQueued = false; this.o.transport.flush() })
  }

  // ───────────────────────────── frames in ─────────────────────────────

  /** A frame from process `peer` (the transport's onFrame). */
  onFrame (peer: number, kind: number, dst: number, u8: Uint8Array, off: number, len: number): boolean {
    if (kind === FRAME_CONTROL) {
      let m: unknown
      try { m = decodeBody(u8.subarray(off, off + len)) } catch { this.st.dropped++; return true }
      this.onControl(peer, m)
      return true
    }
    const t = this.tasks[dst - this.lo]
    if (t === undefined) { this.st.dropped++; return true }
    if (len < 8 || len > this.bodyRoom) return this.drop(t)
    const dv = new DataView(u8.buffer, u8.byteOffset + off, len)
    const w0 = dv.getUint32(0, true)
    if (w0 === SHORT_WORD0 || w0 === BARE_WORD0) {
      if (!this.fromPeer(peer, dv.getUint32(4, true)) || packetBodyBytes(dv, 0) !== len) return this.drop(t)
      return this.deliver(peer, t, u8, off, len)
    }
    if (w0 !== 0 || len < BODY_PACKET + PACKET_HEADER_BYTES) return this.drop(t)
    const p = BODY_PACKET
    const src = dv.getUint32(p + P_SRC, true)
    const plen = dv.getUint32(p + P_LEN, true)
    if (dv.getUint8(p + P_VERSION) !== PACKET_VERSION || !this.fromPeer(peer, src) || BODY_PACKET + PACKET_HEADER_BYTES + plen !== len) return this.drop(t)
    this.st.packetsIn++
    if (this.o.log.isLevelEnabled('trace')) this.o.log.trace({ peer, dst, type: dv.getUint8(p + P_TYPE), src, len }, 'packet in')
    switch (dv.getUint8(p + P_TYPE)) {
      case T_NET_PUT: this.onPut(t, dv, p, src, plen, u8, off); return true
      case T_NET_GET: this.onGet(t, dv, p, src); return true
      case T_NET_GETR: return this.onGetReply(t, dv, p, src, plen, u8, off)
      case T_NET_RMW: this.onRmw(t, dv, p, src); return true
      case T_NET_RMWR: return this.done(t, dv.getUint32(p + P_MSG_ID, true), dv.getBigInt64(p + N_VAL0, true))
      case T_NET_BUMP: this.bumpCounter(t, dv.getUint32(p + N_COUNTER, true)); return true
      case T_NET_ACK: {
        Atomics.add(t.state, NET_LANDED_AT + src, dv.getUint32(p + N_COUNT, true))
        const c = dv.getUint32(p + N_ORG_CNTR, true)
        if (c !== 0) this.bumpCounter(t, c)
        else ringDoorbell(this.ctl, t.id)
        return true
      }
      case T_NET_DONE: return this.drop(t)
      default: return this.deliver(peer, t, u8, off, len)
    }
  }

  /** Drops a malformed packet for task `t`, counted for it (its dispatcher statistics show it) and here. */
  private drop (t: LocalTask): boolean {
    this.st.dropped++
    Atomics.add(t.state, NET_DROPPED, 1)
    return true
  }

  /** Whether `src` is a task of process `peer` (a peer speaks only for its own tasks). */
  private fromPeer (peer: number, src: number): boolean {
    return src < this.n && this.procOf[src] === peer
  }

  /** Puts a packet into `t`'s network ring; false when the ring is full (the frame is offered again later). */
  private deliver (peer: number, t: LocalTask, u8: Uint8Array, off: number, len: number): boolean {
    const w = t.netIn
    const at = w.reserve()
    if (at < 0) { this.paused.add(peer); return false }
    w.u8.set(u8.subarray(off, off + len), at)
    w.publish()
    ringDoorbell(this.ctl, t.id)
    return true
  }

  /** Whether [addr, addr + len) lies in a segment (addr 0 only for len 0). */
  private inSeg (addr: number, len: number): boolean {
    return addr + len <= this.segSize && (addr !== 0 || len === 0)
  }

  private bumpCounter (t: LocalTask, c: number): void {
    if (c === 0) return
    if ((c & 3) !== 0 || c + 4 > this.segSize) { this.drop(t); return }
    const w = c >>> 2
    ringCounter(this.ctl, t.id, w, Atomics.add(t.i32, w, 1) + 1)
  }

  private onPut (t: LocalTask, dv: DataView, p: number, src: number, plen: number, u8: Uint8Array, off: number): void {
    const addr = dv.getUint32(p + N_TGT_ADDR, true)
    const at = addr + dv.getUint32(p + P_OFFSET, true)
    const total = dv.getUint32(p + P_MSG_LEN, true)
    if (!this.inSeg(addr, total) || at + plen > addr + total) { this.drop(t); return }
    if (plen > 0) t.u8.set(u8.subarray(off + p + PACKET_HEADER_BYTES, off + p + PACKET_HEADER_BYTES + plen), at)
    const flags = dv.getUint16(p + P_FLAGS, true)
    if ((flags & F_LAST) === 0) return
    this.bumpCounter(t, dv.getUint32(p + N_TGT_CNTR, true))
    // acknowledged for the origin's fence (F_ACK), with its completion counter
    if ((flags & 4) !== 0) this.ack(t.id, src, 1, dv.getUint32(p + N_ORG_CNTR, true))
  }

  private onGet (t: LocalTask, dv: DataView, p: number, src: number): void {
    const addr = dv.getUint32(p + N_TGT_ADDR, true)
    const len = dv.getUint32(p + P_MSG_LEN, true)
    const id = dv.getUint32(p + P_MSG_ID, true)
    const flags = dv.getUint16(p + P_FLAGS, true) & F_NOTIFY
    const orgAddr = dv.getUint32(p + N_ORG_ADDR, true)
    const orgCntr = dv.getUint32(p + N_ORG_CNTR, true)
    const tgtCntr = dv.getUint32(p + N_TGT_CNTR, true)
    if (!this.inSeg(addr, len)) { this.drop(t); return }
    const room = this.bodyRoom - BODY_PACKET - PACKET_HEADER_BYTES
    let pos = 0
    do {
      const n = len - pos < room ? len - pos : room
      const last = pos + n >= len
      const o = this.begin(T_NET_GETR, last ? flags | F_LAST : 0, t.id, n, id, pos, len)
      this.sdv.setUint32(o + N_ORG_ADDR, orgAddr, true)
      this.sdv.setUint32(o + N_ORG_CNTR, orgCntr, true)
      if (n > 0) this.scratch.set(t.u8.subarray(addr + pos, addr + pos + n), o + PACKET_HEADER_BYTES)
      this.sendScratch(src, o, n)
      pos += n
    } while (pos < len)
    // (LAPI: the target counter of a Get moves once the data has been taken from the segment)
    this.bumpCounter(t, tgtCntr)
  }

  private onGetReply (t: LocalTask, dv: DataView, p: number, src: number, plen: number, u8: Uint8Array, off: number): boolean {
    const orgAddr = dv.getUint32(p + N_ORG_ADDR, true)
    const at = orgAddr + dv.getUint32(p + P_OFFSET, true)
    const total = dv.getUint32(p + P_MSG_LEN, true)
    if (!this.inSeg(orgAddr, total) || at + plen > orgAddr + total) { this.drop(t); return true }
    if (plen > 0) t.u8.set(u8.subarray(off + p + PACKET_HEADER_BYTES, off + p + PACKET_HEADER_BYTES + plen), at)
    const flags = dv.getUint16(p + P_FLAGS, true)
    if ((flags & F_LAST) === 0) return true
    if ((flags & F_NOTIFY) !== 0) return this.done(t, dv.getUint32(p + P_MSG_ID, true), 0n)
    Atomics.add(t.state, NET_LANDED_AT + src, 1)
    const c = dv.getUint32(p + N_ORG_CNTR, true)
    if (c !== 0) this.bumpCounter(t, c)
    else ringDoorbell(this.ctl, t.id)
    return true
  }

  private onRmw (t: LocalTask, dv: DataView, p: number, src: number): void {
    const addr = dv.getUint32(p + N_TGT_ADDR, true)
    const opw = dv.getUint32(p + N_OP, true)
    const op = opw & 0xff
    const width = opw >>> 8
    const v0 = dv.getBigInt64(p + N_VAL0, true)
    const v1 = dv.getBigInt64(p + N_VAL1, true)
    const id = dv.getUint32(p + P_MSG_ID, true)
    if ((width !== 32 && width !== 64) || op > RmwOp.COMPARE_AND_SWAP || (addr & (width === 32 ? 3 : 7)) !== 0 || !this.inSeg(addr, width >> 3)) {
      this.drop(t)
      return
    }
    let old: bigint
    if (width === 32) {
      const a = t.i32; const i = addr >>> 2; const x = Number(BigInt.asIntN(32, v0))
      switch (op) {
        case RmwOp.FETCH_AND_ADD: old = BigInt(Atomics.add(a, i, x)); break
        case RmwOp.FETCH_AND_OR: old = BigInt(Atomics.or(a, i, x)); break
        case RmwOp.SWAP: old = BigInt(Atomics.exchange(a, i, x)); break
        default: old = Atomics.compareExchange(a, i, x, Number(BigInt.asIntN(32, v1))) === x ? 1n : 0n
      }
    } else {
      const a = t.i64; const i = addr >>> 3
      switch (op) {
        case RmwOp.FETCH_AND_ADD: old = Atomics.add(a, i, v0); break
        case RmwOp.FETCH_AND_OR: old = Atomics.or(a, i, v0); break
        case RmwOp.SWAP: old = Atomics.exchange(a, i, v0); break
        default: old = Atomics.compareExchange(a, i, v0, v1) === v0 ? 1n : 0n
      }
    }
    const o = this.begin(T_NET_RMWR, 0, t.id, 0, id, 0, 0)
    this.sdv.setBigInt64(o + N_VAL0, old, true)
    this.sendScratch(src, o, 0)
  }

  /** Hands task `t` the completion of its operation `id` (T_NET_DONE in its network ring); false when the ring is full. */
  private done (t: LocalTask, id: number, value: bigint): boolean {
    const w = t.netIn
    const at = w.reserve()
    if (at < 0) return false
    const d = w.dv
    d.setUint32(at, 0, true)
    const p = at + BODY_PACKET
    for (let k = 0; k < PACKET_HEADER_BYTES; k += 4) d.setUint32(p + k, 0, true)
    d.setUint8(p + P_VERSION, PACKET_VERSION)
    d.setUint8(p + P_TYPE, T_NET_DONE)
    d.setUint32(p + P_SRC, t.id, true)
    d.setUint32(p + P_MSG_ID, id, true)
    d.setBigInt64(p + N_VAL0, value, true)
    w.publish()
    ringDoorbell(this.ctl, t.id)
    return true
  }

  // ───────────────────────────── control ─────────────────────────────

  /** Sends a control message to process `peer`. */
  private control (peer: number, m: unknown): void {
    const b = encodeMessage(m)
    // (the transport frames it itself: the body without encodeMessage's length prefix)
    this.o.transport.send(peer, FRAME_CONTROL, 0, b, 4, b.length - 4)
    this.scheduleFlush()
  }

  /** Sends a control message to every other process. */
  broadcast (m: unknown): void {
    for (let p = 0; p < this.procs; p++) if (p !== this.o.rank) this.control(p, m)
  }

  /** This process's tasks have all arrived at barrier generation `bar` - 1: report to rank 0 with their gather entries. */
  private arrive (bar: number): void {
    const m = { t: 'arrive', g: bar, f: this.localGather(this.gatherF64), i: this.localGather(this.gatherI64) }
    if (this.o.rank === 0) this.onArrive(0, m)
    else this.control(0, m)
  }

  /** This process's entries of both halves of a gather table (8 bytes per task). */
  private localGather (table: Uint8Array): Uint8Array {
    const L = this.spec.localTasks
    const out = new Uint8Array(16 * L)
    for (let h = 0; h < 2; h++) out.set(table.subarray(8 * (h * this.n + this.lo), 8 * (h * this.n + this.lo + L)), 8 * h * L)
    return out
  }

  private onArrive (peer: number, m: unknown): void {
    const g = field(m, 'g'); const f = field(m, 'f'); const i = field(m, 'i')
    const { first, count } = placement(this.n, this.procs, peer)
    if (this.o.rank !== 0 || typeof g !== 'number' || !(f instanceof Uint8Array) || !(i instanceof Uint8Array) || f.length !== 16 * count || i.length !== 16 * count) {
      this.st.dropped++
      return
    }
    for (let h = 0; h < 2; h++) {
      this.gatherF64.set(f.subarray(8 * h * count, 8 * (h + 1) * count), 8 * (h * this.n + first))
      this.gatherI64.set(i.subarray(8 * h * count, 8 * (h + 1) * count), 8 * (h * this.n + first))
    }
    const got = (this.arrivals.get(g) ?? 0) + 1
    if (got < this.procs) { this.arrivals.set(g, got); return }
    this.arrivals.delete(g)
    const rel = { t: 'release', g, f: this.gatherF64.slice(), i: this.gatherI64.slice() }
    this.broadcast(rel)
    this.onRelease(rel)
  }

  private onRelease (m: unknown): void {
    const g = field(m, 'g'); const f = field(m, 'f'); const i = field(m, 'i')
    if (typeof g !== 'number' || !(f instanceof Uint8Array) || !(i instanceof Uint8Array) || f.length !== 16 * this.n || i.length !== 16 * this.n) {
      this.st.dropped++
      return
    }
    const ctl = this.ctl
    if (((Atomics.load(ctl, W_BAR_GEN) + 1) | 0) !== g) { this.st.dropped++; return }
    this.gatherF64.set(f)
    this.gatherI64.set(i)
    Atomics.store(ctl, W_BAR_GEN, g)
    Atomics.notify(ctl, W_BAR_GEN)
    for (const t of this.tasks) ringDoorbell(ctl, t.id)
  }

  private onControl (peer: number, m: unknown): void {
    switch (field(m, 't')) {
      case 'arrive': this.onArrive(peer, m); break
      case 'release': if (peer === 0) this.onRelease(m); else this.st.dropped++; break
      case 'state': {
        const task = field(m, 'task'); const state = field(m, 'state')
        if (typeof task !== 'number' || !this.fromPeer(peer, task) || (state !== TaskState.EXITED && state !== TaskState.FAILED && state !== TaskState.TERMINATED)) {
          this.st.dropped++
          break
        }
        this.setRemoteState(task, state)
        break
      }
      case 'abort': {
        const task = field(m, 'task'); const reason = field(m, 'reason')
        const t = typeof task === 'number' && Number.isInteger(task) && task >= -1 && task < this.n ? task : -1
        this.o.onAbort(t, typeof reason === 'string' ? reason : 'aborted by another process')
        break
      }
      default: this.st.dropped++
    }
  }

  private setRemoteState (task: number, state: number): void {
    Atomics.store(this.ctl, taskWord(task, T_STATE), state)
    for (const t of this.tasks) ringDoorbell(this.ctl, t.id)
  }

  /** A task of this process ended (`failed`: not normally): tell the other processes. */
  taskEnded (task: number, failed: boolean): void {
    this.broadcast({ t: 'state', task, state: failed ? TaskState.FAILED : TaskState.EXITED })
  }

  /** The job is aborted here: tell the other processes. */
  abort (task: number, reason: string): void {
    this.broadcast({ t: 'abort', task, reason })
    this.o.transport.flush()
  }

  /** Process `peer` is gone: its tasks are marked, and unless it said goodbye, the job ends. */
  peerLost (peer: number, reason: string, normal: boolean): void {
    const { first, count } = placement(this.n, this.procs, peer)
    for (let t = first; t < first + count; t++) {
      const st = Atomics.load(this.ctl, taskWord(t, T_STATE))
      if (st !== TaskState.EXITED && st !== TaskState.FAILED) this.setRemoteState(t, normal ? TaskState.EXITED : TaskState.FAILED)
    }
    if (!normal) {
      const tasks = count === 1 ? `task ${first}` : `tasks ${first}-${first + count - 1}`
      const why = `process ${peer} (${tasks}) was lost: ${reason}`
      this.o.log.debug({ peer, reason }, 'peer lost')
      abortJob(this.ctl, this.n, first)
      this.o.onAbort(first, why)
    }
  }
}
