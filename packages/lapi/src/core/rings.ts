/**
 * The ring ends of one task (docs/architecture.md, "Inbox rings and the dispatcher"): the rings of
 * its inbox, which its dispatcher reads (one per task of this process, then the network's), and
 * its way to every task (a ring of that task's inbox, or the stand-in toward the network). Besides
 * building them it answers what the other parts ask of them: how many sent messages have not
 * landed yet, and the TAILs the dispatcher held back (`tailsHeld`), which every step of the task
 * in LAPI publishes.
 */
import { ringDoorbell } from '../layout/control.js'
import type { NetEngine } from '../engine/engine.js'
import { RemoteSource, RemoteWriter } from '../net/remote-ends.js'
import { RingReader, RingWriter, type OutRing } from '../transport/ring.js'
import { netRingAt } from '../layout/ring.js'
import type { ContextState } from './state.js'

export class Rings {
  /**
   * What the dispatcher tells each source, index = task id: the ring from a task of this process,
   * or for a task of another process the stand-in that records its messages landed here.
   */
  readonly inbox: Array<RingReader | RemoteSource>
  /** The rings of the inbox the dispatcher reads: one per task of this process, then the network's. */
  readonly polled: RingReader[]
  /** The task whose ring `polled[i]` is (-1: the network ring, whose producer is the agent). */
  readonly polledTask: Int32Array
  /** The way to each task, index = task id: a ring of its inbox, or the stand-in toward the network. */
  readonly outbox: OutRing[]
  private readonly ctl: Int32Array
  private readonly net: NetEngine | null
  /**
   * The dispatcher may hold TAIL back until the task's next step in LAPI (`tailsHeld`): in polling
   * mode, unless ACK_THRESHOLD is 1 (LAPI's acknowledgements are then not batched). Settings.holds.
   */
  holdTails = 0
  /**
   * Rings whose slots were given back in polling mode without TAIL published (`holdTails`): the
   * store of TAIL (with LANDED) and the sender's doorbell wait until this task's next step in
   * LAPI — its next send (after the packet is out), dispatcher round, one-sided call, counter
   * wait or sleep — so that they are not on the path from the message to its answer. LAPI's
   * acknowledgements are batched likewise (ACK_THRESHOLD); in polling mode nothing of a task
   * moves while it is outside LAPI anyway.
   */
  tailsHeld = 0

  constructor(s: ContextState) {
    const spec = s.spec
    this.ctl = s.ctl
    this.net = s.net
    const lo = spec.firstTask
    const nLocal = spec.localTasks
    const myInbox = spec.inboxes[spec.taskId]!
    // My inbox: ring i from task lo + i, then the network ring (what the engine brings in).
    this.inbox = []
    this.polled = []
    for (let t = 0; t < spec.numTasks; t++) {
      if (s.local[t] === 1) {
        const r = new RingReader(myInbox, spec.ring, t - lo)
        this.inbox.push(r)
        this.polled.push(r)
      } else {
        this.inbox.push(new RemoteSource(spec.numTasks, t, s.netState!))
      }
    }
    this.polledTask = new Int32Array(this.polled.length + (spec.processes > 1 ? 1 : 0))
    for (let i = 0; i < nLocal; i++) this.polledTask[i] = lo + i
    if (spec.processes > 1) {
      // what the agent brings in from the network (any remote source; the packets say which)
      this.polled.push(new RingReader(myInbox, spec.netIn!, 0, netRingAt(spec.ring)))
      this.polledTask[nLocal] = -1
    }
    this.outbox = []
    const toNet = spec.netOut[spec.taskId]
    const netWriter = toNet !== null && toNet !== undefined ? new RingWriter(toNet, spec.netRing, 0) : null
    for (let t = 0; t < spec.numTasks; t++) {
      if (s.local[t] === 1) this.outbox.push(new RingWriter(spec.inboxes[t]!, spec.ring, spec.taskId - lo))
      else this.outbox.push(new RemoteWriter(netWriter!, spec.ring, t, s.netState!, s.ctl))
    }
    ;(this.inbox[spec.taskId] as RingReader).sameThreadWriter(this.outbox[spec.taskId] as RingWriter)
  }

  /** Active messages of this task that have not landed at their targets yet (the fence waits for 0). */
  outstanding(): number {
    let n = 0
    const out = this.outbox
    // (per ring, never below 0: a ring whose count a new writer took over can show more landed than sent)
    for (let t = 0; t < out.length; t++) {
      const o = out[t]!.outstanding()
      if (o > 0) n += o
    }
    return n
  }

  /** Publishes the TAILs the dispatcher held back (`tailsHeld`): every LAPI step of the task does. */
  flushTails(): void {
    if (this.tailsHeld) this.publishTails()
  }

  /** Publishes every held TAIL and rings the senders' doorbells (see `tailsHeld`). */
  publishTails(): void {
    this.tailsHeld = 0
    const rings = this.polled
    for (let i = 0; i < rings.length; i++) if (rings[i]!.publishTail() !== 0) this.bell(i)
  }

  /** Rings the doorbell of the producer of `polled[i]`: its task, or the agent for the network ring. */
  bell(i: number): void {
    const t = this.polledTask[i]!
    if (t >= 0) ringDoorbell(this.ctl, t)
    else if (this.net !== null) this.net.roomFreed()
  }
}
