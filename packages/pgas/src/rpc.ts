/**
 * Remote procedure calls: a function registered under the same id on every task, called on a
 * task with arguments (anything msgpack carries: numbers, strings, typed arrays, arrays, plain
 * objects), its result sent back. The call travels as a LAPI active message; the function runs in
 * the target's completion handler, that is in the target's progress (any LAPI call that polls,
 * AM_Poll, a wait, or the event loop in interrupt mode), never in a header handler, so it may
 * communicate and wait. A function that returns a promise answers when it settles — in the
 * target's event loop, which a blocking wait of the target holds up: such a target waits with the
 * async forms (`rpc`, `barrierAsync`) while calls may be outstanding.
 */
// (msgpackr/pack, not msgpackr: the package's main entry loads its optional native addon, msgpackr-extract)
import { Packr } from 'msgpackr/pack'
import type { compl_hndlr_t, lapi_return_info_t, Ref } from '@amlapi/lapi'
import type { Core } from './core.js'
import { PgasStatus as S } from './status.js'

export const SLOT_RPC = 9
export const SLOT_REPLY = 10
const UHDR = 16
const F_NO_REPLY = 1

/** A remote procedure: called with the arguments and, last, the calling task. */
export type RemoteFn = (...args: any[]) => unknown

/** A call in flight: `done` once the answer came; `status` OK or why not, `result` its value. */
export class RpcHandle {
  readonly id: number
  done = false
  status = 0
  result: unknown = undefined
  constructor (id: number) { this.id = id }
}

export class Rpc {
  private readonly core: Core
  private readonly fns: Array<RemoteFn | null> = []
  private readonly pending = new Map<number, RpcHandle>()
  private nextId = 1
  private readonly hReq: number
  private readonly hRep: number
  private readonly packr = new Packr({ useRecords: false })
  private readonly uhdr = new Int32Array(UHDR / 4)
  private readonly uhdr8 = new Uint8Array(this.uhdr.buffer)
  /** Calls answered and received, for statistics. */
  served = 0

  constructor (core: Core) {
    this.core = core
    const l = core.lapi
    this.hReq = l.setLibraryHandler(SLOT_RPC, (_h: number, uhdr: Uint8Array, _ul: number, info: lapi_return_info_t,
      comp: Ref<compl_hndlr_t | null>, ui: Ref<unknown>) => this.land(uhdr, info, comp, ui, this.runCall))
    this.hRep = l.setLibraryHandler(SLOT_REPLY, (_h: number, uhdr: Uint8Array, _ul: number, info: lapi_return_info_t,
      comp: Ref<compl_hndlr_t | null>, ui: Ref<unknown>) => this.land(uhdr, info, comp, ui, this.takeReply))
  }

  /** Registers `fn` under `id` (0 ≤ id < 65536); every task must register the same functions under the same ids. */
  register (id: number, fn: RemoteFn | null): number {
    if (!Number.isInteger(id) || id < 0 || id >= 65536 || (fn !== null && typeof fn !== 'function')) return S.ERR_BAD_ARG
    while (this.fns.length <= id) this.fns.push(null)
    this.fns[id] = fn
    return S.OK
  }

  /**
   * A message's header handler: its bytes land in a buffer of their own, and `then` runs as its
   * completion handler (outside the header handler) with (source, header words, bytes).
   */
  private land (uhdr: Uint8Array, info: lapi_return_info_t, comp: Ref<compl_hndlr_t | null>, ui: Ref<unknown>, then: compl_hndlr_t): Uint8Array {
    const words = new Int32Array(4)
    new Uint8Array(words.buffer).set(uhdr.subarray(0, UHDR))
    const buf = new Uint8Array(info.msg_len)
    if (info.udata_one_pkt_ptr !== null) buf.set(info.udata_one_pkt_ptr.subarray(0, info.msg_len))
    comp.value = then
    ui.value = { src: info.src, words, buf }
    return buf
  }

  private send (tgt: number, hdr: number, w0: number, w1: number, w2: number, data: Uint8Array): number {
    const u = this.uhdr
    u[0] = w0; u[1] = w1; u[2] = w2; u[3] = 0
    const c = this.core.counter()
    const rc = this.core.lapi.amsendCode(tgt, hdr, this.uhdr8, UHDR, data.length === 0 ? null : data, data.length, c)
    if (rc === 0) c.wait(1)
    this.core.release(c)
    return rc === 0 ? S.OK : S.ERR_LAPI
  }

  /** Runs a call at the target (a completion handler) and answers it. */
  private readonly runCall: compl_hndlr_t = (_h, ui) => {
    const { src, words, buf } = ui as { src: number, words: Int32Array, buf: Uint8Array }
    const fnId = words[0]!; const id = words[1]!; const noReply = (words[2]! & F_NO_REPLY) !== 0
    this.served++
    const answer = (status: number, value: unknown): void => {
      if (noReply) return
      this.send(src, this.hRep, id, status, 0, this.packr.pack(value))
    }
    const fn = this.fns[fnId]
    if (fn === undefined || fn === null) { answer(S.ERR_RPC_UNKNOWN, `no remote function ${fnId} on task ${this.core.rank}`); return }
    let r: unknown
    try {
      const args = this.packr.unpack(buf) as unknown[]
      r = fn(...args, src)
    } catch (e) {
      answer(S.ERR_RPC_FAILED, e instanceof Error ? e.message : String(e))
      return
    }
    if (r !== null && typeof r === 'object' && typeof (r as PromiseLike<unknown>).then === 'function') {
      (r as PromiseLike<unknown>).then((v) => answer(S.OK, v), (e: unknown) => answer(S.ERR_RPC_FAILED, e instanceof Error ? e.message : String(e)))
    } else answer(S.OK, r)
  }

  /** An answer came (a completion handler at the caller). */
  private readonly takeReply: compl_hndlr_t = (_h, ui) => {
    const { words, buf } = ui as { words: Int32Array, buf: Uint8Array }
    const h = this.pending.get(words[0]!)
    if (h === undefined) return
    this.pending.delete(h.id)
    h.status = words[1]!
    try { h.result = this.packr.unpack(buf) } catch { h.status = S.ERR_RPC_FAILED; h.result = 'undecodable answer' }
    h.done = true
  }

  /** Calls function `fnId` on task `task`; the handle completes with its answer. */
  call (task: number, fnId: number, args: readonly unknown[]): RpcHandle {
    const h = new RpcHandle(this.nextId)
    this.nextId = (this.nextId + 1) | 0 || 1
    if (!Number.isInteger(task) || task < 0 || task >= this.core.size || !Number.isInteger(fnId) || fnId < 0 || fnId >= 65536) {
      h.status = !Number.isInteger(task) || task < 0 || task >= this.core.size ? S.ERR_BAD_TASK : S.ERR_BAD_ARG
      h.done = true
      return h
    }
    this.pending.set(h.id, h)
    const rc = this.send(task, this.hReq, fnId, h.id, 0, this.packr.pack(args))
    if (rc !== 0) { this.pending.delete(h.id); h.status = rc; h.done = true }
    return h
  }

  /** Calls function `fnId` on task `task` without an answer (fire and forget). */
  callNoReply (task: number, fnId: number, args: readonly unknown[]): number {
    if (!Number.isInteger(task) || task < 0 || task >= this.core.size) return S.ERR_BAD_TASK
    if (!Number.isInteger(fnId) || fnId < 0 || fnId >= 65536) return S.ERR_BAD_ARG
    return this.send(task, this.hReq, fnId, 0, F_NO_REPLY, this.packr.pack(args))
  }

  /** Waits for `h`'s answer (running progress, so calls to this task are served meanwhile). */
  wait (h: RpcHandle): number {
    if (!h.done) this.core.lapi.waitUntil(() => h.done)
    return h.status
  }

  /** The same without blocking the event loop. */
  async waitAsync (h: RpcHandle): Promise<number> {
    if (!h.done) await this.core.lapi.waitUntilAsync(() => h.done)
    return h.status
  }
}
