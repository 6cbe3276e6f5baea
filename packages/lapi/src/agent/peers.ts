/**
 * When a peer process is gone: the end of its stream, an error, a malformed stream (seen by the
 * frame path), or a loss the transport reported (a datagram peer's timeout). Each is judged once
 * what the peer sent before has been taken in — its goodbye may be behind it — and its tasks are
 * marked ended; a peer lost without a goodbye ends the job.
 */
import type { Logger } from 'pino'
import { TASK_STATE, TaskState, abortJob, taskWord } from '../layout/control.js'
import { placement, type JobSpec } from '../layout/job-spec.js'
import { PEER_BYE, PEER_EOF, PEER_ERROR, PEER_MALFORMED } from '../layout/stream.js'
import type { Transport, TransportKind } from '../transport/contract.js'
import { transportKind } from '../transport/registry.js'
import type { NetEngine } from '../engine/engine.js'
import { ENG_OWNER } from '../layout/engine.js'
import type { ControlPlane } from './control.js'
import type { Rounds } from './rounds.js'

/** Longest a lost peer's last frames may wait to be taken in before the loss is judged, ms. */
const LOSS_DRAIN_MS = 5000
/**
 * Shortest time from a loss being seen to its judgement, ms: what the peer sent just before may
 * still wait unread in the socket (a goodbye datagram, when a write of this process found the
 * peer's port closed, as one resumed after a stop does).
 */
const LOSS_LOOK_MS = 50

export interface PeersOptions {
  spec: Omit<JobSpec, 'taskId'>
  rank: number
  engine: NetEngine
  transport: Transport
  log: Logger
  rounds: Rounds
  control: ControlPlane
  /** The job is over for this process: a peer was lost (`task`: its first task). */
  onAbort: (task: number, reason: string) => void
}

export class Peers {
  private readonly o: PeersOptions
  private readonly ctl: Int32Array
  private readonly w: Int32Array
  private readonly n: number
  private readonly procs: number
  private readonly engine: NetEngine
  private readonly rounds: Rounds
  /** The transport's kind: how a peer's state reads in the frame path's memory. */
  private readonly kind: TransportKind
  private readonly gone: boolean[]
  /** Losses the transport reported, not judged yet (reason by peer). */
  private readonly reported: Array<string | undefined> = []
  /** When a loss of each peer was first seen (ms). */
  private readonly lossSeen: Array<number | undefined> = []

  constructor(o: PeersOptions) {
    this.o = o
    this.ctl = new Int32Array(o.spec.control)
    this.w = new Int32Array(o.spec.net!.stream.words)
    this.n = o.spec.numTasks
    this.procs = o.spec.processes
    this.engine = o.engine
    this.rounds = o.rounds
    this.kind = transportKind(o.spec.net!.transport)
    this.gone = new Array<boolean>(this.procs).fill(false)
  }

  /**
   * Peers the frame path found gone (end of stream, an error, a malformed stream), and losses the
   * transport reported: each is judged once everything the peer sent before has been taken in
   * (its goodbye may be behind frames that wait for room), or after LOSS_DRAIN_MS; before its
   * goodbye is in, never sooner than LOSS_LOOK_MS after it was seen.
   */
  check(): void {
    const s = this.o.spec.net!.stream
    for (let p = 0; p < this.procs; p++) {
      if (p === this.o.rank || this.gone[p]) continue
      const f = this.kind.peerFlags(s, p)
      const reported = this.reported[p]
      if ((f & (PEER_EOF | PEER_ERROR | PEER_MALFORMED)) === 0 && reported === undefined) continue
      if ((f & PEER_MALFORMED) === 0) {
        const now = performance.now()
        const seen = (this.lossSeen[p] ??= now)
        // (a peer whose goodbye is in needs no look for it)
        if ((now < seen + LOSS_LOOK_MS && (f & PEER_BYE) === 0) || (this.unread(p) && now < seen + LOSS_DRAIN_MS)) {
          this.rounds.later(1)
          continue
        }
      }
      this.gone[p] = true
      this.o.log.debug({ peer: p, flags: f, reported, unparsed: this.engine.path.unparsed(p), owner: Atomics.load(this.w, ENG_OWNER) }, 'peer gone')
      // (after its goodbye a peer's end is normal, even when a last write of ours found it closed)
      const normal = (f & PEER_BYE) !== 0 && (f & PEER_MALFORMED) === 0
      const reason =
        (f & PEER_MALFORMED) !== 0
          ? 'it sent a malformed stream'
          : normal
            ? 'closed'
            : reported !== undefined
              ? reported
              : (f & PEER_ERROR) !== 0
                ? (this.o.transport.lossReason?.(p) ?? 'connection lost')
                : 'connection closed without goodbye'
      this.o.transport.lost(p, reason, normal)
      this.lost(p, reason, normal)
    }
  }

  /**
   * Whether what peer `p` sent may still wait to be taken in: bytes in the frame path or read by
   * the event loop, or control messages a task took off the network and queued for this thread
   * (a peer's last `release` and `state` come just before its goodbye: judged first, its end
   * would mark its tasks gone before this process saw them pass the barrier). While a task holds
   * the lock nothing can be told: the answer is yes.
   */
  private unread(p: number): boolean {
    if (this.engine.path.unparsed(p) > 0) return true
    // (-1: a datagram, whose sender is known once it is taken in)
    const inb = this.rounds.inbound
    for (let k = 0; k < inb.length; k += 3) if (inb[k] === p || inb[k] === -1) return true
    let queued = true
    this.engine.locked(() => {
      queued = this.engine.controlQueued
    })
    return queued
  }

  /** The transport's onPeerLost: judged by `check` (the goodbye may still be unread). */
  reportLoss(peer: number, reason: string): void {
    if (this.gone[peer]) return
    this.reported[peer] = reason
    this.check()
  }

  /** Process `peer` is gone: its tasks are marked, and unless it said goodbye, the job ends. */
  lost(peer: number, reason: string, normal: boolean): void {
    const { first, count } = placement(this.n, this.procs, peer)
    for (let t = first; t < first + count; t++) {
      const st = Atomics.load(this.ctl, taskWord(t, TASK_STATE))
      if (st !== TaskState.EXITED && st !== TaskState.FAILED) this.o.control.setRemoteState(t, normal ? TaskState.EXITED : TaskState.FAILED)
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
