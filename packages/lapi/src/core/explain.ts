/**
 * What was wrong with a call's arguments, in words that name the values: the text of the
 * `LapiError` the idiomatic face throws, and of an asynchronous error about an active message.
 * Everything here runs on the failure branch only, after a call returned its code: the calls
 * themselves build no string and allocate nothing.
 */
import { LAPI_MAX_MSG_SZ, Query, RmwOp, VecType } from '../base/constants.js'
import { LapiError } from '../base/errors.js'
import { LapiStatus as S } from '../base/status.js'
import type { HandlerFn, HandlerRanges } from './types.js'

/** What the words need to know of the context (a `Context` is one). */
export interface Facts {
  readonly numTasks: number
  readonly taskId: number
  readonly segmentSize: number
  readonly ranges: HandlerRanges
  readonly config: { readonly maxUhdrSz: number }
}

/** The arguments of a failed call, as far as it has them (each name is the idiomatic face's). */
export interface Args {
  tgt?: unknown
  len?: unknown
  /** The name of the length (default `len`). */
  lenName?: string
  tgtAddr?: unknown
  org?: unknown
  /** The name of the origin buffer (default `org`). */
  orgName?: string
  /** Counters by name: a Counter (its `addr`), an Addr, or nothing. */
  counters?: Record<string, unknown>
  hdr?: unknown
  uhdr?: unknown
  uhdrLen?: unknown
  op?: unknown
  tgtVar?: unknown
  /** Bytes of an Rmw word: 4 or 8. */
  width?: number
  /** The operands of an Rmw. */
  operands?: unknown[]
  tgtVec?: unknown
  orgVec?: unknown
  query?: unknown
  value?: unknown
  /** A handler-table index (Addr_set), and the handler given there. */
  index?: unknown
  fn?: unknown
  nbytes?: unknown
  /** What Address_init or Address_init64 was given. */
  mine?: unknown
  /** What free was given. */
  freed?: unknown
}

/** A value as the message shows it: a BigInt with its `n`, a string quoted, a buffer by its length. */
export function show(v: unknown): string {
  if (typeof v === 'bigint') return `${v}n`
  if (typeof v === 'string') return JSON.stringify(v)
  if (typeof v === 'function') return 'a function'
  if (v instanceof Uint8Array) return `a Uint8Array of ${v.length} bytes`
  if (v === null || v === undefined || typeof v !== 'object') return String(v)
  return Array.isArray(v) ? 'an array' : 'an object'
}

/** `name value is a BigInt: …`, for a BigInt where a number goes (the usual mix-up of 64-bit code). */
function bigintWhy(name: string, v: bigint, what: string): string {
  return `${name} ${v}n is a BigInt, but ${what} is a number: pass ${Number(v)}`
}

/** Why `tgt` is no target: out of range, not a whole number, a BigInt, or purged. */
export function taskWhy(tgt: unknown, n: number, purged = false): string {
  if (purged) return `task ${show(tgt)} is purged (Purge_totask): nothing is sent to it until Resume_totask`
  if (typeof tgt === 'bigint') return bigintWhy('task', tgt, `a task id (0 to ${n - 1})`)
  if (typeof tgt === 'number' && Number.isInteger(tgt)) return `task ${tgt} is out of range: this job has tasks 0 to ${n - 1}`
  return `task ${show(tgt)} is not a task id: this job has tasks 0 to ${n - 1}`
}

function lenWhy(name: string, len: unknown): string {
  if (typeof len === 'bigint') return bigintWhy(name, len, 'a length')
  return `${name} ${show(len)} is not a length: a whole number of bytes from 0 to ${LAPI_MAX_MSG_SZ}`
}

/** Why `v` (named `name`) is no Addr for `len` bytes: null, a BigInt, not a whole number. */
function addrWhy(name: string, v: unknown, len: unknown): string {
  if (typeof v === 'bigint') return bigintWhy(name, v, 'an Addr (a byte offset into a segment)')
  if (v === 0 || v === null || v === undefined) return `${name} is ${show(v)} (the null address), for ${show(len)} bytes`
  if (typeof v === 'number') return `${name} ${v} is not an Addr: a whole number of bytes into the segment`
  return `${name} is ${show(v)}, neither an Addr nor a Uint8Array`
}

/** Why `len` bytes at `addr` do not fit in a segment of `seg` bytes (whose: "task 2's"). */
function extentWhy(call: string, len: unknown, addr: unknown, whose: string, seg: number): string {
  if (typeof addr === 'number' && addr < 0) return `${call} at address ${addr}: an address is 0 or more (${whose} segment has ${seg} bytes)`
  return `${call} of ${show(len)} bytes at address ${show(addr)} runs past the end of ${whose} segment (${seg} bytes)`
}

function counterAddr(c: unknown): unknown {
  return c !== null && typeof c === 'object' && 'addr' in c ? (c as { addr: unknown }).addr : (c ?? 0)
}

/** Why a counter argument is none: the first of `counters` that is no counter Addr. */
function counterWhy(f: Facts, counters: Record<string, unknown>): string | undefined {
  for (const name of Object.keys(counters)) {
    const c = counterAddr(counters[name])
    if (c === 0 || c === null || c === undefined) continue
    if (typeof c === 'number' && Number.isInteger(c) && c > 0 && (c & 3) === 0 && c + 4 <= f.segmentSize) continue
    if (typeof c === 'bigint') return bigintWhy(name, c, 'a counter (its Addr)')
    if (typeof c === 'number' && Number.isInteger(c) && c > 0 && (c & 3) !== 0) return `${name} ${c} is not a counter: a counter's Addr is 4-byte aligned`
    return `${name} ${show(c)} is not a counter: a counter is a Counter, or its Addr (4-byte aligned, inside the segment of ${f.segmentSize} bytes), or 0 for none`
  }
  return undefined
}

/** Why an origin buffer is refused: null, no Addr, outside the own segment, shorter than `len`. */
function orgWhy(f: Facts, rc: number, name: string, org: unknown, len: unknown, lenName: string): string {
  if (rc === S.ERR_ORG_EXTENT) {
    if (org instanceof Uint8Array) return `${name} holds ${org.length} bytes, fewer than the ${show(len)} of ${lenName}`
    if (typeof org === 'number' && org < 0) return `${name} ${org} is negative: an Addr is 0 or more`
    return `${name} (${show(len)} bytes at address ${show(org)}) runs past the end of this task's (task ${f.taskId}) segment (${f.segmentSize} bytes)`
  }
  return addrWhy(name, org, len)
}

/** Why `hdr` names no header handler here. */
function hdrWhy(f: Facts, hdr: unknown): string {
  if (hdr === null || hdr === undefined || hdr === 0) return `no header handler given (hdr is ${show(hdr)})`
  if (typeof hdr === 'function')
    return 'the function given as hdr is not registered on this task: register it with setHandler (LAPI_Addr_set) or addressInit first'
  if (typeof hdr === 'bigint') return bigintWhy('hdr', hdr, 'a handler index')
  return `handler index ${show(hdr)} is not a handler index: 1 to ${f.ranges.size - 1}`
}

function uhdrLenWhy(f: Facts, uhdrLen: unknown): string {
  const max = f.config.maxUhdrSz
  if (typeof uhdrLen === 'bigint') return bigintWhy('uhdr_len', uhdrLen, 'a length')
  if (typeof uhdrLen !== 'number' || !Number.isInteger(uhdrLen) || uhdrLen < 0) return `uhdr_len ${show(uhdrLen)} is not a length in bytes`
  if (uhdrLen > max) return `uhdr_len ${uhdrLen} is more than MAX_UHDR_SZ (${max} bytes)`
  return `uhdr_len ${uhdrLen} is not a multiple of 8: a user header is whole 8-byte words (pad it to ${(uhdrLen + 7) & ~7} bytes)`
}

const RMW_OPS = Object.entries(RmwOp)
  .map(([k, v]) => `${k} (${v})`)
  .join(', ')

function rmwWhy(f: Facts, call: string, rc: number, a: Args): string | undefined {
  const w = a.width ?? 4
  const v = a.tgtVar
  switch (rc) {
    case S.ERR_RMW_OP:
      return `op ${show(a.op)} is not an RmwOp: ${RMW_OPS}`
    case S.ERR_TGT_VAR_NULL:
      return addrWhy('tgtVar', v, w)
    case S.ERR_TGT_EXTENT:
      if (typeof v === 'number' && v > 0 && v % w !== 0) return `tgtVar ${v} is not ${w}-byte aligned: the word of ${call} is ${w * 8}-bit`
      return extentWhy(`${call} of a ${w}-byte word`, w, v, `task ${show(a.tgt)}'s`, f.segmentSize)
    case S.ERR_IN_VAL_NULL: {
      const bad = (a.operands ?? []).find((x) => (w === 8 ? typeof x !== 'bigint' : typeof x !== 'number' || !Number.isFinite(x)))
      if (w === 8)
        return `operand ${show(bad)} is ${typeof bad === 'number' ? 'a number' : 'not a BigInt'}: ${call} works on 64-bit words and takes BigInts${typeof bad === 'number' && Number.isInteger(bad) ? ` (${bad}n)` : ''}`
      if (typeof bad === 'bigint') return `operand ${bad}n is a BigInt: ${call} works on 32-bit words and takes numbers (rmw64 takes BigInts)`
      return `operand ${show(bad)} is not a number`
    }
    default:
      return undefined
  }
}

/** Which vector is wrong, and how: the first piece that breaks a rule. */
function vecWhy(f: Facts, rc: number, a: Args): string | undefined {
  const side =
    rc === S.ERR_ORG_VEC_NULL ||
    rc === S.ERR_ORG_VEC_TYPE ||
    rc === S.ERR_ORG_VEC_ADDR ||
    rc === S.ERR_ORG_VEC_LEN ||
    rc === S.ERR_ORG_STRIDE ||
    rc === S.ERR_STRIDE_ORG_VEC_ADDR_NULL ||
    (rc === S.ERR_ORG_EXTENT && a.orgVec !== undefined)
      ? 'orgVec'
      : 'tgtVec'
  const v = (side === 'orgVec' ? a.orgVec : a.tgtVec) as { vec_type?: unknown; num_vecs?: unknown; info?: unknown[]; len?: unknown[] } | null | undefined
  if (v === null || v === undefined || typeof v !== 'object') return `${side} is ${show(v)}, not a lapi_vec_t`
  const types = `LAPI_GEN_IOVECTOR (${VecType.LAPI_GEN_IOVECTOR}), LAPI_GEN_STRIDED_XFER (${VecType.LAPI_GEN_STRIDED_XFER}) or LAPI_GEN_GENERIC (${VecType.LAPI_GEN_GENERIC})`
  switch (rc) {
    case S.ERR_VEC_TYPE_DIFF:
      return `orgVec and tgtVec have different vec_types (${show((a.orgVec as typeof v)?.vec_type)} and ${show((a.tgtVec as typeof v)?.vec_type)})`
    case S.ERR_VEC_NUM_DIFF:
      return `orgVec and tgtVec have different num_vecs (${show((a.orgVec as typeof v)?.num_vecs)} and ${show((a.tgtVec as typeof v)?.num_vecs)})`
    case S.ERR_VEC_LEN_DIFF:
      return 'orgVec and tgtVec have different lengths, piece by piece (or block sizes)'
    case S.ERR_ORG_VEC_TYPE:
    case S.ERR_TGT_VEC_TYPE:
      return `${side}: vec_type ${show(v.vec_type)} with num_vecs ${show(v.num_vecs)} is not a vector: vec_type is ${types}, num_vecs a count`
    default:
      break
  }
  const info = Array.isArray(v.info) ? v.info : []
  if (v.vec_type === VecType.LAPI_GEN_STRIDED_XFER) {
    return (
      `${side}: strided vector [base ${show(info[0])}, block ${show(info[1])}, stride ${show(info[2])}] × ${show(v.num_vecs)} blocks: ` +
      'the base is a non-null Addr, the block a length, the stride at least the block, and every block inside the segment ' +
      `(${f.segmentSize} bytes)`
    )
  }
  const n = typeof v.num_vecs === 'number' ? v.num_vecs : 0
  const lens = Array.isArray(v.len) ? v.len : []
  for (let i = 0; i < n; i++) {
    const len = lens[i]
    const p = info[i]
    if (typeof len !== 'number' || !Number.isInteger(len) || len < 0 || len > LAPI_MAX_MSG_SZ) return `${side}: piece ${i}: ${lenWhy('len', len)}`
    if (p === null || p === undefined || p === 0) {
      if (len > 0) return `${side}: piece ${i} has no address (${show(p)}) for ${len} bytes`
      continue
    }
    if (p instanceof Uint8Array) {
      if (p.length < len) return `${side}: piece ${i} is a Uint8Array of ${p.length} bytes, fewer than its len ${len}`
      continue
    }
    if (typeof p !== 'number' || !Number.isInteger(p) || p < 0) return `${side}: piece ${i}: ${addrWhy('address', p, len)}`
    if (p + len > f.segmentSize) return `${side}: piece ${i}: ${len} bytes at address ${p} runs past the end of the segment (${f.segmentSize} bytes)`
  }
  return `${side}: len has fewer than num_vecs (${n}) entries`
}

/** The words for code `rc` of call `call` with arguments `a`, or undefined (the code's own text then). */
export function explain(f: Facts, rc: number, call: string, a: Args): string | undefined {
  if (a.op !== undefined || a.tgtVar !== undefined || a.operands !== undefined) {
    const r = rmwWhy(f, call, rc, a)
    if (r !== undefined) return r
  }
  if (a.orgVec !== undefined || a.tgtVec !== undefined) {
    if (rc >= S.ERR_ORG_VEC_ADDR && rc <= S.ERR_VEC_LEN_DIFF && rc !== S.ERR_CKPT) return vecWhy(f, rc, a)
    if (rc === S.ERR_ORG_STRIDE || (rc === S.ERR_ORG_EXTENT && a.orgVec !== undefined)) return vecWhy(f, rc, a)
  }
  const lenName = a.lenName ?? 'len'
  switch (rc) {
    case S.ERR_TGT:
      return taskWhy(a.tgt, f.numTasks)
    case S.ERR_TGT_PURGED:
      return taskWhy(a.tgt, f.numTasks, true)
    case S.ERR_DATA_LEN:
      if (a.nbytes !== undefined)
        return typeof a.nbytes === 'bigint'
          ? bigintWhy('nbytes', a.nbytes, 'a length')
          : `nbytes ${show(a.nbytes)} is not a number of bytes (a whole number, 0 or more)`
      return lenWhy(lenName, a.len)
    case S.ERR_TGT_ADDR_NULL:
      return addrWhy('tgtAddr', a.tgtAddr, a.len)
    case S.ERR_TGT_EXTENT:
      return extentWhy(call, a.len, a.tgtAddr, `task ${show(a.tgt)}'s`, f.segmentSize)
    case S.ERR_ORG_ADDR_NULL:
      if ('mine' in a) return mineWhy(call, a.mine)
      if ('fn' in a) return `the handler is ${show(a.fn)}: setHandler takes a header handler function, or null to clear the entry`
      if ('freed' in a)
        return typeof a.freed === 'bigint'
          ? bigintWhy('address', a.freed, 'an Addr')
          : `address ${show(a.freed)} is not one malloc handed out (or it was freed already)`
      return orgWhy(f, rc, a.orgName ?? 'org', a.org, a.len, lenName)
    case S.ERR_ORG_EXTENT:
      if (a.uhdr instanceof Uint8Array && typeof a.uhdrLen === 'number' && a.uhdr.length < a.uhdrLen)
        return orgWhy(f, rc, 'uhdr', a.uhdr, a.uhdrLen, 'uhdr_len')
      if (typeof a.uhdr === 'number' && typeof a.uhdrLen === 'number' && a.uhdr + a.uhdrLen > f.segmentSize)
        return orgWhy(f, rc, 'uhdr', a.uhdr, a.uhdrLen, 'uhdr_len')
      return orgWhy(f, rc, a.orgName ?? 'org', a.org, a.len, lenName)
    case S.ERR_CNTR_NULL:
      return a.counters !== undefined ? counterWhy(f, a.counters) : undefined
    case S.ERR_CNTR_VAL:
      return typeof a.value === 'bigint' ? bigintWhy('value', a.value, 'a counter value') : `value ${show(a.value)} is not a counter value: a whole number`
    case S.ERR_HDR_HNDLR_NULL:
      return hdrWhy(f, a.hdr)
    case S.ERR_UHDR_NULL:
      return `uhdr is ${show(a.uhdr)} but uhdr_len is ${show(a.uhdrLen)}: give the user header (a Uint8Array or an Addr), or uhdr_len 0`
    case S.ERR_UHDR_LEN:
      return uhdrLenWhy(f, a.uhdrLen)
    case S.ERR_ADDR_HNDL_RANGE:
      if (typeof a.index === 'bigint') return bigintWhy('handler index', a.index, 'a handler index')
      if (call === 'Addr_set' || call === 'Addr_get')
        return `handler index ${show(a.index)} is out of range: ${call} takes 1 to ${f.ranges.user - 1} (LOC_ADDRTBL_SZ − 1)`
      if (
        call === 'setLibraryShortHandler' &&
        typeof a.index === 'number' &&
        Number.isInteger(a.index) &&
        a.index >= 0 &&
        a.index < f.ranges.auto - f.ranges.library
      ) {
        return `slot ${a.index} has no header handler: setLibraryHandler(${a.index}, fn) first`
      }
      return `slot ${show(a.index)} is out of range: the library slots are 0 to ${f.ranges.auto - f.ranges.library - 1}`
    case S.ERR_QUERY_TYPE:
      return call === 'Senv'
        ? `query ${show(a.query)} is not one LAPI_Senv sets: ERROR_CHK (4), TIMEOUT (5), INTERRUPT_SET (8) or ACK_THRESHOLD (20)`
        : `query ${show(a.query)} is not one LAPI_Qenv reads: 0 to ${Query.QUERY_SHM_NUM_TASKS} (TASK_ID … QUERY_SHM_NUM_TASKS)`
    case S.ERR_SET_VAL:
      return setValWhy(a.query, a.value)
    case S.ERR_MEMORY_EXHAUSTED:
      return a.nbytes !== undefined
        ? `no room for ${show(a.nbytes)} more bytes in this task's segment (${f.segmentSize} bytes: --segment-size, AMLAPI_SEGMENT_SIZE)`
        : undefined
    case S.ERR_OP_SZ:
      return `size ${show(a.value)} is not an Rmw operand size: 32 or 64`
    case S.ERR_XFER_CMD:
      return 'the command is not a lapi_xfer_t: an object whose Xfer_type is LAPI_GET_XFER (0), LAPI_AM_XFER (1), LAPI_PUT_XFER (2), LAPI_GETV_XFER (3), LAPI_PUTV_XFER (4), LAPI_AMV_XFER (5) or LAPI_RMW_XFER (6)'
    case S.ERR_POLLING_NET:
      return `${call} cannot be called from a header handler (or an in-place receiver): it may neither send nor wait there; do it in the completion handler`
    default:
      return undefined
  }
}

function mineWhy(call: string, mine: unknown): string {
  if (call === 'Address_init64') {
    return typeof mine === 'number' && Number.isInteger(mine)
      ? `mine ${mine} is a number: addressInit64 gathers BigInts (pass ${mine}n; addressInit gathers numbers)`
      : `mine ${show(mine)} is not a BigInt: addressInit64 gathers BigInts`
  }
  if (typeof mine === 'bigint') return `mine ${mine}n is a BigInt: addressInit gathers numbers (use addressInit64 for BigInts)`
  return `mine ${show(mine)} is neither a number, a Counter, a header handler nor null`
}

function setValWhy(query: unknown, v: unknown): string {
  const allowed =
    query === Query.ERROR_CHK || query === Query.INTERRUPT_SET
      ? '0 or 1'
      : query === Query.TIMEOUT
        ? 'a whole number of seconds from 10 to 86400'
        : 'a whole number from 1 to 30'
  const name = Object.entries(Query).find(([, q]) => q === query)?.[0] ?? String(query)
  return `value ${show(v)} for ${name} is not allowed: ${allowed}`
}

/** The arguments of a LAPI_Xfer command (`lapi_xfer_t`), by the idiomatic names. */
export function xferArgs(cmd: unknown): Args {
  if (cmd === null || typeof cmd !== 'object') return {}
  const c = cmd as Record<string, unknown>
  const counters = { tgtCntr: c['tgt_cntr'], orgCntr: c['org_cntr'], cmplCntr: c['cmpl_cntr'] }
  const a: Args = { tgt: c['tgt'], counters }
  if ('len' in c) {
    a.len = c['len']
    a.tgtAddr = c['tgt_addr']
    a.org = c['org_addr']
  }
  if ('hdr_hdl' in c) {
    a.hdr = c['hdr_hdl']
    a.uhdr = c['uhdr']
    a.uhdrLen = c['uhdr_len'] ?? 0
    a.org = c['udata']
    a.orgName = 'udata'
    a.len = c['udata_len'] ?? 0
    a.lenName = 'udata_len'
  }
  if ('org_vec' in c) a.orgVec = c['org_vec']
  if ('tgt_vec' in c) a.tgtVec = c['tgt_vec']
  if ('op' in c) {
    a.op = c['op']
    a.tgtVar = c['tgt_var']
    a.width = c['size'] === 64 ? 8 : 4
    a.value = c['size']
    a.operands = Array.from((c['in_val'] ?? []) as ArrayLike<unknown>)
  }
  return a
}

/** What a call of a terminated context throws. */
export function terminated(): LapiError {
  return new LapiError(S.ERR_HNDL_INVALID, undefined, 'this context was terminated (term, LAPI_Term): no call of it works any more; Lapi.init opens a new one')
}

/** The LapiError of a failed call of the idiomatic face: its code, and what was wrong with `a`. */
export function failure(f: Facts, rc: number, call: string, a: Args): LapiError {
  return new LapiError(rc, call, explain(f, rc, call, a))
}

/**
 * The header handlers registered in `handlers` (a context's table), as a message lists them:
 * "1, 2, 5" (the program's range), then the library and automatic ranges' entries with their
 * range named; at most 16, then how many more. "none" for an empty table.
 */
export function registeredList(handlers: ReadonlyArray<HandlerFn | null>, ranges: HandlerRanges): string {
  const out: string[] = []
  let more = 0
  for (let i = 1; i < handlers.length; i++) {
    if (handlers[i] === null || handlers[i] === undefined) continue
    if (out.length >= 16) {
      more++
      continue
    }
    out.push(i < ranges.library ? String(i) : i < ranges.auto ? `${i} (library slot ${i - ranges.library})` : `${i} (from addressInit)`)
  }
  if (out.length === 0) return 'none'
  return out.join(', ') + (more > 0 ? `, and ${more} more` : '')
}

/** The words of an active message for header handler `hidx` that is not registered at its target. */
export function unregisteredWhy(hidx: number, handlers: ReadonlyArray<HandlerFn | null>, ranges: HandlerRanges): string {
  return `an active message for header handler index ${hidx}, which is not registered here (registered: ${registeredList(handlers, ranges)})`
}

/** The RangeError text of a view outside the own segment (LAPIX_View, `Lapi.view`). */
export function viewWhy(addr: unknown, nbytes: unknown, seg: number, me: number): string {
  const head = `LAPIX_View(${show(addr)}, ${show(nbytes)})`
  if (typeof addr === 'bigint') return `${head}: ${bigintWhy('addr', addr, 'an Addr')}`
  if (typeof nbytes === 'bigint') return `${head}: ${bigintWhy('nbytes', nbytes, 'a length')}`
  return `${head}: ${show(nbytes)} bytes at address ${show(addr)} are not inside task ${me}'s segment (${seg} bytes)`
}
