/**
 * Per-task objects reachable by one global name (UPC++'s `dist_object`): every task makes its
 * part collectively, in the same order, and the k-th made on each task share the name k. Any task
 * fetches another task's part by that name; the part travels as an RPC answer (rpc-codec.ts: the
 * same types as RPC arguments). A fetch that reaches a task before it made its part waits there
 * until it does, as in UPC++ — no barrier is needed between making and fetching.
 */
import type { Core } from './core.js'
import type { Rpc } from './rpc.js'
import { taskWhy } from './explain.js'
import { PgasError, PgasStatus as S } from './status.js'

const FETCH = 'dist.fetch'

/** A task's part of a distributed object, and the way to the others' parts. */
export class DistObject<T = unknown> {
  /** The global name: the same on every task for the k-th made. */
  readonly id: number
  private readonly objs: DistObjects
  private v: T
  private gone = false

  /** @internal */
  constructor(objs: DistObjects, id: number, value: T) {
    this.objs = objs
    this.id = id
    this.v = value
  }

  /** This task's part. */
  get value(): T {
    this.live()
    return this.v
  }
  set value(v: T) {
    this.live()
    this.v = v
  }

  /** Task `task`'s part (this task's at once; another's by a call, progress running meanwhile). */
  fetchSync(task: number): T {
    this.live()
    if (task === this.objs.rank) return this.v
    const h = this.objs.rpc.callInternal(task, FETCH, [this.id])
    const rc = this.objs.rpc.wait(h)
    if (rc !== 0)
      throw new PgasError(
        rc,
        `DistObject ${this.id} fetch from task ${task}`,
        rc === S.ERR_BAD_TASK ? taskWhy(task, this.objs.core.size) : typeof h.result === 'string' ? h.result : undefined,
      )
    return h.result as T
  }

  /** The same without blocking the event loop. */
  async fetchAsync(task: number): Promise<T> {
    this.live()
    if (task === this.objs.rank) return this.v
    const h = this.objs.rpc.callInternal(task, FETCH, [this.id])
    const rc = await this.objs.rpc.waitAsync(h)
    if (rc !== 0)
      throw new PgasError(
        rc,
        `DistObject ${this.id} fetch from task ${task}`,
        rc === S.ERR_BAD_TASK ? taskWhy(task, this.objs.core.size) : typeof h.result === 'string' ? h.result : undefined,
      )
    return h.result as T
  }

  /**
   * @deprecated Call `fetchAsync` (the same call: a Promise form ends in `Async`); `fetch` goes in
   * the release after 0.1.0. (The blocking form is `fetchSync` meanwhile.)
   */
  async fetch(task: number): Promise<T> {
    return await this.fetchAsync(task)
  }

  /** Removes this task's part: later fetches of it answer ERR_STATE, and its methods throw ERR_STATE. */
  destroy(): void {
    if (this.gone) return
    this.gone = true
    this.objs.remove(this.id)
  }

  private live(): void {
    if (this.objs.core.closed) throw new PgasError(S.ERR_NOT_INIT, `DistObject ${this.id} (after finalize)`)
    if (this.gone) throw new PgasError(S.ERR_STATE, `DistObject ${this.id} (destroyed)`)
  }
}

/** The distributed objects of this task, by name, and fetches waiting for parts not made yet. */
export class DistObjects {
  readonly rank: number
  readonly rpc: Rpc
  readonly core: Core
  private readonly parts = new Map<number, DistObject>()
  private readonly destroyed = new Set<number>()
  private readonly early = new Map<number, Array<(status: number, value: unknown) => void>>()
  private next = 0

  constructor(core: Core, rpc: Rpc) {
    this.rank = core.rank
    this.rpc = rpc
    this.core = core
    rpc.registerInternal(FETCH, (args, src, reply) => {
      const id = args[0]
      if (reply === null) return
      if (typeof id !== 'number' || !Number.isInteger(id) || id < 0) {
        reply(S.ERR_BAD_ARG, `a fetch of DistObject ${String(id)} from task ${src}`)
        return
      }
      const d = this.parts.get(id)
      if (d !== undefined) {
        reply(S.OK, d.value)
        return
      }
      if (this.destroyed.has(id)) {
        reply(S.ERR_STATE, `DistObject ${id} was destroyed on task ${this.rank}`)
        return
      }
      const w = this.early.get(id)
      if (w === undefined) this.early.set(id, [reply])
      else w.push(reply)
    })
  }

  /** Collective (every task, in the same order): this task's part of a new distributed object. */
  make<T>(value: T): DistObject<T> {
    const id = this.next++
    const d = new DistObject<T>(this, id, value)
    this.parts.set(id, d as DistObject)
    const w = this.early.get(id)
    if (w !== undefined) {
      this.early.delete(id)
      for (const reply of w) reply(S.OK, value)
    }
    return d
  }

  /** A part by its name (the flat face), or undefined. */
  get(id: number): DistObject | undefined {
    return this.parts.get(id)
  }

  /** @internal */
  remove(id: number): void {
    this.parts.delete(id)
    this.destroyed.add(id)
  }
}
