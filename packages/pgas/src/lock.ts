/**
 * Distributed locks, fair under contention: an MCS queue lock. The lock is a word on its home task
 * holding the last task in the queue (task + 1; 0: free). A task swaps itself in; if someone was
 * there it writes its id into that task's `next` word (a Put that moves the predecessor's link
 * counter) and waits on its own grant counter. Release hands the lock to the successor (a Put that
 * moves its grant counter), or swaps the word back to 0 when nobody queued. Tasks get the lock in
 * the order they asked for it; a waiter waits on a counter, so it sleeps, running progress.
 * Freeing (collective, after a barrier) gives back every task's qnode and counters and the tail
 * word; the lock then answers ERR_STATE.
 */
import type { Counter } from '@amlapi/lapi'
import type { Core } from './core.js'
import { AtomicOp, type RemoteAtomics } from './atomics.js'
import { PgasStatus as S } from './status.js'

export class PgasLock {
  private readonly core: Core
  private readonly atomics: RemoteAtomics
  /** The home task and the address of the tail word there. */
  readonly home: number
  private readonly tail: number
  /** Per task: its qnode (next word at +0, a scratch word at +4), its link and grant counters. */
  private readonly qnode: number[]
  private readonly link: number[]
  private readonly grant: number[]
  private readonly myNode: number
  private readonly myLink: Counter
  private readonly myGrant: Counter
  /** The tail word's address when this task is the home, else 0. */
  private readonly tailHere: number
  /** What acquire writes into the predecessor's `next` word (this task + 1), and release's grant word. */
  private readonly linkWord = new Uint8Array(4)
  private readonly grantWord = new Uint8Array(4)
  private readonly mine: Int32Array
  private held = false
  private freed = false
  /** The status of the last `tryAcquire`: OK, ERR_STATE (freed), or why the atomic failed. */
  status = 0

  /**
   * @internal Collective: every task makes its part (home: the task that keeps the tail word).
   * Programs make locks with `Pgas.newLock`.
   */
  constructor(core: Core, atomics: RemoteAtomics, home: number) {
    this.core = core
    this.atomics = atomics
    this.home = home
    const l = core.lapi
    this.myNode = l.malloc(16)
    this.myLink = l.counter()
    this.myGrant = l.counter()
    this.tailHere = core.rank === home ? l.malloc(8) : 0
    this.tail = l.addressInit(this.tailHere)[home]!
    this.qnode = l.addressInit(this.myNode)
    this.link = l.addressInit(this.myLink.addr)
    this.grant = l.addressInit(this.myGrant.addr)
    new DataView(this.linkWord.buffer).setInt32(0, core.rank + 1, true)
    const v = l.view(this.myNode, 4)
    this.mine = new Int32Array(v.buffer, v.byteOffset, 1)
  }

  /** Takes the lock, waiting in line. */
  acquire(): number {
    if (this.held || this.freed) return S.ERR_STATE
    const me = this.core.rank
    const prev = this.atomics.op32(AtomicOp.SWAP, this.home, this.tail, me + 1)
    if (this.atomics.status !== 0) return this.atomics.status
    if (prev !== 0) {
      const p = prev - 1
      this.core.lapi.put(p, 4, this.qnode[p]!, this.linkWord, { tgtCntr: this.link[p]! })
      this.myGrant.wait(1)
    }
    this.held = true
    return S.OK
  }

  /** Takes the lock if it is free: true when taken. */
  tryAcquire(): boolean {
    this.status = this.freed ? S.ERR_STATE : S.OK
    if (this.held || this.freed) return false
    const me = this.core.rank
    const old = this.atomics.op32(AtomicOp.CAS, this.home, this.tail, 0, me + 1)
    this.status = this.atomics.status
    if (this.atomics.status !== 0 || old !== 0) return false
    this.held = true
    return true
  }

  /** Gives the lock to the next task in line, or frees it. ERR_STATE when this task does not hold it. */
  release(): number {
    if (!this.held || this.freed) return S.ERR_STATE
    this.held = false
    const me = this.core.rank
    const mine = this.mine
    if (Atomics.load(mine, 0) === 0) {
      const old = this.atomics.op32(AtomicOp.CAS, this.home, this.tail, me + 1, 0)
      if (old === me + 1) return S.OK
    }
    // (a successor swapped itself in: wait until it wrote its id here)
    this.myLink.wait(1)
    const next = Atomics.load(mine, 0) - 1
    Atomics.store(mine, 0, 0)
    this.core.lapi.put(next, 4, this.qnode[next]! + 4, this.grantWord, { tgtCntr: this.grant[next]! })
    return S.OK
  }

  /** Whether `free` gave it back. */
  get isFreed(): boolean {
    return this.freed
  }

  /**
   * Gives this task's part back: its qnode, its link and grant counters, and at the home the tail
   * word. The caller runs a barrier first (no task is in a lock call), every task then frees its
   * part; a hold of it ends. ERR_STATE when freed already.
   */
  free(): number {
    if (this.freed) return S.ERR_STATE
    this.freed = true
    this.held = false
    const l = this.core.lapi
    l.free(this.myNode)
    this.myLink.free()
    this.myGrant.free()
    if (this.tailHere !== 0) l.free(this.tailHere)
    return S.OK
  }
}
