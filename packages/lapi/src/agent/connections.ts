/**
 * Who reads the connections: the agent's event loop while no task polls, the polling tasks while
 * they do. The agent hands them over when a task asks, and a watch takes them back when none has
 * polled for IDLE_TICKS looks (a task busy in its own code or asleep still gets its one-sided
 * operations served).
 */
import type { Logger } from 'pino'
import type { Transport } from '../transport/contract.js'
import type { NetEngine } from '../engine/engine.js'
import { OWNER_AGENT, OWNER_TASKS, ENG_FDSLEEP, ENG_OWNER, ENG_POLLS, ENG_WANT } from '../layout/engine.js'
import type { Rounds } from './rounds.js'

/** Milliseconds without a task's poll after which the agent reads the connections again. */
export const IDLE_TICKS = 2
/**
 * Longest gap between two looks of the watch, ms: it starts at 1 ms when the tasks take the
 * connections and doubles while they poll steadily (each look wakes
 * the agent, on a machine whose CPUs the polling tasks fill a time slice taken from one of them:
 * a look every millisecond made the round trip between two processes 17% longer on 2 vCPUs).
 */
const WATCH_MAX_MS = 4

export interface ConnectionsOptions {
  engine: NetEngine
  transport: Transport
  log: Logger
  /** The stream path's words (the engine's: owner, want, polls, …). */
  w: Int32Array
  rounds: Rounds
  /** Judges the peers found gone. */
  checkPeers: () => void
  /** Ends the agent loop's sleep, so that it takes its bound again. */
  wakeLoop: () => void
}

export class Connections {
  private readonly o: ConnectionsOptions
  private readonly engine: NetEngine
  private readonly w: Int32Array
  private readonly rounds: Rounds
  private watch: NodeJS.Timeout | null = null
  /** The watch's gap (ms). */
  private watchMs = 1
  private lastPolls = 0
  private idleTicks = 0
  /** Hand-overs to the tasks so far. */
  handovers = 0

  constructor(o: ConnectionsOptions) {
    this.o = o
    this.engine = o.engine
    this.w = o.w
    this.rounds = o.rounds
  }

  /** A polling task asked for the connections: stop reading them here and let the tasks. */
  handOver(): void {
    const t = this.o.transport
    t.agentReads(false)
    // (what this event loop read before goes into the frame path first, so the order of the bytes holds)
    const ok = this.engine.locked(() => {
      const path = this.engine.path
      if (!this.rounds.ingestAll(path)) return
      Atomics.store(this.w, ENG_OWNER, OWNER_TASKS)
      Atomics.store(this.w, ENG_WANT, 0)
    })
    if (!ok || Atomics.load(this.w, ENG_OWNER) !== OWNER_TASKS) {
      this.o.log.trace({ ok }, 'handover postponed')
      t.agentReads(true)
      this.rounds.later()
      return
    }
    this.o.log.trace('connections handed to the tasks')
    this.handovers++
    // (a task may be giving this thread its CPU meanwhile: wake it)
    Atomics.notify(this.w, ENG_OWNER)
    this.lastPolls = Atomics.load(this.w, ENG_POLLS)
    this.idleTicks = 0
    this.watchFast()
  }

  /** The watch looks every millisecond from now on (the tasks just took the connections). */
  private watchFast(): void {
    this.watchMs = 1
    if (this.watch !== null) clearTimeout(this.watch)
    this.watch = setTimeout(this.watchDue, 1)
  }

  /** The watch stops (the connections are this thread's again, or the agent ends). */
  stopWatch(): void {
    if (this.watch !== null) {
      clearTimeout(this.watch)
      this.watch = null
    }
  }

  private readonly watchDue = (): void => {
    this.watch = null
    if (!this.rounds.running) return
    this.tick()
    if (this.watch === null && Atomics.load(this.w, ENG_OWNER) === OWNER_TASKS) this.watch = setTimeout(this.watchDue, this.watchMs)
  }

  /**
   * While tasks read the connections: take them back when no task has polled for IDLE_TICKS looks
   * a millisecond apart. While they poll, the looks grow apart (up to WATCH_MAX_MS). A look that
   * finds no poll since the last writes what a task held back when it stopped (its last sends,
   * left to go with later ones): within two looks of its last poll.
   */
  private tick(): void {
    const polls = Atomics.load(this.w, ENG_POLLS)
    if (polls !== this.lastPolls) {
      this.lastPolls = polls
      this.idleTicks = 0
      this.o.checkPeers()
      // (the tasks poll: a wait or an explicit poll writes what its thread held back, and so does
      // a send 0.05 ms or more after the thread's last write, engine.ts `flushOut`)
      if (this.watchMs < WATCH_MAX_MS) this.watchMs *= 2
      return
    }
    this.watchMs = 1
    // (a task that sent and then stopped polling may have left its last sends to go with later ones;
    // and the path's timers are this thread's again until the tasks poll: rounds.ts `pathDue`)
    if (this.engine.pendingOut) this.rounds.round()
    else this.rounds.timers()
    if (++this.idleTicks < IDLE_TICKS) return
    this.takeBack()
  }

  /** Reads the connections in this event loop again (no task polls, none sleeps on them). */
  takeBack(): void {
    let asleep = false
    const ok = this.engine.locked(() => {
      // (a task asleep in the kernel on the connections is waiting in LAPI: they stay its)
      asleep = Atomics.load(this.w, ENG_FDSLEEP) !== 0
      if (!asleep) Atomics.store(this.w, ENG_OWNER, OWNER_AGENT)
    })
    if (asleep) {
      this.idleTicks = 0
      this.o.checkPeers()
      return
    }
    if (!ok) {
      this.rounds.later()
      return
    }
    this.o.log.trace('connections taken back')
    this.stopWatch()
    // (the loop may sleep without a bound: from now on it must look every ACK_CHECK_MS)
    this.o.wakeLoop()
    this.o.transport.agentReads(true)
    this.rounds.round()
    this.o.checkPeers()
  }
}
