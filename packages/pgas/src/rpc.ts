/**
 * Remote procedure calls: a function registered under the same id (a number) or name (a string)
 * on every task, called on a task with arguments, its result sent back. Arguments and results keep
 * their types (rpc-codec.ts): numbers, strings, booleans, null, undefined, BigInt, typed arrays,
 * arrays, plain objects, Map, Set, Date.
 *
 * How a call runs. It travels as a LAPI active message whose completion handler only queues it.
 * Queued calls run one after another, never nested in each other's answers: from the completion
 * handler when no function is running on this task (that is, in the target's progress: any LAPI
 * call that polls, a wait, or the event loop in interrupt mode), and, while a function is running
 * and waits for an answer of its own (`rpcSync`, `rpcWait`), from that wait. So a function may
 * call and wait for other functions — on any task, this one included, to any depth and whatever
 * the backlog — and calls that depend on each other in a cycle complete. Answers are sent without
 * waiting. A function that returns a promise answers when it settles, in the target's event loop,
 * which a blocking wait of the target holds up: such a target waits with the async forms.
 */
import type { compl_hndlr_t, lapi_return_info_t, Ref } from '@amlapi/lapi'
import { WaitCall } from '@amlapi/lapi'
import type { Core } from './core.js'
import { decode, encode } from './rpc-codec.js'
import { PgasStatus as S } from './status.js'

export const SLOT_RPC = 9
export const SLOT_REPLY = 10
const UHDR = 16
/** Header word 2's flags: no answer wanted; the function is named (the data is [name, args]). */
const F_NO_REPLY = 1
const F_BY_NAME = 2
/** How long a call to a task that has left the job still waits for an answer it may have sent. */
const LOST_GRACE_MS = 1000
/** The longest function name, in characters. */
export const RPC_NAME_MAX = 256

/** A remote procedure: called with the arguments and, last, the calling task. */
// biome-ignore lint/suspicious/noExplicitAny: a remote function takes whatever its caller sends it
export type RemoteFn = (...args: any[]) => unknown

/**
 * A runtime-internal procedure: it answers through `reply` (status, value), now or later; `reply`
 * is null for a call that wants no answer.
 */
export type InternalFn = (args: unknown[], src: number, reply: ((status: number, value: unknown) => void) | null) => void

/** A call in flight: `done` once the answer came; `status` OK or why not, `result` its value. */
export class RpcHandle {
  readonly id: number
  /** The task called. */
  readonly task: number
  done = false
  /** Whether the call was sent (false: refused before sending; `status` says why). */
  sent = false
  status = 0
  result: unknown = undefined
  constructor(id: number, task = -1) {
    this.id = id
    this.task = task
  }
}

/** A call that came and waits to run: its source, header words and data. */
interface Call {
  src: number
  fnId: number
  id: number
  flags: number
  buf: Uint8Array
}

export class Rpc {
  private readonly core: Core
  private readonly fns: Array<RemoteFn | null> = []
  private readonly named = new Map<string, RemoteFn>()
  private readonly internal = new Map<string, InternalFn>()
  private readonly pending = new Map<number, RpcHandle>()
  private readonly queue: Call[] = []
  private queueHead = 0
  /** Functions running on this task (nested: a waiting function serves calls from its wait). */
  private running = 0
  private draining = false
  private nextId = 1
  private readonly hReq: number
  private readonly hRep: number
  private readonly uhdr = new Int32Array(UHDR / 4)
  private readonly uhdr8 = new Uint8Array(this.uhdr.buffer)
  /** Calls served on this task, for statistics. */
  served = 0
  /** The deepest nesting of running functions so far (a waiting function serving calls). */
  maxDepth = 0

  constructor(core: Core) {
    this.core = core
    const l = core.lapi
    this.hReq = l.setLibraryHandler(
      SLOT_RPC,
      (_h: number, uhdr: Uint8Array, _ul: number, info: lapi_return_info_t, comp: Ref<compl_hndlr_t | null>, ui: Ref<unknown>) =>
        this.land(uhdr, info, comp, ui, this.onCall),
    )
    this.hRep = l.setLibraryHandler(
      SLOT_REPLY,
      (_h: number, uhdr: Uint8Array, _ul: number, info: lapi_return_info_t, comp: Ref<compl_hndlr_t | null>, ui: Ref<unknown>) =>
        this.land(uhdr, info, comp, ui, this.onReply),
    )
  }

  /**
   * Registers `fn` under `id`: a number 0 ≤ id < 65536, or a name (a string of 1 to RPC_NAME_MAX
   * characters). Every task registers the same functions under the same ids. `null` removes it.
   */
  register(id: number | string, fn: RemoteFn | null): number {
    if (fn !== null && typeof fn !== 'function') return S.ERR_BAD_ARG
    if (typeof id === 'string') {
      if (!validName(id)) return S.ERR_BAD_ARG
      if (fn === null) this.named.delete(id)
      else this.named.set(id, fn)
      return S.OK
    }
    if (!validId(id)) return S.ERR_BAD_ARG
    while (this.fns.length <= id) this.fns.push(null)
    this.fns[id] = fn
    return S.OK
  }

  /** Registers a runtime-internal procedure (names outside the users' space: they begin with a NUL). */
  registerInternal(name: string, fn: InternalFn): void {
    this.internal.set('\0' + name, fn)
  }

  /** The header handler: the data lands in a buffer of its own; `then` runs as the completion handler. */
  private land(uhdr: Uint8Array, info: lapi_return_info_t, comp: Ref<compl_hndlr_t | null>, ui: Ref<unknown>, then: compl_hndlr_t): Uint8Array {
    const dv = new DataView(uhdr.buffer, uhdr.byteOffset, UHDR)
    const buf = new Uint8Array(info.msg_len)
    if (info.udata_one_pkt_ptr !== null) buf.set(info.udata_one_pkt_ptr.subarray(0, info.msg_len))
    comp.value = then
    ui.value = { src: info.src, fnId: dv.getInt32(0, true), id: dv.getInt32(4, true), flags: dv.getInt32(8, true), buf } satisfies Call
    return buf
  }

  /** Sends one message; the data is a private copy, so nothing waits for it to leave. */
  private send(tgt: number, hdr: number, w0: number, w1: number, w2: number, data: Uint8Array): number {
    const u = this.uhdr
    u[0] = w0
    u[1] = w1
    u[2] = w2
    u[3] = 0
    const rc = this.core.lapi.amsendCode(tgt, hdr, this.uhdr8, UHDR, data.length === 0 ? null : data, data.length, 0)
    return rc === 0 ? S.OK : S.ERR_LAPI
  }

  /** A call came (completion handler): queue it, and run the queue unless a function is running. */
  private readonly onCall: compl_hndlr_t = (_h, ui) => {
    this.queue.push(ui as Call)
    if (!this.draining) this.drain()
  }

  /** Runs queued calls one after another until none is left. */
  private drain(): void {
    this.draining = true
    try {
      while (this.queueHead < this.queue.length) this.serveOne()
    } finally {
      this.draining = false
      this.queue.length = 0
      this.queueHead = 0
    }
  }

  /** Runs the oldest queued call and sends its answer. */
  private serveOne(): void {
    const c = this.queue[this.queueHead]!
    this.queue[this.queueHead++] = undefined as unknown as Call
    this.served++
    const noReply = (c.flags & F_NO_REPLY) !== 0
    const answer = noReply
      ? null
      : (status: number, value: unknown): void => {
          this.answer(c.src, c.id, status, value)
        }
    let args: unknown[]
    let fn: RemoteFn | InternalFn | undefined | null
    let name: string | null = null
    try {
      const d = decode(c.buf)
      if ((c.flags & F_BY_NAME) !== 0) {
        if (!Array.isArray(d) || typeof d[0] !== 'string' || !Array.isArray(d[1])) throw new Error('a malformed call')
        name = d[0]
        args = d[1] as unknown[]
        fn = name.charCodeAt(0) === 0 ? this.internal.get(name) : this.named.get(name)
      } else {
        if (!Array.isArray(d)) throw new Error('a malformed call')
        args = d
        fn = this.fns[c.fnId]
      }
    } catch (e) {
      answer?.(S.ERR_RPC_FAILED, `undecodable call from task ${c.src}: ${e instanceof Error ? e.message : String(e)}`)
      return
    }
    if (fn === undefined || fn === null) {
      answer?.(S.ERR_RPC_UNKNOWN, `no remote function ${name !== null ? JSON.stringify(name) : c.fnId} on task ${this.core.rank}`)
      return
    }
    if (name !== null && name.charCodeAt(0) === 0) {
      try {
        ;(fn as InternalFn)(args, c.src, answer)
      } catch (e) {
        answer?.(S.ERR_RPC_FAILED, e instanceof Error ? e.message : String(e))
      }
      return
    }
    let r: unknown
    this.running++
    if (this.running > this.maxDepth) this.maxDepth = this.running
    try {
      r = (fn as RemoteFn)(...args, c.src)
    } catch (e) {
      answer?.(S.ERR_RPC_FAILED, e instanceof Error ? e.message : String(e))
      return
    } finally {
      this.running--
    }
    if (answer === null) return
    if (r !== null && typeof r === 'object' && typeof (r as PromiseLike<unknown>).then === 'function') {
      ;(r as PromiseLike<unknown>).then(
        (v) => answer(S.OK, v),
        (e: unknown) => answer(S.ERR_RPC_FAILED, e instanceof Error ? e.message : String(e)),
      )
    } else answer(S.OK, r)
  }

  /** Sends the answer to call `id` of task `src`; a value that cannot be sent answers ERR_RPC_FAILED. */
  private answer(src: number, id: number, status: number, value: unknown): void {
    let data: Uint8Array
    try {
      data = encode(value)
    } catch (e) {
      status = S.ERR_RPC_FAILED
      data = encode(`the result cannot be sent: ${e instanceof Error ? e.message : String(e)}`)
    }
    this.send(src, this.hRep, id, status, 0, data)
  }

  /** An answer came (a completion handler at the caller). */
  private readonly onReply: compl_hndlr_t = (_h, ui) => {
    // (an answer's header words are the call's handle id and the status: `fnId` and `id` here)
    const c = ui as Call
    const h = this.pending.get(c.fnId)
    if (h === undefined) return
    this.pending.delete(h.id)
    h.status = c.id
    try {
      h.result = decode(c.buf)
    } catch {
      h.status = S.ERR_RPC_FAILED
      h.result = 'undecodable answer'
    }
    h.done = true
  }

  /** Calls function `fn` (an id or a name) on task `task`; the handle completes with its answer. */
  call(task: number, fn: number | string, args: readonly unknown[], internal = false): RpcHandle {
    const h = new RpcHandle(this.nextId, task)
    this.nextId = (this.nextId + 1) | 0 || 1
    const rc = this.check(task, fn, args, internal)
    const data = rc === S.OK ? this.pack(fn, args, h) : null
    if (data === null) {
      if (h.status === 0) h.status = rc
      h.done = true
      return h
    }
    this.pending.set(h.id, h)
    const st = this.send(task, this.hReq, typeof fn === 'number' ? fn : 0, h.id, typeof fn === 'string' ? F_BY_NAME : 0, data)
    if (st !== S.OK) {
      this.pending.delete(h.id)
      h.status = st
      h.done = true
      return h
    }
    h.sent = true
    return h
  }

  /** Calls function `fn` on task `task` without an answer (fire and forget). */
  callNoReply(task: number, fn: number | string, args: readonly unknown[]): number {
    const rc = this.check(task, fn, args, false)
    if (rc !== S.OK) return rc
    const h = new RpcHandle(0)
    const data = this.pack(fn, args, h)
    if (data === null) return h.status
    return this.send(task, this.hReq, typeof fn === 'number' ? fn : 0, 0, F_NO_REPLY | (typeof fn === 'string' ? F_BY_NAME : 0), data)
  }

  /** Calls runtime-internal procedure `name` (see `registerInternal`). */
  callInternal(task: number, name: string, args: readonly unknown[]): RpcHandle {
    return this.call(task, '\0' + name, args, true)
  }

  private check(task: number, fn: number | string, args: readonly unknown[], internal: boolean): number {
    if (!Number.isInteger(task) || task < 0 || task >= this.core.size) return S.ERR_BAD_TASK
    if (typeof fn === 'string' ? !internal && !validName(fn) : !validId(fn)) return S.ERR_BAD_ARG
    return Array.isArray(args) ? S.OK : S.ERR_BAD_ARG
  }

  /** The call's data, or null with `h.status` ERR_BAD_ARG and the reason in `h.result` (a value msgpack cannot carry). */
  private pack(fn: number | string, args: readonly unknown[], h: RpcHandle): Uint8Array | null {
    try {
      return encode(typeof fn === 'string' ? [fn, args] : args)
    } catch (e) {
      h.status = S.ERR_BAD_ARG
      h.result = `arguments cannot be sent: ${e instanceof Error ? e.message : String(e)}`
      return null
    }
  }

  /**
   * Waits for `h`'s answer, running progress. Inside a running function, calls that come meanwhile
   * are served from here (nested), so calls that depend on each other complete.
   */
  wait(h: RpcHandle): number {
    const l = this.core.lapi
    while (!h.done) {
      if (this.running > 0 && this.queueHead < this.queue.length) {
        this.serveOne()
        continue
      }
      if (!l.taskAlive(h.task)) {
        this.lost(h)
        break
      }
      l.waitUntil(() => h.done || (this.running > 0 && this.queueHead < this.queue.length) || !l.taskAlive(h.task), WaitCall.PGAS_RPC)
    }
    return h.status
  }

  /** The same without blocking the event loop. */
  async waitAsync(h: RpcHandle): Promise<number> {
    const l = this.core.lapi
    if (!h.done) await l.waitUntilAsync(() => h.done || !l.taskAlive(h.task), WaitCall.PGAS_RPC)
    if (!h.done) this.lost(h)
    return h.status
  }

  /**
   * The task called has left the job: its answer, if it sent one, is taken in within LOST_GRACE_MS;
   * else the call fails (ERR_RPC_FAILED, saying so) instead of waiting for ever.
   */
  private lost(h: RpcHandle): void {
    const l = this.core.lapi
    const end = Date.now() + LOST_GRACE_MS
    while (!h.done && Date.now() < end) l.progress()
    if (h.done) return
    this.pending.delete(h.id)
    h.status = S.ERR_RPC_FAILED
    h.result = `task ${h.task} has left the job without answering`
    h.done = true
  }

  /** Serves the calls queued while a function runs (progress from inside a function). */
  serveQueued(): void {
    if (this.running === 0) return
    while (this.queueHead < this.queue.length) this.serveOne()
  }
}

function validId(id: number): boolean {
  return Number.isInteger(id) && id >= 0 && id < 65536
}
function validName(s: string): boolean {
  return typeof s === 'string' && s.length > 0 && s.length <= RPC_NAME_MAX && s.charCodeAt(0) !== 0
}
