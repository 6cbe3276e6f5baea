/**
 * What was wrong with a call's arguments, in words that name the values: the text of the
 * `AmError` the idiomatic face throws, and of a returned message handler 0 reports. Everything
 * here runs on the failure branch only, after a call returned its code (or an argument's
 * conversion threw): the calls themselves build no string and allocate nothing.
 */
import { AM_MAX_NUM_HANDLERS, AM_MAX_SHORT, AM_NOEVENTS, AM_NOTEMPTY, AmFault, AmStatus as S } from './constants.js'
import type { Endpoint, Token } from './objects.js'
import { AmError, MAX_LONG, MAX_MEDIUM, MAX_SEG_LENGTH, T_REQUEST } from './types.js'
import { CAT_LONG, CAT_MEDIUM, MAX_DEPTH } from './wire.js'

/** A value as a message shows it: a BigInt with its `n`, a string quoted, a buffer by its length. */
function show(v: unknown): string {
  if (typeof v === 'bigint') return `${v}n`
  if (typeof v === 'string') return JSON.stringify(v)
  if (typeof v === 'function') return 'a function'
  if (v instanceof Uint8Array) return `a Uint8Array of ${v.length} bytes`
  if (v === null || v === undefined || typeof v !== 'object') return String(v)
  return Array.isArray(v) ? 'an array' : 'an object'
}

/** Why `v`, named `name`, is no whole number from 0 to `max` (a BigInt: says to pass a number). */
function countWhy(name: string, v: unknown, what: string, max: number): string {
  if (typeof v === 'bigint') return `${name} ${v}n is a BigInt, but ${what} is a number: pass ${Number(v)}`
  return `${name} ${show(v)} is not ${what}: a whole number from 0 to ${max}`
}

function isCount(v: unknown, max: number): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= max
}

/** The mapped translation indices of `ep`, as a message lists them (at most 16). */
function mappedList(ep: Endpoint): string {
  const out: number[] = []
  let more = 0
  for (let i = 0; i < ep.numTrans; i++)
    if (ep.trName[i] !== -1) {
      if (out.length < 16) out.push(i)
      else more++
    }
  return out.length === 0 ? 'none' : out.join(', ') + (more > 0 ? `, and ${more} more` : '')
}

/** Why the translation `index` of `ep` cannot be sent to. */
function indexWhy(ep: Endpoint, index: unknown): string | undefined {
  if (!isCount(index, ep.numTrans - 1)) return countWhy('translation index', index, 'a translation index', ep.numTrans - 1)
  if (ep.trName[index] === -1) return `translation index ${index} is not mapped (mapped: ${mappedList(ep)})`
  return undefined
}

/** Why a payload `src` of `nbytes` is refused (a Medium or Long's source). */
function srcWhy(src: unknown, nbytes: number, segmentSize: number): string {
  if (src instanceof Uint8Array) return `src holds ${src.length} bytes, fewer than nbytes ${nbytes}`
  if (typeof src === 'bigint') return `src ${src}n is a BigInt, but an Addr is a number: pass ${Number(src)}`
  if (typeof src === 'number') {
    if (src === 0) return `src is 0 (the null address), for ${nbytes} bytes`
    return `src (${nbytes} bytes at address ${src}) runs past the end of this task's segment (${segmentSize} bytes)`
  }
  return `src is ${show(src)}, neither a Uint8Array nor an Addr`
}

/** Why the parts of a message every send checks are refused (handler, arguments, payload), or undefined. */
function payloadWhy(cat: number, handler: unknown, nargs: number, src: unknown, nbytes: unknown, off: unknown, segmentSize: number): string | undefined {
  if (!isCount(handler, AM_MAX_NUM_HANDLERS - 1)) return countWhy('handler index', handler, 'a handler index', AM_MAX_NUM_HANDLERS - 1)
  if (nargs > AM_MAX_SHORT) return `${nargs} arguments: at most AM_MAX_SHORT (${AM_MAX_SHORT})`
  if (cat !== CAT_MEDIUM && cat !== CAT_LONG) return undefined
  const max = cat === CAT_MEDIUM ? MAX_MEDIUM : MAX_LONG
  if (!isCount(nbytes, 0xffffffff)) return countWhy('nbytes', nbytes, 'a length', max)
  if (nbytes > max) return `nbytes ${nbytes} is more than ${cat === CAT_MEDIUM ? `AM_MaxMedium (${MAX_MEDIUM})` : `AM_MaxLong (${MAX_LONG})`}`
  if (cat === CAT_LONG && !isCount(off, MAX_SEG_LENGTH)) return countWhy('destOffset', off, 'an offset', MAX_SEG_LENGTH)
  if (cat === CAT_LONG && (off as number) + nbytes > MAX_SEG_LENGTH)
    return `destOffset ${show(off)} + nbytes ${nbytes} is past AM_MaxSegLength (${MAX_SEG_LENGTH})`
  return nbytes === 0 ? undefined : srcWhy(src, nbytes, segmentSize)
}

/** The AmError of a failed request (AM_Request…, AM_GetXfer) from endpoint `ep`. */
export function requestError(
  ep: Endpoint,
  rc: number,
  what: string,
  cat: number,
  index: unknown,
  handler: unknown,
  nargs: number,
  src: unknown,
  nbytes: unknown,
  off: unknown,
  off2: unknown,
  get: boolean,
  segmentSize: number,
): AmError {
  let why: string | undefined
  if (rc === S.ERR_BAD_ARG) {
    why = ep.freed !== 0 ? 'the endpoint was freed' : indexWhy(ep, index)
    if (why === undefined && get) {
      if (!isCount(handler, AM_MAX_NUM_HANDLERS - 1)) why = countWhy('handler index', handler, 'a handler index', AM_MAX_NUM_HANDLERS - 1)
      else if (!isCount(nbytes, MAX_LONG)) why = countWhy('nbytes', nbytes, 'a length', MAX_LONG)
      else if (!isCount(off2, MAX_SEG_LENGTH) || off2 + nbytes > MAX_SEG_LENGTH) why = countWhy('sourceOffset', off2, 'an offset', MAX_SEG_LENGTH - nbytes)
      else if (ep.segLen === 0) why = 'this endpoint has no segment for the data to land in: setSegment first'
      else why = `the data lands in this endpoint's segment: ${nbytes} bytes at destOffset ${show(off)} runs past its end (${ep.segLen} bytes)`
    } else why ??= payloadWhy(cat, handler, nargs, src, nbytes, off, segmentSize)
  } else if (rc === S.ERR_NOT_INIT) {
    why = 'this endpoint has no flow control set up yet: call setExpectedResources (AM_SetExpectedResources) before it sends'
  } else if (rc === S.ERR_RESOURCE) {
    why = 'a request may be sent only from code outside handlers or from a request handler: not from a reply handler, handler 0 or a LAPI header handler'
  }
  return new AmError(rc, what, why)
}

/** The AmError of a failed reply (AM_Reply…) with token `t`. */
export function replyError(
  t: Token,
  rc: number,
  what: string,
  cat: number,
  handler: unknown,
  nargs: number,
  src: unknown,
  nbytes: unknown,
  off: unknown,
  segmentSize: number,
): AmError {
  let why: string | undefined
  if (rc === S.ERR_RESOURCE) {
    why =
      t.state !== T_REQUEST
        ? "only a request handler replies, with its own token (this is a reply handler's or handler 0's token, or its handler has returned)"
        : t.replied !== 0
          ? 'this request was answered already: a request handler replies at most once'
          : 'a reply is sent only from the request handler that got the token'
  } else if (rc === S.ERR_BAD_ARG) {
    why = payloadWhy(cat, handler, nargs, src, nbytes, off, segmentSize)
  }
  return new AmError(rc, what, why)
}

/** The AmError of request or reply arguments that cannot be 32-bit integers (a BigInt fails the conversion). */
export function argsError(what: string, args: readonly unknown[]): AmError {
  const i = args.findIndex((a) => typeof a === 'bigint' || typeof a === 'symbol')
  const a = args[i]
  return new AmError(
    S.ERR_BAD_ARG,
    what,
    typeof a === 'bigint'
      ? `argument ${i} is ${a}n, a BigInt: the arguments of a message are 32-bit integers (numbers)`
      : `argument ${i} (${show(a)}) is not a number: the arguments of a message are 32-bit integers`,
  )
}

/** Why a tag is refused: a tag is a BigInt from 0 to 2^64 − 1. */
export function tagWhy(tag: unknown): string {
  if (typeof tag === 'number' && Number.isInteger(tag) && tag >= 0) return `tag ${tag} is a number: a tag is a 64-bit BigInt (pass ${tag}n)`
  if (typeof tag === 'bigint') return `tag ${tag}n is outside 0 to 2^64 − 1`
  return `tag ${show(tag)} is not a tag: a BigInt from 0 to 2^64 − 1`
}

/** Why an endpoint's own call (map, unmap, setHandler, setSegment, …) failed; the AmError. */
export function endpointError(
  ep: Endpoint,
  rc: number,
  what: string,
  a: {
    index?: unknown
    name?: unknown
    tag?: unknown
    fn?: unknown
    seg?: unknown
    nbytes?: unknown
    nEndpoints?: unknown
    nOutstanding?: unknown
    segmentSize?: number
  },
): AmError {
  return new AmError(rc, what, endpointWhy(ep, rc, what, a))
}

function endpointWhy(
  ep: Endpoint,
  rc: number,
  what: string,
  a: {
    index?: unknown
    name?: unknown
    tag?: unknown
    fn?: unknown
    seg?: unknown
    nbytes?: unknown
    nEndpoints?: unknown
    nOutstanding?: unknown
    segmentSize?: number
  },
): string | undefined {
  if (rc === S.ERR_BAD_ARG && ep.freed !== 0) return 'the endpoint was freed'
  const trans = what === 'AM_Map' || what === 'AM_UnMap'
  if (rc === S.ERR_BAD_ARG) {
    if (trans && !isCount(a.index, ep.numTrans - 1)) return countWhy('translation index', a.index, 'a translation index', ep.numTrans - 1)
    if ('name' in a && !isCount(a.name, 65536 * 65536 - 1)) return countWhy('endpoint name', a.name, 'an endpoint name (task × 65536 + id)', 65536 * 65536 - 1)
    if ('tag' in a) return tagWhy(a.tag)
    if (what === 'AM_SetHandler' || what === 'AM_SetHandlerAny') {
      if (typeof a.fn !== 'function') return `the handler is ${show(a.fn)}, not a function`
      return countWhy('handler index', a.index, 'a handler index', AM_MAX_NUM_HANDLERS - 1)
    }
    if (what === 'AM_SetSeg') return segWhy(a.seg, a.nbytes, a.segmentSize ?? 0)
    if (what === 'AM_SetExpectedResources') {
      if (!isCount(a.nEndpoints, 0x7fffffff)) return countWhy('nEndpoints', a.nEndpoints, 'a count', 0x7fffffff)
      return `nOutstandingRequests ${show(a.nOutstanding)} is not allowed: a whole number from 1 to ${MAX_DEPTH}`
    }
    return undefined
  }
  if (rc === S.ERR_RESOURCE) {
    if (ep.depth !== 0 && (trans || what === 'AM_MapAny' || what === 'AM_SetExpectedResources'))
      return 'the translation table is frozen: setExpectedResources ran (AM-2 allows it once, after the mapping)'
    if (what === 'AM_Map') return `translation index ${show(a.index)} is mapped already (to endpoint ${ep.trName[a.index as number]}): unmap it first`
    if (what === 'AM_UnMap') return `translation index ${show(a.index)} is not mapped (mapped: ${mappedList(ep)})`
    if (what === 'AM_MapAny') return `all ${ep.numTrans} translation indices are mapped`
    if (what === 'AM_SetHandlerAny') return `all ${AM_MAX_NUM_HANDLERS - 1} handler indices (1 to ${AM_MAX_NUM_HANDLERS - 1}) are taken`
  }
  return undefined
}

/** Why an event mask is refused. */
export function maskWhy(mask: unknown): string {
  return `event mask ${show(mask)} is neither AM_NOEVENTS (${AM_NOEVENTS}) nor AM_NOTEMPTY (${AM_NOTEMPTY})`
}

function segWhy(seg: unknown, nbytes: unknown, segmentSize: number): string {
  if (!isCount(nbytes, 0xffffffff)) return countWhy('nbytes', nbytes, 'a length', MAX_SEG_LENGTH)
  if (seg === null || seg === undefined || seg === 0) return `no segment given, but nbytes is ${nbytes} (0 for none)`
  if (seg instanceof Uint8Array) return `the segment holds ${seg.length} bytes, fewer than nbytes ${nbytes}`
  if (typeof seg === 'bigint') return `seg ${seg}n is a BigInt, but an Addr is a number: pass ${Number(seg)}`
  if (typeof seg === 'number') return `the segment (${nbytes} bytes at address ${seg}) runs past the end of this task's LAPI segment (${segmentSize} bytes)`
  return `seg is ${show(seg)}, neither a Uint8Array, an Addr nor null`
}

/** What a returned message's status means for this message, in words (handler 0's report). */
export function faultWhy(status: number, t: Token): string {
  const there = `endpoint ${t.srcTask * 65536 + t.srcId} (task ${t.srcTask})`
  switch (status) {
    case AmFault.EBADHANDLER:
      return `no handler is registered at index ${t.handler} of ${there}`
    case AmFault.EBADTAG:
      return `${there} does not accept the tag 0x${t.messageTag.toString(16)} (its receive tag differs)`
    case AmFault.EBADSEGOFF:
      return `${there} has no segment for the Long message's ${t.nbytes} bytes`
    case AmFault.EBADLENGTH:
      return `the ${t.nbytes} bytes at offset ${t.off2 !== 0 ? t.off2 : t.off} do not fit ${there}'s segment, or the length is over the category's maximum`
    case AmFault.EBADENDPOINT:
      return `${there} does not exist, or has not mapped the sender`
    case AmFault.EUNREACHABLE:
      return `task ${t.srcTask} has failed or its process was lost`
    case AmFault.ECONGESTION:
      return `task ${t.srcTask} left the job with the request outstanding`
    default:
      return ''
  }
}
