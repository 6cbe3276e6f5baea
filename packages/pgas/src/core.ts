/**
 * What every part of the runtime shares: the LAPI context, this task's rank and the job's size,
 * direct views of the segments of the tasks of this process (the fast path: plain loads, stores
 * and Atomics, no message), the range checks of the public edge, and a pool of LAPI counters (a
 * counter is 8 bytes of the segment; operations borrow one and give it back).
 */
import type { Lapi, Counter } from '@amlapi/lapi'
import { PgasStatus as S } from './status.js'

export class Core {
  readonly lapi: Lapi
  readonly rank: number
  readonly size: number
  readonly segmentSize: number
  /** Per task, a view of its segment when it shares this process's memory, else null. */
  readonly u8: Array<Uint8Array | null>
  readonly i32: Array<Int32Array | null>
  readonly i64: Array<BigInt64Array | null>
  readonly f64: Array<Float64Array | null>
  /** Whether every task of the job is of this process (one shared memory). */
  readonly allLocal: boolean
  /** Set by `finalize`: every access answers ERR_NOT_INIT. */
  closed = false
  private readonly pool: Counter[] = []
  private implicit: Counter | null = null
  private implicitIssued = 0
  /** The sequence number of the last barrier or collective (every task counts the same calls). */
  private seq = 0

  constructor(lapi: Lapi) {
    this.lapi = lapi
    this.rank = lapi.rank
    this.size = lapi.size
    this.segmentSize = lapi.segmentSize
    this.u8 = []
    this.i32 = []
    this.i64 = []
    this.f64 = []
    for (let t = 0; t < this.size; t++) {
      const sab = lapi.sharedSegment(t)
      this.u8.push(sab === null ? null : new Uint8Array(sab))
      this.i32.push(sab === null ? null : new Int32Array(sab, 0, sab.byteLength >>> 2))
      this.i64.push(sab === null ? null : new BigInt64Array(sab, 0, sab.byteLength >>> 3))
      this.f64.push(sab === null ? null : new Float64Array(sab, 0, sab.byteLength >>> 3))
    }
    this.allLocal = this.u8.every((v) => v !== null)
  }

  /** The sequence number of the next barrier or collective (20 bits, wrapping). */
  nextSeq(): number {
    this.seq = (this.seq + 1) & 0xfffff
    return this.seq
  }

  /** Whether task `t` is of this process (its segment is `u8[t]`). */
  isLocal(t: number): boolean {
    return this.u8[t] !== null
  }

  /** The status of an access of `len` bytes at `addr` of task `task`: OK, or why not. */
  checkRange(task: number, addr: number, len: number): number {
    if (this.closed) return S.ERR_NOT_INIT
    if (!Number.isInteger(task) || task < 0 || task >= this.size) return S.ERR_BAD_TASK
    if (!Number.isInteger(addr) || !Number.isInteger(len) || len < 0) return S.ERR_BAD_ARG
    if (addr < 0 || addr + len > this.segmentSize) return S.ERR_OUT_OF_SEGMENT
    // (address 0 is null wherever the task is: LAPI refuses it for another process's task)
    if (addr === 0 && len > 0) return S.ERR_NULL_PTR
    return S.OK
  }

  /** A counter at 0, from the pool. */
  counter(): Counter {
    const c = this.pool.pop()
    if (c === undefined) return this.lapi.counter()
    return c
  }

  /** Gives a counter back (it must be at 0: every wait consumed what it counted). */
  release(c: Counter): void {
    if (c.get() !== 0) c.set(0)
    this.pool.push(c)
  }

  /**
   * The counter implicit operations complete on (puts and gets of the Nbi forms, non-fetching
   * atomics: whatever `quiet` completes). Whoever starts one calls `issuedImplicit` once it is
   * started; the counter is any LAPI counter argument (completion, origin).
   */
  implicitCounter(): Counter {
    return (this.implicit ??= this.counter())
  }
  issuedImplicit(): void {
    this.implicitIssued++
  }
  /** Implicit operations started and not yet completed by `quiet`. */
  get implicitPending(): number {
    return this.implicitIssued
  }
  /** Waits until every implicit operation started so far is complete. */
  quiet(): void {
    if (this.implicitIssued === 0) return
    this.implicit!.wait(this.implicitIssued)
    this.implicitIssued = 0
  }

  /** Runs LAPI's dispatcher once: handlers, completion handlers (where RPCs run), the network. */
  progress(): void {
    this.lapi.progress()
  }
}
