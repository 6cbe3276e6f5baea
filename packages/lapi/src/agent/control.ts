/**
 * The agent's control plane (its messages: agent/control-messages.ts): it completes the job
 * barrier, and the all-gathers riding on it, with the other agents — each reports when its tasks
 * have all arrived, process 0 releases everyone —, and carries task ends and the job's abort to
 * and from the other processes. A message that is not what the protocol allows is dropped,
 * counted and named in the log.
 */
import type { Logger } from 'pino'
import { TASK_EXIT_GEN, TASK_STATE, TaskState, CTL_BAR_GEN, controlLayout, ringDoorbell, taskWord } from '../layout/control.js'
import { placement, type JobSpec } from '../layout/job-spec.js'
import { decodeControl, encodeControl, type ArriveMessage, type ControlJob, type ControlMessage, type ReleaseMessage } from './control-messages.js'

/** Dropped messages named in the log at warn level; those after them at debug level. */
const DROPS_WARNED = 16

export interface ControlOptions {
  spec: Omit<JobSpec, 'taskId'>
  rank: number
  log: Logger
  /** Sends an encoded message (with its length prefix) to process `peer`. */
  send: (peer: number, message: Buffer) => void
  /** The job is over for this process: a peer sent an abort (`task`: the failed task, or -1). */
  onAbort: (task: number, reason: string) => void
}

export class ControlPlane {
  private readonly o: ControlOptions
  private readonly ctl: Int32Array
  private readonly n: number
  private readonly procs: number
  private readonly lo: number
  private readonly local: number
  private readonly job: ControlJob
  private readonly gatherF64: Uint8Array
  private readonly gatherI64: Uint8Array
  /** Process 0: arrivals per generation. */
  private readonly arrivals = new Map<number, number>()
  /** Control messages dropped. */
  dropped = 0

  constructor(o: ControlOptions) {
    this.o = o
    const spec = o.spec
    this.ctl = new Int32Array(spec.control)
    this.n = spec.numTasks
    this.procs = spec.processes
    this.lo = spec.firstTask
    this.local = spec.localTasks
    this.job = { numTasks: spec.numTasks, processes: spec.processes, rank: o.rank }
    const layout = controlLayout(this.n)
    this.gatherF64 = new Uint8Array(spec.control, layout.gatherF64, 16 * this.n)
    this.gatherI64 = new Uint8Array(spec.control, layout.gatherI64, 16 * this.n)
  }

  /** A control message's body from process `peer` (the engine's, or one a task took off the network). */
  onBody(peer: number, body: Uint8Array): void {
    const d = decodeControl(body, peer, this.job)
    if (!d.ok) {
      this.drop(peer, d.reason)
      return
    }
    const m = d.message
    switch (m.t) {
      case 'arrive':
        this.onArrive(peer, m)
        break
      case 'release':
        this.onRelease(m)
        break
      case 'state':
        Atomics.store(this.ctl, taskWord(m.task, TASK_EXIT_GEN), m.g)
        this.setRemoteState(m.task, m.state)
        break
      case 'abort':
        this.o.onAbort(m.task, m.reason)
        break
    }
  }

  /** Counts a message dropped and names it in the log (why, and from whom). */
  private drop(peer: number, reason: string): void {
    this.dropped++
    const fields = { peer, reason, dropped: this.dropped }
    if (this.dropped <= DROPS_WARNED) this.o.log.warn(fields, 'control message dropped')
    else this.o.log.debug(fields, 'control message dropped')
  }

  /** Sends message `m` to every other process (encoded once). */
  broadcast(m: ControlMessage): void {
    const b = encodeControl(m)
    for (let p = 0; p < this.procs; p++) if (p !== this.o.rank) this.o.send(p, b)
  }

  /** This process's tasks have all arrived at barrier generation `bar` - 1: report to process 0 with their gather entries. */
  arrive(bar: number): void {
    const m: ArriveMessage = { t: 'arrive', g: bar, f: this.localGather(this.gatherF64), i: this.localGather(this.gatherI64) }
    if (this.o.rank === 0) this.onArrive(0, m)
    else this.o.send(0, encodeControl(m))
  }

  /** This process's entries of both halves of a gather table (8 bytes per task). */
  private localGather(table: Uint8Array): Uint8Array {
    const L = this.local
    const out = new Uint8Array(16 * L)
    for (let h = 0; h < 2; h++) out.set(table.subarray(8 * (h * this.n + this.lo), 8 * (h * this.n + this.lo + L)), 8 * h * L)
    return out
  }

  /** Process 0: process `peer`'s tasks arrived (the decoder checked the sizes); the last arrival releases everyone. */
  private onArrive(peer: number, m: ArriveMessage): void {
    const { first, count } = placement(this.n, this.procs, peer)
    const { g, f, i } = m
    for (let h = 0; h < 2; h++) {
      this.gatherF64.set(f.subarray(8 * h * count, 8 * (h + 1) * count), 8 * (h * this.n + first))
      this.gatherI64.set(i.subarray(8 * h * count, 8 * (h + 1) * count), 8 * (h * this.n + first))
    }
    const got = (this.arrivals.get(g) ?? 0) + 1
    if (got < this.procs) {
      this.arrivals.set(g, got)
      return
    }
    this.arrivals.delete(g)
    const rel: ReleaseMessage = { t: 'release', g, f: this.gatherF64.slice(), i: this.gatherI64.slice() }
    this.broadcast(rel)
    this.onRelease(rel)
  }

  /** Barrier generation `g` is complete: the tables are the job's, and this process's tasks pass. */
  private onRelease(m: ReleaseMessage): void {
    const ctl = this.ctl
    const next = (Atomics.load(ctl, CTL_BAR_GEN) + 1) | 0
    if (next !== m.g) {
      this.drop(0, `release: barrier generation ${m.g}, this process waits for ${next}`)
      return
    }
    this.gatherF64.set(m.f)
    this.gatherI64.set(m.i)
    Atomics.store(ctl, CTL_BAR_GEN, m.g)
    Atomics.notify(ctl, CTL_BAR_GEN)
    for (let t = this.lo; t < this.lo + this.local; t++) ringDoorbell(ctl, t)
  }

  /** Task `task` of another process is in `state` now: this process's tasks are rung to see it. */
  setRemoteState(task: number, state: number): void {
    Atomics.store(this.ctl, taskWord(task, TASK_STATE), state)
    for (let t = this.lo; t < this.lo + this.local; t++) ringDoorbell(this.ctl, t)
  }

  /** A task of this process ended (`failed`: not normally): tell the other processes. */
  taskEnded(task: number, failed: boolean): void {
    // (with the barrier generation it passed: a peer still waiting for that barrier's release, which
    // may arrive after this, must not take the end for a task that left before it)
    this.broadcast({ t: 'state', task, state: failed ? TaskState.FAILED : TaskState.EXITED, g: Atomics.load(this.ctl, CTL_BAR_GEN) })
  }

  /** The job is aborted here: tell the other processes (`task`: the failed task; any other number goes as -1, no task). */
  abort(task: number, reason: string): void {
    this.broadcast({ t: 'abort', task: Number.isInteger(task) && task >= -1 && task < this.n ? task : -1, reason })
  }
}
