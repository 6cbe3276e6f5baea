// testam: full API / category / arity coverage (the AMX test suite, AM-2 reference section 4).
//
// For every argument count n = 0..16 there are six handlers: Short, Medium and Long, request and
// reply (indices 100+n, 120+n, 140+n, 160+n, 180+n, 200+n). Each iteration every task sends to
// (rank + 1) mod P, for each n: a Short with n arguments, a Medium carrying the payload
// {double 2.5, uint64 0xFACEFEEDDEAFBEEF, int32 idx = n} (24 bytes), a Long of the payload at
// offset n × 24 of the partner's segment, and a second Long to the same offset from a separate
// buffer by AM_RequestXferAsyncM (retried after a poll, or a block in B mode, while it answers
// AM_ERR_IN_USE: run with a small AMLAPI_NETWORKDEPTH to see that). The arguments are always
// 0xBABE7000 + 1 .. + n. The Medium's and the first Long's source are scribbled as soon as the
// call returns (the payload must have been captured by then).
//
// Request handlers check every argument, the length, idx == n, both constants and (Long) that the
// buffer is the segment at n × 24, then reply in the same category with the same arguments and
// idx = -n (a Long reply lands at (17 + n) × 24 of the requester's segment); the Medium request
// handler scribbles its receive buffer after replying. Reply handlers check the same with idx == -n.
// An iteration is complete when 17 × 4 × (iterations so far) replies arrived.
//
// Also (the newer AMX version): handler-table limits, every task's translation in use and its tag,
// and on a private endpoint in two private bundles: translation table size, MapAny / Inuse /
// GetTranslationTag / UnMap / Map, MaxSegLength, SetSeg / SetTag, MoveEndpoint then FreeBundle of
// the old bundle with all state still readable, SetExpectedResources, SetHandlerAny, and a
// loopback Short whose handler checks AMX_GetSourceId, AM_GetSourceEndpoint, AM_GetDestEndpoint,
// AM_GetMsgTag and AMX_GetTokenInfo. And one AM-2 call AMUDP never had: AM_GetXferM of every n
// (the partner's payload at n × 24 into my segment at (34 + n) × 24, then handler 60 + n here).
//
// Run: npx --no -- lapirun -n 2 examples/amx/testam.mjs [iters] [P|B]
import * as AM from '@amlapi/am2/compat'
import { AM_PollBlock, AM_Safe, TEST_STARTUP, eb, ep, finish, myproc, numprocs, parseCount, parsePolling, pollWait, printGlobalStats } from './apputils.mjs'

const {
  AM_OK,
  AM_SEQ,
  AM_ERR_IN_USE,
  AM_MaxShort,
  AM_MaxNumHandlers,
  AM_SetNumHandlers,
  AM_GetNumHandlers,
  AM_GetTag,
  AM_GetTranslationInuse,
  AM_GetTranslationTag,
  AM_GetTranslationName,
  AM_AllocateBundle,
  AM_AllocateEndpoint,
  AM_GetNumTranslations,
  AM_MaxNumTranslations,
  AM_SetNumTranslations,
  AM_MapAny,
  AM_UnMap,
  AM_Map,
  AM_MaxSegLength,
  AM_SetSeg,
  AM_GetSeg,
  AM_SetTag,
  AM_MoveEndpoint,
  AM_FreeBundle,
  AM_SetExpectedResources,
  AM_SetHandlerAny,
  AM_Request0,
  AM_Poll,
  AM_FreeEndpoint,
  AM_SetHandler,
  AM_GetSourceEndpoint,
  AM_GetDestEndpoint,
  AM_GetMsgTag,
  AMX_GetSourceId,
  AMX_GetTokenInfo,
  AMX_SPMDBarrier,
  ref,
} = AM

const NUMHANDLERS_PER_TYPE = AM_MaxShort() + 1 // 17: 0..16 arguments
const SHORT_REQ_BASE = 100
const SHORT_REP_BASE = 120
const MEDIUM_REQ_BASE = 140
const MEDIUM_REP_BASE = 160
const LONG_REQ_BASE = 180
const LONG_REP_BASE = 200
const GETXFER_BASE = 60
const PAYLOAD_SZ = 24
const DOUBLEVAR_VAL = 2.5
const INT64VAR_VAL = 0xfacefeeddeafbeefn
const ABASE = 0xbabe7000
/** The arguments A1..A16, as int32 (what a handler gets). */
const A = Array.from({ length: 16 }, (_, i) => (ABASE + i + 1) | 0)

let errs = 0
let numreq = 0
let numrep = 0
let numget = 0
let inUse = 0

function verify(cond, what) {
  if (!cond) {
    errs++
    if (errs <= 20) console.log(`${myproc}: ERROR: verify(${what}) failed`)
  }
  return cond
}

function fatalMismatch(msg) {
  errs++
  if (errs <= 20) console.log(`${myproc}: ERROR: ${msg}`)
}

// ───────────────────────────── payloads ─────────────────────────────

function makePayload(idx, into = new Uint8Array(PAYLOAD_SZ)) {
  const dv = new DataView(into.buffer, into.byteOffset, PAYLOAD_SZ)
  dv.setFloat64(0, DOUBLEVAR_VAL, true)
  dv.setBigUint64(8, INT64VAR_VAL, true)
  dv.setInt32(16, idx, true)
  dv.setInt32(20, 0, true)
  return into
}

function scribble(u8) {
  u8.fill(0xbb)
}

function checkArgs(args, n, where) {
  let bad = args.length !== n
  for (let i = 0; i < n && !bad; i++) bad = args[i] !== A[i]
  if (bad) fatalMismatch(`Arg mismatch in ${where} on P${myproc}: [${args.map((a) => '0x' + (a >>> 0).toString(16)).join(', ')}]`)
}

function checkPayload(buf, nbytes, idx, where) {
  if (nbytes !== PAYLOAD_SZ || buf.length < PAYLOAD_SZ) {
    fatalMismatch(`nbytes mismatch in ${where} on P${myproc}: ${nbytes}`)
    return
  }
  const dv = new DataView(buf.buffer, buf.byteOffset, PAYLOAD_SZ)
  const d = dv.getFloat64(0, true)
  const q = dv.getBigUint64(8, true)
  const i = dv.getInt32(16, true)
  if (d !== DOUBLEVAR_VAL || q !== INT64VAR_VAL || i !== idx) {
    fatalMismatch(`payload mismatch in ${where} on P${myproc}: double ${d}, uint64 0x${q.toString(16)}, idx ${i} (expected ${idx})`)
  }
}

// the segment: request payloads at n × 24, reply payloads at (17 + n) × 24, GetXfer at (34 + n) × 24
const VMsegsz = 3 * PAYLOAD_SZ * NUMHANDLERS_PER_TYPE
const VMseg = new Uint8Array(VMsegsz)

function checkAddr(buf, off, where) {
  if (buf.buffer !== VMseg.buffer || buf.byteOffset !== VMseg.byteOffset + off) {
    fatalMismatch(`buf mismatch in ${where} on P${myproc}: offset ${buf.byteOffset - VMseg.byteOffset}, expected ${off}`)
  }
}

// ───────────────────────────── the calls, by arity ─────────────────────────────

const Request = []
const RequestI = []
const RequestXfer = []
const RequestXferAsync = []
const Reply = []
const ReplyI = []
const ReplyXfer = []
const GetXfer = []
for (let n = 0; n < NUMHANDLERS_PER_TYPE; n++) {
  Request[n] = AM[`AM_Request${n}`]
  RequestI[n] = AM[`AM_RequestI${n}`]
  RequestXfer[n] = AM[`AM_RequestXfer${n}`]
  RequestXferAsync[n] = AM[`AM_RequestXferAsync${n}`]
  Reply[n] = AM[`AM_Reply${n}`]
  ReplyI[n] = AM[`AM_ReplyI${n}`]
  ReplyXfer[n] = AM[`AM_ReplyXfer${n}`]
  GetXfer[n] = AM[`AM_GetXfer${n}`]
}

const replyPayload = new Uint8Array(PAYLOAD_SZ)

function setupHandlers() {
  for (let n = 0; n < NUMHANDLERS_PER_TYPE; n++) {
    const args = A.slice(0, n)
    const set = (idx, fn) => AM_Safe(AM_SetHandler(ep, idx, fn), `AM_SetHandler(ep, ${idx}, ...)`)
    set(SHORT_REQ_BASE + n, (token, ...a) => {
      checkArgs(a, n, `short_${n}req_handler`)
      numreq++
      AM_Safe(Reply[n](token, SHORT_REP_BASE + n, ...a), `AM_Reply${n}(token, SHORT_${n}REP_HANDLER, ...)`)
    })
    set(SHORT_REP_BASE + n, (token, ...a) => {
      checkArgs(a, n, `short_${n}rep_handler`)
      numrep++
    })
    set(MEDIUM_REQ_BASE + n, (token, buf, nbytes, ...a) => {
      checkArgs(a, n, `medium_${n}req_handler`)
      checkPayload(buf, nbytes, n, `medium_${n}req_handler`)
      numreq++
      makePayload(-n, replyPayload)
      AM_Safe(ReplyI[n](token, MEDIUM_REP_BASE + n, replyPayload, PAYLOAD_SZ, ...args), `AM_ReplyI${n}(token, MEDIUM_${n}REP_HANDLER, ...)`)
      scribble(replyPayload)
      scribble(buf.subarray(0, nbytes)) // the temporary buffer is ours until we return
    })
    set(MEDIUM_REP_BASE + n, (token, buf, nbytes, ...a) => {
      checkArgs(a, n, `medium_${n}rep_handler`)
      checkPayload(buf, nbytes, -n, `medium_${n}rep_handler`)
      numrep++
    })
    set(LONG_REQ_BASE + n, (token, buf, nbytes, ...a) => {
      checkArgs(a, n, `long_${n}req_handler`)
      checkPayload(buf, nbytes, n, `long_${n}req_handler`)
      checkAddr(buf, n * PAYLOAD_SZ, `long_${n}req_handler`)
      numreq++
      makePayload(-n, replyPayload)
      AM_Safe(
        ReplyXfer[n](token, (NUMHANDLERS_PER_TYPE + n) * PAYLOAD_SZ, LONG_REP_BASE + n, replyPayload, PAYLOAD_SZ, ...args),
        `AM_ReplyXfer${n}(token, ..., LONG_${n}REP_HANDLER, ...)`,
      )
      scribble(replyPayload)
    })
    set(LONG_REP_BASE + n, (token, buf, nbytes, ...a) => {
      checkArgs(a, n, `long_${n}rep_handler`)
      checkPayload(buf, nbytes, -n, `long_${n}rep_handler`)
      checkAddr(buf, (NUMHANDLERS_PER_TYPE + n) * PAYLOAD_SZ, `long_${n}rep_handler`)
      numrep++
    })
    set(GETXFER_BASE + n, (token, buf, nbytes, ...a) => {
      checkArgs(a, n, `getxfer_${n}_handler`)
      checkPayload(buf, nbytes, n, `getxfer_${n}_handler`)
      checkAddr(buf, (2 * NUMHANDLERS_PER_TYPE + n) * PAYLOAD_SZ, `getxfer_${n}_handler`)
      numget++
    })
  }
}

/** One iteration: every category and arity to `partner` (17 × 4 requests). */
const medPayload = new Uint8Array(PAYLOAD_SZ)
const longPayload = new Uint8Array(PAYLOAD_SZ)
const asyncPayloads = Array.from({ length: NUMHANDLERS_PER_TYPE }, (_, n) => makePayload(n))
function allamReq(partner, polling) {
  for (let n = 0; n < NUMHANDLERS_PER_TYPE; n++) {
    const args = A.slice(0, n)
    AM_Safe(Request[n](ep, partner, SHORT_REQ_BASE + n, ...args), `AM_Request${n}(ep, partner, SHORT_${n}REQ_HANDLER, ...)`)

    makePayload(n, medPayload)
    AM_Safe(RequestI[n](ep, partner, MEDIUM_REQ_BASE + n, medPayload, PAYLOAD_SZ, ...args), `AM_RequestI${n}(ep, partner, MEDIUM_${n}REQ_HANDLER, ...)`)
    scribble(medPayload)

    makePayload(n, longPayload)
    AM_Safe(
      RequestXfer[n](ep, partner, n * PAYLOAD_SZ, LONG_REQ_BASE + n, longPayload, PAYLOAD_SZ, ...args),
      `AM_RequestXfer${n}(ep, partner, ..., LONG_${n}REQ_HANDLER, ...)`,
    )
    scribble(longPayload)

    let rc
    while ((rc = RequestXferAsync[n](ep, partner, n * PAYLOAD_SZ, LONG_REQ_BASE + n, asyncPayloads[n], PAYLOAD_SZ, ...args)) === AM_ERR_IN_USE) {
      inUse++
      if (polling) AM_Safe(AM_Poll(eb), 'AM_Poll(eb)')
      else AM_PollBlock(eb)
    }
    AM_Safe(rc, `AM_RequestXferAsync${n}(ep, partner, ..., LONG_${n}REQ_HANDLER, ...)`)
  }
}

// ───────────────────────────── misc and endpoint/bundle checks ─────────────────────────────

function miscTests() {
  const numhand = AM_MaxNumHandlers()
  verify(numhand >= 256, 'AM_MaxNumHandlers() >= 256')
  const n = ref(0)
  AM_Safe(AM_SetNumHandlers(ep, numhand), 'AM_SetNumHandlers(ep, numhand)')
  AM_Safe(AM_GetNumHandlers(ep, n), 'AM_GetNumHandlers(ep, &n)')
  verify(n.value >= numhand, 'n >= numhand')
  const mytag = ref(0n)
  const t = ref(0n)
  AM_Safe(AM_GetTag(ep, mytag), 'AM_GetTag(ep, &mytag)')
  for (let i = 0; i < numprocs; i++) {
    verify(AM_GetTranslationInuse(ep, i) === AM_OK, `AM_GetTranslationInuse(ep, ${i}) == AM_OK`)
    AM_Safe(AM_GetTranslationTag(ep, i, t), `AM_GetTranslationTag(ep, ${i}, &t)`)
    if (i === myproc) verify(t.value === mytag.value, 't == mytag')
  }
  verify(AM_GetTranslationInuse(ep, numprocs) !== AM_OK, 'AM_GetTranslationInuse(ep, NUMPROCS) != AM_OK')
}

function endpointTests() {
  const t1 = 0x1234abcdn
  const eb1 = ref(null)
  const eb2 = ref(null)
  const ep1r = ref(null)
  const en1r = ref(-1)
  AM_Safe(AM_AllocateBundle(AM_SEQ, eb1), 'AM_AllocateBundle(AM_SEQ, &eb1)')
  AM_Safe(AM_AllocateBundle(AM_SEQ, eb2), 'AM_AllocateBundle(AM_SEQ, &eb2)')
  AM_Safe(AM_AllocateEndpoint(eb1.value, ep1r, en1r), 'AM_AllocateEndpoint(eb1, &ep1, &en1)')
  const ep1 = ep1r.value
  const en1 = en1r.value

  const n = ref(0)
  const m = ref(0)
  AM_Safe(AM_GetNumTranslations(ep1, n), 'AM_GetNumTranslations(ep1, &n)')
  verify(n.value >= 256, 'n >= 256')
  AM_Safe(AM_MaxNumTranslations(m), 'AM_MaxNumTranslations(&m)')
  verify(m.value >= 256, 'm >= 256')
  const mm = m.value > 1024 ? 1024 : m.value
  AM_Safe(AM_SetNumTranslations(ep1, mm), 'AM_SetNumTranslations(ep1, m)')
  AM_Safe(AM_GetNumTranslations(ep1, n), 'AM_GetNumTranslations(ep1, &n)')
  verify(n.value === mm, 'n == m')

  const ir = ref(-1)
  AM_Safe(AM_MapAny(ep1, ir, en1, t1), 'AM_MapAny(ep1, &i, en1, t1)')
  const i = ir.value
  verify(i >= 0 && i < mm, 'i >= 0 && i < m')
  verify(AM_GetTranslationInuse(ep1, i) === AM_OK, 'AM_GetTranslationInuse(ep1, i) == AM_OK')
  const tag = ref(0n)
  AM_Safe(AM_GetTranslationTag(ep1, i, tag), 'AM_GetTranslationTag(ep1, i, &tag)')
  verify(tag.value === t1, 't1 == tag')
  AM_Safe(AM_UnMap(ep1, i), 'AM_UnMap(ep1, i)')
  verify(AM_GetTranslationInuse(ep1, i) !== AM_OK, 'AM_GetTranslationInuse(ep1, i) != AM_OK')
  AM_Safe(AM_Map(ep1, i, en1, t1), 'AM_Map(ep1, i, en1, t1)')
  const sz = ref(0)
  AM_Safe(AM_MaxSegLength(sz), 'AM_MaxSegLength(&sz)')
  verify(sz.value >= 4, 'sz >= sizeof(int)')
  const tiny = new Uint8Array(4)
  AM_Safe(AM_SetSeg(ep1, tiny, 4), 'AM_SetSeg(ep1, tiny, 4)')
  AM_Safe(AM_SetTag(ep1, t1), 'AM_SetTag(ep1, t1)')

  AM_Safe(AM_MoveEndpoint(ep1, eb1.value, eb2.value), 'AM_MoveEndpoint(ep1, eb1, eb2)')
  AM_Safe(AM_FreeBundle(eb1.value), 'AM_FreeBundle(eb1)')
  verify(AM_GetTranslationInuse(ep1, i) === AM_OK, 'AM_GetTranslationInuse(ep1, i) == AM_OK (after the move)')
  tag.value = 0n
  AM_Safe(AM_GetTranslationTag(ep1, i, tag), 'AM_GetTranslationTag(ep1, i, &tag)')
  verify(tag.value === t1, 't1 == tag (after the move)')
  const en2 = ref(-1)
  AM_Safe(AM_GetTranslationName(ep1, i, en2), 'AM_GetTranslationName(ep1, i, &en2)')
  verify(en2.value === en1, 'en1 == en2')
  const vp = ref(null)
  AM_Safe(AM_GetSeg(ep1, vp, sz), 'AM_GetSeg(ep1, &vp, &sz)')
  verify(sz.value === 4, 'sz == 4')
  verify(vp.value === tiny, 'vp == tiny')
  AM_Safe(AM_GetNumTranslations(ep1, n), 'AM_GetNumTranslations(ep1, &n)')
  verify(n.value === mm, 'n == m (after the move)')
  tag.value = 0n
  AM_Safe(AM_GetTag(ep1, tag), 'AM_GetTag(ep1, &tag)')
  verify(tag.value === t1, 't1 == tag (own tag)')

  AM_Safe(AM_SetExpectedResources(ep1, 1, 1), 'AM_SetExpectedResources(ep1, 1, 1)')
  const hidx = ref(-1)
  let checkTag = t1
  const checkAMshort = (token) => {
    const id = ref(-1)
    const en = ref(-1)
    const dep = ref(null)
    const mt = ref(0n)
    const h = ref(-1)
    const cat = ref(-1)
    const isReq = ref(false)
    AM_Safe(AMX_GetSourceId(token, id), 'AMX_GetSourceId(token, &id)')
    verify(id.value === i, 'id == 0')
    AM_Safe(AM_GetSourceEndpoint(token, en), 'AM_GetSourceEndpoint(token, &en)')
    verify(en.value === en1, 'en == check_en')
    AM_Safe(AM_GetDestEndpoint(token, dep), 'AM_GetDestEndpoint(token, &ep)')
    verify(dep.value === ep1, 'ep == check_ep')
    AM_Safe(AM_GetMsgTag(token, mt), 'AM_GetMsgTag(token, &tag)')
    verify(mt.value === t1, 'tag == check_tag')
    AM_Safe(AMX_GetTokenInfo(token, h, cat, isReq), 'AMX_GetTokenInfo(token, &hidx, &category, &is_req)')
    verify(h.value === hidx.value, 'hidx == check_hidx')
    verify(cat.value === 0, 'category == amx_Short')
    verify(isReq.value === true, 'is_req')
    checkTag = 0n
  }
  AM_Safe(AM_SetHandlerAny(ep1, hidx, checkAMshort), 'AM_SetHandlerAny(ep1, &check_hidx, checkAMshort)')
  verify(hidx.value > 0 && hidx.value < AM_MaxNumHandlers(), 'check_hidx in 1..255')
  AM_Safe(AM_Request0(ep1, i, hidx.value), 'AM_Request0(ep1, 0, check_hidx)')
  const t0 = performance.now()
  do {
    AM_Safe(AM_Poll(eb2.value), 'AM_Poll(eb2)')
  } while (checkTag !== 0n && performance.now() - t0 < 10000)
  verify(checkTag === 0n, 'the loopback Short ran')

  AM_Safe(AM_FreeEndpoint(ep1), 'AM_FreeEndpoint(ep1)')
  AM_Safe(AM_FreeBundle(eb2.value), 'AM_FreeBundle(eb2)')
}

// ───────────────────────────── main ─────────────────────────────

const argv = TEST_STARTUP(0, 2, 'iters (Poll/Block)')
const iters = parseCount(argv[0])
const polling = parsePolling(argv[1])

miscTests()
endpointTests()
setupHandlers()
AM_Safe(AM_SetSeg(ep, VMseg, VMsegsz), 'AM_SetSeg(ep, VMseg, VMsegsz)')

AM_Safe(AMX_SPMDBarrier(), 'AMX_SPMDBarrier()')
const partner = (myproc + 1) % numprocs
const perIter = NUMHANDLERS_PER_TYPE * 4
for (let i = 0; i < iters; i++) {
  allamReq(partner, polling)
  pollWait(polling, () => numrep >= perIter * (i + 1))
}

// AM_GetXferM: the partner's request payloads (idx n at n × 24, written by my Longs) into my
// segment at (34 + n) × 24
for (let n = 0; n < NUMHANDLERS_PER_TYPE; n++) {
  AM_Safe(
    GetXfer[n](ep, partner, n * PAYLOAD_SZ, GETXFER_BASE + n, (2 * NUMHANDLERS_PER_TYPE + n) * PAYLOAD_SZ, PAYLOAD_SZ, ...A.slice(0, n)),
    `AM_GetXfer${n}(ep, partner, ..., GETXFER_${n}_HANDLER, ...)`,
  )
}
pollWait(polling, () => numget >= NUMHANDLERS_PER_TYPE)

AM_Safe(AMX_SPMDBarrier(), 'AMX_SPMDBarrier()')
// every request sent to me has been handled by now (its sender got the reply before the barrier)
verify(numrep === perIter * iters, `numrep == ${perIter * iters} (is ${numrep})`)
verify(numreq === perIter * iters, `numreq == ${perIter * iters} (is ${numreq})`)
verify(numget === NUMHANDLERS_PER_TYPE, `numget == ${NUMHANDLERS_PER_TYPE} (is ${numget})`)
for (let n = 0; n < NUMHANDLERS_PER_TYPE; n++) {
  checkPayload(VMseg.subarray(n * PAYLOAD_SZ), PAYLOAD_SZ, n, `segment at ${n} x 24`)
  checkPayload(VMseg.subarray((NUMHANDLERS_PER_TYPE + n) * PAYLOAD_SZ), PAYLOAD_SZ, -n, `segment at ${NUMHANDLERS_PER_TYPE + n} x 24`)
}

console.log(`Worker ${myproc} done.`)
printGlobalStats({ 'requests handled': numreq, 'replies handled': numrep, 'GetXfer replies': numget, 'XferAsync AM_ERR_IN_USE retries': inUse })
finish(errs)
