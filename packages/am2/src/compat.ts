/**
 * The C-style AM-2 names (docs/am2.md, "C ↔ TypeScript"): every AM_* function, constant and status
 * with AMUDP's values, plus the AMX_* extensions. Each function is a thin wrapper over the one
 * implementation (runtime.ts) and returns an AM code; out-parameters are `Ref<T>`. The request and
 * reply functions for 0..16 arguments fill a scratch argument array: no allocation per call (an
 * argument that is no number, such as a BigInt, fails its int32 conversion: AM_ERR_BAD_ARG).
 */
import type { Addr, Ref } from '@amlapi/lapi'
import {
  AM_MAX_NUM_HANDLERS, AM_MAX_NUM_TRANSLATIONS, AM_MAX_SHORT, AM_NOTEMPTY, AmFault, AmOpcode, AmStatus,
} from './constants.js'
import { Bundle, Endpoint, Token, type am_handler } from './objects.js'
import { amInit, amTerminate, currentRuntime } from './runtime.js'
import { MAX_LONG, MAX_MEDIUM, MAX_SEG_LENGTH, T_REQUEST, T_RETURNED, tagOk, type AmSeg, type en_t } from './types.js'
import { currentSpmd, spmdExit, spmdStartup } from './spmd.js'
import { CAT_LONG, CAT_MEDIUM, CAT_SHORT } from './wire.js'

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

function isRef (r: unknown): r is Ref<unknown> { return r !== null && r !== undefined && typeof r === 'object' }
/** A token whose handler runs now (as `Token.live` checks, without throwing). */
function liveToken (t: unknown): t is Token {
  return t instanceof Token && t.state >= T_REQUEST && t.state <= T_RETURNED
}

// ── initialization, bundles, endpoints ──
/** AM_Init: reference-counted; joins this task's LAPI context (opening one if the program has none). */
export function AM_Init (): number { return amInit() }
/** AM_Terminate: the last call frees every bundle and endpoint. AM_ERR_NOT_INIT when not initialized. */
export function AM_Terminate (): number { return amTerminate() }
/** AM_AllocateBundle: `type` AM_SEQ (AM_PAR: AM_ERR_RESOURCE). */
export function AM_AllocateBundle (type: number, eb: Ref<eb_t | null>): number { return runtime()?.allocateBundle(type, eb) ?? NOT_INIT }
/** AM_FreeBundle: frees its endpoints, then the bundle. */
export function AM_FreeBundle (eb: eb_t): number { return runtime()?.freeBundle(eb) ?? NOT_INIT }
/** AM_AllocateEndpoint: a new endpoint in `eb` (tag AM_NONE, no segment, the default handler 0); `name` gets its name. */
export function AM_AllocateEndpoint (eb: eb_t, ep: Ref<ep_t | null>, name: Ref<en_t>): number { return runtime()?.allocateEndpoint(eb, ep, name) ?? NOT_INIT }
/** AM_FreeEndpoint. */
export function AM_FreeEndpoint (ep: ep_t): number { return runtime()?.freeEndpoint(ep) ?? NOT_INIT }
/** AM_MoveEndpoint: AM_ERR_RESOURCE when `ep` is not in `from`. */
export function AM_MoveEndpoint (ep: ep_t, from: eb_t, to: eb_t): number { return runtime()?.moveEndpoint(ep, from, to) ?? NOT_INIT }

// ── tags and segments ──
/** AM_SetTag: the endpoint's receive tag (AM_NONE refuses all, AM_ALL accepts all). */
export function AM_SetTag (ep: ep_t, tag: tag_t): number { return runtime()?.setTag(ep, tag) ?? NOT_INIT }
/** AM_GetTag. */
export function AM_GetTag (ep: ep_t, tag: Ref<tag_t>): number {
  const r = runtime(); if (r === null) return NOT_INIT
  if (!r.isEndpoint(ep) || !isRef(tag)) return BAD_ARG
  tag.value = ep.tag; return OK
}
/** AM_SetSeg: `seg` is an Addr of the task's LAPI segment or a Uint8Array; Long messages land there. */
export function AM_SetSeg (ep: ep_t, seg: AmSeg | null, nbytes: number): number { return runtime()?.setSeg(ep, seg, nbytes) ?? NOT_INIT }
/** AM_GetSeg. */
export function AM_GetSeg (ep: ep_t, seg: Ref<AmSeg | null>, nbytes: Ref<number>): number {
  const r = runtime(); if (r === null) return NOT_INIT
  if (!r.isEndpoint(ep) || !isRef(seg) || !isRef(nbytes)) return BAD_ARG
  seg.value = ep.seg; nbytes.value = ep.segLen; return OK
}
/** AM_MaxSegLength: the largest segment length (offsets are 32-bit). */
export function AM_MaxSegLength (nbytes: Ref<number>): number {
  if (runtime() === null) return NOT_INIT
  if (!isRef(nbytes)) return BAD_ARG
  nbytes.value = MAX_SEG_LENGTH; return OK
}

// ── translation table ──
/** AM_Map: translation `index` → endpoint `name`, stamping `tag` on messages to it. */
export function AM_Map (ep: ep_t, index: number, name: en_t, tag: tag_t): number { return runtime()?.map(ep, index, name, tag) ?? NOT_INIT }
/** AM_MapAny: the first free index; `index` gets it. */
export function AM_MapAny (ep: ep_t, index: Ref<number>, name: en_t, tag: tag_t): number { return runtime()?.mapAny(ep, index, name, tag) ?? NOT_INIT }
/** AM_UnMap. */
export function AM_UnMap (ep: ep_t, index: number): number { return runtime()?.unmap(ep, index) ?? NOT_INIT }
/** AM_GetNumTranslations. */
export function AM_GetNumTranslations (ep: ep_t, n: Ref<number>): number {
  const r = runtime(); if (r === null) return NOT_INIT
  if (!r.isEndpoint(ep) || !isRef(n)) return BAD_ARG
  n.value = ep.numTrans; return OK
}
/** AM_SetNumTranslations: at least 256, at most AM_MaxNumTranslations; cannot cut mapped entries. */
export function AM_SetNumTranslations (ep: ep_t, n: number): number { return runtime()?.setNumTranslations(ep, n) ?? NOT_INIT }
/** AM_MaxNumTranslations. */
export function AM_MaxNumTranslations (n: Ref<number>): number {
  if (runtime() === null) return NOT_INIT
  if (!isRef(n)) return BAD_ARG
  n.value = AM_MAX_NUM_TRANSLATIONS; return OK
}
/** AM_GetTranslationInuse: AM_OK when index `i` is mapped, AM_ERR_RESOURCE when not (as AMUDP). */
export function AM_GetTranslationInuse (ep: ep_t, i: number): number { return runtime()?.translationInUse(ep, i) ?? NOT_INIT }
/** AM_GetTranslationTag. AM_ERR_RESOURCE for an unmapped index. */
export function AM_GetTranslationTag (ep: ep_t, i: number, tag: Ref<tag_t>): number {
  const r = runtime(); if (r === null) return NOT_INIT
  if (!isRef(tag)) return BAD_ARG
  const rc = r.translationInUse(ep, i); if (rc !== OK) return rc
  tag.value = ep.trTag[i]!; return OK
}
/** AM_GetTranslationName. AM_ERR_RESOURCE for an unmapped index. */
export function AM_GetTranslationName (ep: ep_t, i: number, name: Ref<en_t>): number {
  const r = runtime(); if (r === null) return NOT_INIT
  if (!isRef(name)) return BAD_ARG
  const rc = r.translationInUse(ep, i); if (rc !== OK) return rc
  name.value = ep.trName[i]!; return OK
}
/** AMX_SetTranslationTag: changes the tag of a mapped index (allowed after AM_SetExpectedResources). */
export function AMX_SetTranslationTag (ep: ep_t, i: number, tag: tag_t): number {
  const r = runtime(); if (r === null) return NOT_INIT
  const rc = r.translationInUse(ep, i); if (rc !== OK) return rc
  if (!tagOk(tag)) return BAD_ARG
  ep.setTranslationTag(i, tag); return OK
}
/** AM_SetExpectedResources: once, after mapping, before any request; `n_outstanding_requests` 1..1024 per peer. */
export function AM_SetExpectedResources (ep: ep_t, n_endpoints: number, n_outstanding_requests: number): number {
  return runtime()?.setExpectedResources(ep, n_endpoints, n_outstanding_requests) ?? NOT_INIT
}

// ── handlers ──
/** AM_SetHandler: `fn` at `index` 0..255 (0 is the returned-message handler). */
export function AM_SetHandler (ep: ep_t, index: handler_t, fn: am_handler): number { return runtime()?.setHandler(ep, index, fn) ?? NOT_INIT }
/** AM_SetHandlerAny: the lowest free index 1..255 (AM_ERR_RESOURCE when full). */
export function AM_SetHandlerAny (ep: ep_t, index: Ref<handler_t>, fn: am_handler): number { return runtime()?.setHandlerAny(ep, index, fn) ?? NOT_INIT }
/** AM_GetNumHandlers: always 256. */
export function AM_GetNumHandlers (ep: ep_t, n: Ref<number>): number {
  const r = runtime(); if (r === null) return NOT_INIT
  if (!r.isEndpoint(ep) || !isRef(n)) return BAD_ARG
  n.value = AM_MAX_NUM_HANDLERS; return OK
}
/** AM_SetNumHandlers: only 256 is accepted (else AM_ERR_RESOURCE). */
export function AM_SetNumHandlers (ep: ep_t, n: number): number {
  const r = runtime(); if (r === null) return NOT_INIT
  if (!r.isEndpoint(ep)) return BAD_ARG
  return n === AM_MAX_NUM_HANDLERS ? OK : AmStatus.ERR_RESOURCE
}
/** AM_MaxNumHandlers: 256. */
export function AM_MaxNumHandlers (): number { return AM_MAX_NUM_HANDLERS }

// ── events and polling ──
/** AM_SetEventMask: AM_NOEVENTS or AM_NOTEMPTY. */
export function AM_SetEventMask (eb: eb_t, mask: number): number { return runtime()?.setEventMask(eb, mask) ?? NOT_INIT }
/** AM_GetEventMask. */
export function AM_GetEventMask (eb: eb_t, mask: Ref<number>): number {
  const r = runtime(); if (r === null) return NOT_INIT
  if (!r.isBundle(eb) || !isRef(mask)) return BAD_ARG
  mask.value = eb.mask; return OK
}
/**
 * AM_WaitSema: with the mask AM_NOTEMPTY, blocks (spinning for the configured budget, then
 * sleeping) until a message for the bundle arrived, then runs AM_Poll. AM_ERR_BAD_ARG with
 * AM_NOEVENTS (it would never return). The mask stays set.
 */
export function AM_WaitSema (eb: eb_t): number {
  const r = runtime(); if (r === null) return NOT_INIT
  if (!r.isBundle(eb) || eb.mask !== AM_NOTEMPTY) return BAD_ARG
  r.waitSema(eb); return OK
}
/** AM_Poll: takes in what arrived and runs the handlers of ready messages. Never blocks. */
export function AM_Poll (eb: eb_t): number {
  const r = runtime(); if (r === null) return NOT_INIT
  if (!r.isBundle(eb)) return BAD_ARG
  r.poll(eb); return OK
}

// ── token queries ──
/** AM_GetSourceEndpoint: the sender's name (a returned message: the refusing endpoint's). */
export function AM_GetSourceEndpoint (token: Token, name: Ref<en_t>): number {
  if (runtime() === null) return NOT_INIT
  if (!liveToken(token) || !isRef(name)) return BAD_ARG
  name.value = token.sourceName; return OK
}
/** AM_GetDestEndpoint: the endpoint that received the message. */
export function AM_GetDestEndpoint (token: Token, ep: Ref<ep_t | null>): number {
  if (runtime() === null) return NOT_INIT
  if (!liveToken(token) || !isRef(ep)) return BAD_ARG
  ep.value = token.destEndpoint; return OK
}
/** AM_GetMsgTag: the tag the message carried. */
export function AM_GetMsgTag (token: Token, tag: Ref<tag_t>): number {
  if (runtime() === null) return NOT_INIT
  if (!liveToken(token) || !isRef(tag)) return BAD_ARG
  tag.value = token.messageTag; return OK
}
/** AMX_GetSourceId: the sender's index in the receiver's translation table (-1 when not mapped). */
export function AMX_GetSourceId (token: Token, id: Ref<number>): number {
  if (runtime() === null) return NOT_INIT
  if (!liveToken(token) || !isRef(id)) return BAD_ARG
  id.value = token.sourceId; return OK
}
/** AMX_GetTokenInfo: handler index, category (0 Short, 1 Medium, 2 Long) and whether it is a request. */
export function AMX_GetTokenInfo (token: Token, handler: Ref<number>, category: Ref<number>, isReq: Ref<boolean>): number {
  if (runtime() === null) return NOT_INIT
  if (!liveToken(token) || !isRef(handler) || !isRef(category) || !isRef(isReq)) return BAD_ARG
  handler.value = token.handlerIndex; category.value = token.category; isReq.value = token.isRequest; return OK
}

// ── limits ──
/** AM_MaxShort: 16 arguments. */
export function AM_MaxShort (): number { return AM_MAX_SHORT }
/** AM_MaxMedium: bytes of the largest Medium payload. */
export function AM_MaxMedium (): number { return MAX_MEDIUM }
/** AM_MaxLong: bytes of the largest Long payload. */
export function AM_MaxLong (): number { return MAX_LONG }

// ── SPMD job helpers ──
/**
 * AMX_SPMDStartup: AM_Init, one bundle and endpoint for this task, every task mapped at index =
 * its id with its unique tag, `depth` requests in flight per peer (default AMLAPI_NETWORKDEPTH or
 * 128), and a barrier. Run the program with `lapirun -n N`.
 */
export function AMX_SPMDStartup (eb: Ref<eb_t | null>, ep: Ref<ep_t | null>, depth?: number): number { return spmdStartup(eb, ep, depth) }
/** AMX_SPMDNumProcs: tasks in the job (-1 before startup). */
export function AMX_SPMDNumProcs (): number { return currentSpmd()?.procs ?? -1 }
/** AMX_SPMDMyProc: this task's id (-1 before startup). */
export function AMX_SPMDMyProc (): number { return currentSpmd()?.rank ?? -1 }
/** AMX_SPMDBarrier: a barrier of all tasks that keeps running handlers while it waits. */
export function AMX_SPMDBarrier (): number {
  const s = currentSpmd(); if (s === null) return NOT_INIT
  s.barrier(); return OK
}
/** AMX_SPMDAllGather: `dst` (at least len × procs bytes) gets every task's `len` bytes of `src`, in rank order. */
export function AMX_SPMDAllGather (src: Uint8Array, dst: Uint8Array, len: number): number {
  const s = currentSpmd(); if (s === null) return NOT_INIT
  if (!(src instanceof Uint8Array) || !(dst instanceof Uint8Array) || !Number.isInteger(len) || len < 0 || len > src.length || dst.length < len * s.procs) return BAD_ARG
  s.allGather(src, dst, len); return OK
}
/** AMX_SPMDExit: ends this task with `code`; a non-zero code ends the whole job with a failure. */
export function AMX_SPMDExit (code: number): never { return spmdExit(code) }
/** AMX_Malloc: `nbytes` zeroed bytes of the task's LAPI segment (usable as a segment or an Addr source). */
export function AMX_Malloc (nbytes: number, addr: Ref<Addr>): number {
  const r = runtime(); if (r === null) return NOT_INIT
  if (!isRef(addr) || !Number.isInteger(nbytes) || nbytes <= 0) return BAD_ARG
  try { addr.value = r.lapi.malloc(nbytes); return OK } catch { return AmStatus.ERR_RESOURCE }
}
/** AMX_Free: gives back what AMX_Malloc returned. */
export function AMX_Free (addr: Addr): number {
  const r = runtime(); if (r === null) return NOT_INIT
  try { r.lapi.free(addr); return OK } catch { return BAD_ARG }
}
/** AMX_View: a live view of `nbytes` of the task's LAPI segment at `addr`. */
export function AMX_View (addr: Addr, nbytes: number): Uint8Array {
  const r = runtime()
  if (r === null) throw new RangeError('AMX_View: AM_Init first')
  return r.lapi.view(addr, nbytes)
}

// ── requests and replies, M = 0..16 ──
/** AM_Request0: a Short request with 0 argument(s) to translation `dest_index`. */
export function AM_Request0 (ep: ep_t, dest_index: number, handler: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; return r.request(ep, dest_index, CAT_SHORT, handler, 0, s, null, 0, 0, 0, false) }
/** AM_RequestI0: a Medium request; the first `nbytes` of `src` are copied before it returns. */
export function AM_RequestI0 (ep: ep_t, dest_index: number, handler: number, src: AmSeg, nbytes: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; return r.request(ep, dest_index, CAT_MEDIUM, handler, 0, s, src, nbytes, 0, 0, false) }
/** AM_RequestXfer0: a Long request into the peer's segment at `dest_offset`. */
export function AM_RequestXfer0 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; return r.request(ep, dest_index, CAT_LONG, handler, 0, s, src, nbytes, dest_offset, 0, false) }
/** AM_RequestXferAsync0: AM_RequestXfer0, or AM_ERR_IN_USE when it would have to wait for flow control. */
export function AM_RequestXferAsync0 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; return r.request(ep, dest_index, CAT_LONG, handler, 0, s, src, nbytes, dest_offset, 0, true) }
/** AM_Reply0: a Short reply from a request handler (at most once). */
export function AM_Reply0 (token: Token, handler: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; return r.reply(token, CAT_SHORT, handler, 0, s, null, 0, 0) }
/** AM_ReplyI0: a Medium reply; `src` is copied before it returns. */
export function AM_ReplyI0 (token: Token, handler: number, src: AmSeg, nbytes: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; return r.reply(token, CAT_MEDIUM, handler, 0, s, src, nbytes, 0) }
/** AM_ReplyXfer0: a Long reply into the requester's segment at `dest_offset`. */
export function AM_ReplyXfer0 (token: Token, dest_offset: number, handler: number, src: AmSeg, nbytes: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; return r.reply(token, CAT_LONG, handler, 0, s, src, nbytes, dest_offset) }
/** AM_GetXfer0: `nbytes` of the peer's segment at `source_offset` into this segment at `dest_offset`; then `handler` runs here as a Long reply handler. */
export function AM_GetXfer0 (ep: ep_t, dest_index: number, source_offset: number, handler: number, dest_offset: number, nbytes: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; return r.request(ep, dest_index, CAT_LONG, handler, 0, s, null, nbytes, dest_offset, source_offset, false, true) }
/** AM_Request1: a Short request with 1 argument(s) to translation `dest_index`. */
export function AM_Request1 (ep: ep_t, dest_index: number, handler: number, a0: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_SHORT, handler, 1, s, null, 0, 0, 0, false) }
/** AM_RequestI1: a Medium request; the first `nbytes` of `src` are copied before it returns. */
export function AM_RequestI1 (ep: ep_t, dest_index: number, handler: number, src: AmSeg, nbytes: number, a0: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_MEDIUM, handler, 1, s, src, nbytes, 0, 0, false) }
/** AM_RequestXfer1: a Long request into the peer's segment at `dest_offset`. */
export function AM_RequestXfer1 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 1, s, src, nbytes, dest_offset, 0, false) }
/** AM_RequestXferAsync1: AM_RequestXfer1, or AM_ERR_IN_USE when it would have to wait for flow control. */
export function AM_RequestXferAsync1 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 1, s, src, nbytes, dest_offset, 0, true) }
/** AM_Reply1: a Short reply from a request handler (at most once). */
export function AM_Reply1 (token: Token, handler: number, a0: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_SHORT, handler, 1, s, null, 0, 0) }
/** AM_ReplyI1: a Medium reply; `src` is copied before it returns. */
export function AM_ReplyI1 (token: Token, handler: number, src: AmSeg, nbytes: number, a0: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_MEDIUM, handler, 1, s, src, nbytes, 0) }
/** AM_ReplyXfer1: a Long reply into the requester's segment at `dest_offset`. */
export function AM_ReplyXfer1 (token: Token, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_LONG, handler, 1, s, src, nbytes, dest_offset) }
/** AM_GetXfer1: `nbytes` of the peer's segment at `source_offset` into this segment at `dest_offset`; then `handler` runs here as a Long reply handler. */
export function AM_GetXfer1 (ep: ep_t, dest_index: number, source_offset: number, handler: number, dest_offset: number, nbytes: number, a0: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 1, s, null, nbytes, dest_offset, source_offset, false, true) }
/** AM_Request2: a Short request with 2 argument(s) to translation `dest_index`. */
export function AM_Request2 (ep: ep_t, dest_index: number, handler: number, a0: number, a1: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_SHORT, handler, 2, s, null, 0, 0, 0, false) }
/** AM_RequestI2: a Medium request; the first `nbytes` of `src` are copied before it returns. */
export function AM_RequestI2 (ep: ep_t, dest_index: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_MEDIUM, handler, 2, s, src, nbytes, 0, 0, false) }
/** AM_RequestXfer2: a Long request into the peer's segment at `dest_offset`. */
export function AM_RequestXfer2 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 2, s, src, nbytes, dest_offset, 0, false) }
/** AM_RequestXferAsync2: AM_RequestXfer2, or AM_ERR_IN_USE when it would have to wait for flow control. */
export function AM_RequestXferAsync2 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 2, s, src, nbytes, dest_offset, 0, true) }
/** AM_Reply2: a Short reply from a request handler (at most once). */
export function AM_Reply2 (token: Token, handler: number, a0: number, a1: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_SHORT, handler, 2, s, null, 0, 0) }
/** AM_ReplyI2: a Medium reply; `src` is copied before it returns. */
export function AM_ReplyI2 (token: Token, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_MEDIUM, handler, 2, s, src, nbytes, 0) }
/** AM_ReplyXfer2: a Long reply into the requester's segment at `dest_offset`. */
export function AM_ReplyXfer2 (token: Token, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_LONG, handler, 2, s, src, nbytes, dest_offset) }
/** AM_GetXfer2: `nbytes` of the peer's segment at `source_offset` into this segment at `dest_offset`; then `handler` runs here as a Long reply handler. */
export function AM_GetXfer2 (ep: ep_t, dest_index: number, source_offset: number, handler: number, dest_offset: number, nbytes: number, a0: number, a1: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 2, s, null, nbytes, dest_offset, source_offset, false, true) }
/** AM_Request3: a Short request with 3 argument(s) to translation `dest_index`. */
export function AM_Request3 (ep: ep_t, dest_index: number, handler: number, a0: number, a1: number, a2: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_SHORT, handler, 3, s, null, 0, 0, 0, false) }
/** AM_RequestI3: a Medium request; the first `nbytes` of `src` are copied before it returns. */
export function AM_RequestI3 (ep: ep_t, dest_index: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_MEDIUM, handler, 3, s, src, nbytes, 0, 0, false) }
/** AM_RequestXfer3: a Long request into the peer's segment at `dest_offset`. */
export function AM_RequestXfer3 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 3, s, src, nbytes, dest_offset, 0, false) }
/** AM_RequestXferAsync3: AM_RequestXfer3, or AM_ERR_IN_USE when it would have to wait for flow control. */
export function AM_RequestXferAsync3 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 3, s, src, nbytes, dest_offset, 0, true) }
/** AM_Reply3: a Short reply from a request handler (at most once). */
export function AM_Reply3 (token: Token, handler: number, a0: number, a1: number, a2: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_SHORT, handler, 3, s, null, 0, 0) }
/** AM_ReplyI3: a Medium reply; `src` is copied before it returns. */
export function AM_ReplyI3 (token: Token, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_MEDIUM, handler, 3, s, src, nbytes, 0) }
/** AM_ReplyXfer3: a Long reply into the requester's segment at `dest_offset`. */
export function AM_ReplyXfer3 (token: Token, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_LONG, handler, 3, s, src, nbytes, dest_offset) }
/** AM_GetXfer3: `nbytes` of the peer's segment at `source_offset` into this segment at `dest_offset`; then `handler` runs here as a Long reply handler. */
export function AM_GetXfer3 (ep: ep_t, dest_index: number, source_offset: number, handler: number, dest_offset: number, nbytes: number, a0: number, a1: number, a2: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 3, s, null, nbytes, dest_offset, source_offset, false, true) }
/** AM_Request4: a Short request with 4 argument(s) to translation `dest_index`. */
export function AM_Request4 (ep: ep_t, dest_index: number, handler: number, a0: number, a1: number, a2: number, a3: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_SHORT, handler, 4, s, null, 0, 0, 0, false) }
/** AM_RequestI4: a Medium request; the first `nbytes` of `src` are copied before it returns. */
export function AM_RequestI4 (ep: ep_t, dest_index: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_MEDIUM, handler, 4, s, src, nbytes, 0, 0, false) }
/** AM_RequestXfer4: a Long request into the peer's segment at `dest_offset`. */
export function AM_RequestXfer4 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 4, s, src, nbytes, dest_offset, 0, false) }
/** AM_RequestXferAsync4: AM_RequestXfer4, or AM_ERR_IN_USE when it would have to wait for flow control. */
export function AM_RequestXferAsync4 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 4, s, src, nbytes, dest_offset, 0, true) }
/** AM_Reply4: a Short reply from a request handler (at most once). */
export function AM_Reply4 (token: Token, handler: number, a0: number, a1: number, a2: number, a3: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_SHORT, handler, 4, s, null, 0, 0) }
/** AM_ReplyI4: a Medium reply; `src` is copied before it returns. */
export function AM_ReplyI4 (token: Token, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_MEDIUM, handler, 4, s, src, nbytes, 0) }
/** AM_ReplyXfer4: a Long reply into the requester's segment at `dest_offset`. */
export function AM_ReplyXfer4 (token: Token, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_LONG, handler, 4, s, src, nbytes, dest_offset) }
/** AM_GetXfer4: `nbytes` of the peer's segment at `source_offset` into this segment at `dest_offset`; then `handler` runs here as a Long reply handler. */
export function AM_GetXfer4 (ep: ep_t, dest_index: number, source_offset: number, handler: number, dest_offset: number, nbytes: number, a0: number, a1: number, a2: number, a3: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 4, s, null, nbytes, dest_offset, source_offset, false, true) }
/** AM_Request5: a Short request with 5 argument(s) to translation `dest_index`. */
export function AM_Request5 (ep: ep_t, dest_index: number, handler: number, a0: number, a1: number, a2: number, a3: number, a4: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_SHORT, handler, 5, s, null, 0, 0, 0, false) }
/** AM_RequestI5: a Medium request; the first `nbytes` of `src` are copied before it returns. */
export function AM_RequestI5 (ep: ep_t, dest_index: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_MEDIUM, handler, 5, s, src, nbytes, 0, 0, false) }
/** AM_RequestXfer5: a Long request into the peer's segment at `dest_offset`. */
export function AM_RequestXfer5 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 5, s, src, nbytes, dest_offset, 0, false) }
/** AM_RequestXferAsync5: AM_RequestXfer5, or AM_ERR_IN_USE when it would have to wait for flow control. */
export function AM_RequestXferAsync5 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 5, s, src, nbytes, dest_offset, 0, true) }
/** AM_Reply5: a Short reply from a request handler (at most once). */
export function AM_Reply5 (token: Token, handler: number, a0: number, a1: number, a2: number, a3: number, a4: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_SHORT, handler, 5, s, null, 0, 0) }
/** AM_ReplyI5: a Medium reply; `src` is copied before it returns. */
export function AM_ReplyI5 (token: Token, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_MEDIUM, handler, 5, s, src, nbytes, 0) }
/** AM_ReplyXfer5: a Long reply into the requester's segment at `dest_offset`. */
export function AM_ReplyXfer5 (token: Token, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_LONG, handler, 5, s, src, nbytes, dest_offset) }
/** AM_GetXfer5: `nbytes` of the peer's segment at `source_offset` into this segment at `dest_offset`; then `handler` runs here as a Long reply handler. */
export function AM_GetXfer5 (ep: ep_t, dest_index: number, source_offset: number, handler: number, dest_offset: number, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 5, s, null, nbytes, dest_offset, source_offset, false, true) }
/** AM_Request6: a Short request with 6 argument(s) to translation `dest_index`. */
export function AM_Request6 (ep: ep_t, dest_index: number, handler: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_SHORT, handler, 6, s, null, 0, 0, 0, false) }
/** AM_RequestI6: a Medium request; the first `nbytes` of `src` are copied before it returns. */
export function AM_RequestI6 (ep: ep_t, dest_index: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_MEDIUM, handler, 6, s, src, nbytes, 0, 0, false) }
/** AM_RequestXfer6: a Long request into the peer's segment at `dest_offset`. */
export function AM_RequestXfer6 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 6, s, src, nbytes, dest_offset, 0, false) }
/** AM_RequestXferAsync6: AM_RequestXfer6, or AM_ERR_IN_USE when it would have to wait for flow control. */
export function AM_RequestXferAsync6 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 6, s, src, nbytes, dest_offset, 0, true) }
/** AM_Reply6: a Short reply from a request handler (at most once). */
export function AM_Reply6 (token: Token, handler: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_SHORT, handler, 6, s, null, 0, 0) }
/** AM_ReplyI6: a Medium reply; `src` is copied before it returns. */
export function AM_ReplyI6 (token: Token, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_MEDIUM, handler, 6, s, src, nbytes, 0) }
/** AM_ReplyXfer6: a Long reply into the requester's segment at `dest_offset`. */
export function AM_ReplyXfer6 (token: Token, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_LONG, handler, 6, s, src, nbytes, dest_offset) }
/** AM_GetXfer6: `nbytes` of the peer's segment at `source_offset` into this segment at `dest_offset`; then `handler` runs here as a Long reply handler. */
export function AM_GetXfer6 (ep: ep_t, dest_index: number, source_offset: number, handler: number, dest_offset: number, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 6, s, null, nbytes, dest_offset, source_offset, false, true) }
/** AM_Request7: a Short request with 7 argument(s) to translation `dest_index`. */
export function AM_Request7 (ep: ep_t, dest_index: number, handler: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_SHORT, handler, 7, s, null, 0, 0, 0, false) }
/** AM_RequestI7: a Medium request; the first `nbytes` of `src` are copied before it returns. */
export function AM_RequestI7 (ep: ep_t, dest_index: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_MEDIUM, handler, 7, s, src, nbytes, 0, 0, false) }
/** AM_RequestXfer7: a Long request into the peer's segment at `dest_offset`. */
export function AM_RequestXfer7 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 7, s, src, nbytes, dest_offset, 0, false) }
/** AM_RequestXferAsync7: AM_RequestXfer7, or AM_ERR_IN_USE when it would have to wait for flow control. */
export function AM_RequestXferAsync7 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 7, s, src, nbytes, dest_offset, 0, true) }
/** AM_Reply7: a Short reply from a request handler (at most once). */
export function AM_Reply7 (token: Token, handler: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_SHORT, handler, 7, s, null, 0, 0) }
/** AM_ReplyI7: a Medium reply; `src` is copied before it returns. */
export function AM_ReplyI7 (token: Token, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_MEDIUM, handler, 7, s, src, nbytes, 0) }
/** AM_ReplyXfer7: a Long reply into the requester's segment at `dest_offset`. */
export function AM_ReplyXfer7 (token: Token, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_LONG, handler, 7, s, src, nbytes, dest_offset) }
/** AM_GetXfer7: `nbytes` of the peer's segment at `source_offset` into this segment at `dest_offset`; then `handler` runs here as a Long reply handler. */
export function AM_GetXfer7 (ep: ep_t, dest_index: number, source_offset: number, handler: number, dest_offset: number, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 7, s, null, nbytes, dest_offset, source_offset, false, true) }
/** AM_Request8: a Short request with 8 argument(s) to translation `dest_index`. */
export function AM_Request8 (ep: ep_t, dest_index: number, handler: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_SHORT, handler, 8, s, null, 0, 0, 0, false) }
/** AM_RequestI8: a Medium request; the first `nbytes` of `src` are copied before it returns. */
export function AM_RequestI8 (ep: ep_t, dest_index: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_MEDIUM, handler, 8, s, src, nbytes, 0, 0, false) }
/** AM_RequestXfer8: a Long request into the peer's segment at `dest_offset`. */
export function AM_RequestXfer8 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 8, s, src, nbytes, dest_offset, 0, false) }
/** AM_RequestXferAsync8: AM_RequestXfer8, or AM_ERR_IN_USE when it would have to wait for flow control. */
export function AM_RequestXferAsync8 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 8, s, src, nbytes, dest_offset, 0, true) }
/** AM_Reply8: a Short reply from a request handler (at most once). */
export function AM_Reply8 (token: Token, handler: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_SHORT, handler, 8, s, null, 0, 0) }
/** AM_ReplyI8: a Medium reply; `src` is copied before it returns. */
export function AM_ReplyI8 (token: Token, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_MEDIUM, handler, 8, s, src, nbytes, 0) }
/** AM_ReplyXfer8: a Long reply into the requester's segment at `dest_offset`. */
export function AM_ReplyXfer8 (token: Token, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_LONG, handler, 8, s, src, nbytes, dest_offset) }
/** AM_GetXfer8: `nbytes` of the peer's segment at `source_offset` into this segment at `dest_offset`; then `handler` runs here as a Long reply handler. */
export function AM_GetXfer8 (ep: ep_t, dest_index: number, source_offset: number, handler: number, dest_offset: number, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 8, s, null, nbytes, dest_offset, source_offset, false, true) }
/** AM_Request9: a Short request with 9 argument(s) to translation `dest_index`. */
export function AM_Request9 (ep: ep_t, dest_index: number, handler: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_SHORT, handler, 9, s, null, 0, 0, 0, false) }
/** AM_RequestI9: a Medium request; the first `nbytes` of `src` are copied before it returns. */
export function AM_RequestI9 (ep: ep_t, dest_index: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_MEDIUM, handler, 9, s, src, nbytes, 0, 0, false) }
/** AM_RequestXfer9: a Long request into the peer's segment at `dest_offset`. */
export function AM_RequestXfer9 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 9, s, src, nbytes, dest_offset, 0, false) }
/** AM_RequestXferAsync9: AM_RequestXfer9, or AM_ERR_IN_USE when it would have to wait for flow control. */
export function AM_RequestXferAsync9 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 9, s, src, nbytes, dest_offset, 0, true) }
/** AM_Reply9: a Short reply from a request handler (at most once). */
export function AM_Reply9 (token: Token, handler: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_SHORT, handler, 9, s, null, 0, 0) }
/** AM_ReplyI9: a Medium reply; `src` is copied before it returns. */
export function AM_ReplyI9 (token: Token, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_MEDIUM, handler, 9, s, src, nbytes, 0) }
/** AM_ReplyXfer9: a Long reply into the requester's segment at `dest_offset`. */
export function AM_ReplyXfer9 (token: Token, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_LONG, handler, 9, s, src, nbytes, dest_offset) }
/** AM_GetXfer9: `nbytes` of the peer's segment at `source_offset` into this segment at `dest_offset`; then `handler` runs here as a Long reply handler. */
export function AM_GetXfer9 (ep: ep_t, dest_index: number, source_offset: number, handler: number, dest_offset: number, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 9, s, null, nbytes, dest_offset, source_offset, false, true) }
/** AM_Request10: a Short request with 10 argument(s) to translation `dest_index`. */
export function AM_Request10 (ep: ep_t, dest_index: number, handler: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_SHORT, handler, 10, s, null, 0, 0, 0, false) }
/** AM_RequestI10: a Medium request; the first `nbytes` of `src` are copied before it returns. */
export function AM_RequestI10 (ep: ep_t, dest_index: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_MEDIUM, handler, 10, s, src, nbytes, 0, 0, false) }
/** AM_RequestXfer10: a Long request into the peer's segment at `dest_offset`. */
export function AM_RequestXfer10 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 10, s, src, nbytes, dest_offset, 0, false) }
/** AM_RequestXferAsync10: AM_RequestXfer10, or AM_ERR_IN_USE when it would have to wait for flow control. */
export function AM_RequestXferAsync10 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 10, s, src, nbytes, dest_offset, 0, true) }
/** AM_Reply10: a Short reply from a request handler (at most once). */
export function AM_Reply10 (token: Token, handler: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_SHORT, handler, 10, s, null, 0, 0) }
/** AM_ReplyI10: a Medium reply; `src` is copied before it returns. */
export function AM_ReplyI10 (token: Token, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_MEDIUM, handler, 10, s, src, nbytes, 0) }
/** AM_ReplyXfer10: a Long reply into the requester's segment at `dest_offset`. */
export function AM_ReplyXfer10 (token: Token, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_LONG, handler, 10, s, src, nbytes, dest_offset) }
/** AM_GetXfer10: `nbytes` of the peer's segment at `source_offset` into this segment at `dest_offset`; then `handler` runs here as a Long reply handler. */
export function AM_GetXfer10 (ep: ep_t, dest_index: number, source_offset: number, handler: number, dest_offset: number, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 10, s, null, nbytes, dest_offset, source_offset, false, true) }
/** AM_Request11: a Short request with 11 argument(s) to translation `dest_index`. */
export function AM_Request11 (ep: ep_t, dest_index: number, handler: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_SHORT, handler, 11, s, null, 0, 0, 0, false) }
/** AM_RequestI11: a Medium request; the first `nbytes` of `src` are copied before it returns. */
export function AM_RequestI11 (ep: ep_t, dest_index: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_MEDIUM, handler, 11, s, src, nbytes, 0, 0, false) }
/** AM_RequestXfer11: a Long request into the peer's segment at `dest_offset`. */
export function AM_RequestXfer11 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 11, s, src, nbytes, dest_offset, 0, false) }
/** AM_RequestXferAsync11: AM_RequestXfer11, or AM_ERR_IN_USE when it would have to wait for flow control. */
export function AM_RequestXferAsync11 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 11, s, src, nbytes, dest_offset, 0, true) }
/** AM_Reply11: a Short reply from a request handler (at most once). */
export function AM_Reply11 (token: Token, handler: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_SHORT, handler, 11, s, null, 0, 0) }
/** AM_ReplyI11: a Medium reply; `src` is copied before it returns. */
export function AM_ReplyI11 (token: Token, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_MEDIUM, handler, 11, s, src, nbytes, 0) }
/** AM_ReplyXfer11: a Long reply into the requester's segment at `dest_offset`. */
export function AM_ReplyXfer11 (token: Token, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_LONG, handler, 11, s, src, nbytes, dest_offset) }
/** AM_GetXfer11: `nbytes` of the peer's segment at `source_offset` into this segment at `dest_offset`; then `handler` runs here as a Long reply handler. */
export function AM_GetXfer11 (ep: ep_t, dest_index: number, source_offset: number, handler: number, dest_offset: number, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 11, s, null, nbytes, dest_offset, source_offset, false, true) }
/** AM_Request12: a Short request with 12 argument(s) to translation `dest_index`. */
export function AM_Request12 (ep: ep_t, dest_index: number, handler: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_SHORT, handler, 12, s, null, 0, 0, 0, false) }
/** AM_RequestI12: a Medium request; the first `nbytes` of `src` are copied before it returns. */
export function AM_RequestI12 (ep: ep_t, dest_index: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_MEDIUM, handler, 12, s, src, nbytes, 0, 0, false) }
/** AM_RequestXfer12: a Long request into the peer's segment at `dest_offset`. */
export function AM_RequestXfer12 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 12, s, src, nbytes, dest_offset, 0, false) }
/** AM_RequestXferAsync12: AM_RequestXfer12, or AM_ERR_IN_USE when it would have to wait for flow control. */
export function AM_RequestXferAsync12 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 12, s, src, nbytes, dest_offset, 0, true) }
/** AM_Reply12: a Short reply from a request handler (at most once). */
export function AM_Reply12 (token: Token, handler: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_SHORT, handler, 12, s, null, 0, 0) }
/** AM_ReplyI12: a Medium reply; `src` is copied before it returns. */
export function AM_ReplyI12 (token: Token, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_MEDIUM, handler, 12, s, src, nbytes, 0) }
/** AM_ReplyXfer12: a Long reply into the requester's segment at `dest_offset`. */
export function AM_ReplyXfer12 (token: Token, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_LONG, handler, 12, s, src, nbytes, dest_offset) }
/** AM_GetXfer12: `nbytes` of the peer's segment at `source_offset` into this segment at `dest_offset`; then `handler` runs here as a Long reply handler. */
export function AM_GetXfer12 (ep: ep_t, dest_index: number, source_offset: number, handler: number, dest_offset: number, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 12, s, null, nbytes, dest_offset, source_offset, false, true) }
/** AM_Request13: a Short request with 13 argument(s) to translation `dest_index`. */
export function AM_Request13 (ep: ep_t, dest_index: number, handler: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_SHORT, handler, 13, s, null, 0, 0, 0, false) }
/** AM_RequestI13: a Medium request; the first `nbytes` of `src` are copied before it returns. */
export function AM_RequestI13 (ep: ep_t, dest_index: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_MEDIUM, handler, 13, s, src, nbytes, 0, 0, false) }
/** AM_RequestXfer13: a Long request into the peer's segment at `dest_offset`. */
export function AM_RequestXfer13 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 13, s, src, nbytes, dest_offset, 0, false) }
/** AM_RequestXferAsync13: AM_RequestXfer13, or AM_ERR_IN_USE when it would have to wait for flow control. */
export function AM_RequestXferAsync13 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 13, s, src, nbytes, dest_offset, 0, true) }
/** AM_Reply13: a Short reply from a request handler (at most once). */
export function AM_Reply13 (token: Token, handler: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_SHORT, handler, 13, s, null, 0, 0) }
/** AM_ReplyI13: a Medium reply; `src` is copied before it returns. */
export function AM_ReplyI13 (token: Token, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_MEDIUM, handler, 13, s, src, nbytes, 0) }
/** AM_ReplyXfer13: a Long reply into the requester's segment at `dest_offset`. */
export function AM_ReplyXfer13 (token: Token, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_LONG, handler, 13, s, src, nbytes, dest_offset) }
/** AM_GetXfer13: `nbytes` of the peer's segment at `source_offset` into this segment at `dest_offset`; then `handler` runs here as a Long reply handler. */
export function AM_GetXfer13 (ep: ep_t, dest_index: number, source_offset: number, handler: number, dest_offset: number, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 13, s, null, nbytes, dest_offset, source_offset, false, true) }
/** AM_Request14: a Short request with 14 argument(s) to translation `dest_index`. */
export function AM_Request14 (ep: ep_t, dest_index: number, handler: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number, a13: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0; s[13] = a13 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_SHORT, handler, 14, s, null, 0, 0, 0, false) }
/** AM_RequestI14: a Medium request; the first `nbytes` of `src` are copied before it returns. */
export function AM_RequestI14 (ep: ep_t, dest_index: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number, a13: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0; s[13] = a13 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_MEDIUM, handler, 14, s, src, nbytes, 0, 0, false) }
/** AM_RequestXfer14: a Long request into the peer's segment at `dest_offset`. */
export function AM_RequestXfer14 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number, a13: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0; s[13] = a13 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 14, s, src, nbytes, dest_offset, 0, false) }
/** AM_RequestXferAsync14: AM_RequestXfer14, or AM_ERR_IN_USE when it would have to wait for flow control. */
export function AM_RequestXferAsync14 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number, a13: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0; s[13] = a13 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 14, s, src, nbytes, dest_offset, 0, true) }
/** AM_Reply14: a Short reply from a request handler (at most once). */
export function AM_Reply14 (token: Token, handler: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number, a13: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0; s[13] = a13 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_SHORT, handler, 14, s, null, 0, 0) }
/** AM_ReplyI14: a Medium reply; `src` is copied before it returns. */
export function AM_ReplyI14 (token: Token, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number, a13: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0; s[13] = a13 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_MEDIUM, handler, 14, s, src, nbytes, 0) }
/** AM_ReplyXfer14: a Long reply into the requester's segment at `dest_offset`. */
export function AM_ReplyXfer14 (token: Token, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number, a13: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0; s[13] = a13 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_LONG, handler, 14, s, src, nbytes, dest_offset) }
/** AM_GetXfer14: `nbytes` of the peer's segment at `source_offset` into this segment at `dest_offset`; then `handler` runs here as a Long reply handler. */
export function AM_GetXfer14 (ep: ep_t, dest_index: number, source_offset: number, handler: number, dest_offset: number, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number, a13: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0; s[13] = a13 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 14, s, null, nbytes, dest_offset, source_offset, false, true) }
/** AM_Request15: a Short request with 15 argument(s) to translation `dest_index`. */
export function AM_Request15 (ep: ep_t, dest_index: number, handler: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number, a13: number, a14: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0; s[13] = a13 | 0; s[14] = a14 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_SHORT, handler, 15, s, null, 0, 0, 0, false) }
/** AM_RequestI15: a Medium request; the first `nbytes` of `src` are copied before it returns. */
export function AM_RequestI15 (ep: ep_t, dest_index: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number, a13: number, a14: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0; s[13] = a13 | 0; s[14] = a14 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_MEDIUM, handler, 15, s, src, nbytes, 0, 0, false) }
/** AM_RequestXfer15: a Long request into the peer's segment at `dest_offset`. */
export function AM_RequestXfer15 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number, a13: number, a14: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0; s[13] = a13 | 0; s[14] = a14 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 15, s, src, nbytes, dest_offset, 0, false) }
/** AM_RequestXferAsync15: AM_RequestXfer15, or AM_ERR_IN_USE when it would have to wait for flow control. */
export function AM_RequestXferAsync15 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number, a13: number, a14: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0; s[13] = a13 | 0; s[14] = a14 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 15, s, src, nbytes, dest_offset, 0, true) }
/** AM_Reply15: a Short reply from a request handler (at most once). */
export function AM_Reply15 (token: Token, handler: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number, a13: number, a14: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0; s[13] = a13 | 0; s[14] = a14 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_SHORT, handler, 15, s, null, 0, 0) }
/** AM_ReplyI15: a Medium reply; `src` is copied before it returns. */
export function AM_ReplyI15 (token: Token, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number, a13: number, a14: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0; s[13] = a13 | 0; s[14] = a14 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_MEDIUM, handler, 15, s, src, nbytes, 0) }
/** AM_ReplyXfer15: a Long reply into the requester's segment at `dest_offset`. */
export function AM_ReplyXfer15 (token: Token, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number, a13: number, a14: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0; s[13] = a13 | 0; s[14] = a14 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_LONG, handler, 15, s, src, nbytes, dest_offset) }
/** AM_GetXfer15: `nbytes` of the peer's segment at `source_offset` into this segment at `dest_offset`; then `handler` runs here as a Long reply handler. */
export function AM_GetXfer15 (ep: ep_t, dest_index: number, source_offset: number, handler: number, dest_offset: number, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number, a13: number, a14: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0; s[13] = a13 | 0; s[14] = a14 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 15, s, null, nbytes, dest_offset, source_offset, false, true) }
/** AM_Request16: a Short request with 16 argument(s) to translation `dest_index`. */
export function AM_Request16 (ep: ep_t, dest_index: number, handler: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number, a13: number, a14: number, a15: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0; s[13] = a13 | 0; s[14] = a14 | 0; s[15] = a15 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_SHORT, handler, 16, s, null, 0, 0, 0, false) }
/** AM_RequestI16: a Medium request; the first `nbytes` of `src` are copied before it returns. */
export function AM_RequestI16 (ep: ep_t, dest_index: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number, a13: number, a14: number, a15: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0; s[13] = a13 | 0; s[14] = a14 | 0; s[15] = a15 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_MEDIUM, handler, 16, s, src, nbytes, 0, 0, false) }
/** AM_RequestXfer16: a Long request into the peer's segment at `dest_offset`. */
export function AM_RequestXfer16 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number, a13: number, a14: number, a15: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0; s[13] = a13 | 0; s[14] = a14 | 0; s[15] = a15 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 16, s, src, nbytes, dest_offset, 0, false) }
/** AM_RequestXferAsync16: AM_RequestXfer16, or AM_ERR_IN_USE when it would have to wait for flow control. */
export function AM_RequestXferAsync16 (ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number, a13: number, a14: number, a15: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0; s[13] = a13 | 0; s[14] = a14 | 0; s[15] = a15 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 16, s, src, nbytes, dest_offset, 0, true) }
/** AM_Reply16: a Short reply from a request handler (at most once). */
export function AM_Reply16 (token: Token, handler: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number, a13: number, a14: number, a15: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0; s[13] = a13 | 0; s[14] = a14 | 0; s[15] = a15 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_SHORT, handler, 16, s, null, 0, 0) }
/** AM_ReplyI16: a Medium reply; `src` is copied before it returns. */
export function AM_ReplyI16 (token: Token, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number, a13: number, a14: number, a15: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0; s[13] = a13 | 0; s[14] = a14 | 0; s[15] = a15 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_MEDIUM, handler, 16, s, src, nbytes, 0) }
/** AM_ReplyXfer16: a Long reply into the requester's segment at `dest_offset`. */
export function AM_ReplyXfer16 (token: Token, dest_offset: number, handler: number, src: AmSeg, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number, a13: number, a14: number, a15: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0; s[13] = a13 | 0; s[14] = a14 | 0; s[15] = a15 | 0 } catch { return BAD_ARG } return r.reply(token, CAT_LONG, handler, 16, s, src, nbytes, dest_offset) }
/** AM_GetXfer16: `nbytes` of the peer's segment at `source_offset` into this segment at `dest_offset`; then `handler` runs here as a Long reply handler. */
export function AM_GetXfer16 (ep: ep_t, dest_index: number, source_offset: number, handler: number, dest_offset: number, nbytes: number, a0: number, a1: number, a2: number, a3: number, a4: number, a5: number, a6: number, a7: number, a8: number, a9: number, a10: number, a11: number, a12: number, a13: number, a14: number, a15: number): number { const r = runtime(); if (r === null) return NOT_INIT; const s = r.scratchArgs; try { s[0] = a0 | 0; s[1] = a1 | 0; s[2] = a2 | 0; s[3] = a3 | 0; s[4] = a4 | 0; s[5] = a5 | 0; s[6] = a6 | 0; s[7] = a7 | 0; s[8] = a8 | 0; s[9] = a9 | 0; s[10] = a10 | 0; s[11] = a11 | 0; s[12] = a12 | 0; s[13] = a13 | 0; s[14] = a14 | 0; s[15] = a15 | 0 } catch { return BAD_ARG } return r.request(ep, dest_index, CAT_LONG, handler, 16, s, null, nbytes, dest_offset, source_offset, false, true) }
