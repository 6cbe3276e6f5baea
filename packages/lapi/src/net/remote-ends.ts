/**
 * The task's ends of its network path, standing in for the ring ends of a task in another process:
 * `RemoteWriter` is `outbox[t]` for a remote task t (packets go into the task's one ring toward the
 * network, each tagged with its destination), `RemoteSource` is `inbox[s]` for a remote source s
 * (what the dispatcher tells a source's ring — that a message landed — goes into the task's network
 * state, for the agent to acknowledge). Both speak the interface of the ring ends they replace, so
 * the active-message code does not know which carries a packet.
 */
import type { RingWriter, OutRing } from '../transport/ring.js'
import type { RingGeometry } from '../layout/ring.js'
import { TASK_STATE, TaskState, taskWord } from '../layout/control.js'
import { NS_DIRTY, NS_LANDED_AT, netLandedFrom, netTagOffset } from '../layout/job-spec.js'

/** `outbox[t]` for task t of another process. Every RemoteWriter of a task shares one RingWriter. */
export class RemoteWriter implements OutRing {
  readonly u8: Uint8Array
  readonly dv: DataView
  readonly i32: Int32Array
  private readonly out: RingWriter
  private readonly dst: number
  private readonly tag: number
  private readonly state: Int32Array
  private readonly landedWord: number
  /** Messages sent to dst (for the fence). */
  private sent = 0
  private readonly ctl: Int32Array
  private readonly stateWord: number
  /** Slots of the ring toward the network, which this end shares with the task's others. */
  readonly slots: number
  /** Packets reserved toward dst since it left the job. */
  private toGone = 0

  constructor(out: RingWriter, ring: RingGeometry, dst: number, state: Int32Array, ctl: Int32Array) {
    this.ctl = ctl
    this.stateWord = taskWord(dst, TASK_STATE)
    this.slots = out.slots
    this.out = out
    this.u8 = out.u8
    this.dv = out.dv
    this.i32 = out.i32
    this.dst = dst
    this.tag = netTagOffset(ring)
    this.state = state
    this.landedWord = NS_LANDED_AT + dst
  }

  /**
   * A free slot's body offset, its destination tag set (or -1 when the ring toward the network is
   * full). A task that has left the job reads nothing any more: as its inbox ring would, the way to
   * it fills after a ring's worth of packets (and the sender's wait for room then fails, naming it).
   */
  reserve(): number {
    const st = this.ctl[this.stateWord]!
    if (st === TaskState.EXITED || st === TaskState.FAILED) {
      if (this.toGone >= this.slots) return -1
      this.toGone++
    }
    const off = this.out.reserve()
    if (off >= 0) this.dv.setInt32(off + this.tag, this.dst, true)
    return off
  }

  publish(): void {
    this.out.publish()
  }
  get published(): number {
    return this.out.published
  }
  pending(): number {
    return this.out.pending()
  }
  markSent(): void {
    this.sent = (this.sent + 1) | 0
  }
  outstanding(): number {
    return (this.sent - Atomics.load(this.state, this.landedWord)) | 0
  }
}

/** `inbox[s]` for task s of another process: counts s's messages that landed here, for the agent to acknowledge. */
export class RemoteSource {
  private readonly state: Int32Array
  private readonly word: number

  constructor(numTasks: number, src: number, state: Int32Array) {
    this.state = state
    this.word = netLandedFrom(numTasks, src)
  }

  /**
   * Counts `n` messages of the source landed, for the engine to acknowledge; false: no doorbell to
   * ring (the news goes with the acknowledgement, which a doorbell would not send sooner).
   */
  markLanded(n: number): boolean {
    Atomics.add(this.state, this.word, n)
    // (a store only when it is clear: the acknowledger clears it before it reads the counts, so a
    // look that still sees it set is followed by a read that sees this message)
    if (this.state[NS_DIRTY] === 0) Atomics.store(this.state, NS_DIRTY, 1)
    return false
  }
}
