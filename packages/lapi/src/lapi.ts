/**
 * The idiomatic face of LAPI: a `Lapi` object per task with typed methods (the `Counter`s it makes
 * are counter.ts's), and promise waits that keep the event loop free. Every method is a thin layer over `Context` (the one
 * implementation, shared with the C-style `LAPI_*` functions of `compat.ts`): it turns a non-zero
 * LAPI code into a thrown `LapiError` carrying that code.
 */
import { InitFlag, Query, RmwOp } from './base/constants.js'
import type { Context } from './context.js'
import { Counter } from './counter.js'
import type { DispatcherStats, HandlerFn } from './core/types.js'
import type { hdr_hndlr_t, short_hndlr_t, vhdr_hndlr_t } from './am/types.js'
import { LapiError, check } from './base/errors.js'
import { failure, terminated, xferArgs } from './core/explain.js'
import { LapiStatus } from './base/status.js'
import { currentContext, openContext } from './registry.js'
import { ringDoorbell } from './layout/control.js'
import type { Addr, LAPI_err_hndlr, LocalBuf, lapi_vec_t, Ref, SegmentMemory } from './base/types.js'

/** Options of `Lapi.init`. */
export interface LapiInitOptions {
  /** Asynchronous errors (err_hndlr of LAPI_Init). */
  errorHandler?: LAPI_err_hndlr
  /** Interrupt mode (handlers also run from the event loop); default false = polling, as AMLAPI. */
  interrupt?: boolean
}

/**
 * Counters to bump; any may be left out. Each takes a {@link Counter} or an `Addr` (a counter's
 * `addr`; 0 = none).
 *
 * A target counter lives in the target's segment. Given as an `Addr`, it is that task's Addr (got
 * from it with {@link Lapi.addressInit}); given as a `Counter` of this task, it means the counter
 * at the same Addr on the target, SPMD style: tasks that allocate the same way get the same
 * addresses, so `lapi.put(t, n, a, buf, { tgtCntr: done })` bumps task t's own `done`, as a
 * handler function given as `hdr` means the same registration on the target.
 */
export interface XferCounters {
  /** Counter at the target: a `Counter` (the one at the same Addr there) or an Addr in its segment. */
  tgtCntr?: Counter | Addr
  /** Local counter: origin buffer reusable (Put) or data arrived (Get). */
  orgCntr?: Counter | Addr
  /** Local counter: the operation completed at the target (Put, Putv, Amsend). */
  cmplCntr?: Counter | Addr
}

/**
 * The Addr a counter argument names: a Counter's `addr`, a number as it is, nothing as 0; any other
 * value goes on as it is, for the context to refuse (LAPI_ERR_CNTR_NULL). Allocates nothing.
 */
function cntr(c: Counter | Addr | null | undefined): Addr {
  if (typeof c === 'number') return c
  if (c instanceof Counter) return c.addr
  return (c ?? 0) as Addr
}

/** One task's LAPI context. */
export class Lapi {
  /** The implementation (also reachable through the handle by the compat face; `contextOf` in internal.ts). */
  private readonly ctx: Context
  private readonly ret: Ref<number> = { value: 0 }

  private constructor(ctx: Context) {
    this.ctx = ctx
  }

  /** The context, or a thrown LAPI_ERR_HNDL_INVALID once it was terminated. */
  private get c(): Context {
    if (this.ctx.isTerminated) throw terminated()
    return this.ctx
  }

  /** Joins the job (LAPI_Init). Throws LapiError (LAPI_ERR_ALL_HNDL_IN_USE when a context is open). */
  static init(opts: LapiInitOptions = {}): Lapi {
    const c = openContext({ err_hndlr: opts.errorHandler ?? null, protocol: opts.interrupt === true ? 0 : InitFlag.LAPI_INTERRUPT_OFF })
    if (typeof c === 'number')
      throw new LapiError(
        c,
        'Init',
        c === LapiStatus.ERR_ALL_HNDL_IN_USE ? 'this task has a context open already: finalize() it first, or share it (Lapi.current())' : undefined,
      )
    return new Lapi(c)
  }

  /**
   * The `Lapi` of this task's open context (opened by `Lapi.init` or `LAPI_Init`), or null. Lets a
   * layered library (am2) share the program's context instead of opening its own.
   */
  static current(): Lapi | null {
    const c = currentContext()
    return c === undefined ? null : new Lapi(c)
  }

  /** The handle number the C-style functions take. */
  get handle(): number {
    return this.ctx.handle
  }
  /** Whether `finalize()` ran (every other call then throws LAPI_ERR_HNDL_INVALID). */
  get isFinalized(): boolean {
    return this.ctx.isTerminated
  }
  /** This task's rank in the job, 0..size-1: LAPI's task id (LAPI_Qenv TASK_ID). */
  get rank(): number {
    return this.ctx.taskId
  }
  /** Tasks in the job (LAPI_Qenv NUM_TASKS). */
  get size(): number {
    return this.ctx.numTasks
  }
  /** @deprecated Read `isFinalized` (the same answer); `isTerminated` goes in the release after 0.1.0. */
  get isTerminated(): boolean {
    return this.ctx.isTerminated
  }
  /** @deprecated Read `rank` (the same number); `taskId` goes in the release after 0.1.0. */
  get taskId(): number {
    return this.ctx.taskId
  }
  /** @deprecated Read `size` (the same number); `numTasks` goes in the release after 0.1.0. */
  get numTasks(): number {
    return this.ctx.numTasks
  }
  /** Bytes of every task's segment. */
  get segmentSize(): number {
    return this.ctx.segmentSize
  }
  /**
   * This task's segment as a shared WebAssembly.Memory, for WebAssembly code to work on it in
   * place: byte `a` of the memory is segment address `a`. Undefined where the segment is a plain
   * SharedArrayBuffer: its size is not a whole number of 64 KiB pages, or the engine refused the
   * memory. (Pass it as an instance's imported memory, declared shared with as many pages.)
   */
  get segmentMemory(): SegmentMemory | undefined {
    return this.ctx.segmentMemory()
  }

  /** LAPI_Qenv. */
  query(q: number): number {
    const rc = this.c.qenv(q, this.ret)
    if (rc !== 0) throw failure(this.ctx, rc, 'Qenv', { query: q })
    return this.ret.value
  }

  /** LAPI_Senv. */
  set(q: number, value: number): void {
    const rc = this.c.senv(q, value)
    if (rc !== 0) throw failure(this.ctx, rc, 'Senv', { query: q, value })
  }

  /** Switches interrupt mode on or off (LAPI_Senv INTERRUPT_SET). */
  setInterrupt(on: boolean): void {
    this.set(Query.INTERRUPT_SET, on ? 1 : 0)
  }

  /** Allocates `nbytes` zero-filled bytes of the own segment; returns their Addr (LAPIX_Malloc). */
  malloc(nbytes: number): Addr {
    const rc = this.c.malloc(nbytes, this.ret)
    if (rc !== 0) throw failure(this.ctx, rc, 'malloc', { nbytes })
    return this.ret.value
  }

  /** Frees an Addr `malloc` returned (LAPIX_Free). */
  free(addr: Addr): void {
    const rc = this.c.free(addr)
    if (rc !== 0) throw failure(this.ctx, rc, 'free', { freed: addr })
  }

  /** A live view of `nbytes` of the own segment at `addr` (not a copy). */
  view(addr: Addr, nbytes: number): Uint8Array {
    return this.c.view(addr, nbytes)
  }

  /** Whether task `t` runs in this process, its segment shared memory with this task's. */
  isLocal(t: number): boolean {
    return Number.isInteger(t) && t >= 0 && t < this.ctx.numTasks && this.ctx.local[t] === 1
  }

  /**
   * The segment of task `t` of this process (shared memory: loads, stores and `Atomics` on it are
   * the target's own, with no message), or null for a task of another process or no task. What a
   * layered library (such as @amlapi/pgas) takes for the fast path to co-located tasks; the
   * counters and the heap `malloc` keeps live in it too, so write only what was allocated for it.
   */
  sharedSegment(t: number): SharedArrayBuffer | null {
    if (!this.isLocal(t)) return null
    return this.ctx.seg.u8[t]!.buffer as SharedArrayBuffer
  }

  /**
   * Wakes task `t` of this process if it sleeps in a blocking wait, which then checks its condition
   * again; nothing for a task that spins, or one of another process. For layered libraries whose
   * tasks wait, in `waitUntil`, on shared memory that another task changes (after the change).
   */
  wake(t: number): void {
    if (this.ctx.local[t] === 1) ringDoorbell(this.ctx.ctl, t)
  }

  /**
   * A new counter set to `initial` in the own segment (8 bytes from `malloc`). Pass the `Counter`
   * wherever a counter goes, or its `addr`; give it back with `counter.free()`.
   */
  counter(initial = 0): Counter {
    const c = new Counter(this.ctx, this.malloc(8))
    if (initial !== 0) c.set(initial)
    return c
  }

  /** Copies `len` bytes of local `org` to `tgtAddr` in task `tgt` (LAPI_Put). */
  put(tgt: number, len: number, tgtAddr: Addr, org: LocalBuf, c: XferCounters = {}): void {
    const rc = this.c.put(tgt, len, tgtAddr, org, cntr(c.tgtCntr), cntr(c.orgCntr), cntr(c.cmplCntr))
    if (rc !== 0) throw failure(this.ctx, rc, 'Put', { tgt, len, tgtAddr, org, counters: { ...c } })
  }

  /** Copies `len` bytes at `tgtAddr` of task `tgt` into local `org` (LAPI_Get). */
  get(tgt: number, len: number, tgtAddr: Addr, org: LocalBuf, c: XferCounters = {}): void {
    const rc = this.c.get(tgt, len, tgtAddr, org, cntr(c.tgtCntr), cntr(c.orgCntr))
    if (rc !== 0) throw failure(this.ctx, rc, 'Get', { tgt, len, tgtAddr, org, counters: { ...c } })
  }

  /**
   * Sends an active message (LAPI_Amsend): `hdr` names the header handler at the target (a table
   * index, or a function registered on every task with `setHandler`/`addressInit`). `uhdr` (a
   * multiple of 8 bytes, at most MAX_UHDR_SZ) and `udata` are read before the origin counter moves;
   * don't change them before that. `cmplCntr` moves after the target's completion handler returned.
   */
  amsend(
    tgt: number,
    hdr: number | hdr_hndlr_t,
    uhdr: Uint8Array | Addr | null,
    udata: Uint8Array | Addr | null,
    c: XferCounters = {},
    udataLen?: number,
    uhdrLen?: number,
  ): void {
    const ul = uhdrLen ?? (uhdr instanceof Uint8Array ? uhdr.length : 0)
    const dl = udataLen ?? (udata instanceof Uint8Array ? udata.length : 0)
    const rc = this.c.amsend(tgt, hdr as HandlerFn, uhdr, ul, udata, dl, cntr(c.tgtCntr), cntr(c.orgCntr), cntr(c.cmplCntr))
    if (rc !== 0) {
      throw failure(this.ctx, rc, 'Amsend', { tgt, hdr, uhdr, uhdrLen: ul, org: udata, orgName: 'udata', len: dl, lenName: 'udataLen', counters: { ...c } })
    }
  }

  /**
   * `amsend` for hot paths of layered libraries: positional arguments, no counters object, and the
   * LAPI code returned instead of thrown (0 = sent). `uhdr`/`udata` are read before `orgCntr` (0 = none) moves.
   */
  amsendCode(
    tgt: number,
    hdr: number,
    uhdr: Uint8Array | Addr | null,
    uhdrLen: number,
    udata: Uint8Array | Addr | null,
    udataLen: number,
    orgCntr: Counter | Addr = 0,
  ): number {
    if (this.ctx.isTerminated) return LapiStatus.ERR_HNDL_INVALID
    return this.ctx.amsend(tgt, hdr, uhdr, uhdrLen, udata, udataLen, 0, cntr(orgCntr), 0)
  }

  /**
   * Negotiated-payload send of a one-packet active message, for hot paths of layered libraries (as
   * GASNet-EX's Prepare/Commit): reserves the packet of an active message to `tgt`'s handler `hdr`
   * (a handler-table index) with `uhdrLen` bytes of user header (a multiple of 8, at most
   * MAX_UHDR_SZ) and no data, and returns the index in `preparedWords` (an Int32Array over the
   * target's whole inbox) where the caller writes the user header at once, word by word in the
   * host's byte order (this path runs on little-endian hosts only), and nothing outside it;
   * `commitShort` then sends it.
   * Returns -1 when the message cannot take this path now (arguments it does not take, a full
   * ring, a purged target, a terminated context, the reordering test transport, inside a header
   * handler): send it with `amsendCode` instead. Between prepareShort and the last word written
   * nothing else may be sent or polled, and the words become visible to the target at
   * `commitShort`; a send on the same ring before `commitShort` voids the preparation, and any
   * prepareShort (a refused one too) abandons the one before. No counters move.
   */
  prepareShort(tgt: number, hdr: number, uhdrLen: number): number {
    if (this.ctx.isTerminated) return -1
    return this.ctx.prepareShort(tgt, hdr, uhdrLen)
  }

  /**
   * `prepareShort` for a message with data: reserves the packet of an active message to `tgt`'s
   * handler `hdr` with `uhdrLen` bytes of user header (a multiple of 8, at most MAX_UHDR_SZ)
   * followed by `dataLen` bytes of data (together at most a packet, the data at most the
   * rendezvous threshold), for a layered library that writes a payload straight into the packet.
   * Returns the index in `preparedWords` of the first user-header word; the data starts at byte
   * 4 × index + `uhdrLen` of `preparedBytes` (8-aligned). The target's header handler, or the
   * slot's in-place receiver, gets it as an `amsendCode` with that data. -1 and the other rules:
   * as prepareShort.
   */
  prepareShortData(tgt: number, hdr: number, uhdrLen: number, dataLen: number): number {
    if (this.ctx.isTerminated) return -1
    return this.ctx.prepareShortData(tgt, hdr, uhdrLen, dataLen)
  }

  /**
   * The words the user header of a prepared packet is written into (from a successful prepareShort
   * until commitShort; throws otherwise).
   */
  get preparedWords(): Int32Array {
    return this.ctx.preparedWords
  }

  /**
   * The bytes of the same inbox as `preparedWords` (a Uint8Array over the whole of it: word index
   * i is byte 4 i), for a payload written into the prepared user header byte by byte or with
   * `set`; the same rules apply (from a successful prepareShort until commitShort; throws otherwise).
   */
  get preparedBytes(): Uint8Array {
    return this.ctx.preparedBytes
  }

  /**
   * Sends the packet `prepareShort` reserved. Returns false when nothing was sent: no packet is
   * prepared, another send to the same task came in between, or the context was terminated (then
   * send the message with `amsendCode`, writing it anew).
   */
  commitShort(): boolean {
    return !this.ctx.isTerminated && this.ctx.commitShort()
  }

  /** Sends an active message gathered from a vector (LAPI_Amsendv); the target's vector handler scatters it. */
  amsendv(tgt: number, hdr: number | vhdr_hndlr_t, uhdr: Uint8Array | Addr | null, orgVec: lapi_vec_t, c: XferCounters = {}, uhdrLen?: number): void {
    const ul = uhdrLen ?? (uhdr instanceof Uint8Array ? uhdr.length : 0)
    const rc = this.c.amsendv(tgt, hdr as HandlerFn, uhdr, ul, orgVec, cntr(c.tgtCntr), cntr(c.orgCntr), cntr(c.cmplCntr))
    if (rc !== 0) throw failure(this.ctx, rc, 'Amsendv', { tgt, hdr, uhdr, uhdrLen: ul, orgVec, counters: { ...c } })
  }

  /** Vector Put (LAPI_Putv). */
  putv(tgt: number, tgtVec: lapi_vec_t, orgVec: lapi_vec_t, c: XferCounters = {}): void {
    const rc = this.c.putv(tgt, tgtVec, orgVec, cntr(c.tgtCntr), cntr(c.orgCntr), cntr(c.cmplCntr))
    if (rc !== 0) throw failure(this.ctx, rc, 'Putv', { tgt, tgtVec, orgVec, counters: { ...c } })
  }

  /** Vector Get (LAPI_Getv). */
  getv(tgt: number, tgtVec: lapi_vec_t, orgVec: lapi_vec_t, c: XferCounters = {}): void {
    const rc = this.c.getv(tgt, tgtVec, orgVec, cntr(c.tgtCntr), cntr(c.orgCntr))
    if (rc !== 0) throw failure(this.ctx, rc, 'Getv', { tgt, tgtVec, orgVec, counters: { ...c } })
  }

  /** Atomic fetch-and-add on a 32-bit word of task `tgt`; returns the old value. */
  fetchAdd(tgt: number, tgtVar: Addr, value: number, orgCntr: Counter | Addr = 0): number {
    return this.rmw(RmwOp.FETCH_AND_ADD, tgt, tgtVar, value, 0, orgCntr)
  }

  /** Atomic fetch-and-or; returns the old value. */
  fetchOr(tgt: number, tgtVar: Addr, value: number, orgCntr: Counter | Addr = 0): number {
    return this.rmw(RmwOp.FETCH_AND_OR, tgt, tgtVar, value, 0, orgCntr)
  }

  /** Atomic swap; returns the old value. */
  swap(tgt: number, tgtVar: Addr, value: number, orgCntr: Counter | Addr = 0): number {
    return this.rmw(RmwOp.SWAP, tgt, tgtVar, value, 0, orgCntr)
  }

  /** Atomic compare-and-swap; true when the word equalled `expected` and now holds `value`. */
  compareAndSwap(tgt: number, tgtVar: Addr, expected: number, value: number, orgCntr: Counter | Addr = 0): boolean {
    return this.rmw(RmwOp.COMPARE_AND_SWAP, tgt, tgtVar, expected, value, orgCntr) === 1
  }

  /** LAPI_Rmw with an RmwOp; returns the old value (COMPARE_AND_SWAP: 1 = swapped, 0 = not). */
  rmw(op: number, tgt: number, tgtVar: Addr, a: number, b = 0, orgCntr: Counter | Addr = 0): number {
    const v = this.rmwIn
    // (a BigInt operand cannot be stored: the code and the words, as for any operand refused)
    try {
      v[0] = a
      v[1] = b
    } catch {
      throw failure(this.ctx, LapiStatus.ERR_IN_VAL_NULL, 'Rmw', { operands: [a, b] })
    }
    const c = this.c
    const rc = c.rmw(op, tgt, tgtVar, v, this.ret, cntr(orgCntr))
    if (rc !== 0) throw failure(this.ctx, rc, 'Rmw', { op, tgt, tgtVar, width: 4, operands: [a, b], counters: { orgCntr } })
    check(c.awaitRmw(tgt), 'Rmw')
    return this.ret.value
  }

  /** LAPI_Rmw64 with an RmwOp on a 64-bit word (8-byte aligned); returns the old value. */
  rmw64(op: number, tgt: number, tgtVar: Addr, a: bigint, b = 0n, orgCntr: Counter | Addr = 0): bigint {
    const v = this.rmwIn64
    // (a number operand cannot be stored: the code and the words, as for any operand refused)
    try {
      v[0] = a
      v[1] = b
    } catch {
      throw failure(this.ctx, LapiStatus.ERR_IN_VAL_NULL, 'Rmw64', { width: 8, operands: [a, b] })
    }
    const out = this.ret64
    const c = this.c
    const rc = c.rmw64(op, tgt, tgtVar, v, out, cntr(orgCntr))
    if (rc !== 0) throw failure(this.ctx, rc, 'Rmw64', { op, tgt, tgtVar, width: 8, operands: [a, b], counters: { orgCntr } })
    check(c.awaitRmw(tgt), 'Rmw64')
    return out.value
  }

  private readonly rmwIn = new Int32Array(2)
  private readonly rmwIn64 = new BigInt64Array(2)
  private readonly ret64: Ref<bigint> = { value: 0n }

  /** LAPI_Xfer with a command object (PUT, GET, PUTV, GETV, RMW types). */
  xfer(cmd: object): void {
    const rc = this.c.xfer(cmd)
    if (rc !== 0) throw failure(this.ctx, rc, 'Xfer', xferArgs(cmd))
  }

  /** Dispatcher statistics (dropped malformed packets, dropped duplicates, messages in and out). */
  stats(): DispatcherStats {
    return this.ctx.stats()
  }

  /**
   * Blocks until `cond()` is true, running the dispatcher between checks: spins for the configured
   * budget (AMLAPI_SPIN_US), then sleeps until a packet or counter update arrives. For libraries
   * layered on LAPI (am2's AM_WaitSema and flow control). `cond` must not send; pass a long-lived
   * function to wait without allocating. `call` (a `WaitCall`, default WAIT_UNTIL) names the
   * blocking call the wait belongs to, for the report of a job that times out.
   */
  waitUntil(cond: () => boolean, call?: number): void {
    const rc = this.c.waitUntil(cond, call)
    if (rc !== 0) throw failure(this.ctx, rc, 'waitUntil', {})
  }

  /** Like `waitUntil`, without blocking the event loop. */
  async waitUntilAsync(cond: () => boolean, call?: number): Promise<void> {
    check(await this.c.waitUntilAsync(cond, call), 'waitUntil')
  }

  /** Whether task `t` is still in the job (false once it terminated, exited or failed). */
  taskAlive(t: number): boolean {
    return this.ctx.taskAlive(t)
  }

  /**
   * `taskAlive` for hot send paths (task index `t`): a plain read instead of an atomic one, so a
   * task that left a moment ago may still look alive (a send to it then goes unanswered, as one
   * made just before it left would; a full ring to it is found out once its thread has exited).
   * Loops that wait for a task must use `taskAlive`.
   */
  taskAliveHint(t: number): boolean {
    return this.ctx.taskAliveHint(t)
  }

  /** Whether task `t` failed or was lost (not: left the job normally). */
  taskFailed(t: number): boolean {
    return this.ctx.taskFailed(t)
  }

  /**
   * Throws JobAbortedError when the job is being torn down (a task failed or a process was lost),
   * as every blocking LAPI call does; for loops that only poll (AM_Poll), which must notice too.
   */
  checkAborted(): void {
    this.ctx.checkAborted()
  }

  /** Whether a LAPI header handler of this task is running (no sending or waiting there). */
  get inHeaderHandler(): boolean {
    return this.ctx.inHeaderHandler
  }

  /**
   * Whether a dispatcher round would find something to do: a packet waiting in the inbox, or
   * queued work (completion handlers, rendezvous copies, held test-transport packets). One atomic
   * read per ring of another task (none for a ring an earlier look found packets in): for poll
   * loops of layered libraries that skip a round with nothing to do. The look is a step in LAPI:
   * it publishes the ring slots the dispatcher gave back without telling their senders yet.
   */
  get pending(): boolean {
    return this.ctx.workPending()
  }

  /**
   * Runs the dispatcher once without the LAPI_Probe checks; returns the packets handled (0 inside
   * a header handler). `incidental`: a poll a layered library makes on the side of a send (AM-2's
   * request): its sockets are read at most once per 50 µs and a burst's sends may wait for the
   * next write, as an empty read costs more than a small send.
   */
  progress(incidental = false): number {
    return this.ctx.inHeaderHandler ? 0 : incidental ? this.ctx.progress(false) : this.ctx.pollProgress()
  }

  /**
   * Sends of this thread to other processes wait, between `holdSends()` and its `releaseSends()`
   * (nested), for the last release, which writes them at once: for a layered library that runs a
   * batch of handlers (AM_Poll), so that their answers go in one write rather than one each. A
   * blocking wait in between writes them all the same. No effect within one process.
   */
  holdSends(): void {
    this.ctx.net?.holdSends()
  }
  releaseSends(): void {
    this.ctx.net?.releaseSends()
  }

  /** Runs the dispatcher once (LAPI_Probe). */
  probe(): void {
    this.c.probe()
  }

  /** LAPI_Fence. */
  fence(): void {
    check(this.c.fence(), 'Fence')
  }

  /** LAPI_Gfence: fence + barrier of all tasks (blocks the thread). */
  gfence(): void {
    check(this.c.gfence(), 'Gfence')
  }

  /** LAPI_Gfence without blocking the event loop. */
  async gfenceAsync(): Promise<void> {
    check(await this.c.gfenceAsync(), 'Gfence')
  }

  /**
   * All-gather (LAPI_Address_init), collective: every task calls it; returns every task's value,
   * index = task id. `mine` is a number (an Addr from `malloc`, say), a `Counter` (its `addr` is
   * gathered: the result is every task's Addr of that counter, to pass as a target counter), a
   * header handler function (registered on this task; the result holds each task's handler-table
   * index) or null (0).
   */
  addressInit(mine: Counter | number | hdr_hndlr_t | vhdr_hndlr_t | null): number[] {
    const out: number[] = []
    const rc = this.c.addressInit(mine instanceof Counter ? mine.addr : (mine as HandlerFn | number | null), out)
    if (rc !== 0) throw failure(this.ctx, rc, 'Address_init', { mine })
    return out
  }

  /** All-gather of 64-bit values (LAPI_Address_init64). */
  addressInit64(mine: bigint): bigint[] {
    const out: bigint[] = []
    const rc = this.c.addressInit64(mine, out)
    if (rc !== 0) throw failure(this.ctx, rc, 'Address_init64', { mine })
    return out
  }

  /** Registers a header handler at `index` (LAPI_Addr_set), 1..LOC_ADDRTBL_SZ-1. */
  setHandler(index: number, fn: hdr_hndlr_t | vhdr_hndlr_t | null): void {
    const rc = this.c.addrSet(fn as HandlerFn | null, index)
    if (rc !== 0) throw failure(this.ctx, rc, 'Addr_set', { index, fn })
  }

  /**
   * Registers a header handler of a library layered on LAPI (such as @amlapi/am2) in the range
   * reserved for libraries (slots 0..63, table indices LOC_ADDRTBL_SZ + slot), out of the way of the
   * program's `LAPI_Addr_set` indices. Returns the index to pass as `hdr_hdl`; it is the same on
   * every task. Throws LAPI_ERR_ADDR_HNDL_RANGE for a slot outside 0..63.
   */
  setLibraryHandler(slot: number, fn: hdr_hndlr_t | vhdr_hndlr_t | null): number {
    const idx = this.c.setLibraryHandler(slot, fn as HandlerFn | null)
    if (idx < 0) throw failure(this.ctx, LapiStatus.ERR_ADDR_HNDL_RANGE, 'setLibraryHandler', { index: slot })
    return idx
  }

  /**
   * Gives library slot `slot` (registered with `setLibraryHandler`) an in-place receiver for its
   * one-packet messages (the SHORT and BARE packets of the wire format: what `prepareShort` writes,
   * and an `amsend`/`amsendCode` whose user header and data fit one packet and whose data does
   * not go by rendezvous): `fn(words, at, uhdrLen, dataLen, src)` reads the user header at word
   * `at` of `words` (the receiving inbox), the data after it, straight from the packet's slot: no
   * copy, no return-info record. It runs where the header handler would, under the same rules (no
   * sending or waiting), must copy out what it keeps, and the message is complete when it returns (no landing buffer,
   * no completion handler; its counters move as for a header handler that returned null). Every
   * other packet of the slot still goes to its header handler. `null` removes it, and so does any
   * `setLibraryHandler` of the slot (set it again after a new header handler). Throws
   * LAPI_ERR_ADDR_HNDL_RANGE for a slot outside 0..63, or one without a header handler.
   */
  setLibraryShortHandler(slot: number, fn: short_hndlr_t | null): number {
    const idx = this.c.setLibraryShortHandler(slot, fn)
    if (idx < 0) throw failure(this.ctx, LapiStatus.ERR_ADDR_HNDL_RANGE, 'setLibraryShortHandler', { index: slot, fn })
    return idx
  }

  /** Stops sending to `task` (LAPI_Purge_totask) until `resume`. */
  purge(task: number): void {
    const rc = this.c.purgeTotask(task)
    if (rc !== 0) throw failure(this.ctx, rc, 'Purge_totask', { tgt: task })
  }

  /** LAPI_Resume_totask. */
  resume(task: number): void {
    const rc = this.c.resumeTotask(task)
    if (rc !== 0) throw failure(this.ctx, rc, 'Resume_totask', { tgt: task })
  }

  /** Leaves the job (LAPI_Term). Call `gfence()` first so peers are done with this task. */
  finalize(): void {
    check(this.c.term(), 'Term')
  }

  /** @deprecated Call `finalize()` (the same call); `term()` goes in the release after 0.1.0. */
  term(): void {
    this.finalize()
  }
}
