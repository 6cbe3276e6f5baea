/**
 * What every collective is made of (collectives.ts, reductions.ts): the thresholds where the
 * algorithms change, the kinds their messages carry, and taking a sequence number, exchanging
 * with a partner and waiting for sends. A collective runs over a group (group.ts): the world, or
 * a team; ranks, roots and partners are the group's ranks, turned into tasks only to send.
 */
import type { Core } from './core.js'
import { Group } from './group.js'
import type { Messages } from './messages.js'
import type { OpHandle } from './rma.js'
import type { ShmSync } from './shm-sync.js'

export const BCAST_TREE_MAX = 32 * 1024
export const ALLREDUCE_RD_MAX = 64 * 1024
export const GATHER_TREE_MAX = 64 * 1024
export const ALLGATHER_RD_MAX = 64 * 1024
export const ALLTOALL_LINEAR_MAX = 1024

/** Collective kinds (5 bits) of the messages: the barrier's is 1. */
export const K_BCAST = 2
export const K_REDUCE = 3
export const K_ALLREDUCE = 4
export const K_GATHER = 5
export const K_ALLGATHER = 6
export const K_ALLTOALL = 7
export const K_ALLTOALLV = 8
export const K_SCAN = 9
export const K_EXSCAN = 10
export const K_SCATTER = 11

/** A message's kind: the collective, its operator and its root. */
export function kindOf(k: number, root = 0, op = 0): number {
  return k | (op << 5) | ((root & 0xfff) << 8)
}

export class CollBase {
  protected readonly core: Core
  protected readonly msg: Messages
  protected readonly sync: ShmSync
  /** The group of the collectives called without one. */
  readonly world: Group

  constructor(core: Core, msg: Messages, sync: ShmSync) {
    this.core = core
    this.msg = msg
    this.sync = sync
    this.world = Group.world(core)
  }

  /** The group's next sequence number, said to be `kind`'s. */
  protected begin(g: Group, kind: number): number {
    const seq = g.nextSeq()
    this.msg.enter(seq, kind)
    return seq
  }

  /**
   * Takes the group's next sequence number as `kind`'s and gives it up at once with `rc` (a bad
   * argument only this task can see): the other members' waits on this task end with a mismatch
   * (its probes are answered so), and every member stays in step for the next call.
   */
  abandon(g: Group, kind: number, rc: number): number {
    this.msg.markFailed(this.begin(g, kind))
    return rc
  }

  protected badRoot(g: Group, root: number): boolean {
    return !Number.isInteger(root) || root < 0 || root >= g.size
  }

  /** Send handles of the running collective (emptied by waitAll). */
  protected readonly handles: OpHandle[] = []

  /** Waits for every handle of `hs` and empties it: the first failure, or OK. */
  protected waitAll(hs: OpHandle[]): number {
    let rc = 0
    for (let i = 0; i < hs.length; i++) {
      const r = this.msg.wait(hs[i]!)
      if (rc === 0) rc = r
    }
    hs.length = 0
    return rc
  }

  /** Sends `data` to task `to` and receives into `into` from task `from`, both in round `round`. */
  protected exchange(seq: number, round: number, kind: number, arg: number, to: number, data: Uint8Array, from: number, into: Uint8Array): number {
    this.msg.post(from, seq, round, kind, arg, into)
    const h = this.msg.sendNb(to, seq, round, kind, arg, data)
    const rc = this.msg.recv(from, seq, round, kind, arg, into)
    const rs = this.msg.wait(h)
    return rc !== 0 ? rc : rs
  }
}
