/**
 * The agent: the network's side of a process, in its main thread beside the task workers
 * (docs/transports.md, "The agent"). The data plane is the network engine's (engine/engine.ts),
 * which any thread runs under the process's network lock; the agent
 *
 *   - decides who reads the connections: its own event loop while no task polls (a task busy in
 *     its own code or asleep still gets its one-sided operations served), the polling tasks
 *     themselves while they do (agent/connections.ts);
 *   - runs the engine for everything that must not wait for a task: bytes its event loop read,
 *     packets no task sent, answers still queued, messages that waited for room in a ring
 *     (agent/rounds.ts);
 *   - owns the control plane: it completes the barrier (and the all-gathers riding on it) with
 *     the other agents, carries task exits and the job's abort to the other processes
 *     (agent/control.ts, its messages agent/control-messages.ts), and notices a lost one
 *     (agent/peers.ts).
 *
 * This file holds its face and its event loop: it waits on its doorbell (control block AGENT_BELL)
 * with Atomics.waitAsync, so it sleeps in the event loop until a task rings it or a connection has
 * data.
 */
import type { Logger } from 'pino'
import { CTL_AGENT_BELL, CTL_AGENT_QUIET, CTL_AGENT_QUIET_BELL, CTL_AGENT_SLEEPING, CTL_BAR_LOCAL } from '../layout/control.js'
import type { JobSpec } from '../layout/job-spec.js'
import type { Transport } from '../transport/contract.js'
import { AGENT_ID, OWNER_AGENT, OWNER_TASKS, ENG_BLOCKED, ENG_CTRL, ENG_GIVEBACK, ENG_OWNER, ENG_PARKED, ENG_WANT } from '../layout/engine.js'
import { NetEngine } from '../engine/engine.js'
import { Connections } from './connections.js'
import { ControlPlane } from './control.js'
import type { ControlMessage } from './control-messages.js'
import { describeNetwork } from './network-report.js'
import { Peers } from './peers.js'
import { Rounds } from './rounds.js'

export { IDLE_TICKS } from './connections.js'

/** Longest a process's goodbye waits for what it has queued to be written, ms. */
const FINISH_MS = 5000
/** Longest sleep of the agent between two rounds, ms: acknowledgements nobody else sends go then. */
const ACK_CHECK_MS = 5
/**
 * … twice as long after each such sleep that ended with nothing owed and nothing the tasks have
 * yet to take in (or no bytes for QUIET_AFTER_MS), up to this, ms; bytes that come in bring it
 * back to ACK_CHECK_MS. An idle process's agent would otherwise wake 200 times a second, each wake
 * a round (3–4% of a CPU here), taken from the tasks that compute beside it.
 */
const ACK_CHECK_MAX_MS = 80
/**
 * No bytes for this long, ms, and the agent's sleeps grow even while a task's network ring shows
 * messages not taken in (a task that took them in and left LAPI may not have said so yet).
 */
const QUIET_AFTER_MS = 100

export interface AgentOptions {
  spec: Omit<JobSpec, 'taskId'>
  rank: number
  transport: Transport
  log: Logger
  /** The job is over for this process: a peer was lost or sent an abort (`task`: the lost or failed task, or -1). */
  onAbort: (task: number, reason: string) => void
}

export class Agent {
  private readonly o: AgentOptions
  private readonly ctl: Int32Array
  private readonly w: Int32Array
  private readonly engine: NetEngine
  private readonly rounds: Rounds
  private readonly control: ControlPlane
  private readonly peers: Peers
  private readonly conn: Connections
  /** The barrier generation this process has reported complete (or -1). */
  private reportedBar = -1
  private wakes = 0
  /** Bounded sleeps in a row that ended with nothing owed (each doubles the next one's bound). */
  private quietChecks = 0
  /** When the event loop last read bytes (ms). */
  private bytesAt = 0

  constructor(o: AgentOptions) {
    this.o = o
    const { spec, rank, transport, log } = o
    this.ctl = new Int32Array(spec.control)
    this.w = new Int32Array(spec.net!.stream.words)
    const onControl = (peer: number, body: Uint8Array): void => this.control.onBody(peer, body)
    const engine = (this.engine = new NetEngine(spec, rank, AGENT_ID, onControl))
    const rounds = (this.rounds = new Rounds({
      engine,
      transport,
      log,
      w: this.w,
      procs: spec.processes,
      onControl,
      onBell: () => this.onBell(),
      checkPeers: () => this.peers.check(),
    }))
    const control = (this.control = new ControlPlane({ spec, rank, log, send: (peer, m) => rounds.send(peer, m), onAbort: o.onAbort }))
    this.peers = new Peers({ spec, rank, engine, transport, log, rounds, control, onAbort: o.onAbort })
    this.conn = new Connections({ engine, transport, log, w: this.w, rounds, checkPeers: () => this.peers.check(), wakeLoop: () => this.wakeLoop() })
    Atomics.store(this.w, ENG_OWNER, OWNER_AGENT)
  }

  stats(): Record<string, number> {
    return { ...this.engine.stats(), dropped: this.control.dropped, wakes: this.wakes, handovers: this.conn.handovers }
  }

  /** The transport's events: what the event loop read, and lost peers. */
  onBytes(peer: number, chunk: Uint8Array, len: number): void {
    // (messages a task may take in and leave unacknowledged: the loop's sleep is bounded by
    // ACK_CHECK_MS again, from now on)
    this.bytesAt = performance.now()
    if (this.quietChecks !== 0) {
      this.quietChecks = 0
      this.wakeLoop()
    }
    this.rounds.read(peer, chunk, len)
  }

  /** The transport's onPeerLost. */
  onPeerLost(peer: number, reason: string, _normal: boolean): void {
    this.peers.reportLoss(peer, reason)
  }

  /** Starts serving (after the transport is connected). */
  start(): void {
    if (this.rounds.running) return
    this.rounds.running = true
    void this.loop()
    this.rounds.timers()
  }

  /** Stops the loop (the transport is closed by its owner). */
  stop(): void {
    this.rounds.stop()
    this.conn.stopWatch()
    this.wakeLoop()
  }

  /** Ends the loop's sleep at once, so that it takes its bound again (the doorbell rung unconditionally: this thread knows it may sleep). */
  private wakeLoop(): void {
    Atomics.add(this.ctl, CTL_AGENT_BELL, 1)
    Atomics.notify(this.ctl, CTL_AGENT_BELL)
  }

  /**
   * Sends what the tasks left toward the network and a goodbye to every peer, and waits (at most
   * FINISH_MS) until all of it is written: a normal close after it loses nothing.
   */
  async finish(): Promise<void> {
    const end = performance.now() + FINISH_MS
    let bye = false
    for (;;) {
      // (what this process owes its peers' fences goes before its goodbye)
      this.engine.acksDue = true
      this.rounds.round()
      if (!bye)
        this.engine.locked(() => {
          bye = this.engine.path.bye()
        })
      let left = 1
      let settled = false
      this.engine.locked(() => {
        left = this.engine.path.flush()
        settled = this.engine.path.settle()
      })
      if ((bye && left === 0 && settled && !this.engine.pendingOut) || performance.now() > end) return
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
  }

  private async loop(): Promise<void> {
    const ctl = this.ctl
    while (this.rounds.running) {
      this.onBell()
      const seen = Atomics.load(ctl, CTL_AGENT_BELL)
      Atomics.store(ctl, CTL_AGENT_SLEEPING, 1)
      if (!this.rounds.running) break
      if (this.hasWork()) {
        // work that could not be done now (the lock was taken, a ring full): look again after the
        // event loop had its turn — never in a loop of its own, which would take a CPU from the
        // tasks (while they read the connections, a millisecond later)
        Atomics.store(ctl, CTL_AGENT_SLEEPING, 0)
        await new Promise<void>((resolve) => {
          if (Atomics.load(this.w, ENG_OWNER) === OWNER_TASKS) setTimeout(resolve, 1)
          else setImmediate(resolve)
        })
        continue
      }
      // (while this thread reads the connections, at most ACK_CHECK_MS, longer while such sleeps
      // find nothing owed: a task that took messages in and then left LAPI for its own code leaves
      // their acknowledgements to this thread, and nothing may ring it; while the tasks read them,
      // the watch's idle test covers that)
      const bounded = Atomics.load(this.w, ENG_OWNER) === OWNER_AGENT
      const r = Atomics.waitAsync(ctl, CTL_AGENT_BELL, seen, bounded ? Math.min(ACK_CHECK_MS * 2 ** this.quietChecks, ACK_CHECK_MAX_MS) : Infinity)
      let how = 'not-equal'
      if (r.async) {
        // (nothing to do for `seen`: a task may sleep where this thread's rings cannot reach it)
        Atomics.store(ctl, CTL_AGENT_QUIET_BELL, seen)
        Atomics.store(ctl, CTL_AGENT_QUIET, 1)
        // (a task about to sleep may be waiting for this)
        Atomics.notify(ctl, CTL_AGENT_QUIET)
        how = await r.value
        Atomics.store(ctl, CTL_AGENT_QUIET, 0)
      }
      if (bounded && how === 'timed-out' && this.nothingOwed()) {
        if (ACK_CHECK_MS * 2 ** this.quietChecks < ACK_CHECK_MAX_MS) this.quietChecks++
      } else {
        this.quietChecks = 0
      }
      Atomics.store(ctl, CTL_AGENT_SLEEPING, 0)
      this.wakes++
    }
  }

  /**
   * No acknowledgement is owed and none can come due soon: nothing read waits for the lock, and
   * every task took in what its network ring held, or no bytes came for QUIET_AFTER_MS.
   */
  private nothingOwed(): boolean {
    if (this.rounds.inbound.length !== 0 || this.engine.acksOwed) return false
    if (performance.now() - this.bytesAt >= QUIET_AFTER_MS) return true
    let taken = false
    return (
      this.engine.locked(() => {
        taken = this.engine.ringsTaken
      }) && taken
    )
  }

  private hasWork(): boolean {
    // (a round put off until a task let the lock go may release a barrier or ring a task: until it
    // ran, this thread is not quiet, and a task does not sleep where only this thread could wake it)
    if (this.rounds.queued) return true
    const w = this.w
    if (Atomics.load(w, ENG_CTRL) !== 0 || Atomics.load(w, ENG_BLOCKED) !== 0 || Atomics.load(w, ENG_PARKED) !== 0) return true
    if (Atomics.load(w, ENG_WANT) !== 0 && Atomics.load(w, ENG_OWNER) === OWNER_AGENT) return true
    if (Atomics.load(w, ENG_GIVEBACK) !== 0) return true
    const bar = Atomics.load(this.ctl, CTL_BAR_LOCAL)
    if (bar !== 0 && bar !== this.reportedBar) return true
    return Atomics.load(w, ENG_OWNER) === OWNER_AGENT && this.engine.pendingOut
  }

  /** What the doorbell may mean: a task asks for the connections, a control message or a barrier waits, packets wait to go. */
  private onBell(): void {
    const w = this.w
    if (Atomics.load(w, ENG_GIVEBACK) !== 0) {
      Atomics.store(w, ENG_GIVEBACK, 0)
      if (Atomics.load(w, ENG_OWNER) === OWNER_TASKS) this.conn.takeBack()
    }
    if (Atomics.load(w, ENG_WANT) !== 0 && Atomics.load(w, ENG_OWNER) === OWNER_AGENT) this.conn.handOver()
    const bar = Atomics.load(this.ctl, CTL_BAR_LOCAL)
    if (bar !== 0 && bar !== this.reportedBar) {
      this.reportedBar = bar
      this.control.arrive(bar)
    }
    this.rounds.round()
    this.peers.check()
  }

  /** Sends a control message to every other process. */
  broadcast(m: ControlMessage): void {
    this.control.broadcast(m)
  }

  /** A task of this process ended (`failed`: not normally): tell the other processes. */
  taskEnded(task: number, failed: boolean): void {
    this.control.taskEnded(task, failed)
  }

  /** The job is aborted here: tell the other processes. */
  abort(task: number, reason: string): void {
    this.control.abort(task, reason)
  }

  /** Process `peer` is gone: its tasks are marked, and unless it said goodbye, the job ends. */
  peerLost(peer: number, reason: string, normal: boolean): void {
    this.peers.lost(peer, reason, normal)
  }

  /**
   * The state of this process's network, in words, for the report of a job that timed out
   * (agent/network-report.ts); with `detail`, for the debug line of a failed job.
   */
  describe(detail = false): string {
    const { spec, rank, transport } = this.o
    return describeNetwork(
      {
        spec,
        rank,
        engine: this.engine,
        transport,
        inbound: this.rounds.inbound,
        paused: this.rounds.paused,
        handovers: this.conn.handovers,
        dropped: this.control.dropped,
        wakes: this.wakes,
      },
      detail,
    )
  }
}
