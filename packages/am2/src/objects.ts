/**
 * The objects an AM-2 program holds: `Token` (one message, handed to its handler), `Bundle` and
 * `Endpoint`, whose methods are the idiomatic face (they call the runtime and throw `AmError`),
 * together with the state the runtime keeps in them (a bundle's task queue, an endpoint's tag,
 * translation and handler tables and segment, a token's message); `Peer`, an endpoint's
 * flow-control state toward one mapped peer; the handler types and the default handler 0.
 *
 * The runtime (runtime.ts) is seen from here only as `RuntimeFace`, which it implements and binds
 * with `bindRuntime` at AM_Init: the runtime's files import these classes, and this file imports
 * none of the runtime's.
 */
import type { Ref } from '@amlapi/lapi'
import type { Logger } from 'pino'
import { AM_INITIAL_NUM_TRANSLATIONS, AM_MAX_NUM_HANDLERS, AM_MAX_SHORT, AM_NOEVENTS, AM_NONE, AmStatus, amFaultName, amOpcodeName } from './constants.js'
import * as copy from './copy.js'
import { TaskQueue } from './task-queue.js'
import * as types from './types.js'
import { AmError, check, type AmSeg, type en_t } from './types.js'
import { endpointError, faultWhy, maskWhy, replyError, requestError } from './explain.js'
import { CAT_LONG, CAT_MASK, CAT_MEDIUM, CAT_SHORT, K_REQUEST, K_RETURNED, NO_SLOT } from './wire.js'

// What this file reads of types.ts and copy.ts, as module constants: TurboFan folds a module's own
// constants into the code that reads them, but loads an imported binding from its cell, with a
// hole check, at every use (the per-message paths read these).
const { views } = copy
const { REC, T_FREE, T_REQUEST, T_RETURNED } = types

const S = AmStatus

/** Handler of a Short message. */
export type short_handler = (token: Token, ...args: number[]) => void
/** Handler of a Medium or Long message: `buf` holds `nbytes` bytes (Medium: valid only during the call). */
export type bulk_handler = (token: Token, buf: Uint8Array, nbytes: number, ...args: number[]) => void
/** Handler 0: a returned message (`status` EBADTAG …, `opcode` AM_REQUEST_M …). */
export type error_handler = (status: number, opcode: number, token: Token) => void
/** Any handler. */
export type am_handler = short_handler | bulk_handler | error_handler

/**
 * The runtime's methods that the objects below call (runtime.ts implements them): each returns an
 * AM code, which the idiomatic methods turn into a thrown `AmError`.
 */
export interface RuntimeFace {
  /** Tokens to return whose receiving endpoint does not exist (a bundle's wait ends on them). */
  readonly returns: readonly Token[]
  /** Whether a reply handler ran from the dispatcher since a poll last looked. */
  readonly ranDirect: boolean
  readonly log: Logger
  readonly segmentSize: number
  argsOf(args: number[], what: string): Int32Array
  allocateEndpoint(b: Bundle, ep: Ref<Endpoint | null> | null | undefined, name: Ref<number> | null | undefined): number
  freeBundle(b: Bundle): number
  freeEndpoint(ep: Endpoint): number
  moveEndpoint(ep: Endpoint, from: Bundle, to: Bundle): number
  setTag(ep: Endpoint, tag: unknown): number
  setSeg(ep: Endpoint, seg: unknown, nbytes: unknown): number
  map(ep: Endpoint, index: unknown, name: unknown, tag: unknown): number
  mapAny(ep: Endpoint, index: Ref<number> | null | undefined, name: unknown, tag: unknown): number
  unmap(ep: Endpoint, index: unknown): number
  setExpectedResources(ep: Endpoint, nEndpoints: unknown, nOutstanding: unknown): number
  setHandler(ep: Endpoint, index: unknown, fn: unknown): number
  setHandlerAny(ep: Endpoint, index: Ref<number> | null | undefined, fn: unknown): number
  setEventMask(b: Bundle, mask: unknown): number
  request(
    ep: Endpoint,
    index: number,
    cat: number,
    handler: number,
    nargs: number,
    args: Int32Array,
    src: unknown,
    nbytes: number,
    off: number,
    off2: number,
    async: boolean,
    get?: boolean,
  ): number
  reply(t: Token, cat: number, handler: number, nargs: number, args: Int32Array, src: unknown, nbytes: number, off: number): number
  poll(b: Bundle): number
  waitSema(b: Bundle): number
  waitSemaAsync(b: Bundle): Promise<number>
}

/** The runtime of this task (bound by AM_Init, unbound by the last AM_Terminate). */
let runtime: RuntimeFace | null = null

/** Binds the runtime the objects call (null: none). */
export function bindRuntime(rt: RuntimeFace | null): void {
  runtime = rt
}

function liveRuntime(what: string): RuntimeFace {
  if (runtime === null) throw new AmError(S.ERR_NOT_INIT, what)
  return runtime
}

/**
 * The token of one message, handed to its handler as the first argument: reply with it (request
 * handlers, at most once), query it (AM_GetSourceEndpoint …). Valid only while the handler runs.
 * Pooled: never keep one.
 */
export class Token {
  /** @internal */ index: number
  /** @internal */ state = T_FREE
  /** @internal */ ep: Endpoint | null = null
  /** @internal */ queue: TaskQueue | null = null
  /** @internal */ node = -1
  /** @internal */ kind = 0
  /** @internal */ handler = 0
  /** @internal */ nargs = 0
  /** @internal */ status = 0
  /** @internal return this message to its sender with this status instead of running it */ fault = 0
  /** @internal */ srcTask = 0
  /** @internal */ srcId = 0
  /** @internal */ dstId = 0
  /** @internal */ tagLo = 0
  /** @internal */ tagHi = 0
  /** @internal */ nbytes = 0
  /** @internal */ slot = NO_SLOT
  /** @internal */ off = 0
  /** @internal */ off2 = 0
  /** @internal the sender's index in the receiver's translation table (-1: not mapped) */ peer = -1
  /** @internal Medium payload: bufmgr address (0 = none, a heap buffer) */ bufAddr = 0
  /** @internal Medium payload: the view of its bufmgr buffer, or a heap buffer */ heap: Uint8Array | null = null
  /** @internal the pooled heap buffer `heap` views (a Medium the arena had no room for), or null */ heapBuf: Uint8Array | null = null
  /** @internal 1 once the request handler replied (a number, not a boolean: V8 tests a boolean field with a full truthiness check) */ replied = 0
  /** @internal */ readonly args = new Int32Array(AM_MAX_SHORT)

  /** @internal */
  constructor(index: number) {
    this.index = index
  }

  private get rt(): RuntimeFace {
    return runtime!
  }

  /** The sender's endpoint name (AM_GetSourceEndpoint); for a returned message, the refusing endpoint. */
  get sourceName(): en_t {
    this.live('sourceName')
    return this.srcTask * 65536 + this.srcId
  }
  /** The receiving endpoint (AM_GetDestEndpoint). */
  get destEndpoint(): Endpoint {
    this.live('destEndpoint')
    return this.ep!
  }
  /** The tag the message carried (AM_GetMsgTag). */
  get messageTag(): bigint {
    this.live('messageTag')
    return (BigInt(this.tagHi) << 32n) | BigInt(this.tagLo)
  }
  /** The sender's index in the receiver's translation table, -1 if not mapped (AMX_GetSourceId). */
  get sourceId(): number {
    this.live('sourceId')
    return this.peer
  }
  /** Whether the message is a request (else a reply or a returned message). */
  get isRequest(): boolean {
    this.live('isRequest')
    return (this.kind & K_REQUEST) !== 0 && (this.kind & K_RETURNED) === 0
  }
  /** The handler index the message named. */
  get handlerIndex(): number {
    this.live('handlerIndex')
    return this.handler
  }
  /** The message's category: 0 Short, 1 Medium, 2 Long. */
  get category(): number {
    this.live('category')
    return this.kind & CAT_MASK
  }
  /** For a returned message: the arguments it carried (a copy). */
  get argsCopy(): number[] {
    this.live('argsCopy')
    return Array.from(this.args.subarray(0, this.nargs))
  }

  /**
   * Reply with a Short message (AM_ReplyM). Only from a request handler, at most once. The rest
   * arguments cost an array per call; the C-style AM_ReplyM functions do not allocate.
   */
  reply(handler: number, ...args: number[]): void {
    const rt = this.rt
    const rc = rt.reply(this, CAT_SHORT, handler, args.length, rt.argsOf(args, 'AM_Reply'), null, 0, 0)
    if (rc !== 0) throw replyError(this, rc, 'AM_Reply', CAT_SHORT, handler, args.length, null, 0, 0, rt.segmentSize)
  }

  /** Reply with a Medium message (AM_ReplyIM): `src` (first `nbytes` bytes) is copied at the call. */
  replyMedium(handler: number, src: AmSeg, nbytes: number, ...args: number[]): void {
    const rt = this.rt
    const rc = rt.reply(this, CAT_MEDIUM, handler, args.length, rt.argsOf(args, 'AM_ReplyI'), src, nbytes, 0)
    if (rc !== 0) throw replyError(this, rc, 'AM_ReplyI', CAT_MEDIUM, handler, args.length, src, nbytes, 0, rt.segmentSize)
  }

  /** Reply with a Long message into the requester's segment at `destOffset` (AM_ReplyXferM). */
  replyLong(destOffset: number, handler: number, src: AmSeg, nbytes: number, ...args: number[]): void {
    const rt = this.rt
    const rc = rt.reply(this, CAT_LONG, handler, args.length, rt.argsOf(args, 'AM_ReplyXfer'), src, nbytes, destOffset)
    if (rc !== 0) throw replyError(this, rc, 'AM_ReplyXfer', CAT_LONG, handler, args.length, src, nbytes, destOffset, rt.segmentSize)
  }

  /** @internal throws unless a handler is running with this token */
  live(what: string): void {
    if (this.state < T_REQUEST || this.state > T_RETURNED) throw new AmError(S.ERR_BAD_ARG, `token.${what} (the handler of this token has returned)`)
  }
}

/** Per-peer flow-control state of an endpoint (one per mapped translation index). */
export class Peer {
  /** Its index in the endpoint's translation table. */
  readonly index: number
  readonly task: number
  readonly id: number
  /** Free instances (a stack). */
  readonly free: Int32Array
  top: number
  readonly busy: Uint8Array
  /** Outstanding-request records, REC words per instance (for returning them when the peer is gone). */
  readonly rec: Int32Array
  outstanding = 0
  constructor(index: number, name: number, depth: number) {
    this.index = index
    this.task = Math.floor(name / 65536)
    this.id = name % 65536
    this.free = new Int32Array(depth)
    for (let i = 0; i < depth; i++) this.free[i] = depth - 1 - i
    this.top = depth
    this.busy = new Uint8Array(depth)
    this.rec = new Int32Array(depth * REC)
  }
}

/** A bundle (`eb_t`): endpoints polled and waited on together, with one task queue. */
export class Bundle {
  /** @internal */ readonly queue = new TaskQueue(64)
  /** @internal */ readonly endpoints: Endpoint[] = []
  /** @internal */ mask: number = AM_NOEVENTS
  /** @internal 1 once freed (a number: see Token.replied) */ freed = 0
  /** @internal the runtime that allocated it (a bundle of an earlier AM_Init is not valid) */ owner: unknown = null
  /** @internal */ readonly readyCond: () => boolean

  /** @internal */
  constructor() {
    this.readyCond = () => this.queue.size > 0 || runtime!.returns.length > 0 || runtime!.ranDirect
  }

  private get rt(): RuntimeFace {
    return liveRuntime('Bundle')
  }

  /** Allocates an endpoint in this bundle (AM_AllocateEndpoint). */
  allocateEndpoint(): Endpoint {
    const r: Ref<Endpoint | null> = { value: null }
    check(this.rt.allocateEndpoint(this, r, null), 'AM_AllocateEndpoint')
    return r.value!
  }

  /** Runs the handlers of arrived messages (AM_Poll); returns how many ran. */
  poll(): number {
    const rt = this.rt
    if (this.freed !== 0) throw new AmError(S.ERR_BAD_ARG, 'AM_Poll', 'the bundle was freed')
    return rt.poll(this)
  }

  /** Blocks until a message arrived, then polls (AM_WaitSema, whatever the event mask). */
  wait(): number {
    const rt = this.rt
    if (this.freed !== 0) throw new AmError(S.ERR_BAD_ARG, 'AM_WaitSema', 'the bundle was freed')
    return rt.waitSema(this)
  }

  /** Like `wait`, without blocking the event loop: resolves with the handlers run. */
  async waitAsync(): Promise<number> {
    const rt = this.rt
    if (this.freed !== 0) throw new AmError(S.ERR_BAD_ARG, 'AM_WaitSema', 'the bundle was freed')
    return await rt.waitSemaAsync(this)
  }

  /** AM_SetEventMask (AM_NOEVENTS or AM_NOTEMPTY). */
  set eventMask(mask: number) {
    const rc = this.rt.setEventMask(this, mask)
    if (rc !== 0) throw new AmError(rc, 'AM_SetEventMask', this.freed !== 0 ? 'the bundle was freed' : maskWhy(mask))
  }
  get eventMask(): number {
    return this.mask
  }

  /** Frees the bundle and its endpoints (AM_FreeBundle). */
  free(): void {
    check(this.rt.freeBundle(this), 'AM_FreeBundle')
  }
}

/**
 * An endpoint (`ep_t`): name, tag, translation table, handler table, segment. Requests name their
 * destination by translation-table index; the endpoint of `Am2.spmd()` has every task mapped at
 * index = its rank, so `endpoint.request(r, h, ...)` goes to the task of rank r.
 */
export class Endpoint {
  /** @internal */ readonly id: number
  /** The endpoint's name (exchange it; peers map it). */
  readonly name: en_t
  /** @internal */ bundle: Bundle
  /** @internal 1 once freed (a number: see Token.replied) */ freed = 0
  /** @internal */ tag: bigint = AM_NONE
  /** @internal */ tagLo = 0
  /** @internal */ tagHi = 0
  /** @internal */ tagMode = 0 // 0 none, 1 all, 2 match
  /** @internal */ readonly handlers: Array<am_handler | null> = new Array<am_handler | null>(AM_MAX_NUM_HANDLERS).fill(null)
  /** @internal */ numTrans = AM_INITIAL_NUM_TRANSLATIONS
  /** @internal */ trName: number[] = new Array<number>(AM_INITIAL_NUM_TRANSLATIONS).fill(-1)
  /** @internal */ trTag: bigint[] = new Array<bigint>(AM_INITIAL_NUM_TRANSLATIONS).fill(0n)
  /** @internal */ trTagLo: Uint32Array = new Uint32Array(AM_INITIAL_NUM_TRANSLATIONS)
  /** @internal */ trTagHi: Uint32Array = new Uint32Array(AM_INITIAL_NUM_TRANSLATIONS)
  /** @internal name → lowest index that maps it */ readonly byName = new Map<number, number>()
  /** @internal the last name peerOf looked up (-1: none; map and unmap reset it) and its answer */ lastName = -1
  /** @internal */ lastPeer = -1
  /** @internal */ peers: Array<Peer | undefined> = []
  /** @internal the mapped peers, densely (for the scans that look for peers that left) */ peerList: Peer[] = []
  /** @internal 0 until AM_SetExpectedResources */ depth = 0
  /** @internal */ outstanding = 0
  /** @internal */ seg: AmSeg | null = null
  /** @internal Addr of the segment in the LAPI segment, -1 for a Uint8Array or none */ segAddr = -1
  /** @internal */ segLen = 0
  /** @internal */ segU8: Uint8Array | null = null

  /** @internal */
  constructor(id: number, name: number, bundle: Bundle, defaultHandler: error_handler) {
    this.id = id
    this.name = name
    this.bundle = bundle
    this.handlers[0] = defaultHandler
  }

  private get rt(): RuntimeFace {
    return liveRuntime('Endpoint')
  }

  /** @internal The lowest translation index that maps endpoint `name`, or -1 (the last answer is memoised). */
  peerOf(name: number): number {
    if (name === this.lastName) return this.lastPeer
    const i = this.byName.get(name) ?? -1
    this.lastName = name
    this.lastPeer = i
    return i
  }

  /** The receive tag (AM_SetTag / AM_GetTag): AM_NONE refuses everything, AM_ALL accepts everything. */
  set receiveTag(tag: bigint) {
    const rc = this.rt.setTag(this, tag)
    if (rc !== 0) throw endpointError(this, rc, 'AM_SetTag', { tag })
  }
  get receiveTag(): bigint {
    return this.tag
  }

  /** Sets the segment Long messages land in (AM_SetSeg). */
  setSegment(seg: AmSeg | null, nbytes: number): void {
    const rt = this.rt
    const rc = rt.setSeg(this, seg, nbytes)
    if (rc !== 0) throw endpointError(this, rc, 'AM_SetSeg', { seg, nbytes, segmentSize: rt.segmentSize })
  }
  /** The segment and its length (AM_GetSeg). */
  get segment(): { seg: AmSeg | null; nbytes: number } {
    return { seg: this.seg, nbytes: this.segLen }
  }

  /** Maps translation `index` to endpoint `name`, stamping `tag` on messages to it (AM_Map). */
  map(index: number, name: en_t, tag: bigint): void {
    const rc = this.rt.map(this, index, name, tag)
    if (rc !== 0) throw endpointError(this, rc, 'AM_Map', { index, name, tag })
  }
  /** Maps the first free index; returns it (AM_MapAny). */
  mapAny(name: en_t, tag: bigint): number {
    const r = { value: -1 }
    const rc = this.rt.mapAny(this, r, name, tag)
    if (rc !== 0) throw endpointError(this, rc, 'AM_MapAny', { name, tag })
    return r.value
  }

  /** AM_UnMap. */
  unmap(index: number): void {
    const rc = this.rt.unmap(this, index)
    if (rc !== 0) throw endpointError(this, rc, 'AM_UnMap', { index })
  }

  /** Freezes the table and sets the requests in flight per peer (AM_SetExpectedResources). */
  setExpectedResources(nEndpoints: number, nOutstandingRequests: number): void {
    const rc = this.rt.setExpectedResources(this, nEndpoints, nOutstandingRequests)
    if (rc !== 0) throw endpointError(this, rc, 'AM_SetExpectedResources', { nEndpoints, nOutstanding: nOutstandingRequests })
  }

  /**
   * Registers `fn` at `index` 0..255 (0: the returned-message handler) (AM_SetHandler). A Short
   * message's handler is called as `fn(token, ...args)` ({@link short_handler}), a Medium or Long
   * one's as `fn(token, buf, nbytes, ...args)` ({@link bulk_handler}), handler 0 as
   * `fn(status, opcode, token)` ({@link error_handler}).
   */
  setHandler(index: number, fn: am_handler): void {
    const rc = this.rt.setHandler(this, index, fn)
    if (rc !== 0) throw endpointError(this, rc, 'AM_SetHandler', { index, fn })
  }
  /** Registers `fn` at the lowest free index 1..255; returns it (AM_SetHandlerAny). */
  setHandlerAny(fn: am_handler): number {
    const r = { value: 0 }
    const rc = this.rt.setHandlerAny(this, r, fn)
    if (rc !== 0) throw endpointError(this, rc, 'AM_SetHandlerAny', { fn })
    return r.value
  }

  /**
   * Short request to translation `index` (AM_RequestM): the peer's handler `handler` runs with the
   * token and `args`, at most AM_MAX_SHORT (16) 32-bit integers, when the peer polls. The rest arguments
   * cost an array per call; the C-style AM_RequestM functions do not allocate.
   */
  request(index: number, handler: number, ...args: number[]): void {
    const rt = this.rt
    const rc = rt.request(this, index, CAT_SHORT, handler, args.length, rt.argsOf(args, 'AM_Request'), null, 0, 0, 0, false)
    if (rc !== 0) throw requestError(this, rc, 'AM_Request', CAT_SHORT, index, handler, args.length, null, 0, 0, 0, false, rt.segmentSize)
  }

  /** Medium request (AM_RequestIM): `src` (first `nbytes` bytes) is copied at the call. */
  requestMedium(index: number, handler: number, src: AmSeg, nbytes: number, ...args: number[]): void {
    const rt = this.rt
    const rc = rt.request(this, index, CAT_MEDIUM, handler, args.length, rt.argsOf(args, 'AM_RequestI'), src, nbytes, 0, 0, false)
    if (rc !== 0) throw requestError(this, rc, 'AM_RequestI', CAT_MEDIUM, index, handler, args.length, src, nbytes, 0, 0, false, rt.segmentSize)
  }

  /** Long request into the peer's segment at `destOffset` (AM_RequestXferM). */
  requestLong(index: number, destOffset: number, handler: number, src: AmSeg, nbytes: number, ...args: number[]): void {
    const rt = this.rt
    const rc = rt.request(this, index, CAT_LONG, handler, args.length, rt.argsOf(args, 'AM_RequestXfer'), src, nbytes, destOffset, 0, false)
    if (rc !== 0) throw requestError(this, rc, 'AM_RequestXfer', CAT_LONG, index, handler, args.length, src, nbytes, destOffset, 0, false, rt.segmentSize)
  }

  /**
   * Long request that does not wait (AM_RequestXferAsyncM): false (AM_ERR_IN_USE) when it could not
   * be sent without waiting for a free request slot, true when it went. (`try…`: an attempt that
   * answers false rather than blocking; an `…Async` name returns a Promise.)
   */
  tryRequestLong(index: number, destOffset: number, handler: number, src: AmSeg, nbytes: number, ...args: number[]): boolean {
    const rt = this.rt
    const rc = rt.request(this, index, CAT_LONG, handler, args.length, rt.argsOf(args, 'AM_RequestXferAsync'), src, nbytes, destOffset, 0, true)
    if (rc === S.ERR_IN_USE) return false
    if (rc !== 0) throw requestError(this, rc, 'AM_RequestXferAsync', CAT_LONG, index, handler, args.length, src, nbytes, destOffset, 0, false, rt.segmentSize)
    return true
  }

  /** @deprecated Call `tryRequestLong` (the same call: it returns a boolean, not a Promise); `requestLongAsync` goes in the release after 0.1.0. */
  requestLongAsync(index: number, destOffset: number, handler: number, src: AmSeg, nbytes: number, ...args: number[]): boolean {
    return this.tryRequestLong(index, destOffset, handler, src, nbytes, ...args)
  }

  /**
   * AM_GetXferM: copies `nbytes` of the peer's segment at `sourceOffset` into this endpoint's
   * segment at `destOffset`, then runs `handler` here as a Long reply handler.
   */
  getLong(index: number, sourceOffset: number, handler: number, destOffset: number, nbytes: number, ...args: number[]): void {
    const rt = this.rt
    const rc = rt.request(this, index, CAT_LONG, handler, args.length, rt.argsOf(args, 'AM_GetXfer'), null, nbytes, destOffset, sourceOffset, false, true)
    if (rc !== 0)
      throw requestError(this, rc, 'AM_GetXfer', CAT_LONG, index, handler, args.length, null, nbytes, destOffset, sourceOffset, true, rt.segmentSize)
  }

  /** Moves this endpoint to bundle `to` (AM_MoveEndpoint). */
  moveTo(to: Bundle): void {
    check(this.rt.moveEndpoint(this, this.bundle, to), 'AM_MoveEndpoint')
  }

  /** Frees the endpoint (AM_FreeEndpoint). */
  free(): void {
    check(this.rt.freeEndpoint(this), 'AM_FreeEndpoint')
  }

  /** @internal a view of `n` bytes of the segment at `off` (cached: no allocation in steady state) */
  segView(off: number, n: number): Uint8Array {
    return views.get(this.segU8!, off, n)
  }

  /** @internal stores the tag stamped on messages to translation `index` (and its two halves) */
  setTranslationTag(index: number, tag: bigint): void {
    this.trTag[index] = tag
    this.trTagLo[index] = Number(tag & 0xffffffffn)
    this.trTagHi[index] = Number(tag >> 32n)
  }

  /** @internal */
  acceptsTag(lo: number, hi: number): boolean {
    return this.tagMode === 1 || (this.tagMode === 2 && lo === this.tagLo && hi === this.tagHi)
  }
}

/**
 * The default handler 0: reports the returned message (status, opcode, peer, handler, tag,
 * arguments) and ends the task with an error, which ends the job with a non-zero exit.
 */
export function defaultHandler0(status: number, opcode: number, token: Token): void {
  const rt = runtime
  const text =
    `AM-2 returned message: ${amFaultName(status) ?? String(status)} (${status}) for ${amOpcodeName(opcode) ?? String(opcode)} ` +
    `to endpoint ${token.srcTask * 65536 + token.srcId} (task ${token.srcTask}), handler ${token.handler}, ` +
    `tag 0x${token.messageTag.toString(16)}, args [${token.argsCopy.join(', ')}]`
  const why = faultWhy(status, token)
  const full = why === '' ? text : `${text}: ${why}`
  rt?.log.error({ status, opcode }, full)
  throw new Error(full)
}
