/**
 * Teams: ordered subsets of the job's tasks with ranks of their own, 0..size − 1 (UPC++'s
 * `team`, MPI's communicators, OpenSHMEM's teams). The world team holds every task, ranked as
 * the tasks are. `split(color, key)` is MPI_Comm_split: collective over the parent team, the
 * members that gave the same color form a team, ranked by (key, parent rank); a negative color
 * gives none. `splitStrided(start, stride, size)` is shmem_team_split_strided. Every barrier and
 * collective runs on a team, with the team's ranks (roots included), its own sequence numbers
 * and its id in every message (group.ts), so collectives of disjoint teams may run at the same
 * time and those of overlapping teams may interleave, in the same order on every member.
 *
 * Team ids are 12 bits (messages.ts): a split takes the lowest id free on every member of the
 * new teams (an all-reduce of the members' free ids over the parent), one id for all the teams
 * it makes (they are disjoint); `destroy` frees it.
 */
import { Barrier, BarrierFlag } from './barrier.js'
import type { Collectives } from './collectives.js'
import type { Core } from './core.js'
import { Group } from './group.js'
import { type Messages, TEAM_IDS } from './messages.js'
import { type NumArray, ReduceOp } from './reduce-ops.js'
import type { ShmSync } from './shm-sync.js'
import { PgasError, PgasStatus as S, check } from './status.js'
import { taskWhy } from './explain.js'

/** The parts of a runtime (a Pgas) that teams run on. */
export interface TeamHost {
  readonly core: Core
  readonly msg: Messages
  readonly sync: ShmSync
  readonly coll: Collectives
  readonly bar: Barrier
}

/** What every team of one runtime shares: the ids this task uses. */
class Teams {
  readonly host: TeamHost
  /** Bit i set: team id i is free here (id 0, the world's, never is). */
  readonly free = new Int32Array(TEAM_IDS / 32).fill(-1)
  world: Team | null = null
  constructor(host: TeamHost) {
    this.host = host
    this.free[0] = -2
  }
}

const RUNTIMES = new WeakMap<TeamHost, Teams>()

/** The world team of runtime `host` (made once). */
export function worldTeam(host: TeamHost): Team {
  let ts = RUNTIMES.get(host)
  if (ts === undefined) {
    ts = new Teams(host)
    RUNTIMES.set(host, ts)
  }
  return (ts.world ??= new Team(ts, Group.world(host.core), host.bar))
}

/** Words per member in a split's all-gather: color, key, flags, start, stride, size. */
const SAY = 6
const F_OK = 1
const F_STRIDED = 2

/**
 * A team: an ordered subset of the tasks with ranks 0..size − 1 of its own. `pg.world` is every
 * task; `split` and `splitStrided` (collective over a team) make the others. Its barrier and
 * collectives are its methods, with the team's ranks and roots; they throw PgasError.
 *
 * @example
 * ```js
 * const row = pg.world.split(Math.floor(pg.rank / 4), pg.rank % 4)  // the rows of a grid 4 wide
 * const sum = new Float64Array([x])
 * row.allreduce(sum, sum, ReduceOp.SUM)                              // over the row only
 * row.bcast(buf, 0)                                                  // from the row's first task
 * row.destroy()
 * ```
 */
export class Team {
  /** @internal */ readonly group: Group
  /** @internal */ readonly bar: Barrier
  private readonly ts: Teams
  private destroyed = false
  /** @internal What the last split made here (null: no team). */
  made: Team | null = null

  /** @internal Teams are made by `Pgas.world` and `split`. */
  constructor(ts: Teams, group: Group, bar: Barrier) {
    this.ts = ts
    this.group = group
    this.bar = bar
  }

  /** This task's rank in the team. */
  get rank(): number {
    return this.group.rank
  }
  /** The number of tasks in the team. */
  get size(): number {
    return this.group.size
  }
  /** @internal The collectives it runs on. */
  get coll(): Collectives {
    return this.ts.host.coll
  }
  /** Whether this is the world team (every task, ranked as the tasks are). */
  get isWorld(): boolean {
    return this.group.id === 0
  }

  /** The task (world rank) of team rank `r`. Throws ERR_BAD_TASK for a rank outside 0..size − 1. */
  worldRank(r: number): number {
    if (!Number.isInteger(r) || r < 0 || r >= this.group.size)
      throw new PgasError(S.ERR_BAD_TASK, 'Team.worldRank', taskWhy(r, this.group.size, 'rank', 'this team has ranks'))
    return this.group.members[r]!
  }

  /** The team rank of task `t` (a world rank), or -1 when it is not a member. Throws ERR_BAD_TASK for a task outside the job. */
  rankOf(t: number): number {
    if (!Number.isInteger(t) || t < 0 || t >= this.ts.host.core.size) throw new PgasError(S.ERR_BAD_TASK, 'Team.rankOf', taskWhy(t, this.ts.host.core.size))
    return this.group.rankOf(t)
  }

  /** The rank in team `to` of this team's rank `r`, or -1 when that task is not in `to` (shmem_team_translate_pe). */
  translate(r: number, to: Team): number {
    if (!(to instanceof Team)) throw new PgasError(S.ERR_BAD_HANDLE, 'Team.translate')
    return to.group.rankOf(this.worldRank(r))
  }

  /**
   * Collective over this team: the members that give the same `color` form a new team, ranked by
   * `key` and, for equal keys, by their rank here (MPI_Comm_split). A negative color gives no
   * team: null. Color and key are 32-bit integers. Throws ERR_BAD_ARG (on every member) when a
   * member gave something else, ERR_COLL_MISMATCH when members called different splits, ERR_NOMEM
   * when no team id is free on every member of the new teams (TEAM_IDS − 1 at most on a task).
   */
  split(color: number, key = 0): Team | null {
    const rc = this.splitRc(color, key, false, 0, 0, 0)
    if (rc === S.ERR_NOMEM)
      throw new PgasError(
        rc,
        'Team.split',
        `no team id is free: a task is in at most ${TEAM_IDS - 1} teams at once besides the job's (free one with Team.destroy)`,
      )
    check(rc, 'Team.split')
    return this.made
  }

  /**
   * Collective over this team: a team of the members with ranks start, start + stride, …,
   * start + (size − 1)·stride here, ranked in that order (shmem_team_split_strided); the others get
   * null. Every member passes the same arguments: each rank in 0..size − 1 of this team, stride not
   * 0 unless size is 1 (else ERR_BAD_ARG on every member; different arguments: ERR_COLL_MISMATCH).
   */
  splitStrided(start: number, stride: number, size: number): Team | null {
    check(this.splitRc(0, 0, true, start, stride, size), 'Team.splitStrided')
    return this.made
  }

  /**
   * Collective over this team: a barrier of its members, then the team is gone (its id free for
   * later splits). Every later call on it throws ERR_BAD_HANDLE; the world team cannot be
   * destroyed (ERR_BAD_ARG).
   */
  destroy(): void {
    check(this.destroyRc(), 'Team.destroy')
  }

  /** @internal OK, or why the team cannot run a call: ERR_NOT_INIT (its runtime was finalized), ERR_BAD_HANDLE (destroyed). */
  usable(): number {
    if (this.ts.host.core.closed) return S.ERR_NOT_INIT
    return this.destroyed ? S.ERR_BAD_HANDLE : S.OK
  }

  /**
   * @internal `split` (strided: `splitStrided`) returning its status; the team in `made`. `argsOk`
   * false: a bad argument of the caller's (the flat face's `out`), which fails the split on every member.
   */
  splitRc(color: number, key: number, strided: boolean, start: number, stride: number, size: number, argsOk = true): number {
    this.made = null
    const u = this.usable()
    if (u !== 0) return u
    const g = this.group
    const n = g.size
    const coll = this.ts.host.coll
    let ok: boolean
    if (strided) {
      const last = start + (size - 1) * stride
      ok =
        Number.isInteger(start) &&
        Number.isInteger(stride) &&
        Number.isInteger(size) &&
        size >= 1 &&
        start >= 0 &&
        start < n &&
        last >= 0 &&
        last < n &&
        (stride !== 0 || size === 1)
      if (ok) {
        const k = stride === 0 ? (g.rank === start ? 0 : -1) : (g.rank - start) / stride
        color = Number.isInteger(k) && k >= 0 && k < size ? 0 : -1
        key = k
      }
    } else ok = isInt32(color) && isInt32(key)
    ok &&= argsOk
    // (what every member says: its color and key, whether its arguments were good, and which split it runs)
    const mine = new Int32Array(SAY)
    mine[2] = (ok ? F_OK : 0) | (strided ? F_STRIDED : 0)
    if (ok) {
      mine[0] = color
      mine[1] = key
    }
    if (strided) {
      mine[3] = start | 0
      mine[4] = stride | 0
      mine[5] = size | 0
    }
    const all = new Int32Array(SAY * n)
    let rc = coll.allgather(mine, all, g)
    if (rc !== 0) return rc
    for (let r = 0; r < n; r++) {
      const a = SAY * r
      if (((all[a + 2]! ^ mine[2]!) & F_STRIDED) !== 0 || all[a + 3] !== mine[3] || all[a + 4] !== mine[4] || all[a + 5] !== mine[5]) return S.ERR_COLL_MISMATCH
    }
    for (let r = 0; r < n; r++) if ((all[SAY * r + 2]! & F_OK) === 0) return S.ERR_BAD_ARG
    // (the id: the lowest free on every member of the new teams; the others do not constrain it)
    const free = new Int32Array(TEAM_IDS / 32)
    if (color >= 0) free.set(this.ts.free)
    else free.fill(-1)
    rc = coll.allreduce(free, free, ReduceOp.BAND, g)
    if (rc !== 0) return rc
    if (color < 0) return S.OK
    const id = lowestBit(free)
    if (id < 0) return S.ERR_NOMEM
    const ranks: number[] = []
    for (let r = 0; r < n; r++) if (all[SAY * r] === color) ranks.push(r)
    ranks.sort((a, b) => all[SAY * a + 1]! - all[SAY * b + 1]! || a - b)
    const members = new Int32Array(ranks.length)
    for (let i = 0; i < ranks.length; i++) members[i] = g.members[ranks[i]!]!
    this.ts.free[id >> 5] &= ~(1 << (id & 31))
    const h = this.ts.host
    const ng = new Group(h.core, id, members)
    this.made = new Team(this.ts, ng, new Barrier(h.core, h.msg, h.sync, ng))
    return S.OK
  }

  /** @internal `destroy` returning its status. */
  destroyRc(): number {
    const u = this.usable()
    if (u !== 0) return u
    if (this.group.id === 0) return S.ERR_BAD_ARG
    // (after the barrier every member has completed the team's collectives: nothing of it is still to come)
    const rc = this.bar.barrier()
    this.destroyed = true
    const id = this.group.id
    this.ts.free[id >> 5] |= 1 << (id & 31)
    this.ts.host.msg.dropTeam(id)
    return rc
  }

  // ───────────────────────────── barrier ─────────────────────────────

  /** A barrier of the team's members (anonymous unless `id` is given): ERR_BARRIER_MISMATCH when ids differ. */
  barrier(id?: number): void {
    check(this.usable() || this.bar.barrier(id ?? 0, id === undefined ? BarrierFlag.ANONYMOUS : 0), 'Team.barrier')
  }

  /** The barrier without blocking the event loop (for tasks that serve remote procedures returning promises). */
  async barrierAsync(id?: number): Promise<void> {
    const flags = id === undefined ? BarrierFlag.ANONYMOUS : 0
    check(this.usable() || this.bar.notify(id ?? 0, flags), 'Team.barrierAsync')
    check(await this.bar.waitAsync(id ?? 0, flags), 'Team.barrierAsync')
  }

  // ───────────────────────────── collectives ─────────────────────────────
  // (as Pgas's, on the team's members: ranks and roots are team ranks)

  /** Broadcast of the root's `buf` into every member's `buf`. */
  bcast(buf: NumArray, root = 0): void {
    check(this.usable() || this.coll.bcast(buf, root, this.group), 'Team.bcast')
  }
  /** Reduction of every member's `send` with `op` (a ReduceOp) into `recv` at `root` (null elsewhere). */
  reduce(send: NumArray, recv: NumArray | null, op: number, root = 0): void {
    check(this.usable() || this.coll.reduce(send, recv, op, root, this.group), 'Team.reduce')
  }
  /** Reduction of every member's `send` into every member's `recv` (which may be `send`). */
  allreduce(send: NumArray, recv: NumArray, op: number): void {
    check(this.usable() || this.coll.allreduce(send, recv, op, this.group), 'Team.allreduce')
  }
  /** Block r of the root's `send` (size × recv.length elements; null elsewhere) into rank r's `recv`. */
  scatter(send: NumArray | null, recv: NumArray, root = 0): void {
    check(this.usable() || this.coll.scatter(send, recv, root, this.group), 'Team.scatter')
  }
  /** Every member's `send` (equal lengths) into the root's `recv`, rank r's at r·send.length (`recv` null elsewhere). */
  gather(send: NumArray, recv: NumArray | null, root = 0): void {
    check(this.usable() || this.coll.gather(send, recv, root, this.group), 'Team.gather')
  }
  /** Every member's `send` into every member's `recv`, rank r's at r·send.length. */
  allgather(send: NumArray, recv: NumArray): void {
    check(this.usable() || this.coll.allgather(send, recv, this.group), 'Team.allgather')
  }
  /** Block r of `send` (send.length / size elements) to rank r, into its `recv` at block `rank`. */
  alltoall(send: NumArray, recv: NumArray): void {
    check(this.usable() || this.coll.alltoall(send, recv, this.group), 'Team.alltoall')
  }
  /** All-to-all with counts and displacements per rank, in elements. */
  alltoallv(
    send: NumArray,
    sendCounts: ArrayLike<number>,
    sendDispls: ArrayLike<number>,
    recv: NumArray,
    recvCounts: ArrayLike<number>,
    recvDispls: ArrayLike<number>,
  ): void {
    check(this.usable() || this.coll.alltoallv(send, sendCounts, sendDispls, recv, recvCounts, recvDispls, this.group), 'Team.alltoallv')
  }
  /** Inclusive prefix reduction in rank order: rank r's `recv` = send₀ op … op send_r. */
  scan(send: NumArray, recv: NumArray, op: number): void {
    check(this.usable() || this.coll.scan(send, recv, op, false, this.group), 'Team.scan')
  }
  /** Exclusive prefix reduction: rank r's `recv` = send₀ op … op send_{r−1} (rank 0's left as it is). */
  exscan(send: NumArray, recv: NumArray, op: number): void {
    check(this.usable() || this.coll.scan(send, recv, op, true, this.group), 'Team.exscan')
  }

  // ───────────────────────────── Promise forms ─────────────────────────────
  // (as Pgas's: a barrier of the team that does not block the event loop, then the collective;
  // every member calls the Promise form of the same collective)

  async bcastAsync(buf: NumArray, root = 0): Promise<void> {
    await this.barrierAsync()
    this.bcast(buf, root)
  }
  async reduceAsync(send: NumArray, recv: NumArray | null, op: number, root = 0): Promise<void> {
    await this.barrierAsync()
    this.reduce(send, recv, op, root)
  }
  async allreduceAsync(send: NumArray, recv: NumArray, op: number): Promise<void> {
    await this.barrierAsync()
    this.allreduce(send, recv, op)
  }
  async scatterAsync(send: NumArray | null, recv: NumArray, root = 0): Promise<void> {
    await this.barrierAsync()
    this.scatter(send, recv, root)
  }
  async gatherAsync(send: NumArray, recv: NumArray | null, root = 0): Promise<void> {
    await this.barrierAsync()
    this.gather(send, recv, root)
  }
  async allgatherAsync(send: NumArray, recv: NumArray): Promise<void> {
    await this.barrierAsync()
    this.allgather(send, recv)
  }
  async alltoallAsync(send: NumArray, recv: NumArray): Promise<void> {
    await this.barrierAsync()
    this.alltoall(send, recv)
  }
  async alltoallvAsync(
    send: NumArray,
    sendCounts: ArrayLike<number>,
    sendDispls: ArrayLike<number>,
    recv: NumArray,
    recvCounts: ArrayLike<number>,
    recvDispls: ArrayLike<number>,
  ): Promise<void> {
    await this.barrierAsync()
    this.alltoallv(send, sendCounts, sendDispls, recv, recvCounts, recvDispls)
  }
  async scanAsync(send: NumArray, recv: NumArray, op: number): Promise<void> {
    await this.barrierAsync()
    this.scan(send, recv, op)
  }
  async exscanAsync(send: NumArray, recv: NumArray, op: number): Promise<void> {
    await this.barrierAsync()
    this.exscan(send, recv, op)
  }
}

function isInt32(x: number): boolean {
  return Number.isInteger(x) && x >= -0x80000000 && x <= 0x7fffffff
}

/** The lowest bit set in `w` (bit i of word i >> 5), or -1. */
function lowestBit(w: Int32Array): number {
  for (let i = 0; i < w.length; i++) {
    const x = w[i]!
    if (x !== 0) return i * 32 + 31 - Math.clz32(x & -x)
  }
  return -1
}
