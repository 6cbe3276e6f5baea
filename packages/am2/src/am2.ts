/**
 * AM-2 over LAPI, the AMLAPI port (docs/am2.md, docs/architecture.md): the one implementation
 * behind the idiomatic classes (`Bundle`, `Endpoint`, `Token`) and the C-style `AM_*` functions of
 * compat.ts. Every method here returns an AM code; the idiomatic wrappers throw `AmError`.
 *
 * Sending. A request or reply is one LAPI active message to the receiving endpoint's task, with
 * am2's header handler (a LAPI library slot). The AM-2 header and the arguments are the LAPI user
 * header; when the payload fits behind them as well (`packedLimit`) it travels there too, so the
 * whole message is one packet (the packed fast path). Otherwise the payload is the LAPI data.
 * Messages between endpoints of one task skip LAPI and go straight into the receiver's queue.
 *
 * Receiving. am2's LAPI header handler checks the message (tag, handler, length, segment, sender;
 * AMUDP's order), takes a pooled token and appends it to the receiving bundle's task queue: ready
 * at once for a packed or Short message (the payload copied into a bufmgr buffer, no completion
 * handler), or pending, with the LAPI landing buffer (a bufmgr buffer for a Medium, the endpoint's
 * segment at the offset for a Long) and a completion handler that marks it ready. A refused
 * message is queued for return instead. Handlers run only in AM_Poll / AM_WaitSema (and the polls
 * a Request makes), never inside the LAPI header handler.
 *
 * Flow control. A request takes one of `depth` instances of its peer (AM_SetExpectedResources'
 * n_outstanding_requests) and names it in the header; the reply — the handler's, or the automatic
 * empty one sent when a request handler did not reply — echoes it and frees it. Replies take no
 * instance and never wait for one.
 */
import { BufferManager } from '@amlapi/bufmgr'
import { Lapi, RetFlag, WaitCall, logger, type Addr, type lapi_return_info_t, type Ref } from '@amlapi/lapi'
import { ViewCache } from '@amlapi/bufmgr'
import type { Logger } from 'pino'
import {
  AM_ALL, AM_MAX_NUM_HANDLERS, AM_MAX_NUM_TRANSLATIONS, AM_INITIAL_NUM_TRANSLATIONS, AM_MAX_SHORT, AM_NOEVENTS, AM_NONE,
  AM_NOTEMPTY, AM_PAR, AM_SEQ, AmFault, AmStatus, amFaultName, amOpcodeName, amStatusName,
} from './constants.js'
import { TaskQueue } from './task-queue.js'
import {
  CAT_LONG, CAT_MASK, CAT_MEDIUM, CAT_SHORT, COMPACT_MAX_ARGS, HDR_BYTES, K_AUTO, K_COMPACT, K_GET, K_PACKED, K_REQUEST, K_RETURNED, MAX_DEPTH, NO_SLOT,
  O_ARGS, O_DST, O_HANDLER, O_KIND, O_NARGS, O_NBYTES, O_OFF, O_OFF2, O_SLOT, O_SRC, O_STATUS, O_TAG_HI, O_TAG_LO,
  compactBytes, compactBytesFor, compactPayloadAt, headerBytes, opcodeOf,
} from './wire.js'

const S = AmStatus

/** Largest Medium payload, bytes (AM_MaxMedium). */
export const MAX_MEDIUM = 512 * 1024
/** Largest Long payload, bytes (AM_MaxLong). */
export const MAX_LONG = 4 * 1024 * 1024
/** Largest segment length and offset (AM_MaxSegLength): offsets travel as u32. */
export const MAX_SEG_LENGTH = 0xffffffff
/** Endpoints per task (local ids are u16). */
const MAX_ENDPOINTS = 65535
/** Live bundles per task (AMUDP: 255). */
const MAX_BUNDLES = 255
/** Handlers run per AM_Poll call at most (AMUDP: max(10, depth)); the rest wait for the next. */
const POLL_BATCH = 64
/** Handler nesting (a handler's Request polls, which runs handlers …) beyond which polls only drain the network. */
const MAX_NEST = 8
/** Words of an outstanding-request record: kind, handler, nargs, nbytes, off, off2, args[16]. */
const REC = 6 + AM_MAX_SHORT
/** Bytes of the bufmgr arena for Medium payloads; larger demand falls back to heap buffers. */
const ARENA_BYTES = 8 * 1024 * 1024
/** Bytes of heap Medium buffers (those the arena had no room for) kept for reuse at most. */
const HEAP_POOL_BYTES = 64 * 1024 * 1024
/** Library slots of LAPI's handler table that am2 uses. */
const SLOT_MSG = 0
const SLOT_CTRL = 1

/** An endpoint's name: task id × 65536 + the endpoint's local id (a number all tasks can exchange). */
export type en_t = number
/** Handler of a Short message. */
export type short_handler = (token: Token, ...args: number[]) => void
/** Handler of a Medium or Long message: `buf` holds `nbytes` bytes (Medium: valid only during the call). */
export type bulk_handler = (token: Token, buf: Uint8Array, nbytes: number, ...args: number[]) => void
/** Handler 0: a returned message (`status` EBADTAG …, `opcode` AM_REQUEST_M …). */
export type error_handler = (status: number, opcode: number, token: Token) => void
/** Any handler. */
export type am_handler = short_handler | bulk_handler | error_handler
/** An endpoint segment: an Addr in the task's LAPI segment, or a Uint8Array. */
export type AmSeg = Addr | Uint8Array

// token states
const T_FREE = 0
const T_QUEUED = 1
const T_REQUEST = 2   // a request handler is running with it
const T_REPLY = 3     // a reply handler is running with it
const T_RETURNED = 4  // handler 0 is running with it
const T_DONE = 5

/** Thrown by the idiomatic API: `code` is the AM return code. */
export class AmError extends Error {
  readonly code: number
  constructor (code: number, what: string) {
    super(`${what}: ${amStatusName(code) ?? String(code)}`)
    this.name = 'AmError'
    this.code = code
  }
}

/** Throws an AmError for a code other than AM_OK (the idiomatic API's way of failing). */
export function check (rc: number, what: string): void {
  if (rc !== 0) throw new AmError(rc, what)
}

function isU32 (v: unknown): v is number {
  return typeof v === 'number' && (v >>> 0) === v
}

/** A valid tag: a bigint in 0 … 2^64 − 1. */
export function tagOk (tag: unknown): tag is bigint {
  return typeof tag === 'bigint' && BigInt.asUintN(64, tag) === tag
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
  constructor (index: number) { this.index = index }

  private get rt (): Runtime { return runtime! }

  /** The sender's endpoint name (AM_GetSourceEndpoint); for a returned message, the refusing endpoint. */
  get sourceName (): en_t { this.live('sourceName'); return this.srcTask * 65536 + this.srcId }
  /** The receiving endpoint (AM_GetDestEndpoint). */
  get destEndpoint (): Endpoint { this.live('destEndpoint'); return this.ep! }
  /** The tag the message carried (AM_GetMsgTag). */
  get messageTag (): bigint { this.live('messageTag'); return (BigInt(this.tagHi) << 32n) | BigInt(this.tagLo) }
  /** The sender's index in the receiver's translation table, -1 if not mapped (AMX_GetSourceId). */
  get sourceId (): number { this.live('sourceId'); return this.peer }
  /** Whether the message is a request (else a reply or a returned message). */
  get isRequest (): boolean { this.live('isRequest'); return (this.kind & K_REQUEST) !== 0 && (this.kind & K_RETURNED) === 0 }
  /** The handler index the message named. */
  get handlerIndex (): number { this.live('handlerIndex'); return this.handler }
  /** The message's category: 0 Short, 1 Medium, 2 Long. */
  get category (): number { this.live('category'); return this.kind & CAT_MASK }
  /** For a returned message: the arguments it carried (a copy). */
  get argsCopy (): number[] { this.live('argsCopy'); return Array.from(this.args.subarray(0, this.nargs)) }

  /**
   * Reply with a Short message (AM_ReplyM). Only from a request handler, at most once. The rest
   * arguments cost an array per call; the C-style AM_ReplyM functions do not allocate.
   */
  reply (handler: number, ...args: number[]): void {
    check(this.rt.reply(this, CAT_SHORT, handler, args.length, this.rt.argsOf(args), null, 0, 0), 'AM_Reply')
  }

  /** Reply with a Medium message (AM_ReplyIM): `src` (first `nbytes` bytes) is copied at the call. */
  replyMedium (handler: number, src: AmSeg, nbytes: number, ...args: number[]): void {
    check(this.rt.reply(this, CAT_MEDIUM, handler, args.length, this.rt.argsOf(args), src, nbytes, 0), 'AM_ReplyI')
  }

  /** Reply with a Long message into the requester's segment at `destOffset` (AM_ReplyXferM). */
  replyLong (destOffset: number, handler: number, src: AmSeg, nbytes: number, ...args: number[]): void {
    check(this.rt.reply(this, CAT_LONG, handler, args.length, this.rt.argsOf(args), src, nbytes, destOffset), 'AM_ReplyXfer')
  }

  /** @internal throws unless a handler is running with this token */
  live (what: string): void {
    if (this.state < T_REQUEST || this.state > T_RETURNED) throw new AmError(S.ERR_BAD_ARG, `token.${what} (the handler of this token has returned)`)
  }
}

/** Per-peer flow-control state of an endpoint (one per mapped translation index). */
class Peer {
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
  constructor (index: number, name: number, depth: number) {
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
  constructor () {
    this.readyCond = () => this.queue.size > 0 || runtime!.returns.length > 0 || runtime!.ranDirect
  }

  private get rt (): Runtime { return liveRuntime('Bundle') }

  /** Allocates an endpoint in this bundle (AM_AllocateEndpoint). */
  allocateEndpoint (): Endpoint {
    const r: Ref<Endpoint | null> = { value: null }
    check(this.rt.allocateEndpoint(this, r, null), 'AM_AllocateEndpoint')
    return r.value!
  }

  /** Runs the handlers of arrived messages (AM_Poll); returns how many ran. */
  poll (): number {
    const rt = this.rt
    if (this.freed !== 0) throw new AmError(S.ERR_BAD_ARG, 'AM_Poll')
    return rt.poll(this)
  }

  /** Blocks until a message arrived, then polls (AM_WaitSema, whatever the event mask). */
  wait (): number {
    const rt = this.rt
    if (this.freed !== 0) throw new AmError(S.ERR_BAD_ARG, 'AM_WaitSema')
    return rt.waitSema(this)
  }

  /** Like `wait`, without blocking the event loop: resolves with the handlers run. */
  async waitAsync (): Promise<number> {
    const rt = this.rt
    if (this.freed !== 0) throw new AmError(S.ERR_BAD_ARG, 'AM_WaitSema')
    return await rt.waitSemaAsync(this)
  }

  /** AM_SetEventMask (AM_NOEVENTS or AM_NOTEMPTY). */
  set eventMask (mask: number) { check(this.rt.setEventMask(this, mask), 'AM_SetEventMask') }
  get eventMask (): number { return this.mask }

  /** Frees the bundle and its endpoints (AM_FreeBundle). */
  free (): void { check(this.rt.freeBundle(this), 'AM_FreeBundle') }
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
  /** @internal */ tagMode = 0  // 0 none, 1 all, 2 match
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
  constructor (id: number, name: number, bundle: Bundle, defaultHandler: error_handler) {
    this.id = id
    this.name = name
    this.bundle = bundle
    this.handlers[0] = defaultHandler
  }

  private get rt (): Runtime { return liveRuntime('Endpoint') }

  /** @internal The lowest translation index that maps endpoint `name`, or -1 (the last answer is memoised). */
  peerOf (name: number): number {
    if (name === this.lastName) return this.lastPeer
    const i = this.byName.get(name) ?? -1
    this.lastName = name
    this.lastPeer = i
    return i
  }

  /** The receive tag (AM_SetTag / AM_GetTag): AM_NONE refuses everything, AM_ALL accepts everything. */
  set receiveTag (tag: bigint) { check(this.rt.setTag(this, tag), 'AM_SetTag') }
  get receiveTag (): bigint { return this.tag }

  /** Sets the segment Long messages land in (AM_SetSeg). */
  setSegment (seg: AmSeg | null, nbytes: number): void { check(this.rt.setSeg(this, seg, nbytes), 'AM_SetSeg') }
  /** The segment and its length (AM_GetSeg). */
  get segment (): { seg: AmSeg | null, nbytes: number } { return { seg: this.seg, nbytes: this.segLen } }

  /** Maps translation `index` to endpoint `name`, stamping `tag` on messages to it (AM_Map). */
  map (index: number, name: en_t, tag: bigint): void { check(this.rt.map(this, index, name, tag), 'AM_Map') }
  /** Maps the first free index; returns it (AM_MapAny). */
  mapAny (name: en_t, tag: bigint): number {
    const r = { value: -1 }
    check(this.rt.mapAny(this, r, name, tag), 'AM_MapAny')
    return r.value
  }

  /** AM_UnMap. */
  unmap (index: number): void { check(this.rt.unmap(this, index), 'AM_UnMap') }

  /** Freezes the table and sets the requests in flight per peer (AM_SetExpectedResources). */
  setExpectedResources (nEndpoints: number, nOutstandingRequests: number): void {
    check(this.rt.setExpectedResources(this, nEndpoints, nOutstandingRequests), 'AM_SetExpectedResources')
  }

  /**
   * Registers `fn` at `index` 0..255 (0: the returned-message handler) (AM_SetHandler). A Short
   * message's handler is called as `fn(token, ...args)` ({@link short_handler}), a Medium or Long
   * one's as `fn(token, buf, nbytes, ...args)` ({@link bulk_handler}), handler 0 as
   * `fn(status, opcode, token)` ({@link error_handler}).
   */
  setHandler (index: number, fn: am_handler): void { check(this.rt.setHandler(this, index, fn), 'AM_SetHandler') }
  /** Registers `fn` at the lowest free index 1..255; returns it (AM_SetHandlerAny). */
  setHandlerAny (fn: am_handler): number {
    const r = { value: 0 }
    check(this.rt.setHandlerAny(this, r, fn), 'AM_SetHandlerAny')
    return r.value
  }

  /**
   * Short request to translation `index` (AM_RequestM): the peer's handler `handler` runs with the
   * token and `args`, at most AM_MAX_SHORT (16) 32-bit integers, when the peer polls. The rest arguments
   * cost an array per call; the C-style AM_RequestM functions do not allocate.
   */
  request (index: number, handler: number, ...args: number[]): void {
    const rt = this.rt
    check(rt.request(this, index, CAT_SHORT, handler, args.length, rt.argsOf(args), null, 0, 0, 0, false), 'AM_Request')
  }

  /** Medium request (AM_RequestIM): `src` (first `nbytes` bytes) is copied at the call. */
  requestMedium (index: number, handler: number, src: AmSeg, nbytes: number, ...args: number[]): void {
    const rt = this.rt
    check(rt.request(this, index, CAT_MEDIUM, handler, args.length, rt.argsOf(args), src, nbytes, 0, 0, false), 'AM_RequestI')
  }

  /** Long request into the peer's segment at `destOffset` (AM_RequestXferM). */
  requestLong (index: number, destOffset: number, handler: number, src: AmSeg, nbytes: number, ...args: number[]): void {
    const rt = this.rt
    check(rt.request(this, index, CAT_LONG, handler, args.length, rt.argsOf(args), src, nbytes, destOffset, 0, false), 'AM_RequestXfer')
  }

  /** AM_RequestXferAsyncM: false (AM_ERR_IN_USE) when it could not be sent without waiting. */
  requestLongAsync (index: number, destOffset: number, handler: number, src: AmSeg, nbytes: number, ...args: number[]): boolean {
    const rt = this.rt
    const rc = rt.request(this, index, CAT_LONG, handler, args.length, rt.argsOf(args), src, nbytes, destOffset, 0, true)
    if (rc === S.ERR_IN_USE) return false
    check(rc, 'AM_RequestXferAsync')
    return true
  }

  /**
   * AM_GetXferM: copies `nbytes` of the peer's segment at `sourceOffset` into this endpoint's
   * segment at `destOffset`, then runs `handler` here as a Long reply handler.
   */
  getLong (index: number, sourceOffset: number, handler: number, destOffset: number, nbytes: number, ...args: number[]): void {
    const rt = this.rt
    check(rt.request(this, index, CAT_LONG, handler, args.length, rt.argsOf(args), null, nbytes, destOffset, sourceOffset, false, true), 'AM_GetXfer')
  }

  /** Moves this endpoint to bundle `to` (AM_MoveEndpoint). */
  moveTo (to: Bundle): void { check(this.rt.moveEndpoint(this, this.bundle, to), 'AM_MoveEndpoint') }

  /** Frees the endpoint (AM_FreeEndpoint). */
  free (): void { check(this.rt.freeEndpoint(this), 'AM_FreeEndpoint') }

  /** @internal a view of `n` bytes of the segment at `off` (cached: no allocation in steady state) */
  segView (off: number, n: number): Uint8Array {
    return views.get(this.segU8!, off, n)
  }

  /** @internal stores the tag stamped on messages to translation `index` (and its two halves) */
  setTranslationTag (index: number, tag: bigint): void {
    this.trTag[index] = tag
    this.trTagLo[index] = Number(tag & 0xffffffffn)
    this.trTagHi[index] = Number(tag >> 32n)
  }

  /** @internal */
  acceptsTag (lo: number, hi: number): boolean {
    return this.tagMode === 1 || (this.tagMode === 2 && lo === this.tagLo && hi === this.tagHi)
  }
}

/** The views of this thread (segments, the Medium arena, packets, sources). */
const views = new ViewCache()

let runtime: Runtime | null = null
let initCount = 0

function liveRuntime (what: string): Runtime {
  if (runtime === null) throw new AmError(S.ERR_NOT_INIT, what)
  return runtime
}

/** The runtime of this task, or null before AM_Init. @internal */
export function currentRuntime (): Runtime | null { return runtime }

/** AM_Init: reference-counted; the first call joins (or opens) this task's LAPI context. */
export function amInit (lapi?: Lapi): number {
  if (runtime === null) {
    let l = lapi ?? Lapi.current()
    let owns = false
    if (l === null) { l = Lapi.init(); owns = true }
    runtime = new Runtime(l, owns)
    runtime.log.debug({ numTasks: runtime.numTasks, ownsLapi: owns }, 'AM_Init: runtime started')
  }
  initCount++
  return S.OK
}

/** AM_Terminate: the last call frees every bundle and endpoint (and LAPI, if AM_Init opened it). */
export function amTerminate (): number {
  if (runtime === null) return S.ERR_NOT_INIT
  if (--initCount > 0) return S.OK
  const rt = runtime
  for (const b of [...rt.bundles]) rt.freeBundle(b)
  rt.close()
  rt.log.debug('AM_Terminate: runtime closed')
  runtime = null
  return S.OK
}

/** @internal the implementation */
export class Runtime {
  readonly lapi: Lapi
  private readonly ownsLapi: boolean
  readonly taskId: number
  readonly numTasks: number
  readonly bundles = new Set<Bundle>()
  private readonly endpoints: Array<Endpoint | undefined> = []
  private nextEp = 0
  private readonly tokens: Token[] = []
  private readonly freeTokens: Token[] = []
  /** Tokens to return whose receiving endpoint does not exist (serviced by any poll). */
  readonly returns: Token[] = []
  private readonly mem: BufferManager
  private readonly arena: Uint8Array
  private readonly hMsg: number
  readonly hCtrl: number
  readonly maxUhdr: number
  /** LAPI's MAX_PKT_SZ: a header and an unpacked payload within it may go as one prepared packet. */
  private readonly maxPkt: number
  private readonly sendU8: Uint8Array
  private readonly sendDv: DataView
  private rdvBuf: ArrayBufferLike | null = null
  private rdv: DataView | null = null
  private rdvU8: Uint8Array | null = null
  private readonly orgCntr: Addr
  private readonly orgI32: Int32Array
  private orgExpected = 0
  private readonly segBuffer: ArrayBufferLike
  /** The whole LAPI segment of this task. */
  private readonly segAll: Uint8Array
  readonly segmentSize: number
  /** The innermost token whose handler runs (null: none). */
  private running: Token | null = null
  private nest = 0
  /**
   * The bundle whose handlers may run right now from inside the LAPI dispatcher (AMLAPI's second
   * optimization: a reply that arrives while AM_Poll, AM_WaitSema or a Request of this bundle runs
   * the dispatcher is handled from the header handler, skipping the task queue); null otherwise.
   */
  private direct: Bundle | null = null
  /** Reply handlers run from the dispatcher since the last look (AM_Poll counts them). */
  private directRuns = 0
  /** Whether a reply handler ran from the dispatcher since poll() last looked (wait conditions). */
  get ranDirect (): boolean { return this.directRuns > 0 }
  /** An error a directly run reply handler threw, rethrown once the dispatcher returned. */
  private directError: unknown = null
  private emptyPolls = 0
  private readonly argScratch = new Int32Array(AM_MAX_SHORT)
  /** The arguments of each request in progress (requests nest: a handler run by a request's poll may request). */
  private readonly argFrames: Int32Array[] = []
  private reqDepth = 0
  private credPeer: Peer | null = null
  private credBundle: Bundle | null = null
  private readonly credCond: () => boolean
  private readonly orgCond: () => boolean
  private readonly onComplete: (h: number, info: unknown) => void
  readonly log: Logger
  /** The SPMD layer's state (spmd.ts), when AMX_SPMDStartup ran. */
  spmd: unknown = null
  /** Control-message handler of the SPMD layer (spmd.ts). */
  ctrlHandler: ((src: number, u8: Uint8Array, dv: DataView, base: number, uhdrLen: number, info: lapi_return_info_t,
    comp: Ref<unknown>, uinfo: Ref<unknown>) => Uint8Array | null) | null = null

  static readonly emptyBuf = new Uint8Array(0)

  constructor (lapi: Lapi, owns: boolean) {
    this.lapi = lapi
    this.ownsLapi = owns
    this.taskId = lapi.taskId
    this.numTasks = lapi.numTasks
    this.maxUhdr = lapi.query(2 /* MAX_UHDR_SZ */)
    this.maxPkt = lapi.query(10 /* MAX_PKT_SZ */)
    this.sendU8 = new Uint8Array(this.maxUhdr)
    this.sendDv = new DataView(this.sendU8.buffer)
    this.mem = new BufferManager({ size: ARENA_BYTES, shared: false, maxClassSize: 65536 })
    this.arena = new Uint8Array(this.mem.buffer)
    this.orgCntr = lapi.malloc(8)
    const v = lapi.view(this.orgCntr, 8)
    this.segBuffer = v.buffer
    this.segAll = new Uint8Array(v.buffer, 0, lapi.segmentSize)
    this.segmentSize = lapi.segmentSize
    this.orgI32 = new Int32Array(v.buffer, v.byteOffset, 2)
    this.credCond = () => this.credPeer!.top > 0 || this.credBundle!.queue.size > 0 || this.returns.length > 0
    this.orgCond = () => Atomics.load(this.orgI32, 0) >= this.orgExpected
    this.onComplete = (_h: number, info: unknown) => {
      const t = info as Token
      if (t.state === T_QUEUED) t.queue!.markReady(t.node)
    }
    this.log = logger('am2', { task: this.taskId })
    this.hMsg = lapi.setLibraryHandler(SLOT_MSG, (_h: number, uhdr: Uint8Array, uhdrLen: number, info: lapi_return_info_t,
      comp: Ref<unknown>, uinfo: Ref<unknown>) => this.onMessage(uhdr, uhdrLen, info, comp, uinfo))
    // one-packet LAPI messages (compact headers, full ones, with or without LAPI data; little-endian hosts only) are read in place
    lapi.setLibraryShortHandler(SLOT_MSG, (w, a, uhdrLen, dataLen, src) => this.onShortMessage(w, a, uhdrLen, dataLen, src))
    this.hCtrl = lapi.setLibraryHandler(SLOT_CTRL, (_h: number, uhdr: Uint8Array, uhdrLen: number, info: lapi_return_info_t,
      comp: Ref<unknown>, uinfo: Ref<unknown>) => {
      const dv = this.dvOf(uhdr)
      return this.ctrlHandler === null ? null : this.ctrlHandler(info.src, uhdr, dv, uhdr.byteOffset, uhdrLen, info, comp, uinfo)
    })
  }

  close (): void {
    this.lapi.setLibraryHandler(SLOT_MSG, null)
    this.lapi.setLibraryHandler(SLOT_CTRL, null)
    try { this.lapi.free(this.orgCntr) } catch { /* terminated */ }
    if (this.ownsLapi && !this.lapi.isTerminated) this.lapi.term()
  }

  /** The largest payload that travels packed behind a header with `nargs` arguments. */
  packedLimit (nargs: number): number {
    return this.maxUhdr - headerBytes(nargs)
  }

  /** Arguments of an idiomatic call, in the scratch array (int32). */
  argsOf (args: number[]): Int32Array {
    const a = this.argScratch
    const n = args.length < AM_MAX_SHORT ? args.length : AM_MAX_SHORT
    for (let i = 0; i < n; i++) a[i] = args[i]! | 0
    return a
  }

  /** The scratch argument array the compat functions fill. */
  get scratchArgs (): Int32Array { return this.argScratch }

  // ───────────────────────────── bundles and endpoints ─────────────────────────────

  allocateBundle (type: number, eb: Ref<Bundle | null> | null | undefined): number {
    if (eb === null || eb === undefined || typeof eb !== 'object') return S.ERR_BAD_ARG
    if (type === AM_PAR) return S.ERR_RESOURCE
    if (type !== AM_SEQ) return S.ERR_BAD_ARG
    if (this.bundles.size >= MAX_BUNDLES) return S.ERR_RESOURCE
    const b = new Bundle()
    b.owner = this
    this.bundles.add(b)
    eb.value = b
    return S.OK
  }

  freeBundle (b: Bundle): number {
    if (!this.isBundle(b)) return S.ERR_BAD_ARG
    for (const ep of [...b.endpoints]) this.freeEndpoint(ep)
    b.freed = 1
    this.bundles.delete(b)
    // drop whatever is still queued
    for (;;) { const t = b.queue.take(); if (t < 0) break; this.release(this.tokens[t]!) }
    return S.OK
  }

  isBundle (b: unknown): b is Bundle {
    return b instanceof Bundle && b.freed === 0 && b.owner === this
  }

  isEndpoint (ep: unknown): ep is Endpoint {
    return ep instanceof Endpoint && ep.freed === 0 && this.endpoints[ep.id] === ep
  }

  allocateEndpoint (b: Bundle, ep: Ref<Endpoint | null> | null | undefined, name: Ref<number> | null | undefined): number {
    if (!this.isBundle(b)) return S.ERR_BAD_ARG
    if (ep === null || ep === undefined || typeof ep !== 'object') return S.ERR_BAD_ARG
    if (name !== null && name !== undefined && typeof name !== 'object') return S.ERR_BAD_ARG
    let id = -1
    for (let i = 0; i < MAX_ENDPOINTS; i++) {
      const c = (this.nextEp + i) % MAX_ENDPOINTS
      if (this.endpoints[c] === undefined) { id = c; break }
    }
    if (id < 0) return S.ERR_RESOURCE
    this.nextEp = (id + 1) % MAX_ENDPOINTS
    const e = new Endpoint(id, this.taskId * 65536 + id, b, defaultHandler0)
    this.endpoints[id] = e
    b.endpoints.push(e)
    ep.value = e
    if (name !== null && name !== undefined) name.value = e.name
    return S.OK
  }

  freeEndpoint (ep: Endpoint): number {
    if (!this.isEndpoint(ep)) return S.ERR_BAD_ARG
    ep.freed = 1
    this.endpoints[ep.id] = undefined
    const list = ep.bundle.endpoints
    list.splice(list.indexOf(ep), 1)
    return S.OK
  }

  moveEndpoint (ep: Endpoint, from: Bundle, to: Bundle): number {
    if (!this.isEndpoint(ep) || !this.isBundle(from) || !this.isBundle(to)) return S.ERR_BAD_ARG
    if (ep.bundle !== from) return S.ERR_RESOURCE
    from.endpoints.splice(from.endpoints.indexOf(ep), 1)
    to.endpoints.push(ep)
    ep.bundle = to
    return S.OK
  }

  setTag (ep: Endpoint, tag: unknown): number {
    if (!this.isEndpoint(ep) || !tagOk(tag)) return S.ERR_BAD_ARG
    ep.tag = tag
    ep.tagLo = Number(tag & 0xffffffffn)
    ep.tagHi = Number(tag >> 32n)
    ep.tagMode = tag === AM_NONE ? 0 : tag === AM_ALL ? 1 : 2
    return S.OK
  }

  setSeg (ep: Endpoint, seg: unknown, nbytes: unknown): number {
    if (!this.isEndpoint(ep) || !isU32(nbytes)) return S.ERR_BAD_ARG
    if (seg === null || seg === undefined || seg === 0) {
      if (nbytes !== 0) return S.ERR_BAD_ARG
      ep.seg = null; ep.segAddr = -1; ep.segLen = 0; ep.segU8 = null
    } else if (seg instanceof Uint8Array) {
      if (nbytes > seg.length) return S.ERR_BAD_ARG
      ep.seg = seg; ep.segLen = nbytes
      if (seg.buffer === this.segBuffer) { ep.segAddr = seg.byteOffset; ep.segU8 = this.lapi.view(ep.segAddr, nbytes) } else { ep.segAddr = -1; ep.segU8 = seg.subarray(0, nbytes) }
    } else if (typeof seg === 'number') {
      if (!isU32(seg) || seg + nbytes > this.segmentSize) return S.ERR_BAD_ARG
      ep.seg = seg; ep.segAddr = seg; ep.segLen = nbytes; ep.segU8 = this.lapi.view(seg, nbytes)
    } else {
      return S.ERR_BAD_ARG
    }
    return S.OK
  }

  // ───────────────────────────── translations and handlers ─────────────────────────────

  map (ep: Endpoint, index: unknown, name: unknown, tag: unknown): number {
    if (!this.isEndpoint(ep)) return S.ERR_BAD_ARG
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= ep.numTrans) return S.ERR_BAD_ARG
    if (!isNameOk(name) || !tagOk(tag)) return S.ERR_BAD_ARG
    if (ep.depth !== 0 || ep.trName[index] !== -1) return S.ERR_RESOURCE
    ep.trName[index] = name
    ep.setTranslationTag(index, tag)
    const had = ep.byName.get(name)
    if (had === undefined || had > index) ep.byName.set(name, index)
    ep.lastName = -1
    return S.OK
  }

  mapAny (ep: Endpoint, index: Ref<number> | null | undefined, name: unknown, tag: unknown): number {
    if (!this.isEndpoint(ep) || index === null || index === undefined || typeof index !== 'object') return S.ERR_BAD_ARG
    if (!isNameOk(name) || !tagOk(tag)) return S.ERR_BAD_ARG
    if (ep.depth !== 0) return S.ERR_RESOURCE
    const i = ep.trName.indexOf(-1)
    if (i < 0) return S.ERR_RESOURCE
    const rc = this.map(ep, i, name, tag)
    if (rc === S.OK) index.value = i
    return rc
  }

  unmap (ep: Endpoint, index: unknown): number {
    if (!this.isEndpoint(ep)) return S.ERR_BAD_ARG
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= ep.numTrans) return S.ERR_BAD_ARG
    if (ep.depth !== 0 || ep.trName[index] === -1) return S.ERR_RESOURCE
    const name = ep.trName[index]!
    ep.trName[index] = -1
    if (ep.byName.get(name) === index) {
      ep.byName.delete(name)
      const other = ep.trName.indexOf(name)
      if (other >= 0) ep.byName.set(name, other)
    }
    ep.lastName = -1
    return S.OK
  }

  setNumTranslations (ep: Endpoint, n: unknown): number {
    if (!this.isEndpoint(ep)) return S.ERR_BAD_ARG
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > AM_MAX_NUM_TRANSLATIONS) return S.ERR_BAD_ARG
    if (ep.depth !== 0) return S.ERR_RESOURCE
    const size = n < AM_INITIAL_NUM_TRANSLATIONS ? AM_INITIAL_NUM_TRANSLATIONS : n
    for (let i = size; i < ep.numTrans; i++) if (ep.trName[i] !== -1) return S.ERR_RESOURCE
    const names = new Array<number>(size).fill(-1)
    const tags = new Array<bigint>(size).fill(0n)
    const lo = new Uint32Array(size)
    const hi = new Uint32Array(size)
    const keep = size < ep.numTrans ? size : ep.numTrans
    for (let i = 0; i < keep; i++) { names[i] = ep.trName[i]!; tags[i] = ep.trTag[i]!; lo[i] = ep.trTagLo[i]!; hi[i] = ep.trTagHi[i]! }
    ep.trName = names; ep.trTag = tags; ep.trTagLo = lo; ep.trTagHi = hi; ep.numTrans = size
    return S.OK
  }

  translationInUse (ep: Endpoint, i: unknown): number {
    if (!this.isEndpoint(ep)) return S.ERR_BAD_ARG
    if (typeof i !== 'number' || !Number.isInteger(i) || i < 0 || i >= ep.numTrans) return S.ERR_BAD_ARG
    return ep.trName[i] === -1 ? S.ERR_RESOURCE : S.OK
  }

  setExpectedResources (ep: Endpoint, nEndpoints: unknown, nOutstanding: unknown): number {
    if (!this.isEndpoint(ep)) return S.ERR_BAD_ARG
    if (typeof nEndpoints !== 'number' || !Number.isInteger(nEndpoints) || nEndpoints < 0) return S.ERR_BAD_ARG
    if (typeof nOutstanding !== 'number' || !Number.isInteger(nOutstanding) || nOutstanding < 1 || nOutstanding > MAX_DEPTH) return S.ERR_BAD_ARG
    if (ep.depth !== 0) return S.ERR_RESOURCE
    ep.depth = nOutstanding
    ep.peers = new Array<Peer | undefined>(ep.numTrans)
    for (let i = 0; i < ep.numTrans; i++) {
      if (ep.trName[i] !== -1) { const p = new Peer(i, ep.trName[i]!, nOutstanding); ep.peers[i] = p; ep.peerList.push(p) }
    }
    return S.OK
  }

  setHandler (ep: Endpoint, index: unknown, fn: unknown): number {
    if (!this.isEndpoint(ep) || typeof fn !== 'function') return S.ERR_BAD_ARG
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= AM_MAX_NUM_HANDLERS) return S.ERR_BAD_ARG
    ep.handlers[index] = fn as am_handler
    return S.OK
  }

  setHandlerAny (ep: Endpoint, index: Ref<number> | null | undefined, fn: unknown): number {
    if (!this.isEndpoint(ep) || typeof fn !== 'function' || index === null || index === undefined || typeof index !== 'object') return S.ERR_BAD_ARG
    for (let i = 1; i < AM_MAX_NUM_HANDLERS; i++) {
      if (ep.handlers[i] === null) { ep.handlers[i] = fn as am_handler; index.value = i; return S.OK }
    }
    return S.ERR_RESOURCE
  }

  setEventMask (b: Bundle, mask: unknown): number {
    if (!this.isBundle(b) || (mask !== AM_NOEVENTS && mask !== AM_NOTEMPTY)) return S.ERR_BAD_ARG
    b.mask = mask
    return S.OK
  }

  // ───────────────────────────── sending ─────────────────────────────

  /**
   * A request (Short, Medium, Long, or with `get` a GetXfer) to translation `index`; `args` holds
   * `nargs` int32 arguments. Polls first, then waits (polling) for a free instance toward the peer
   * unless `async` (then AM_ERR_IN_USE).
   */
  request (ep: Endpoint, index: number, cat: number, handler: number, nargs: number, args: Int32Array, src: unknown,
    nbytes: number, off: number, off2: number, async: boolean, get = false): number {
    if (!this.isEndpoint(ep)) return S.ERR_BAD_ARG
    if (typeof index !== 'number' || (index >>> 0) !== index || index >= ep.numTrans) return S.ERR_BAD_ARG
    const name = ep.trName[index]!
    if (name === -1) return S.ERR_BAD_ARG
    if (ep.depth === 0) return S.ERR_NOT_INIT
    const rc = this.checkSend(ep, cat, handler, nargs, src, nbytes, off, get)
    if (rc !== 0) return rc
    if (get && (!isU32(off2) || off2 + nbytes > MAX_SEG_LENGTH)) return S.ERR_BAD_ARG
    const r = this.running
    if (r !== null && r.state !== T_REQUEST) return S.ERR_RESOURCE   // reply handlers and handler 0 do not send
    if (this.lapi.inHeaderHandler) return S.ERR_RESOURCE
    // the poll below may run handlers that send (and reuse the scratch arguments): keep ours
    const depth = this.reqDepth
    let frame = this.argFrames[depth]
    if (frame === undefined) { frame = new Int32Array(AM_MAX_SHORT); this.argFrames[depth] = frame }
    for (let i = 0; i < nargs; i++) frame[i] = args[i]!
    this.reqDepth = depth + 1
    try {
      return this.requestPolled(ep, index, cat, handler, nargs, frame, src, nbytes, off, off2, async, get)
    } finally {
      this.reqDepth = depth
    }
  }

  private requestPolled (ep: Endpoint, index: number, cat: number, handler: number, nargs: number, args: Int32Array, src: unknown,
    nbytes: number, off: number, off2: number, async: boolean, get: boolean): number {
    const p = ep.peers[index]!
    const loop = p.task === this.taskId
    // A request polls (as AMUDP's do), after it has sent: the poll is then off the path of the
    // message. Only when no instance toward the peer is free does it poll first (and wait).
    if (ep.freed === 0 && !loop && p.top === 0) {
      this.pollBundle(ep.bundle)
      if (p.top === 0 && ep.freed === 0) {
        if (async) return S.ERR_IN_USE
        this.waitCredit(ep, p)
      }
    }
    const rc = ep.freed !== 0 ? S.ERR_BAD_ARG : this.sendRequest(ep, index, p, loop, cat, handler, nargs, args, src, nbytes, off, off2, get)
    this.pollBundle(ep.bundle)   // (which also runs handler 0 with a request that could not go)
    return rc
  }

  /** The send of a request whose instance wait is over: the header, its record, and the message. */
  private sendRequest (ep: Endpoint, index: number, p: Peer, loop: boolean, cat: number, handler: number, nargs: number,
    args: Int32Array, src: unknown, nbytes: number, off: number, off2: number, get: boolean): number {
    let kind = cat | K_REQUEST
    if (get) kind |= K_GET
    if (!loop && !this.lapi.taskAliveHint(p.task)) {
      this.returnLocally(ep, index, p, kind, handler, nargs, args, nbytes, off, off2, AmFault.EUNREACHABLE)
      return S.OK
    }
    let slot = NO_SLOT
    if (!loop) {
      const inst = p.free[--p.top]!
      p.busy[inst] = 1
      p.outstanding++
      ep.outstanding++
      slot = index * MAX_DEPTH + inst
      const rec = p.rec
      const b = inst * REC
      // (| 0: what an Int32Array store does anyway, said so that V8 need not convert through a double)
      rec[b] = kind; rec[b + 1] = handler | 0; rec[b + 2] = nargs | 0; rec[b + 3] = nbytes | 0; rec[b + 4] = off | 0; rec[b + 5] = off2 | 0
      for (let i = 0; i < nargs; i++) rec[b + 6 + i] = args[i]!
    }
    const rc = this.send(ep, p.task, p.id, ep.trTagLo[index]!, ep.trTagHi[index]!, kind, handler, nargs, args,
      get ? null : src, get ? 0 : nbytes, get ? nbytes : 0, off, off2, slot)
    if (rc !== S.OK && slot !== NO_SLOT) this.releaseInstance(ep, p, slot % MAX_DEPTH)   // not sent: not in flight
    return rc
  }

  /** A reply through a request handler's token. Never polls, never waits for flow control. */
  reply (t: Token, cat: number, handler: number, nargs: number, args: Int32Array, src: unknown, nbytes: number, off: number): number {
    if (!(t instanceof Token) || t.state !== T_REQUEST) return S.ERR_RESOURCE
    const r = this.running
    if (r === null || r.state !== T_REQUEST) return S.ERR_RESOURCE   // not from a reply handler or handler 0
    if (t.replied !== 0) return S.ERR_RESOURCE
    const ep = t.ep!
    const rc = this.checkSend(ep, cat, handler, nargs, src, nbytes, off, false)
    if (rc !== 0) return rc
    t.replied = 1
    const peer = t.peer
    return this.send(ep, t.srcTask, t.srcId, ep.trTagLo[peer]!, ep.trTagHi[peer]!, cat, handler, nargs, args, src, nbytes, 0, off, 0, t.slot)
  }

  private checkSend (ep: Endpoint, cat: number, handler: number, nargs: number, src: unknown, nbytes: number, off: number, get: boolean): number {
    if (typeof handler !== 'number' || (handler >>> 0) !== handler || handler >= AM_MAX_NUM_HANDLERS) return S.ERR_BAD_ARG
    if ((nargs >>> 0) !== nargs || nargs > AM_MAX_SHORT) return S.ERR_BAD_ARG
    if (cat === CAT_SHORT) return S.OK
    if (!isU32(nbytes)) return S.ERR_BAD_ARG
    if (nbytes > (cat === CAT_MEDIUM ? MAX_MEDIUM : MAX_LONG)) return S.ERR_BAD_ARG
    if (cat === CAT_LONG && (!isU32(off) || off + nbytes > MAX_SEG_LENGTH)) return S.ERR_BAD_ARG
    if (get) {
      // the data lands in our own segment: check it here
      if (ep.segLen === 0 || off + nbytes > ep.segLen) return S.ERR_BAD_ARG
      return S.OK
    }
    if (nbytes === 0) return S.OK
    if (src instanceof Uint8Array) return nbytes <= src.length ? S.OK : S.ERR_BAD_ARG
    if (typeof src === 'number') return isU32(src) && src !== 0 && src + nbytes <= this.segmentSize ? S.OK : S.ERR_BAD_ARG
    return S.ERR_BAD_ARG
  }

  /**
   * Writes the header and sends: packed into the LAPI user header when it fits, else as LAPI data;
   * to an endpoint of this task, straight into its queue. `dataLen` is the payload that travels,
   * `nbytes` the header's byte count (they differ for a GetXfer request, which carries none).
   */
  private send (ep: Endpoint, task: number, id: number, tagLo: number, tagHi: number, kind: number, handler: number,
    nargs: number, args: Int32Array, src: unknown, dataLen: number, getBytes: number, off: number, off2: number, slot: number): number {
    const u8 = this.sendU8
    const dv = this.sendDv
    const hb = headerBytes(nargs)
    const local = task === this.taskId
    // a reply (or a GetXfer's data) to a task that has left the job has nobody to reach: drop it
    if (!local && (kind & K_REQUEST) === 0 && !this.lapi.taskAliveHint(task)) return S.OK
    // a Short, and a packed Medium or Long (a payload within packedLimit: the boundary is the full
    // header's, whichever header the message goes with), under the compact header; and a header
    // alone without arguments (32 bytes): written straight into a one-packet LAPI message. (The
    // Short has its own branch and function, the same as before Mediums and Longs took this way:
    // sharing them, the Short's round trip measured 6 % longer, its code no longer compiled whole.)
    if (!local && getBytes === 0) {
      if ((kind & (CAT_MASK | K_GET | K_RETURNED)) === CAT_SHORT) {
        if (nargs <= COMPACT_MAX_ARGS && this.sendCompact(task, kind, handler, nargs, args, id, ep.id, tagLo, tagHi, slot)) return S.OK
      } else if ((kind & (K_GET | K_RETURNED)) === 0 && nargs <= COMPACT_MAX_ARGS && dataLen <= this.packedLimit(nargs)) {
        if (this.sendCompactData(task, kind, handler, nargs, args, id, ep.id, tagLo, tagHi, slot, src, dataLen, off)) return S.OK
      } else if (dataLen === 0 && nargs === 0 && this.sendPrepared(task, kind, handler, id, ep.id, tagLo, tagHi, slot, off, off2)) {
        return S.OK
      } else if ((kind & K_RETURNED) === 0 && dataLen > 0 && hb + dataLen <= this.maxPkt &&
        this.sendPreparedData(task, kind, handler, nargs, args, id, ep.id, tagLo, tagHi, slot, src, dataLen, off, off2)) {
        return S.OK
      }
    }
    const packed = dataLen === 0 || (dataLen <= this.packedLimit(nargs) && (kind & K_GET) === 0)
    if (packed && dataLen > 0) kind |= K_PACKED
    this.writeHeader(kind, handler, nargs, 0, id, ep.id, tagLo, tagHi, dataLen + getBytes, slot, off, off2, args)
    let len = hb
    if (packed && dataLen > 0) {
      this.copyFrom(u8, hb, src, dataLen)
      len = (hb + dataLen + 7) & ~7
    }
    if (local) {
      this.deliverLocal(u8, dv, len, packed ? null : src, packed ? 0 : dataLen)
      return S.OK
    }
    if (packed) {
      const rc = this.lapi.amsendCode(task, this.hMsg, u8, len, null, 0, 0)
      return rc === 0 ? S.OK : S.ERR_RESOURCE
    }
    // the payload as LAPI data: make sure the caller may reuse `src` when we return
    let data = src as Uint8Array | number
    if (data instanceof Uint8Array && data.buffer === this.segBuffer) data = data.byteOffset
    if (Atomics.load(this.orgI32, 0) === this.orgExpected && this.orgExpected > 1 << 30) {
      Atomics.store(this.orgI32, 0, 0); this.orgExpected = 0
    }
    this.orgExpected++
    const rc = this.lapi.amsendCode(task, this.hMsg, u8, len, data, dataLen, this.orgCntr)
    if (rc !== 0) { this.orgExpected--; return S.ERR_RESOURCE }
    if (Atomics.load(this.orgI32, 0) < this.orgExpected) this.lapi.waitUntil(this.orgCond, WaitCall.AM_REQUEST_BUFFER)
    return S.OK
  }

  /**
   * A message that is its header alone (no arguments, no payload: 32 bytes), written by words
   * straight into a one-packet LAPI message (Lapi.prepareShort/commitShort: no staging copy). The
   * words are the little-endian layout of wire.ts (the path exists on little-endian hosts only).
   * Returns false when LAPI could not take it this way (nothing was sent).
   */
  private sendPrepared (task: number, kind: number, handler: number, dstId: number, srcId: number,
    tagLo: number, tagHi: number, slot: number, off: number, off2: number): boolean {
    const lapi = this.lapi
    const at = lapi.prepareShort(task, this.hMsg, HDR_BYTES)
    if (at < 0) return false
    const w = lapi.preparedWords
    w[at] = kind | handler << 8     // O_KIND, O_HANDLER; O_NARGS 0, O_STATUS 0
    w[at + 1] = dstId | srcId << 16 // O_DST, O_SRC
    w[at + 2] = tagLo
    w[at + 3] = tagHi
    w[at + 4] = 0                   // O_NBYTES
    w[at + 5] = slot
    w[at + 6] = off
    w[at + 7] = off2
    return lapi.commitShort()
  }

  /**
   * An unpacked Medium or Long (or a GetXfer's data) that fits one LAPI packet with its full
   * header: the header and arguments written by words and the `nbytes` of payload from `src` (a
   * checked Uint8Array, or an address in this task's segment) copied straight into the packet as
   * its LAPI data (Lapi.prepareShortData): no staging copy of the header, and the caller's memory is
   * free once this returns (the copy is done), so no origin counter either. Returns false when LAPI
   * could not take it this way (nothing was sent).
   */
  private sendPreparedData (task: number, kind: number, handler: number, nargs: number, args: Int32Array, dstId: number,
    srcId: number, tagLo: number, tagHi: number, slot: number, src: unknown, nbytes: number, off: number, off2: number): boolean {
    const lapi = this.lapi
    const hb = headerBytes(nargs)
    const at = lapi.prepareShortData(task, this.hMsg, hb, nbytes)
    if (at < 0) return false
    const w = lapi.preparedWords
    w[at] = kind | handler << 8 | nargs << 16   // O_KIND, O_HANDLER, O_NARGS; O_STATUS 0
    w[at + 1] = dstId | srcId << 16
    w[at + 2] = tagLo | 0
    w[at + 3] = tagHi | 0
    w[at + 4] = nbytes | 0                      // O_NBYTES
    w[at + 5] = slot | 0
    w[at + 6] = off | 0
    w[at + 7] = off2 | 0
    for (let i = 0; i < nargs; i++) w[at + 8 + i] = args[i]!
    if ((nargs & 1) !== 0) w[at + 8 + nargs] = 0   // padding to a multiple of 8
    this.copyFrom(lapi.preparedBytes, 4 * at + hb, src, nbytes)
    return lapi.commitShort()
  }

  /**
   * A Short of at most COMPACT_MAX_ARGS arguments with the compact header (wire.ts), written by
   * words straight into a one-packet LAPI message, like sendPrepared. Returns false when LAPI
   * could not take it this way (nothing was sent).
   */
  private sendCompact (task: number, kind: number, handler: number, nargs: number, args: Int32Array, dstId: number,
    srcId: number, tagLo: number, tagHi: number, slot: number): boolean {
    const lapi = this.lapi
    const at = lapi.prepareShort(task, this.hMsg, compactBytes(nargs))
    if (at < 0) return false
    const w = lapi.preparedWords
    w[at] = kind | K_COMPACT | handler << 8 | nargs << 16   // O_KIND, O_HANDLER, O_NARGS; O_STATUS 0
    w[at + 1] = dstId | srcId << 16
    // (| 0: an int32 goes into the word as it is; a number V8 cannot prove one would take a
    // conversion through a double)
    w[at + 2] = tagLo | 0
    w[at + 3] = tagHi | 0
    w[at + 4] = slot | 0
    for (let i = 0; i < nargs; i++) w[at + 5 + i] = args[i]!
    if ((nargs & 1) === 0) w[at + 5 + nargs] = 0   // padding to a multiple of 8
    return lapi.commitShort()
  }

  /**
   * A Medium or Long (`kind`) with the compact header (wire.ts): its arguments, its `nbytes` of
   * payload from `src` (a checked Uint8Array, or an address in this task's segment) and a Long's
   * destination offset `off`, written straight into a one-packet LAPI message like sendCompact (the
   * payload from the caller's memory into the packet: no staging copy). Returns false when LAPI
   * could not take it this way (nothing was sent).
   */
  private sendCompactData (task: number, kind: number, handler: number, nargs: number, args: Int32Array, dstId: number,
    srcId: number, tagLo: number, tagHi: number, slot: number, src: unknown, nbytes: number, off: number): boolean {
    const lapi = this.lapi
    const cat = kind & CAT_MASK
    const pay = compactPayloadAt(nargs, cat)
    const bytes = (pay + nbytes + 7) & ~7
    const at = lapi.prepareShort(task, this.hMsg, bytes)
    if (at < 0) return false
    const w = lapi.preparedWords
    w[at] = kind | K_COMPACT | handler << 8 | nargs << 16
    w[at + 1] = dstId | srcId << 16
    w[at + 2] = tagLo | 0
    w[at + 3] = tagHi | 0
    w[at + 4] = slot | 0
    for (let i = 0; i < nargs; i++) w[at + 5 + i] = args[i]!
    const p = at + 5 + nargs
    w[p] = nbytes | 0
    if (cat === CAT_LONG) w[p + 1] = off | 0
    const q = at + (pay >> 2)
    if (q > p + (cat === CAT_LONG ? 2 : 1)) w[q - 1] = 0   // the padding before the payload
    // the words the payload ends in are zeroed first: its last bytes overwrite them, the rest is padding
    const end = at + (bytes >> 2)
    for (let k = q + (nbytes >> 2); k < end; k++) w[k] = 0
    if (nbytes > 0) this.copyFrom(lapi.preparedBytes, 4 * q, src, nbytes)
    return lapi.commitShort()
  }

  /**
   * Copies the `n` bytes of a checked payload source `src` (an address in this task's segment, or
   * a Uint8Array from its start) into `d8` at `d`, a buffer that cannot overlap it (the staging
   * buffer, a packet).
   */
  private copyFrom (d8: Uint8Array, d: number, src: unknown, n: number): void {
    if (typeof src === 'number') copyBytes(d8, d, this.segAll, src, n)
    else copyBytes(d8, d, src as Uint8Array, 0, n)
  }

  /** A message to an endpoint of this task: through the same receive path, without LAPI. */
  private deliverLocal (u8: Uint8Array, dv: DataView, len: number, src: unknown, dataLen: number): void {
    const landing = this.receive(u8, dv, 0, len, this.taskId, dataLen, null, null, false)
    const t = this.lastPending
    this.lastPending = null
    if (landing === null || t === null) return
    if (dataLen > 0) {
      const from = typeof src === 'number' ? views.get(this.segAll, src, dataLen) : views.get(src as Uint8Array, 0, dataLen)
      if (typeof landing === 'number') this.segAll.set(from, landing)
      else landing.set(from)
    }
    this.onComplete(0, t)
  }

  /** The token `receive` left pending (waiting for its data), for deliverLocal and onShortData. */
  private lastPending: Token | null = null

  /** A request that cannot go (its peer left the job): handler 0 gets it back with `status`. */
  private returnLocally (ep: Endpoint, index: number, p: Peer, kind: number, handler: number, nargs: number, args: ArrayLike<number>,
    nbytes: number, off: number, off2: number, status: number): void {
    const t = this.takeToken()
    t.ep = ep
    t.kind = kind | K_RETURNED; t.handler = handler; t.nargs = nargs; t.status = status; t.fault = 0
    t.srcTask = p.task; t.srcId = p.id; t.dstId = ep.id
    t.tagLo = ep.trTagLo[index]!; t.tagHi = ep.trTagHi[index]!
    t.nbytes = nbytes; t.slot = NO_SLOT; t.off = off; t.off2 = off2; t.peer = index
    for (let i = 0; i < nargs; i++) t.args[i] = args[i]!
    this.enqueue(t, ep.bundle, true)
  }

  /** Waits (polling the bundle) until peer `p` of `ep` has a free instance, or is gone. */
  private waitCredit (ep: Endpoint, p: Peer): void {
    const b = ep.bundle
    while (p.top === 0 && ep.freed === 0) {
      if (!this.lapi.taskAlive(p.task)) { this.failPeer(ep, p); break }
      const pc = this.credPeer
      const pb = this.credBundle
      this.credPeer = p; this.credBundle = b
      try { this.waitFor(b, this.credCond, WaitCall.AM_REQUEST_CREDIT) } finally { this.credPeer = pc; this.credBundle = pb }
      this.pollBundle(b)
    }
  }

  /** Returns every outstanding request to a peer that left the job (ECONGESTION) and frees its instances. */
  private failPeer (ep: Endpoint, p: Peer): void {
    const index = p.index
    for (let inst = 0; inst < p.busy.length; inst++) {
      if (p.busy[inst] === 0) continue
      const b = inst * REC
      const r = p.rec
      this.releaseInstance(ep, p, inst)
      this.returnLocally(ep, index, p, r[b]!, r[b + 1]!, r[b + 2]!, r.subarray(b + 6, b + 6 + r[b + 2]!), r[b + 3]!, r[b + 4]!, r[b + 5]!, AmFault.ECONGESTION)
    }
  }

  /** Looks for peers that left the job with requests of the bundle's endpoints outstanding. */
  checkPeers (b: Bundle): void {
    for (const ep of b.endpoints) {
      if (ep.outstanding === 0) continue
      for (const p of ep.peerList) {
        if (p.outstanding > 0 && p.task !== this.taskId && !this.lapi.taskAlive(p.task)) this.failPeer(ep, p)
      }
    }
  }

  private releaseInstance (ep: Endpoint, p: Peer, inst: number): void {
    p.busy[inst] = 0
    p.free[p.top++] = inst
    p.outstanding--
    ep.outstanding--
  }

  /** The reply (or return) of instance `slot` of `ep` arrived: free it. */
  private releaseSlot (ep: Endpoint, slot: number): void {
    if (slot < 0) return
    const index = (slot / MAX_DEPTH) | 0
    const inst = slot % MAX_DEPTH
    const p = index < ep.peers.length ? ep.peers[index] : undefined
    if (p === undefined || inst >= p.busy.length || p.busy[inst] === 0) return
    this.releaseInstance(ep, p, inst)
  }

  // ───────────────────────────── receiving ─────────────────────────────

  /**
   * `u8.byteOffset`, kept for the last array asked about: reading it is a call in Node 20 (~11 ns),
   * and the arrays are the same few (LAPI's header scratch views, the inbox).
   */
  private offOf (u8: Uint8Array): number {
    if (u8 !== this.offU8) { this.offU8 = u8; this.offVal = u8.byteOffset }
    return this.offVal
  }

  private offU8: Uint8Array | null = null
  private offVal = 0

  private dvOf (u8: Uint8Array): DataView {
    // keyed by the array first: `.buffer` is a call into the runtime in Node 20 (LAPI hands its
    // header handlers the same few scratch views, and a typed array never changes its buffer)
    if (u8 === this.rdvU8) return this.rdv!
    this.rdvU8 = u8
    if (u8.buffer !== this.rdvBuf) { this.rdvBuf = u8.buffer; this.rdv = new DataView(u8.buffer) }
    return this.rdv!
  }

  /** am2's LAPI header handler. */
  private onMessage (uhdr: Uint8Array, uhdrLen: number, info: lapi_return_info_t, comp: Ref<unknown>, uinfo: Ref<unknown>): Uint8Array | Addr | null {
    if (uhdrLen < HDR_BYTES) return null
    const landing = this.receive(uhdr, this.dvOf(uhdr), this.offOf(uhdr), uhdrLen, info.src, info.msg_len, comp, uinfo, true)
    if (landing !== null) info.ret_flags = RetFlag.LAPI_SEND_REPLY
    return landing
  }

  /**
   * am2's in-place receiver of LAPI's one-packet messages (Lapi.setLibraryShortHandler), read
   * straight from the packet's slot: a Short under the compact header (onCompact), a Medium or Long
   * under it (onCompactData), a full header without arguments or payload (32 bytes) by words, any
   * other full header (arguments, a packed payload) through the byte views of the inbox, as the
   * header handler reads its copy, and a full header with LAPI data behind it (an unpacked
   * payload that fits one packet: onShortData). The words are the little-endian layout of wire.ts
   * (LAPI uses such packets on little-endian hosts only).
   */
  private onShortMessage (w: Int32Array, a: number, uhdrLen: number, dataLen: number, src: number): void {
    const w0 = w[a]!
    if ((w0 & K_COMPACT) !== 0) { this.onCompact(w, a, w0, uhdrLen, dataLen, src); return }
    const nargs = (w0 >>> 16) & 0xff
    if (uhdrLen < HDR_BYTES) return
    if (dataLen !== 0) { this.onShortData(w, a, uhdrLen, dataLen, src); return }
    if (nargs !== 0 || uhdrLen !== HDR_BYTES) {
      // (a header that claims more than the packet holds is dropped there, as by the header handler)
      const u8 = this.inboxU8Of(w)
      this.receive(u8, this.ipView!, 4 * a, uhdrLen, src, 0, null, null, true)
      return
    }
    // a header alone: with nothing behind it, no payload is ever read from the packet (`accept`
    // gets no byte view)
    const kind = w0 & 0xff
    const t = this.wordToken(w, a, w0, kind & ~K_PACKED, 0, (kind & K_RETURNED) !== 0 ? w0 >>> 24 : 0, src)
    t.nbytes = w[a + 4]! >>> 0
    t.slot = w[a + 5]!
    t.off = w[a + 6]! >>> 0
    t.off2 = w[a + 7]! >>> 0
    this.accept(t, kind, null, 4 * a + HDR_BYTES, 4 * a + uhdrLen, 0, null, null, true)
  }

  /**
   * A full header with its payload as LAPI data in the same packet (an unpacked Medium or Long, or
   * a GetXfer's data, of at most a packet): checked and queued as by the header handler, then the
   * data is copied from the packet into its landing place (the Medium's buffer, the segment) and
   * the token is ready, with no LAPI landing copy and no completion handler.
   */
  private onShortData (w: Int32Array, a: number, uhdrLen: number, dataLen: number, src: number): void {
    const u8 = this.inboxU8Of(w)
    const landing = this.receive(u8, this.ipView!, 4 * a, uhdrLen, src, dataLen, null, null, true)
    const t = this.lastPending
    this.lastPending = null
    if (landing === null || t === null) return
    // (accept checked that the data is the payload the header announces, and where it lands)
    const from = 4 * a + uhdrLen
    if (typeof landing === 'number') copyBytes(this.segAll, landing, u8, from, dataLen)
    else copyBytes(landing, 0, u8, from, dataLen)
    this.onComplete(0, t)
  }

  /**
   * The inbox's bytes, and `ipView` its DataView (made once: LAPI hands in-place receivers one
   * Int32Array per inbox; not through dvOf, whose one entry the header handler's views keep).
   */
  private inboxU8Of (w: Int32Array): Uint8Array {
    if (w !== this.ipWords) { this.ipWords = w; this.ipBytes = new Uint8Array(w.buffer); this.ipView = new DataView(w.buffer) }
    return this.ipBytes!
  }

  private ipWords: Int32Array | null = null
  private ipBytes: Uint8Array | null = null
  private ipView: DataView | null = null

  /**
   * A token for a header read by words at word `a` of `w` (`w0` its first word): the fields the
   * full and the compact layout share (kind word, endpoints, tag); the caller reads the rest.
   */
  private wordToken (w: Int32Array, a: number, w0: number, kind: number, nargs: number, status: number, src: number): Token {
    const t = this.takeToken()
    t.kind = kind
    t.handler = (w0 >>> 8) & 0xff
    t.nargs = nargs
    t.status = status
    t.fault = 0
    t.srcTask = src
    const w1 = w[a + 1]!
    t.dstId = w1 & 0xffff
    t.srcId = w1 >>> 16
    t.tagLo = w[a + 2]! >>> 0
    t.tagHi = w[a + 3]! >>> 0
    t.peer = -1
    return t
  }

  /**
   * A Short with the compact header (wire.ts), read by words where it lies, like onShortMessage
   * (a Medium or Long: onCompactData). Anything else with K_COMPACT (LAPI data, a flag a compact
   * header never has, a length that does not match its arguments) is dropped.
   */
  private onCompact (w: Int32Array, a: number, w0: number, uhdrLen: number, dataLen: number, src: number): void {
    const nargs = (w0 >>> 16) & 0xff
    const kind = w0 & 0xff & ~K_COMPACT
    if ((kind & CAT_MASK) !== CAT_SHORT) { this.onCompactData(w, a, w0, uhdrLen, dataLen, src); return }
    if (dataLen !== 0 || nargs > COMPACT_MAX_ARGS || uhdrLen !== compactBytes(nargs) ||
      (kind & (K_GET | K_RETURNED | K_PACKED)) !== 0) return
    const t = this.wordToken(w, a, w0, kind, nargs, 0, src)
    t.nbytes = 0
    t.slot = w[a + 4]!
    t.off = 0
    t.off2 = 0
    const args = t.args
    for (let i = 0; i < nargs; i++) args[i] = w[a + 5 + i]!
    // (nothing follows the header: the payload's start and the message's end are one place)
    const end = 4 * a + uhdrLen
    this.accept(t, kind, null, end, end, 0, null, null, true)
  }

  /**
   * A Medium or Long with the compact header, read like onCompact; its payload is read from the
   * packet by `accept`, as a packed one's. One with LAPI data, a flag a compact header never has, or
   * a length that does not match its arguments and payload count is dropped.
   */
  private onCompactData (w: Int32Array, a: number, w0: number, uhdrLen: number, dataLen: number, src: number): void {
    const nargs = (w0 >>> 16) & 0xff
    const kind = w0 & 0xff & ~K_COMPACT
    const cat = kind & CAT_MASK
    if (dataLen !== 0 || nargs > COMPACT_MAX_ARGS || cat === 3 || (kind & (K_GET | K_RETURNED | K_PACKED)) !== 0) return
    // (uhdrLen is at most a packet, so a count that does not match it cannot overflow the sum)
    const p = a + 5 + nargs
    const nbytes = w[p]! >>> 0
    if (uhdrLen !== compactBytesFor(nargs, cat, nbytes)) return
    const t = this.wordToken(w, a, w0, kind, nargs, 0, src)
    t.nbytes = nbytes
    t.slot = w[a + 4]!
    t.off = cat === CAT_LONG ? w[p + 1]! >>> 0 : 0
    t.off2 = 0
    const args = t.args
    for (let i = 0; i < nargs; i++) args[i] = w[a + 5 + i]!
    const hb = 4 * a + compactPayloadAt(nargs, cat)
    this.accept(t, kind | K_PACKED, this.inboxU8Of(w), hb, hb + nbytes, 0, null, null, true)
  }

  /**
   * One arriving message (its header at `b` of `u8`): checks it and queues its token. Returns where
   * its LAPI data lands (then the token waits, pending, for `onComplete`), or null. `direct`: it
   * came through LAPI's dispatcher (the header handler, or the in-place receiver reading the
   * packet where it lies), so a reply may run at once (see `accept`).
   */
  private receive (u8: Uint8Array, dv: DataView, b: number, len: number, src: number, dataLen: number,
    comp: Ref<unknown> | null, uinfo: Ref<unknown> | null, direct: boolean): Uint8Array | Addr | null {
    const nargs = u8[b + O_NARGS]!
    if (nargs > AM_MAX_SHORT || len < headerBytes(nargs)) return null
    const kind = u8[b + O_KIND]!
    // a compact header only travels in one-packet messages, which the in-place receiver reads
    if ((kind & K_COMPACT) !== 0) return null
    const t = this.fill(this.takeToken(), u8, dv, b, src, kind, nargs)
    return this.accept(t, kind, u8, b + headerBytes(nargs), b + len, dataLen, comp, uinfo, direct)
  }

  /**
   * The checks and the queueing of an arriving message read into token `t` (`kind`: its header's
   * kind byte, with K_PACKED when a payload follows in the packet; a packed payload starts at byte
   * `hb` of `u8`'s buffer and the message ends at byte `end`; `u8` is null only for a message with
   * nothing behind its header). `direct`: it came through LAPI's dispatcher, so a reply may run at
   * once. Returns where LAPI data lands (a message with `comp`), or null.
   */
  private accept (t: Token, kind: number, u8: Uint8Array | null, hb: number, end: number, dataLen: number,
    comp: Ref<unknown> | null, uinfo: Ref<unknown> | null, direct: boolean): Uint8Array | Addr | null {
    const nbytes = t.nbytes
    const ep = this.endpoints[t.dstId]
    const returned = (kind & K_RETURNED) !== 0
    if (ep === undefined) {
      // our endpoint is gone: a returned message is dropped (as AMUDP), and so is an automatic
      // reply, which the sender's program never sent and its handler 0 must not hear of
      if (returned || (kind & K_AUTO) !== 0) { this.release(t); return null }
      t.fault = AmFault.EBADENDPOINT
      this.returns.push(t)
      return null
    }
    t.ep = ep
    const src = t.srcTask
    if (returned) {
      // one of ours came back: free its instance, then handler 0
      if ((kind & K_REQUEST) !== 0) this.releaseSlot(ep, t.slot)
      t.peer = ep.peerOf(src * 65536 + t.srcId)
      this.enqueue(t, ep.bundle, true)
      return null
    }
    if ((kind & K_REQUEST) === 0) this.releaseSlot(ep, t.slot)   // a reply is the acknowledgement
    // AMUDP's order: tag, handler, length/segment, sender
    const cat = kind & CAT_MASK
    if ((kind & K_AUTO) !== 0) {
      this.release(t)   // the automatic reply runs no handler: freeing the instance was all of it
      return null
    }
    let fault = 0
    if (!ep.acceptsTag(t.tagLo, t.tagHi)) {
      fault = AmFault.EBADTAG
    } else if ((kind & K_GET) !== 0) {
      if (ep.segLen === 0) fault = AmFault.EBADSEGOFF
      else if (cat !== CAT_LONG || t.off2 + nbytes > ep.segLen) fault = AmFault.EBADLENGTH
    } else if (t.handler === 0 || ep.handlers[t.handler] === null) {
      fault = AmFault.EBADHANDLER
    } else if (cat === CAT_SHORT) {
      if (nbytes !== 0) fault = AmFault.EBADLENGTH
    } else if (cat === CAT_MEDIUM) {
      if (nbytes > MAX_MEDIUM) fault = AmFault.EBADLENGTH
    } else if (cat === CAT_LONG) {
      if (nbytes > MAX_LONG) fault = AmFault.EBADLENGTH
      else if (ep.segLen === 0) fault = nbytes === 0 ? 0 : AmFault.EBADSEGOFF
      else if (t.off + nbytes > ep.segLen) fault = AmFault.EBADLENGTH
    } else {
      fault = AmFault.EBADARGS
    }
    t.peer = ep.peerOf(src * 65536 + t.srcId)
    if (fault === 0 && t.peer < 0) fault = AmFault.EBADENDPOINT
    // unpacked: the LAPI data must be exactly the payload the header announces
    if (fault === 0 && (kind & (K_PACKED | K_GET)) === 0 && cat !== CAT_SHORT && dataLen !== nbytes) fault = AmFault.EBADLENGTH
    if (fault !== 0) {
      t.fault = fault
      this.enqueue(t, ep.bundle, true)
      return null
    }
    // (with nbytes > 0 the payload is packed behind the header in `u8`, which then is not null)
    if ((kind & K_REQUEST) === 0 && this.direct === ep.bundle && direct && this.nest < MAX_NEST &&
      (nbytes === 0 || cat === CAT_SHORT || (kind & K_PACKED) !== 0) && hb + nbytes <= end) {
      this.runReplyNow(t, ep, cat === CAT_LONG ? null : nbytes === 0 ? Runtime.emptyBuf : views.get(u8!, hb - this.offOf(u8!), nbytes), u8, hb)
      return null
    }
    if (nbytes === 0 || cat === CAT_SHORT || (kind & K_GET) !== 0) { this.enqueue(t, ep.bundle, true); return null }
    if ((kind & K_PACKED) !== 0) {
      if (hb + nbytes > end) { t.fault = AmFault.EBADLENGTH; this.enqueue(t, ep.bundle, true); return null }
      const from = hb - this.offOf(u8!)
      if (cat === CAT_MEDIUM) copyBytes(this.bufferFor(t, nbytes), 0, u8!, from, nbytes)
      else copyBytes(ep.segU8!, t.off, u8!, from, nbytes)
      this.enqueue(t, ep.bundle, true)
      return null
    }
    // the payload follows as LAPI data: it lands, then the completion handler makes the token ready
    const landing: Uint8Array | Addr = cat === CAT_MEDIUM ? this.bufferFor(t, nbytes) : ep.segAddr >= 0 ? ep.segAddr + t.off : ep.segView(t.off, nbytes)
    this.enqueue(t, ep.bundle, false)
    if (comp !== null) { comp.value = this.onComplete; uinfo!.value = t } else this.lastPending = t
    return landing
  }

  /**
   * Runs a reply handler from inside the LAPI header handler (the dispatcher runs on behalf of this
   * bundle): `buf` views the payload in the packet (a Long's is copied into the segment first).
   * Reply handlers cannot send, so nothing here re-enters LAPI. An error it throws is kept and
   * rethrown when the dispatcher returns (LAPI would report it as a header handler failure).
   */
  private runReplyNow (t: Token, ep: Endpoint, buf: Uint8Array | null, u8: Uint8Array | null, hb: number): void {
    if (buf === null) {
      if (t.nbytes > 0) ep.segU8!.set(views.get(u8!, hb - this.offOf(u8!), t.nbytes), t.off)
      buf = t.nbytes === 0 ? Runtime.emptyBuf : ep.segView(t.off, t.nbytes)
    }
    const outer = this.running
    this.running = t
    this.nest++
    t.state = T_REPLY
    try {
      this.invokeWith(t, ep, buf)
    } catch (e) {
      this.handlerThrew(t, e)
      if (this.directError === null) this.directError = e
    } finally {
      this.nest--
      this.running = outer
      this.directRuns++
      this.release(t)
    }
  }

  /** Reads the header into token `t` (its endpoint is set by `accept`). */
  private fill (t: Token, u8: Uint8Array, dv: DataView, b: number, src: number, kind: number, nargs: number): Token {
    t.kind = kind & ~K_PACKED
    t.handler = u8[b + O_HANDLER]!
    t.nargs = nargs
    t.status = (kind & K_RETURNED) !== 0 ? u8[b + O_STATUS]! : 0
    t.fault = 0
    t.srcTask = src
    t.srcId = dv.getUint16(b + O_SRC, true)
    t.dstId = dv.getUint16(b + O_DST, true)
    t.tagLo = dv.getUint32(b + O_TAG_LO, true)
    t.tagHi = dv.getUint32(b + O_TAG_HI, true)
    t.nbytes = dv.getUint32(b + O_NBYTES, true)
    t.slot = dv.getInt32(b + O_SLOT, true)
    t.off = dv.getUint32(b + O_OFF, true)
    t.off2 = dv.getUint32(b + O_OFF2, true)
    t.peer = -1
    const a = t.args
    for (let i = 0; i < nargs; i++) a[i] = dv.getInt32(b + O_ARGS + 4 * i, true)
    return t
  }

  /**
   * A Medium payload buffer of `n` bytes for `t`: bufmgr's, or, when the arena is full (deep
   * pipelines of large Mediums), a view of a heap buffer from a pool by power-of-two size, kept when
   * the token is released (up to HEAP_POOL_BYTES in all), so that a stream of them neither makes
   * nor zero-fills a buffer each (a new 512 KiB Uint8Array is zero-filled and later collected; the
   * n-byte view is all that is allocated).
   */
  private bufferFor (t: Token, n: number): Uint8Array {
    const a = this.mem.alloc(n)
    if (a === 0) {
      const k = 32 - Math.clz32(n - 1)
      const b = (this.heapPool[k] ??= []).pop()
      this.heapMediums++
      if (b !== undefined) this.heapPooled -= b.length
      else this.heapBuffersMade++
      const buf = b ?? new Uint8Array(2 ** k)
      t.heapBuf = buf
      t.heap = buf.subarray(0, n)
      return t.heap
    }
    t.bufAddr = a
    // (kept for the handler's call: a second look in the view cache would cost as much again)
    t.heap = this.arenaView(a, n)
    return t.heap
  }

  /** Heap Medium buffers kept for reuse, by log2 of their length, and their bytes in all. */
  private readonly heapPool: Uint8Array[][] = []
  private heapPooled = 0
  /** Mediums whose payload the arena had no room for, and the heap buffers made for them (Am2.stats). */
  heapMediums = 0
  heapBuffersMade = 0

  private arenaView (a: number, n: number): Uint8Array {
    return views.get(this.arena, a, n)
  }

  private enqueue (t: Token, b: Bundle, ready: boolean): void {
    t.state = T_QUEUED
    t.queue = b.queue
    t.node = b.queue.push(t.index, ready)
  }

  private takeToken (): Token {
    let t = this.freeTokens.pop()
    if (t === undefined) { t = new Token(this.tokens.length); this.tokens.push(t) }
    return t
  }

  private release (t: Token): void {
    if (t.bufAddr !== 0) { this.mem.free(t.bufAddr); t.bufAddr = 0 }
    const hb = t.heapBuf
    if (hb !== null) {
      t.heapBuf = null
      if (this.heapPooled + hb.length <= HEAP_POOL_BYTES) {
        this.heapPool[31 - Math.clz32(hb.length)]!.push(hb)
        this.heapPooled += hb.length
      }
    }
    t.heap = null
    t.ep = null
    t.queue = null
    t.state = T_FREE
    this.freeTokens.push(t)
  }

  // ───────────────────────────── polling and handlers ─────────────────────────────

  /** Runs the LAPI dispatcher once on behalf of bundle `b` (its replies may run from it). */
  private progressFor (b: Bundle): void {
    const outer = this.direct
    this.direct = b
    try { this.lapi.progress() } finally { this.direct = outer }
    this.rethrowDirect()
  }

  /** Waits (lapi.waitUntil) on behalf of bundle `b`, in blocking call `call` (a WaitCall). */
  private waitFor (b: Bundle, cond: () => boolean, call: number): void {
    const outer = this.direct
    this.direct = b
    try { this.lapi.waitUntil(cond, call) } finally { this.direct = outer }
    this.rethrowDirect()
  }

  private rethrowDirect (): void {
    if (this.directError !== null) {
      const e = this.directError
      this.directError = null
      throw e
    }
  }

  /** AM_Poll: the network once, then up to POLL_BATCH queued handlers. Returns the messages handled. */
  poll (b: Bundle): number {
    const lapi = this.lapi
    if (lapi.inHeaderHandler) return 0
    // nothing in the inbox, nothing queued: a poll loop's empty round stays short, so a message
    // that arrives is seen sooner (the look leaves what it found for the dispatcher's round)
    if (b.queue.size === 0 && this.returns.length === 0 && !lapi.pending) {
      if ((++this.emptyPolls & 255) === 0) this.checkPeers(b)
      return 0
    }
    this.directRuns = 0
    this.progressFor(b)
    const n = this.runQueued(b) + this.directRuns
    if (n === 0 && (++this.emptyPolls & 255) === 0) this.checkPeers(b)
    return n
  }

  /** A poll made by a Request (the network, and handlers unless nested too deep). */
  private pollBundle (b: Bundle): void {
    this.progressFor(b)
    if (this.nest < MAX_NEST) this.runQueued(b)
  }

  private runQueued (b: Bundle): number {
    let n = 0
    while (this.returns.length > 0) { this.dispatch(this.returns.shift()!); n++ }
    while (n < POLL_BATCH) {
      const i = b.queue.take()
      if (i < 0) break
      this.dispatch(this.tokens[i]!)
      n++
    }
    return n
  }

  /** AM_WaitSema: sleeps (after the spin budget) until a message arrived, then polls. */
  waitSema (b: Bundle): number {
    for (;;) {
      const n = this.poll(b)
      if (n > 0) return n
      this.checkPeers(b)
      this.directRuns = 0
      this.waitFor(b, b.readyCond, WaitCall.AM_WAITSEMA)
      if (this.directRuns > 0) return this.directRuns + this.poll(b)
    }
  }

  /** AM_WaitSema without blocking the event loop (no spinning: an asynchronous doorbell wait). */
  async waitSemaAsync (b: Bundle): Promise<number> {
    for (;;) {
      const n = this.poll(b)
      if (n > 0) return n
      this.checkPeers(b)
      await this.lapi.waitUntilAsync(b.readyCond, WaitCall.AM_WAITSEMA)
    }
  }

  private dispatch (t: Token): void {
    const ep = t.ep
    if (t.fault !== 0) { this.sendReturn(t); this.release(t); return }
    if (ep === null || ep.freed !== 0) { this.release(t); return }
    const outer = this.running
    this.running = t
    this.nest++
    try {
      const kind = t.kind
      if ((kind & K_RETURNED) !== 0) {
        t.state = T_RETURNED
        ;(ep.handlers[0] as error_handler)(t.status, opcodeOf(kind), t)
      } else if ((kind & K_GET) !== 0) {
        t.state = T_DONE
        this.sendGetData(t)
      } else if ((kind & K_REQUEST) !== 0) {
        t.state = T_REQUEST
        t.replied = 0
        this.invoke(t, ep)
        this.autoReply(t, ep)
      } else {
        t.state = T_REPLY
        this.invoke(t, ep)
      }
    } catch (e) {
      this.handlerThrew(t, e)
      // (the requester gets its credit back all the same)
      if (t.state === T_REQUEST) this.autoReply(t, ep)
      throw e
    } finally {
      this.nest--
      this.running = outer
      this.release(t)
    }
  }

  /**
   * The automatic reply of a request its handler did not reply to: the credit of the request's
   * instance. A request between endpoints of this task holds none (NO_SLOT) and needs no reply.
   */
  private autoReply (t: Token, ep: Endpoint): void {
    if (t.replied === 0 && t.slot !== NO_SLOT) {
      t.replied = 1
      const p = t.peer
      this.send(ep, t.srcTask, t.srcId, ep.trTagLo[p]!, ep.trTagHi[p]!, K_AUTO, 0, 0, this.argScratch, null, 0, 0, 0, 0, t.slot)
    }
  }

  /** Logs a handler's throw (which goes on out of the AM_Poll, AM_WaitSema or request that ran it). */
  private handlerThrew (t: Token, e: unknown): void {
    this.log.error({ err: e, handler: t.handler, src: t.srcTask }, 'an AM-2 handler threw')
  }

  /** The data of an AM_GetXferM, back to the requester as a Long reply (its handler runs there). */
  private sendGetData (t: Token): void {
    const ep = t.ep!
    const p = t.peer
    const n = t.nbytes
    const src: Uint8Array | number = ep.segAddr >= 0 ? ep.segAddr + t.off2 : ep.segView(t.off2, n)
    this.send(ep, t.srcTask, t.srcId, ep.trTagLo[p]!, ep.trTagHi[p]!, CAT_LONG, t.handler, t.nargs, t.args, n === 0 ? null : src, n, 0, t.off, 0, t.slot)
  }

  /** Sends a refused message back to its sender (header and arguments), marked returned with its status. */
  private sendReturn (t: Token): void {
    const len = this.writeHeader(t.kind | K_RETURNED, t.handler, t.nargs, t.fault, t.srcId, t.dstId, t.tagLo, t.tagHi,
      t.nbytes, t.slot, t.off, t.off2, t.args)
    if (t.srcTask === this.taskId) { this.deliverLocal(this.sendU8, this.sendDv, len, null, 0); return }
    if (!this.lapi.taskAlive(t.srcTask)) return
    this.lapi.amsendCode(t.srcTask, this.hMsg, this.sendU8, len, null, 0, 0)
  }

  /**
   * Writes the AM-2 header and the arguments into the send buffer (wire.ts); returns their bytes
   * (a multiple of 8: an odd argument count is followed by 4 zero bytes).
   */
  private writeHeader (kind: number, handler: number, nargs: number, status: number, dstId: number, srcId: number,
    tagLo: number, tagHi: number, nbytes: number, slot: number, off: number, off2: number, args: Int32Array): number {
    const u8 = this.sendU8
    const dv = this.sendDv
    u8[O_KIND] = kind
    u8[O_HANDLER] = handler
    u8[O_NARGS] = nargs
    u8[O_STATUS] = status
    dv.setUint16(O_DST, dstId, true)
    dv.setUint16(O_SRC, srcId, true)
    dv.setUint32(O_TAG_LO, tagLo, true)
    dv.setUint32(O_TAG_HI, tagHi, true)
    dv.setUint32(O_NBYTES, nbytes, true)
    dv.setInt32(O_SLOT, slot, true)
    dv.setUint32(O_OFF, off, true)
    dv.setUint32(O_OFF2, off2, true)
    for (let i = 0; i < nargs; i++) dv.setInt32(O_ARGS + 4 * i, args[i]!, true)
    const hb = headerBytes(nargs)
    if (hb > HDR_BYTES + 4 * nargs) dv.setUint32(HDR_BYTES + 4 * nargs, 0, true)
    return hb
  }

  private invoke (t: Token, ep: Endpoint): void {
    const cat = t.kind & CAT_MASK
    const n = t.nbytes
    this.invokeWith(t, ep, cat === CAT_SHORT || n === 0 ? Runtime.emptyBuf : cat === CAT_MEDIUM ? (t.heap ?? this.arenaView(t.bufAddr, n)) : ep.segView(t.off, n))
  }

  /** Runs the user handler of `t` (`buf`: the payload of a Medium or Long) with its arguments: one call per arity, no spreading. */
  private invokeWith (t: Token, ep: Endpoint, buf: Uint8Array): void {
    const fn = ep.handlers[t.handler] as (...a: unknown[]) => void
    const a = t.args
    const n = t.nbytes
    if ((t.kind & CAT_MASK) === CAT_SHORT) {
      switch (t.nargs) {
        case 0: fn(t); break
        case 1: fn(t, a[0]); break
        case 2: fn(t, a[0], a[1]); break
        case 3: fn(t, a[0], a[1], a[2]); break
        case 4: fn(t, a[0], a[1], a[2], a[3]); break
        case 5: fn(t, a[0], a[1], a[2], a[3], a[4]); break
        case 6: fn(t, a[0], a[1], a[2], a[3], a[4], a[5]); break
        case 7: fn(t, a[0], a[1], a[2], a[3], a[4], a[5], a[6]); break
        case 8: fn(t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]); break
        case 9: fn(t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8]); break
        case 10: fn(t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9]); break
        case 11: fn(t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10]); break
        case 12: fn(t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11]); break
        case 13: fn(t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12]); break
        case 14: fn(t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13]); break
        case 15: fn(t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14]); break
        case 16: fn(t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15]); break
      }
      return
    }
    switch (t.nargs) {
      case 0: fn(t, buf, n); break
      case 1: fn(t, buf, n, a[0]); break
      case 2: fn(t, buf, n, a[0], a[1]); break
      case 3: fn(t, buf, n, a[0], a[1], a[2]); break
      case 4: fn(t, buf, n, a[0], a[1], a[2], a[3]); break
      case 5: fn(t, buf, n, a[0], a[1], a[2], a[3], a[4]); break
      case 6: fn(t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5]); break
      case 7: fn(t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6]); break
      case 8: fn(t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]); break
      case 9: fn(t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8]); break
      case 10: fn(t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9]); break
      case 11: fn(t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10]); break
      case 12: fn(t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11]); break
      case 13: fn(t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12]); break
      case 14: fn(t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13]); break
      case 15: fn(t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14]); break
      case 16: fn(t, buf, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15]); break
    }
  }
}

/**
 * Payloads of at most this many bytes are copied by a loop of byte stores. Uint8Array.prototype.set
 * with a view of the range costs ~25 ns whatever the size up to a few hundred bytes; a byte loop
 * into a SharedArrayBuffer ~2 ns a byte (measured on Node 20: 8 B 18 ns, 16 B 35 ns).
 */
const LOOP_COPY = 8

/** Copies `n` bytes of `s8` from index `s` into `d8` at index `d` (ranges checked by the caller). */
function copyBytes (d8: Uint8Array, d: number, s8: Uint8Array, s: number, n: number): void {
  if (n <= LOOP_COPY) {
    for (let i = 0; i < n; i++) d8[d + i] = s8[s + i]!
    return
  }
  d8.set(views.get(s8, s, n), d)
}

function isNameOk (name: unknown): name is number {
  return typeof name === 'number' && Number.isInteger(name) && name >= 0 && name < 65536 * 65536
}

/**
 * The default handler 0: reports the returned message (status, opcode, peer, handler, tag,
 * arguments) and ends the task with an error, which ends the job with a non-zero exit.
 */
export function defaultHandler0 (status: number, opcode: number, token: Token): void {
  const rt = runtime
  const text = `AM-2 returned message: ${amFaultName(status) ?? String(status)} (${status}) for ${amOpcodeName(opcode) ?? String(opcode)} ` +
    `to endpoint ${token.srcTask * 65536 + token.srcId} (task ${token.srcTask}), handler ${token.handler}, ` +
    `tag 0x${token.messageTag.toString(16)}, args [${token.argsCopy.join(', ')}]`
  rt?.log.error({ status, opcode }, text)
  throw new Error(text)
}
