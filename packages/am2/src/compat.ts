/**
 * The C-style AM-2 names (docs/am2.md, "C ↔ TypeScript"): every AM_* function, constant and status
 * with AMUDP's values, plus the AMX_* extensions. Each function is a thin wrapper over the one
 * implementation (runtime.ts) and returns an AM code; out-parameters are `Ref<T>`. The request and
 * reply functions for 0..16 arguments, re-exported at the end, are generated into compat-*.gen.ts
 * by scripts/gen-am2-compat.mjs: they fill a scratch argument array, no allocation per call (an
 * argument that is no number, such as a BigInt, fails its int32 conversion: AM_ERR_BAD_ARG).
 */
import type { Addr, Ref } from '@amlapi/lapi'
import { AM_MAX_NUM_HANDLERS, AM_MAX_NUM_TRANSLATIONS, AM_MAX_SHORT, AM_NOTEMPTY, AmFault, AmOpcode, AmStatus } from './constants.js'
import { type Bundle, type Endpoint, Token, type am_handler } from './objects.js'
import { amInit, amTerminate, currentRuntime } from './runtime.js'
import { MAX_LONG, MAX_MEDIUM, MAX_SEG_LENGTH, T_REQUEST, T_RETURNED, tagOk, type AmSeg, type en_t } from './types.js'
import { currentSpmd, spmdExit, spmdStartup } from './spmd.js'

export { AM_SEQ, AM_PAR, AM_NOEVENTS, AM_NOTEMPTY, AM_NONE, AM_ALL } from './constants.js'
export type { AmSeg, en_t } from './types.js'
export type { short_handler, bulk_handler, error_handler, am_handler } from './objects.js'
export { ref } from '@amlapi/lapi'
export type { Ref, Addr } from '@amlapi/lapi'
/** A bundle (opaque). */
export type eb_t = Bundle
/** An endpoint (opaque). */
export type ep_t = Endpoint
/** A tag: a 64-bit unsigned bigint. */
export type tag_t = bigint
/** A handler index 0..255. */
export type handler_t = number
export type { Token }

export const AM_OK = AmStatus.OK
export const AM_ERR_NOT_INIT = AmStatus.ERR_NOT_INIT
export const AM_ERR_BAD_ARG = AmStatus.ERR_BAD_ARG
export const AM_ERR_RESOURCE = AmStatus.ERR_RESOURCE
export const AM_ERR_NOT_SENT = AmStatus.ERR_NOT_SENT
export const AM_ERR_IN_USE = AmStatus.ERR_IN_USE
export const EBADARGS = AmFault.EBADARGS
export const EBADENTRY = AmFault.EBADENTRY
export const EBADTAG = AmFault.EBADTAG
export const EBADHANDLER = AmFault.EBADHANDLER
export const EBADSEGOFF = AmFault.EBADSEGOFF
export const EBADLENGTH = AmFault.EBADLENGTH
export const EBADENDPOINT = AmFault.EBADENDPOINT
export const ECONGESTION = AmFault.ECONGESTION
export const EUNREACHABLE = AmFault.EUNREACHABLE
export const EREPLYREJECTED = AmFault.EREPLYREJECTED
export const AM_REQUEST_M = AmOpcode.AM_REQUEST_M
export const AM_REQUEST_IM = AmOpcode.AM_REQUEST_IM
export const AM_REQUEST_XFER_M = AmOpcode.AM_REQUEST_XFER_M
export const AM_REPLY_M = AmOpcode.AM_REPLY_M
export const AM_REPLY_IM = AmOpcode.AM_REPLY_IM
export const AM_REPLY_XFER_M = AmOpcode.AM_REPLY_XFER_M

const NOT_INIT = AmStatus.ERR_NOT_INIT
const BAD_ARG = AmStatus.ERR_BAD_ARG
const OK = AmStatus.OK
const runtime = currentRuntime

function isRef(r: unknown): r is Ref<unknown> {
  return r !== null && r !== undefined && typeof r === 'object'
}
/** A token whose handler runs now (as `Token.live` checks, without throwing). */
function liveToken(t: unknown): t is Token {
  return t instanceof Token && t.state >= T_REQUEST && t.state <= T_RETURNED
}

// ── initialization, bundles, endpoints ──
/** AM_Init: reference-counted; joins this task's LAPI context (opening one if the program has none). */
export function AM_Init(): number {
  return amInit()
}
/** AM_Terminate: the last call frees every bundle and endpoint. AM_ERR_NOT_INIT when not initialized. */
export function AM_Terminate(): number {
  return amTerminate()
}
/** AM_AllocateBundle: `type` AM_SEQ (AM_PAR: AM_ERR_RESOURCE). */
export function AM_AllocateBundle(type: number, eb: Ref<eb_t | null>): number {
  return runtime()?.allocateBundle(type, eb) ?? NOT_INIT
}
/** AM_FreeBundle: frees its endpoints, then the bundle. */
export function AM_FreeBundle(eb: eb_t): number {
  return runtime()?.freeBundle(eb) ?? NOT_INIT
}
/** AM_AllocateEndpoint: a new endpoint in `eb` (tag AM_NONE, no segment, the default handler 0); `name` gets its name. */
export function AM_AllocateEndpoint(eb: eb_t, ep: Ref<ep_t | null>, name: Ref<en_t>): number {
  return runtime()?.allocateEndpoint(eb, ep, name) ?? NOT_INIT
}
/** AM_FreeEndpoint. */
export function AM_FreeEndpoint(ep: ep_t): number {
  return runtime()?.freeEndpoint(ep) ?? NOT_INIT
}
/** AM_MoveEndpoint: AM_ERR_RESOURCE when `ep` is not in `from`. */
export function AM_MoveEndpoint(ep: ep_t, from: eb_t, to: eb_t): number {
  return runtime()?.moveEndpoint(ep, from, to) ?? NOT_INIT
}

// ── tags and segments ──
/** AM_SetTag: the endpoint's receive tag (AM_NONE refuses all, AM_ALL accepts all). */
export function AM_SetTag(ep: ep_t, tag: tag_t): number {
  return runtime()?.setTag(ep, tag) ?? NOT_INIT
}
/** AM_GetTag. */
export function AM_GetTag(ep: ep_t, tag: Ref<tag_t>): number {
  const r = runtime()
  if (r === null) return NOT_INIT
  if (!r.isEndpoint(ep) || !isRef(tag)) return BAD_ARG
  tag.value = ep.tag
  return OK
}
/** AM_SetSeg: `seg` is an Addr of the task's LAPI segment or a Uint8Array; Long messages land there. */
export function AM_SetSeg(ep: ep_t, seg: AmSeg | null, nbytes: number): number {
  return runtime()?.setSeg(ep, seg, nbytes) ?? NOT_INIT
}
/** AM_GetSeg. */
export function AM_GetSeg(ep: ep_t, seg: Ref<AmSeg | null>, nbytes: Ref<number>): number {
  const r = runtime()
  if (r === null) return NOT_INIT
  if (!r.isEndpoint(ep) || !isRef(seg) || !isRef(nbytes)) return BAD_ARG
  seg.value = ep.seg
  nbytes.value = ep.segLen
  return OK
}
/** AM_MaxSegLength: the largest segment length (offsets are 32-bit). */
export function AM_MaxSegLength(nbytes: Ref<number>): number {
  if (runtime() === null) return NOT_INIT
  if (!isRef(nbytes)) return BAD_ARG
  nbytes.value = MAX_SEG_LENGTH
  return OK
}

// ── translation table ──
/** AM_Map: translation `index` → endpoint `name`, stamping `tag` on messages to it. */
export function AM_Map(ep: ep_t, index: number, name: en_t, tag: tag_t): number {
  return runtime()?.map(ep, index, name, tag) ?? NOT_INIT
}
/** AM_MapAny: the first free index; `index` gets it. */
export function AM_MapAny(ep: ep_t, index: Ref<number>, name: en_t, tag: tag_t): number {
  return runtime()?.mapAny(ep, index, name, tag) ?? NOT_INIT
}
/** AM_UnMap. */
export function AM_UnMap(ep: ep_t, index: number): number {
  return runtime()?.unmap(ep, index) ?? NOT_INIT
}
/** AM_GetNumTranslations. */
export function AM_GetNumTranslations(ep: ep_t, n: Ref<number>): number {
  const r = runtime()
  if (r === null) return NOT_INIT
  if (!r.isEndpoint(ep) || !isRef(n)) return BAD_ARG
  n.value = ep.numTrans
  return OK
}
/** AM_SetNumTranslations: at least 256, at most AM_MaxNumTranslations; cannot cut mapped entries. */
export function AM_SetNumTranslations(ep: ep_t, n: number): number {
  return runtime()?.setNumTranslations(ep, n) ?? NOT_INIT
}
/** AM_MaxNumTranslations. */
export function AM_MaxNumTranslations(n: Ref<number>): number {
  if (runtime() === null) return NOT_INIT
  if (!isRef(n)) return BAD_ARG
  n.value = AM_MAX_NUM_TRANSLATIONS
  return OK
}
/** AM_GetTranslationInuse: AM_OK when index `i` is mapped, AM_ERR_RESOURCE when not (as AMUDP). */
export function AM_GetTranslationInuse(ep: ep_t, i: number): number {
  return runtime()?.translationInUse(ep, i) ?? NOT_INIT
}
/** AM_GetTranslationTag. AM_ERR_RESOURCE for an unmapped index. */
export function AM_GetTranslationTag(ep: ep_t, i: number, tag: Ref<tag_t>): number {
  const r = runtime()
  if (r === null) return NOT_INIT
  if (!isRef(tag)) return BAD_ARG
  const rc = r.translationInUse(ep, i)
  if (rc !== OK) return rc
  tag.value = ep.trTag[i]!
  return OK
}
/** AM_GetTranslationName. AM_ERR_RESOURCE for an unmapped index. */
export function AM_GetTranslationName(ep: ep_t, i: number, name: Ref<en_t>): number {
  const r = runtime()
  if (r === null) return NOT_INIT
  if (!isRef(name)) return BAD_ARG
  const rc = r.translationInUse(ep, i)
  if (rc !== OK) return rc
  name.value = ep.trName[i]!
  return OK
}
/** AMX_SetTranslationTag: changes the tag of a mapped index (allowed after AM_SetExpectedResources). */
export function AMX_SetTranslationTag(ep: ep_t, i: number, tag: tag_t): number {
  const r = runtime()
  if (r === null) return NOT_INIT
  const rc = r.translationInUse(ep, i)
  if (rc !== OK) return rc
  if (!tagOk(tag)) return BAD_ARG
  ep.setTranslationTag(i, tag)
  return OK
}
/** AM_SetExpectedResources: once, after mapping, before any request; `n_outstanding_requests` 1..1024 per peer. */
export function AM_SetExpectedResources(ep: ep_t, n_endpoints: number, n_outstanding_requests: number): number {
  return runtime()?.setExpectedResources(ep, n_endpoints, n_outstanding_requests) ?? NOT_INIT
}

// ── handlers ──
/** AM_SetHandler: `fn` at `index` 0..255 (0 is the returned-message handler). */
export function AM_SetHandler(ep: ep_t, index: handler_t, fn: am_handler): number {
  return runtime()?.setHandler(ep, index, fn) ?? NOT_INIT
}
/** AM_SetHandlerAny: the lowest free index 1..255 (AM_ERR_RESOURCE when full). */
export function AM_SetHandlerAny(ep: ep_t, index: Ref<handler_t>, fn: am_handler): number {
  return runtime()?.setHandlerAny(ep, index, fn) ?? NOT_INIT
}
/** AM_GetNumHandlers: always 256. */
export function AM_GetNumHandlers(ep: ep_t, n: Ref<number>): number {
  const r = runtime()
  if (r === null) return NOT_INIT
  if (!r.isEndpoint(ep) || !isRef(n)) return BAD_ARG
  n.value = AM_MAX_NUM_HANDLERS
  return OK
}
/** AM_SetNumHandlers: only 256 is accepted (else AM_ERR_RESOURCE). */
export function AM_SetNumHandlers(ep: ep_t, n: number): number {
  const r = runtime()
  if (r === null) return NOT_INIT
  if (!r.isEndpoint(ep)) return BAD_ARG
  return n === AM_MAX_NUM_HANDLERS ? OK : AmStatus.ERR_RESOURCE
}
/** AM_MaxNumHandlers: 256. */
export function AM_MaxNumHandlers(): number {
  return AM_MAX_NUM_HANDLERS
}

// ── events and polling ──
/** AM_SetEventMask: AM_NOEVENTS or AM_NOTEMPTY. */
export function AM_SetEventMask(eb: eb_t, mask: number): number {
  return runtime()?.setEventMask(eb, mask) ?? NOT_INIT
}
/** AM_GetEventMask. */
export function AM_GetEventMask(eb: eb_t, mask: Ref<number>): number {
  const r = runtime()
  if (r === null) return NOT_INIT
  if (!r.isBundle(eb) || !isRef(mask)) return BAD_ARG
  mask.value = eb.mask
  return OK
}
/**
 * AM_WaitSema: with the mask AM_NOTEMPTY, blocks (spinning for the configured budget, then
 * sleeping) until a message for the bundle arrived, then runs AM_Poll. AM_ERR_BAD_ARG with
 * AM_NOEVENTS (it would never return). The mask stays set.
 */
export function AM_WaitSema(eb: eb_t): number {
  const r = runtime()
  if (r === null) return NOT_INIT
  if (!r.isBundle(eb) || eb.mask !== AM_NOTEMPTY) return BAD_ARG
  r.waitSema(eb)
  return OK
}
/** AM_Poll: takes in what arrived and runs the handlers of ready messages. Never blocks. */
export function AM_Poll(eb: eb_t): number {
  const r = runtime()
  if (r === null) return NOT_INIT
  if (!r.isBundle(eb)) return BAD_ARG
  r.poll(eb)
  return OK
}

// ── token queries ──
/** AM_GetSourceEndpoint: the sender's name (a returned message: the refusing endpoint's). */
export function AM_GetSourceEndpoint(token: Token, name: Ref<en_t>): number {
  if (runtime() === null) return NOT_INIT
  if (!liveToken(token) || !isRef(name)) return BAD_ARG
  name.value = token.sourceName
  return OK
}
/** AM_GetDestEndpoint: the endpoint that received the message. */
export function AM_GetDestEndpoint(token: Token, ep: Ref<ep_t | null>): number {
  if (runtime() === null) return NOT_INIT
  if (!liveToken(token) || !isRef(ep)) return BAD_ARG
  ep.value = token.destEndpoint
  return OK
}
/** AM_GetMsgTag: the tag the message carried. */
export function AM_GetMsgTag(token: Token, tag: Ref<tag_t>): number {
  if (runtime() === null) return NOT_INIT
  if (!liveToken(token) || !isRef(tag)) return BAD_ARG
  tag.value = token.messageTag
  return OK
}
/** AMX_GetSourceId: the sender's index in the receiver's translation table (-1 when not mapped). */
export function AMX_GetSourceId(token: Token, id: Ref<number>): number {
  if (runtime() === null) return NOT_INIT
  if (!liveToken(token) || !isRef(id)) return BAD_ARG
  id.value = token.sourceId
  return OK
}
/** AMX_GetTokenInfo: handler index, category (0 Short, 1 Medium, 2 Long) and whether it is a request. */
export function AMX_GetTokenInfo(token: Token, handler: Ref<number>, category: Ref<number>, isReq: Ref<boolean>): number {
  if (runtime() === null) return NOT_INIT
  if (!liveToken(token) || !isRef(handler) || !isRef(category) || !isRef(isReq)) return BAD_ARG
  handler.value = token.handlerIndex
  category.value = token.category
  isReq.value = token.isRequest
  return OK
}

// ── limits ──
/** AM_MaxShort: 16 arguments. */
export function AM_MaxShort(): number {
  return AM_MAX_SHORT
}
/** AM_MaxMedium: bytes of the largest Medium payload. */
export function AM_MaxMedium(): number {
  return MAX_MEDIUM
}
/** AM_MaxLong: bytes of the largest Long payload. */
export function AM_MaxLong(): number {
  return MAX_LONG
}

// ── SPMD job helpers ──
/**
 * AMX_SPMDStartup: AM_Init, one bundle and endpoint for this task, every task mapped at index =
 * its id with its unique tag, `depth` requests in flight per peer (default AMLAPI_NETWORKDEPTH or
 * 128), and a barrier. Run the program with `lapirun -n N`.
 */
export function AMX_SPMDStartup(eb: Ref<eb_t | null>, ep: Ref<ep_t | null>, depth?: number): number {
  return spmdStartup(eb, ep, depth)
}
/** AMX_SPMDNumProcs: tasks in the job (-1 before startup). */
export function AMX_SPMDNumProcs(): number {
  return currentSpmd()?.procs ?? -1
}
/** AMX_SPMDMyProc: this task's id (-1 before startup). */
export function AMX_SPMDMyProc(): number {
  return currentSpmd()?.rank ?? -1
}
/** AMX_SPMDBarrier: a barrier of all tasks that keeps running handlers while it waits. */
export function AMX_SPMDBarrier(): number {
  const s = currentSpmd()
  if (s === null) return NOT_INIT
  s.barrier()
  return OK
}
/** AMX_SPMDAllGather: `dst` (at least len × procs bytes) gets every task's `len` bytes of `src`, in rank order. */
export function AMX_SPMDAllGather(src: Uint8Array, dst: Uint8Array, len: number): number {
  const s = currentSpmd()
  if (s === null) return NOT_INIT
  if (!(src instanceof Uint8Array) || !(dst instanceof Uint8Array) || !Number.isInteger(len) || len < 0 || len > src.length || dst.length < len * s.procs)
    return BAD_ARG
  s.allGather(src, dst, len)
  return OK
}
/** AMX_SPMDExit: ends this task with `code`; a non-zero code ends the whole job with a failure. */
export function AMX_SPMDExit(code: number): never {
  return spmdExit(code)
}
/** AMX_Malloc: `nbytes` zeroed bytes of the task's LAPI segment (usable as a segment or an Addr source). */
export function AMX_Malloc(nbytes: number, addr: Ref<Addr>): number {
  const r = runtime()
  if (r === null) return NOT_INIT
  if (!isRef(addr) || !Number.isInteger(nbytes) || nbytes <= 0) return BAD_ARG
  try {
    addr.value = r.lapi.malloc(nbytes)
    return OK
  } catch {
    return AmStatus.ERR_RESOURCE
  }
}
/** AMX_Free: gives back what AMX_Malloc returned. */
export function AMX_Free(addr: Addr): number {
  const r = runtime()
  if (r === null) return NOT_INIT
  try {
    r.lapi.free(addr)
    return OK
  } catch {
    return BAD_ARG
  }
}
/** AMX_View: a live view of `nbytes` of the task's LAPI segment at `addr`. */
export function AMX_View(addr: Addr, nbytes: number): Uint8Array {
  const r = runtime()
  if (r === null) throw new RangeError('AMX_View: AM_Init first')
  return r.lapi.view(addr, nbytes)
}

// ── requests and replies, M = 0..16: written by scripts/gen-am2-compat.mjs (npm run gen:am2) ──
export * from './compat-request.gen.js'
export * from './compat-xfer.gen.js'
export * from './compat-reply.gen.js'
export * from './compat-long.gen.js'
