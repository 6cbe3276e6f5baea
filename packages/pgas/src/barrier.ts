/**
 * The barrier, split-phase as GASNet's (notify, then wait or try), with ids: each task notifies
 * with an id, or anonymously; the barrier reports a mismatch (on every task) when two tasks gave
 * different ids, or one asked for it (MISMATCH). A dissemination barrier: in round k each task
 * sends what it knows to task rank + 2^k and hears from rank − 2^k, ⌈log2 P⌉ rounds, one message
 * per task per round, so it scales with the number of tasks. What it knows is the ids seen so
 * far (none, one id, or a mismatch), which the rounds merge. Where every task shares this
 * process, the world's rounds go through shared mailboxes (shm-sync.ts), else as messages. Each
 * team (team.ts) has a barrier of its own, over its members and ranks.
 */
import { WaitCall } from '@amlapi/lapi'
import type { Core } from './core.js'
import { Group } from './group.js'
import { PROBE_MS, type Messages } from './messages.js'
import { ANON, MIXED, NAMED, NOT_YET, type ShmSync } from './shm-sync.js'
import { PgasStatus as S } from './status.js'

/** GASNet's barrier flags. */
export const BarrierFlag = { ANONYMOUS: 1, MISMATCH: 2 } as const

/** What a barrier's `tryWait` returns while it cannot complete yet. */
export const NOT_READY = -1

/** Collective kinds carried by the messages (mismatch detection). */
export const KIND_BARRIER = 1

export class Barrier {
  private readonly core: Core
  private readonly msg: Messages
  /** Who takes part: the world, or a team. */
  private readonly group: Group
  private readonly rounds: number
  private readonly out = new Int32Array(2)
  private readonly out8 = new Uint8Array(this.out.buffer)
  private readonly inb = new Int32Array(2)
  private readonly in8 = new Uint8Array(this.inb.buffer)
  /** Whether a notify waits for its wait, and its state. */
  private active = false
  private seq = 0
  private round = 0
  private id = 0
  private flags = 0
  private known = ANON
  private knownId = 0

  private readonly sync: ShmSync
  /** Whether the rounds go through the shared mailboxes (the world's, every task of this process). */
  private readonly shm: boolean

  /** The barrier of `group` (default: the world). */
  constructor(core: Core, msg: Messages, sync: ShmSync, group: Group = Group.world(core)) {
    this.core = core
    this.msg = msg
    this.sync = sync
    this.group = group
    this.shm = group.id === 0 && sync.usable
    this.rounds = group.size > 1 ? Math.ceil(Math.log2(group.size)) : 0
  }

  /** Starts a barrier: ERR_STATE when one was notified and not yet waited for. */
  notify(id: number, flags: number): number {
    if (this.active) return S.ERR_STATE
    if (!Number.isInteger(id) || !Number.isInteger(flags)) return S.ERR_BAD_ARG
    this.active = true
    this.seq = this.group.nextSeq()
    this.msg.enter(this.seq, KIND_BARRIER)
    this.round = 0
    this.id = id | 0
    this.flags = flags
    this.known = (flags & BarrierFlag.MISMATCH) !== 0 ? MIXED : (flags & BarrierFlag.ANONYMOUS) !== 0 ? ANON : NAMED
    this.knownId = this.id
    if (this.shm) {
      this.sync.begin(this.seq, KIND_BARRIER, 0, this.known, this.knownId)
      return S.OK
    }
    if (this.rounds > 0) return this.sendRound(0)
    return S.OK
  }

  private sendRound(k: number): number {
    const o = this.out
    o[0] = this.known
    o[1] = this.knownId
    const g = this.group
    const n = g.size
    return this.msg.send(g.members[(g.rank + (1 << k)) % n]!, this.seq, k, KIND_BARRIER, 0, this.out8)
  }

  /** Merges what a round brought. */
  private merge(): void {
    const st = this.inb[0]!
    const id = this.inb[1]!
    if (st === ANON || this.known === MIXED) return
    if (st === MIXED) {
      this.known = MIXED
      return
    }
    if (this.known === ANON) {
      this.known = NAMED
      this.knownId = id
      return
    }
    if (this.knownId !== id) this.known = MIXED
  }

  /** Runs the rounds whose messages are here; `block`: waits for the others. */
  private advance(block: boolean): number {
    if (this.shm) {
      const rc = this.sync.advance(block)
      if (rc === NOT_YET) return NOT_READY
      if (rc !== 0) {
        this.msg.markFailed(this.seq)
        return rc
      }
      this.known = this.sync.known
      this.knownId = this.sync.knownId
      return S.OK
    }
    const g = this.group
    const n = g.size
    while (this.round < this.rounds) {
      const k = this.round
      const from = g.members[(g.rank - ((1 << k) % n) + n) % n]!
      if (!block && !this.msg.arrived(from, this.seq, k)) {
        this.core.progress()
        if (!this.msg.arrived(from, this.seq, k)) return NOT_READY
      }
      const rc = this.msg.recv(from, this.seq, k, KIND_BARRIER, 0, this.in8)
      if (rc !== 0) return rc
      this.merge()
      this.round = k + 1
      if (k + 1 < this.rounds) {
        const r = this.sendRound(k + 1)
        if (r !== 0) return r
      }
    }
    return S.OK
  }

  /** Completes the barrier: OK, ERR_BARRIER_MISMATCH, or ERR_STATE without a notify. */
  wait(id: number, flags: number): number {
    if (!this.active) return S.ERR_STATE
    const rc = this.advance(true)
    return this.finish(rc, id, flags)
  }

  /** `wait` that does not block: NOT_READY while other tasks have not notified. */
  tryWait(id: number, flags: number): number {
    if (!this.active) return S.ERR_STATE
    const rc = this.advance(false)
    if (rc === NOT_READY) return rc
    return this.finish(rc, id, flags)
  }

  /**
   * `wait` without blocking the event loop (progress runs meanwhile): what a task that serves
   * remote procedures returning promises uses, as those settle only in its event loop. After
   * PROBE_MS it waits blocking (which probes for mismatched calls).
   */
  async waitAsync(id: number, flags: number): Promise<number> {
    if (!this.active) return S.ERR_STATE
    const until = performance.now() + PROBE_MS
    for (;;) {
      const rc = this.advance(false)
      if (rc !== NOT_READY) return this.finish(rc, id, flags)
      if (performance.now() >= until) return this.finish(this.advance(true), id, flags)
      if (this.shm) {
        await this.core.lapi.waitUntilAsync(() => this.sync.ready || performance.now() >= until, WaitCall.PGAS_COLLECTIVE)
        continue
      }
      const g = this.group
      const n = g.size
      const from = g.members[(g.rank - ((1 << this.round) % n) + n) % n]!
      const seq = this.seq
      const round = this.round
      await this.core.lapi.waitUntilAsync(() => this.msg.arrived(from, seq, round) || performance.now() >= until, WaitCall.PGAS_COLLECTIVE)
    }
  }

  private finish(rc: number, id: number, flags: number): number {
    this.active = false
    if (rc !== 0) return rc
    // (a wait must name what its notify named)
    const named = (this.flags & BarrierFlag.ANONYMOUS) === 0
    if ((flags & BarrierFlag.ANONYMOUS) === 0 && named && (id | 0) !== this.id) return S.ERR_BARRIER_MISMATCH
    return this.known === MIXED ? S.ERR_BARRIER_MISMATCH : S.OK
  }

  /** notify + wait. */
  barrier(id = 0, flags: number = BarrierFlag.ANONYMOUS): number {
    const rc = this.notify(id, flags)
    if (rc !== 0) return rc
    return this.wait(id, flags)
  }
}
