/**
 * The idiomatic face's `Counter`: a LAPI counter word of this task's segment with typed methods
 * (get, set, wait, waitAsync, free), each a thin layer over `Context` that turns a non-zero LAPI
 * code into a thrown `LapiError`. `Lapi.counter()` (lapi.ts) makes them.
 */
import type { Context } from './context.js'
import { LapiError } from './base/errors.js'
import { failure, terminated } from './core/explain.js'
import { LapiStatus } from './base/status.js'
import type { Addr, Ref } from './base/types.js'

/**
 * A LAPI counter: a 4-byte word (in an 8-byte slot) of this task's segment, made by
 * {@link Lapi.counter}.
 *
 * Pass the `Counter` itself wherever a counter goes (the {@link XferCounters} fields, the
 * `orgCntr` of the Rmw methods and `amsendCode`, {@link Lapi.addressInit}); its `addr` (a plain
 * `Addr`) works as well, and is what the C-style face (`@amlapi/lapi/compat`) takes. As a target
 * counter a `Counter` means the counter at the same Addr on the target (SPMD style: tasks that
 * allocate the same way get the same addresses). Where they may differ, exchange the addresses
 * with `lapi.addressInit(counter)` and pass the target's Addr.
 *
 * @example
 * ```js
 * const done = lapi.counter()
 * const dones = lapi.addressInit(done)        // every task's done.addr, index = task id
 * lapi.put(t, 8, bufs[t], src, { tgtCntr: dones[t], orgCntr: done })
 * ```
 */
export class Counter {
  /** Where the counter lives: its Addr in this task's segment (what the C-style functions take). */
  readonly addr: Addr
  private readonly ctx: Context
  private readonly out: Ref<number> = { value: 0 }

  /** @internal Made by {@link Lapi.counter}: `ctx` is the task's context, `addr` an 8-byte slot of its segment. */
  constructor(ctx: Context, addr: Addr) {
    this.ctx = ctx
    this.addr = addr
  }

  /** The context, or a thrown LAPI_ERR_HNDL_INVALID once it was terminated. */
  private get c(): Context {
    if (this.ctx.isTerminated) throw terminated()
    return this.ctx
  }

  /** The current value (LAPI_Getcntr; runs the dispatcher once). */
  get(): number {
    const rc = this.c.getcntr(this.addr, this.out)
    if (rc !== 0) throw failure(this.ctx, rc, 'Getcntr', { counters: { counter: this.addr } })
    return this.out.value
  }

  /** Sets the value (LAPI_Setcntr). Not atomic with concurrent increments. */
  set(value: number): void {
    const rc = this.c.setcntr(this.addr, value)
    if (rc !== 0) throw failure(this.ctx, rc, 'Setcntr', { counters: { counter: this.addr }, value })
  }

  /** Blocks until the value is ≥ `value`, subtracts `value` and returns what is left (LAPI_Waitcntr). */
  wait(value: number): number {
    const rc = this.c.waitcntr(this.addr, value, this.out)
    if (rc !== 0) throw failure(this.ctx, rc, 'Waitcntr', { counters: { counter: this.addr }, value })
    return this.out.value
  }

  /** Like `wait`, but asynchronous: the event loop keeps running while it waits. */
  async waitAsync(value: number): Promise<number> {
    try {
      return await this.c.waitcntrAsync(this.addr, value)
    } catch (e) {
      // (bad arguments: the code, with the values; a BigInt value fails the check's arithmetic)
      const rc = e instanceof LapiError ? e.status : typeof value === 'bigint' ? LapiStatus.ERR_CNTR_VAL : 0
      if (rc !== LapiStatus.ERR_CNTR_VAL && rc !== LapiStatus.ERR_CNTR_NULL) throw e
      throw failure(this.ctx, rc, 'Waitcntr', { counters: { counter: this.addr }, value })
    }
  }

  /** Gives the word back to the segment; the counter must not be used afterwards. */
  free(): void {
    const rc = this.c.free(this.addr)
    if (rc !== 0) throw failure(this.ctx, rc, 'free counter', { freed: this.addr })
  }
}
