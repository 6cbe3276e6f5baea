/**
 * Who takes part in a barrier or a collective: the world (every task) or a team (team.ts). A
 * group has its own ranks 0..size − 1, `members` turning them into tasks (world ranks), and counts
 * its own barriers and collectives: its sequence numbers carry its id in their top 12 bits
 * (messages.ts), so that the messages of different groups never match.
 */
import type { Core } from './core.js'
import { TEAM_SHIFT } from './messages.js'

export class Group {
  /** 0: the world; a team's id otherwise (1 .. TEAM_IDS − 1). */
  readonly id: number
  /** This task's rank in the group (-1: not a member). */
  readonly rank: number
  readonly size: number
  /** The task of each group rank. */
  readonly members: Int32Array
  /** Whether every member is of this process (one shared memory). */
  readonly allLocal: boolean
  private readonly core: Core
  /** Per task, its group rank (-1: not a member); made when first asked. */
  private ranks: Int32Array | null = null
  private seq = 0

  constructor(core: Core, id: number, members: Int32Array) {
    this.core = core
    this.id = id
    this.members = members
    this.size = members.length
    this.rank = members.indexOf(core.rank)
    let all = true
    for (let r = 0; r < members.length; r++) if (!core.isLocal(members[r]!)) all = false
    this.allLocal = all
  }

  /** The sequence number of the group's next barrier or collective, tagged with its id. */
  nextSeq(): number {
    // (the world counts in the core, as it did before there were teams)
    if (this.id === 0) return this.core.nextSeq()
    this.seq = (this.seq + 1) & 0xfffff
    return (this.id << TEAM_SHIFT) | this.seq
  }

  /** The group rank of task `t`, or -1 when it is not a member. */
  rankOf(t: number): number {
    if (this.ranks === null) {
      const r = new Int32Array(this.core.size).fill(-1)
      for (let i = 0; i < this.members.length; i++) r[this.members[i]!] = i
      this.ranks = r
    }
    return this.ranks[t] ?? -1
  }

  /** The world of `core`: one group, whoever asks (the barrier and the collectives share its count). */
  static world(core: Core): Group {
    let g = WORLDS.get(core)
    if (g === undefined) {
      const m = new Int32Array(core.size)
      for (let t = 0; t < m.length; t++) m[t] = t
      g = new Group(core, 0, m)
      WORLDS.set(core, g)
    }
    return g
  }
}

const WORLDS = new WeakMap<Core, Group>()
