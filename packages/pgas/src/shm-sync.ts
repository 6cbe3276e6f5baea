/**
 * Synchronizations through shared memory, for jobs whose tasks all share one process: the
 * barrier's dissemination rounds, and the recursive-doubling rounds of small all-reduces, without
 * a message. A round's message goes into a mailbox of its reader (in the reader's shared block,
 * shared-block.ts), which has one writer: set 0 (dissemination) is written in round k by task
 * rank − 2^k, set 1 (recursive doubling, P a power of two) by task rank XOR 2^k, whose data
 * (at most SYNC_DATA bytes) goes into the reader's data slot of that round.
 *
 * A mailbox (64 bytes):
 *
 *   word 0  SEQ    the writer's sequence number + 1 (published last; 0: never written)
 *   word 1  KIND   the writer's collective kind (as messages carry it)
 *   word 2  ARG    its argument (a length)
 *   word 3  STATE  what the writer knows of the ids: none, one (ID), or a mismatch
 *   word 4  ID
 *   word 8  ACK    the SEQ the reader took last (the reader's word)
 *
 * A writer writes a mailbox only once its reader took what was there (ACK = SEQ) or has left
 * that sequence number; a writer that completed a synchronization knows every task reached it,
 * so that wait is short. A message of another sequence number, kind or argument is a mismatch; so
 * is, after a wait of PROBE_MS, a writer that sits at this sequence number in another collective,
 * or has gone past it (each task publishes where it is in its block: messages.ts's `enter`).
 */
import { WaitCall } from '@amlapi/lapi'
import type { Core } from './core.js'
import { PROBE_MS } from './messages.js'
import { type NumArray, combine } from './reduce-ops.js'
import { MAX_ROUNDS, SYNC_DATA, type SharedBlocks, W_AT_KIND, W_AT_SEQ } from './shared-block.js'
import { PgasStatus as S } from './status.js'

/** What a task knows of the ids given to a barrier. */
export const ANON = 0
export const NAMED = 1
export const MIXED = 2
/** What `advance` returns while a round's message has not come. */
export const NOT_YET = -1

const SEQ = 0
const KIND = 1
const ARG = 2
const STATE = 3
const ID = 4
const ACK = 8
/** Looks at a mailbox before a wait that also runs LAPI's dispatcher (about 20 ns each). */
const QUICK_LOOKS = 64
const DISSEMINATION = 0
const DOUBLING = 1

type NumArrayCtor = new (buffer: ArrayBufferLike, byteOffset: number, length: number) => NumArray

export class ShmSync {
  private readonly core: Core
  private readonly blocks: SharedBlocks
  /** Whether every task of the job is of this process and has a block. */
  readonly usable: boolean
  private readonly rounds: number
  private readonly myI32: Int32Array
  /** The running synchronization. */
  private seq = 0
  private kind = 0
  private arg = 0
  private round = 0
  /** What this task knows so far: ANON, NAMED (knownId) or MIXED. */
  known = ANON
  knownId = 0
  /** The mailbox the running wait looks at (word index in this task's segment). */
  private waitBox = 0
  private probeAt = 0
  private readonly hereCond = (): boolean => this.has(this.waitBox) || performance.now() >= this.probeAt
  /** The mailbox the running wait for room looks at, and its reader. */
  private roomI32: Int32Array = new Int32Array(1)
  private roomBox = 0
  private roomReader = 0
  private readonly roomCond = (): boolean => this.roomFree() || performance.now() >= this.probeAt
  /** Views of data slots, per element type, index owner × rounds + round (made when first used). */
  private readonly views = new Map<unknown, Array<NumArray | undefined>>()

  /** Called when a wait has lasted PROBE_MS (frees tasks that may wait on this one: Messages.unblock). */
  private readonly longWait: () => void

  constructor(core: Core, blocks: SharedBlocks, longWait: () => void) {
    this.core = core
    this.blocks = blocks
    this.longWait = longWait
    let usable = core.allLocal && core.size > 1 && core.size <= 2 ** MAX_ROUNDS
    for (let t = 0; usable && t < core.size; t++) if (!blocks.has(t)) usable = false
    this.usable = usable
    this.rounds = core.size > 1 ? Math.ceil(Math.log2(core.size)) : 0
    this.myI32 = core.i32[core.rank] ?? new Int32Array(1)
  }

  /** Whether recursive doubling through the mailboxes can carry a `bytes`-byte operand. */
  doubles(bytes: number): boolean {
    return this.usable && (this.core.size & (this.core.size - 1)) === 0 && bytes <= SYNC_DATA
  }

  // ───────────────────────────── the barrier's dissemination ─────────────────────────────

  /** Starts a synchronization as sequence number `seq` of `kind` (arg), knowing (state, id): writes round 0. */
  begin(seq: number, kind: number, arg: number, state: number, id: number): void {
    this.start(seq, kind, arg)
    this.known = state
    this.knownId = id | 0
    if (this.rounds > 0) this.post(DISSEMINATION, (this.core.rank + 1) % this.core.size, 0, null)
  }

  private start(seq: number, kind: number, arg: number): void {
    this.seq = seq
    this.kind = kind & 0xfffff
    this.arg = arg | 0
    this.round = 0
  }

  /** Whether a round's message is here (the promise form waits for it). */
  get ready(): boolean {
    return this.round >= this.rounds || this.has(this.box(this.core.rank, DISSEMINATION, this.round))
  }

  /** Runs the rounds whose messages are here; `block`: waits for the others. OK, NOT_YET or ERR_COLL_MISMATCH. */
  advance(block: boolean): number {
    const n = this.core.size
    const me = this.core.rank
    while (this.round < this.rounds) {
      const k = this.round
      const from = (me - ((1 << k) % n) + n) % n
      const rc = this.take(DISSEMINATION, k, from, block)
      if (rc !== 0) return rc
      const box = this.box(me, DISSEMINATION, k)
      this.merge(this.myI32[box + STATE]!, this.myI32[box + ID]!)
      this.done(box, from, this.seq + 1)
      this.round = k + 1
      if (k + 1 < this.rounds) this.post(DISSEMINATION, (me + (1 << (k + 1))) % n, k + 1, null)
    }
    return S.OK
  }

  private merge(st: number, id: number): void {
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

  // ───────────────────────────── recursive doubling ─────────────────────────────

  /**
   * An all-reduce by recursive doubling as sequence number `seq` (`doubles(bytes)` must hold): in
   * round k `acc`'s bytes go to task rank XOR 2^k, and what came from it (read in place, in this
   * task's data slot) is folded into `acc` with `op`. OK or ERR_COLL_MISMATCH.
   */
  double(seq: number, kind: number, acc: NumArray, op: number): number {
    const me = this.core.rank
    this.start(seq, kind, acc.byteLength)
    this.known = ANON
    this.knownId = 0
    for (let k = 0; k < this.rounds; k++) {
      const partner = me ^ (1 << k)
      this.post(DOUBLING, partner, k, acc)
      const rc = this.take(DOUBLING, k, partner, true)
      if (rc !== 0) return rc
      combine(op, acc, this.slot(acc, me, k), 0, acc.length)
      this.done(this.box(me, DOUBLING, k), partner, this.seq + 1)
    }
    return S.OK
  }

  /** A view of `owner`'s data slot of round `k`, of `like`'s type (the whole slot; made once). */
  private slot(like: NumArray, owner: number, k: number): NumArray {
    let vs = this.views.get(like.constructor)
    if (vs === undefined) {
      vs = []
      this.views.set(like.constructor, vs)
    }
    const i = owner * this.rounds + k
    let v = vs[i]
    if (v === undefined) {
      const ctor = like.constructor as NumArrayCtor
      const per = (like as unknown as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT
      v = new ctor(this.core.i32[owner]!.buffer, this.blocks.data(owner, k), SYNC_DATA / per)
      vs[i] = v
    }
    return v
  }

  // ───────────────────────────── mailboxes ─────────────────────────────

  /** Word index of `owner`'s mailbox of `set`, round `k`, in its segment. */
  private box(owner: number, set: number, k: number): number {
    return this.blocks.mailbox(owner, set, k) >> 2
  }

  /** Writes this synchronization's round `k` (and `data`, set 1) into task `to`'s mailbox. */
  private post(set: number, to: number, k: number, data: NumArray | null): void {
    const i32 = this.core.i32[to]!
    const box = this.box(to, set, k)
    this.roomI32 = i32
    this.roomBox = box
    this.roomReader = to
    while (!this.roomFree()) {
      this.probeAt = performance.now() + PROBE_MS
      this.core.lapi.waitUntil(this.roomCond, WaitCall.PGAS_COLLECTIVE)
      if (!this.roomFree()) this.longWait()
    }
    i32[box + KIND] = this.kind
    i32[box + ARG] = this.arg
    i32[box + STATE] = this.known
    i32[box + ID] = this.knownId
    if (data !== null) {
      const v = this.slot(data, to, k)
      for (let i = 0; i < data.length; i++) v[i] = data[i]!
    }
    Atomics.store(i32, box + SEQ, this.seq + 1)
    this.core.lapi.wake(to)
  }

  /** Whether the mailbox of the running post is free: taken, or its reader has left that sequence number. */
  private roomFree(): boolean {
    const i32 = this.roomI32
    const box = this.roomBox
    const s = Atomics.load(i32, box + SEQ)
    if (s === Atomics.load(i32, box + ACK)) return true
    const b = this.blocks.at[this.roomReader]! >> 2
    return Atomics.load(this.core.i32[this.roomReader]!, b + W_AT_SEQ) !== s - 1
  }

  /** Whether this task's mailbox at word `box` holds something new. */
  private has(box: number): boolean {
    return Atomics.load(this.myI32, box + SEQ) !== Atomics.load(this.myI32, box + ACK)
  }

  /**
   * Waits (`block`) for round `k`'s message in this task's mailbox of `set`, which `from` writes,
   * and checks it is this synchronization's: OK (then read it and call `done`), NOT_YET, or
   * ERR_COLL_MISMATCH (taken already).
   */
  private take(set: number, k: number, from: number, block: boolean): number {
    const box = this.box(this.core.rank, set, k)
    const i32 = this.myI32
    for (;;) {
      // (a short look first: the other task is usually a fraction of a microsecond away)
      for (let i = 0; i < QUICK_LOOKS && !this.has(box); i++);
      if (!this.has(box)) {
        if (!block) {
          this.core.progress()
          if (!this.has(box)) return NOT_YET
        }
        this.waitBox = box
        this.probeAt = performance.now() + PROBE_MS
        for (;;) {
          this.core.lapi.waitUntil(this.hereCond, WaitCall.PGAS_COLLECTIVE)
          if (this.has(box)) break
          if (this.writerElsewhere(from)) return S.ERR_COLL_MISMATCH
          this.longWait()
          this.probeAt = performance.now() + PROBE_MS
        }
      }
      const got = Atomics.load(i32, box + SEQ)
      const behind = (this.seq + 1 - got) & 0xfffff
      // (left by a synchronization that ended in a mismatch before its reader took it: dropped;
      // the acknowledgement names what was looked at, not a message written since)
      if (behind !== 0 && behind < 0x80000) {
        this.done(box, from, got)
        continue
      }
      if (behind !== 0 || i32[box + KIND] !== this.kind || i32[box + ARG] !== this.arg) {
        this.done(box, from, got)
        return S.ERR_COLL_MISMATCH
      }
      return S.OK
    }
  }

  /** Says the message `seq` (as stored) in this task's mailbox at `box` was taken: its writer may write again. */
  private done(box: number, writer: number, seq: number): void {
    Atomics.store(this.myI32, box + ACK, seq)
    this.core.lapi.wake(writer)
  }

  /** Whether task `w` sits at this sequence number in another collective, or has gone past it. */
  private writerElsewhere(w: number): boolean {
    const b = this.blocks.at[w]! >> 2
    const i32 = this.core.i32[w]!
    const at = Atomics.load(i32, b + W_AT_SEQ)
    if (at === this.seq) return Atomics.load(i32, b + W_AT_KIND) !== this.kind
    // (sequence numbers are 20 bits and wrap: "past" is less than half the range ahead)
    const ahead = (at - this.seq) & 0xfffff
    return ahead !== 0 && ahead < 0x80000
  }
}
