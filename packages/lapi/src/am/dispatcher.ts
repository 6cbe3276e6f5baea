/**
 * The dispatcher (docs/architecture.md, "Inbox rings and the dispatcher"): a round takes in every
 * packet waiting in the inbox — SHORT and BARE packets to am/receiver.ts, those of the common
 * format by type to am/reassembly.ts, am/rendezvous.ts or net/remote-ops.ts — giving each slot
 * back as soon as its packet is handled; then, at the top level, it acts on the queued CTS packets
 * and runs the queued completion handlers. It is what every wait of the task runs (`Progress`),
 * and what they ask whether there is anything to do (`inboxPending`, `busy`).
 */
import type { NetEngine } from '../engine/engine.js'
import type { RemoteOps } from '../net/remote-ops.js'
import { BODY_PACKET, PACKET_VERSION, P_LEN, P_SRC, P_TYPE, P_VERSION, T_AM_BARE, T_AM_SHORT, T_NET_DONE } from '../transport/packet.js'
import type { RingReader } from '../transport/ring.js'
import type { Rings } from '../core/rings.js'
import type { ContextState } from '../core/state.js'
import type { Progress } from '../core/types.js'
import type { ChaosTransport, HeldPacket } from './chaos.js'
import { MAX_NESTED_COMPLETIONS, type Completions } from './completions.js'
import type { Reassembly } from './reassembly.js'
import type { Receiver } from './receiver.js'
import type { Rendezvous } from './rendezvous.js'
import type { AmState } from './state.js'
import { BARE_WORD0, LITTLE_ENDIAN, SHORT_WORD0, T_AM_CTS, T_AM_DATA, T_AM_FIN, T_AM_HEAD, T_AM_PULLED } from './wire.js'

export class Dispatcher implements Progress {
  private readonly c: ContextState
  private readonly a: AmState
  private readonly rings: Rings
  private readonly polled: RingReader[]
  private readonly rx: Receiver
  private readonly done: Completions
  private readonly reassembly: Reassembly
  private readonly rndv: Rendezvous
  /** CTS packets the rendezvous queued (Rendezvous.ctsQueue). */
  private readonly ctsQueue: number[]
  private readonly chaos: ChaosTransport
  /** The packets the test transport holds back (ChaosTransport.held). */
  private readonly held: HeldPacket[]
  private readonly remote: RemoteOps
  private readonly net: NetEngine | null
  private readonly maxPkt: number
  /** 1 over the test transport (ChaosTransport.on). */
  private readonly chaotic: number
  /** 1 while poll() walks the rings. */
  private polling = 0
  /** 1 right after inboxPending ran the engine: the dispatcher round that follows need not run it again. */
  private netFresh = 0
  // Constants of the per-packet path, read as fields (see am/send.ts)
  /** 1 on a little-endian host: SHORT packets are read by words in host order. */
  private readonly shortRead: number
  private readonly shortWord0 = SHORT_WORD0
  private readonly bareWord0 = BARE_WORD0

  constructor(
    s: ContextState,
    a: AmState,
    rings: Rings,
    rx: Receiver,
    done: Completions,
    reassembly: Reassembly,
    rndv: Rendezvous,
    chaos: ChaosTransport,
    remote: RemoteOps,
  ) {
    this.c = s
    this.a = a
    this.rings = rings
    this.polled = rings.polled
    this.rx = rx
    this.done = done
    this.reassembly = reassembly
    this.rndv = rndv
    this.ctsQueue = rndv.ctsQueue
    this.chaos = chaos
    this.held = chaos.held
    this.remote = remote
    this.net = s.net
    this.maxPkt = s.config.maxPktSz
    this.chaotic = chaos.on
    this.shortRead = LITTLE_ENDIAN ? 1 : 0
  }

  /**
   * Takes in every packet waiting in the inbox: header handlers, data landing, queueing of
   * completions; it may itself send (CTS, PULLED) and bump counters. Returns the packets handled.
   */
  poll(now = false): number {
    // A completion handler run inline from here may call LAPI, which polls again: the packet being
    // handled is still in its slot, so a nested round must not touch the rings.
    if (this.polling) return 0
    if (this.chaotic) this.chaos.flush(false)
    const net = this.net
    if (net !== null) {
      if (this.netFresh === 0) net.poll(now)
      this.netFresh = 0
    }
    this.polling = 1
    let n: number
    try {
      n = this.drain()
    } finally {
      this.polling = 0
      this.done.draining = -1
    }
    // (CTS and PULLED that found a full ring while the packets were taken in go now, where room is)
    if (this.rndv.controlPending) this.rndv.flushControl()
    return n
  }

  /**
   * Takes the packets of each ring: those stamped in a row when the ring's turn came (at most a
   * ring's worth; `RingReader.available` says what that reads), so one sender cannot starve the
   * others.
   */
  private drain(): number {
    const rings = this.rings
    const done = this.done
    if (rings.tailsHeld) rings.publishTails()
    let n0 = 0
    const polled = this.polled
    for (let i = 0; i < polled.length; i++) {
      const r = polled[i]!
      const n = r.available()
      if (n === 0) continue
      done.draining = rings.polledTask[i]!
      const same = r.sameThread
      let held = 0
      const u8 = r.u8
      const i32 = r.i32
      try {
        for (let k = 0; k < n; k++) {
          done.landedHere = 0
          const off = r.front()
          const w0 = i32[off >> 2]!
          if ((w0 === this.shortWord0 || w0 === this.bareWord0) && this.shortRead !== 0) this.rx.onShort(u8, i32, off, w0)
          else this.handle(u8, r.dv, off + BODY_PACKET)
          // Each slot goes back as soon as its packet is handled (a handler further on may send
          // and need the room), and a message consumed in its header handler counts as landed in
          // the same store; in polling mode that store waits for the task's next step in LAPI
          // (`tailsHeld`). (Messages with a completion handler count as landed before it runs.)
          // `holdTails` is looked at for each packet: a handler may have ended the context.
          held = same ? 0 : rings.holdTails
          r.release(done.landedHere, held)
          // (marked at each release: a handler further on may send or wait, which publishes)
          if (held !== 0) rings.tailsHeld = 1
        }
      } finally {
        done.landedHere = 0
        done.draining = -1
      }
      n0 += n
      // a sender blocked on this ring, or fencing, may go on: now, or when the held TAIL goes out
      if (!held) rings.bell(i)
    }
    if (rings.tailsHeld && !rings.holdTails) rings.publishTails()
    return n0
  }

  /**
   * A full dispatcher round: packets in, then (unless a send is blocked) the queued CTS actions and
   * completion handlers. Returns the number of things done. `now`: an explicit poll or a wait's
   * round, which reads the network and writes what waits at once; otherwise (the poll a send
   * makes on the side) the network is read at most once per the engine's read gap.
   */
  progress(now = true): number {
    let n = this.poll(now)
    const c = this.c
    if (c.sendBlocked > 0 || c.inHeaderHandler) return n
    if (this.ctsQueue.length > 0) n += this.rndv.runCts()
    const done = this.done
    if (done.cqHead !== done.cqTail && done.depth < MAX_NESTED_COMPLETIONS) n += done.runCompletions()
    return n
  }

  /** True when a packet waits in the inbox. */
  inboxPending(): boolean {
    // (slots the last round gave back without publishing them (`tailsHeld`) go back now: a wait
    // that finds its rings empty would otherwise keep their producers — another task, the agent,
    // or this thread's engine with frames for this task — from refilling them until its next
    // dispatcher round; docs/architecture.md, "TAIL held back")
    const rings = this.rings
    if (rings.tailsHeld) rings.publishTails()
    // (what crossed the network may still be in the socket: take it in first)
    if (this.net !== null) this.net.poll(true)
    const polled = this.polled
    for (let i = 0; i < polled.length; i++) {
      if (polled[i]!.nonEmpty) {
        // (the dispatcher round that follows need not run the engine again)
        this.netFresh = 1
        return true
      }
    }
    return false
  }

  /** Work queued or held that needs more dispatcher rounds (a waiting task must not sleep). */
  get busy(): boolean {
    return this.ctsQueue.length > 0 || this.done.cqHead !== this.done.cqTail || this.held.length > 0
  }

  /** True when the test transport still holds packets. */
  get holding(): boolean {
    return this.held.length > 0
  }

  /** Sends the packets the test transport holds back (`all`: every one, now). */
  flushChaos(all: boolean): void {
    this.chaos.flush(all)
  }

  /** A packet of the common format, by type; malformed ones are dropped and counted. */
  private handle(u8: Uint8Array, dv: DataView, off: number): void {
    if (u8[off + P_VERSION] !== PACKET_VERSION) {
      this.a.dropped++
      return
    }
    const len = dv.getUint32(off + P_LEN, true)
    const src = dv.getUint32(off + P_SRC, true)
    if (len > this.maxPkt || src >= this.c.numTasks) {
      this.a.dropped++
      return
    }
    switch (u8[off + P_TYPE]) {
      case T_AM_HEAD:
        this.reassembly.onHead(u8, dv, off, src, len)
        break
      case T_AM_DATA:
        this.reassembly.onData(u8, dv, off, src, len)
        break
      case T_AM_CTS:
        this.rndv.onCts(dv, off, src)
        break
      case T_AM_FIN:
        this.reassembly.onFin(dv, off, src)
        break
      case T_AM_PULLED:
        this.rndv.onPulled(dv, off, src)
        break
      case T_NET_DONE:
        if (src !== this.c.taskId || this.done.draining !== -1 || this.remote.onDone(dv, off) !== 0) this.a.dropped++
        break
      case T_AM_SHORT:
      case T_AM_BARE:
        this.a.dropped++
        break // flags set, or a big-endian host: not a packet this build writes
      default:
        this.a.dropped++
    }
  }
}
