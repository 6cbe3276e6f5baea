/**
 * The Promise forms of put and get: a non-blocking operation (rma.ts) whose handle is awaited
 * without blocking the event loop, so that the task's event loop keeps running (promise-returning
 * RPC functions settle, timers fire) while the data moves. A put may carry a remote completion,
 * as UPC++'s `rput` with `remote_cx::as_rpc`: a function run at the target after the data landed.
 */
import { WaitCall } from '@amlapi/lapi'
import type { Core } from './core.js'
import type { OpHandle, Rma } from './rma.js'
import type { Rpc } from './rpc.js'
import { PgasError, PgasStatus as S } from './status.js'

/** What a Promise-form put does at its completions. */
export interface PutCompletion {
  /**
   * A remote function (registered under this id or name on every task) run at the target after
   * the data landed there, with `args` and, last, the putting task; no answer comes back.
   */
  remote?: { fn: number | string; args?: readonly unknown[] }
}

/** Waits for `h` without blocking the event loop and gives its counter back; its status. */
export async function waitHandleAsync(core: Core, h: OpHandle): Promise<number> {
  const c = h.counter
  if (c !== null) {
    if (c.get() < h.expect) await core.lapi.waitUntilAsync(() => c.get() >= h.expect, WaitCall.PGAS_OP)
    h.counter = null
    core.release(c)
  }
  return h.status
}

export class AsyncOps {
  private readonly core: Core
  private readonly rma: Rma
  private readonly rpc: Rpc

  constructor(core: Core, rma: Rma, rpc: Rpc) {
    this.core = core
    this.rma = rma
    this.rpc = rpc
  }

  /** Starts a put of `src` to (task, addr); resolves when the data is at the target (and `cx.remote` was sent). */
  async put(task: number, addr: number, src: Uint8Array, cx: PutCompletion | undefined, what: string): Promise<void> {
    const remote = cx?.remote
    if (remote !== undefined && (remote === null || typeof remote !== 'object' || (remote.args !== undefined && !Array.isArray(remote.args)))) {
      throw new PgasError(S.ERR_BAD_ARG, `${what}: remote completion`)
    }
    const rc = await waitHandleAsync(this.core, this.rma.putNb(task, addr, src))
    if (rc !== 0) throw new PgasError(rc, what)
    if (remote !== undefined) {
      const st = this.rpc.callNoReply(task, remote.fn, remote.args ?? [])
      if (st !== 0) throw new PgasError(st, `${what}: remote completion`)
    }
  }

  /** Starts a get into `dst`; resolves when the data is here. */
  async get(task: number, addr: number, dst: Uint8Array, what: string): Promise<void> {
    const rc = await waitHandleAsync(this.core, this.rma.getNb(task, addr, dst))
    if (rc !== 0) throw new PgasError(rc, what)
  }
}
