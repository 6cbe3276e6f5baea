// The AMX application utilities, for the AMX test programs of this folder (the AM-2 reference,
// section 4, "Common harness"), written against the C-style face `@amlapi/am2/compat`:
//
//   - TEST_STARTUP: AMX_SPMDStartup (one bundle and endpoint per task, every task mapped at
//     translation index = its task id), a usage check of the program's arguments, and the
//     utility handlers below;
//   - AM_Safe: any AM call that does not return AM_OK prints "Error calling: <call>" and ends the
//     job with a non-zero exit;
//   - AM_PollBlock / pollWait: "Block" mode waits (AM_SetEventMask(AM_NOTEMPTY), AM_WaitSema,
//     AM_Poll), "Poll" mode spins in AM_Poll;
//   - utility handlers at indices 225..233 (APPUTIL_HANDLER_BASE): the statistics message (a
//     Medium to task 0), synchronous getWord/putWord and asynchronous readWord/writeWord (with
//     readSync/writeSync), all by AM requests and replies. Addresses are Addrs of the task's LAPI
//     segment (AMX_Malloc), sent as two 32-bit arguments (high, low) as AMUDP splits its pointers;
//     the completion flags and counters live in the segment too, and the replies name them.
import * as AM from '@amlapi/am2/compat'

const {
  AM_OK,
  AM_NOTEMPTY,
  AM_Poll,
  AM_SetEventMask,
  AM_WaitSema,
  AM_SetHandler,
  AM_Request5,
  AM_Request6,
  AM_RequestI1,
  AM_Reply0,
  AM_Reply2,
  AM_Reply5,
  AMX_SPMDStartup,
  AMX_SPMDBarrier,
  AMX_SPMDMyProc,
  AMX_SPMDNumProcs,
  AMX_SPMDExit,
  AMX_SPMDAllGather,
  AMX_Malloc,
  AMX_View,
  ref,
} = AM

export const APPUTIL_HANDLER_BASE = 225
const STATS_REQ_HANDLER = APPUTIL_HANDLER_BASE + 0
const GET_REQ_HANDLER = APPUTIL_HANDLER_BASE + 1
const GET_REP_HANDLER = APPUTIL_HANDLER_BASE + 2
const PUT_REQ_HANDLER = APPUTIL_HANDLER_BASE + 3
const PUT_REP_HANDLER = APPUTIL_HANDLER_BASE + 4
const READ_REQ_HANDLER = APPUTIL_HANDLER_BASE + 5
const READ_REP_HANDLER = APPUTIL_HANDLER_BASE + 6
const WRITE_REQ_HANDLER = APPUTIL_HANDLER_BASE + 7
const WRITE_REP_HANDLER = APPUTIL_HANDLER_BASE + 8

const STATUS_NAMES = ['AM_OK', 'AM_ERR_NOT_INIT', 'AM_ERR_BAD_ARG', 'AM_ERR_RESOURCE', 'AM_ERR_NOT_SENT', 'AM_ERR_IN_USE']

/** The task's bundle and endpoint (set by TEST_STARTUP). */
export let eb = null
export let ep = null
export let myproc = -1
export let numprocs = 0

/** The source text of an arrow function's body: `() => AM_Poll(eb)` gives `AM_Poll(eb)`. */
function callText(fn) {
  const s = String(fn)
  const i = s.indexOf('=>')
  return (i >= 0 ? s.slice(i + 2) : s).trim()
}

/** Ends the job: this task exits with `code` (non-zero: the whole job fails). */
export function fatal(msg, code = 1) {
  if (msg !== undefined) console.log(msg)
  AMX_SPMDExit(code)
}

/**
 * AM_Safe(() => AM_Call(...)) or AM_Safe(AM_Call(...), 'text'): a call that does not return AM_OK
 * prints "Error calling: <call>" and ends the job with a failure. Returns the code (AM_OK).
 */
export function AM_Safe(call, text) {
  const rc = typeof call === 'function' ? call() : call
  if (rc !== AM_OK) {
    const what = text ?? (typeof call === 'function' ? callText(call) : '(an AM call)')
    fatal(`Error calling: ${what} (returned ${STATUS_NAMES[rc] ?? String(rc)})`)
  }
  return rc
}

/** One Block-mode step: arm AM_NOTEMPTY, sleep in AM_WaitSema until a message came, poll. */
export function AM_PollBlock(bundle = eb) {
  AM_Safe(AM_SetEventMask(bundle, AM_NOTEMPTY), 'AM_SetEventMask(eb, AM_NOTEMPTY)')
  AM_Safe(AM_WaitSema(bundle), 'AM_WaitSema(eb)')
  AM_Safe(AM_Poll(bundle), 'AM_Poll(eb)')
}

/** Serves messages until `done()` holds: spinning in AM_Poll (`polling`) or blocking (AM_PollBlock). */
export function pollWait(polling, done) {
  if (polling) {
    while (!done()) AM_Safe(AM_Poll(eb), 'AM_Poll(eb)')
  } else {
    while (!done()) AM_PollBlock(eb)
  }
}

/** Microseconds since an arbitrary origin (AMUDP's getCurrentTimeMicrosec). */
export function getCurrentTimeMicrosec() {
  return Math.floor(performance.now() * 1000)
}

/** Prints the overhead, smallest step and granularity of getCurrentTimeMicrosec (10,000 reads). */
export function outputTimerStats() {
  const iters = 10000
  const start = getCurrentTimeMicrosec()
  let last = start
  let mindiff = 1 << 30
  for (let i = 0; i < iters; i++) {
    const t = getCurrentTimeMicrosec()
    const diff = t - last
    if (diff < mindiff) mindiff = diff
    last = t
  }
  const avg = (getCurrentTimeMicrosec() - start) / (iters + 1)
  console.log(
    `Timer overhead:      ${avg.toFixed(6)} us per call\n` + `Timer mindiff:       ${mindiff} us\n` + `Timer granularity: +-${(avg - mindiff).toFixed(6)} us`,
  )
}

/** Parses a P|B argument: true for polling. Ends the job for anything else. */
export function parsePolling(arg) {
  if (arg === undefined || arg === '') return true
  switch (arg[0]) {
    case 'p':
    case 'P':
      return true
    case 'b':
    case 'B':
      return false
    default:
      fatal("polling must be 'P' or 'B'..")
  }
}

/** An iteration count argument (atoi; 0 or missing: `dflt`). */
export function parseCount(arg, dflt = 1) {
  const n = Number.parseInt(arg ?? '', 10)
  return Number.isFinite(n) && n !== 0 ? n : dflt
}

// ───────────────────────────── memory words by Addr ─────────────────────────────

let mem = null // a DataView of the whole LAPI segment of this task (Addr = byte offset)

/** `nbytes` zeroed bytes of this task's LAPI segment; returns the Addr. */
export function segMalloc(nbytes) {
  const a = ref(0)
  AM_Safe(AMX_Malloc(nbytes, a), `AMX_Malloc(${nbytes})`)
  if (mem === null) {
    const v = AMX_View(a.value, nbytes)
    mem = new DataView(v.buffer)
  }
  return a.value
}

/**
 * All-gathers one Addr per task (each task's own segment: the address spaces need not agree);
 * returns them in task order.
 */
export function allGatherAddr(addr) {
  const mine = new Uint8Array(8)
  new DataView(mine.buffer).setBigUint64(0, BigInt(addr), true)
  const all = new Uint8Array(8 * numprocs)
  AM_Safe(AMX_SPMDAllGather(mine, all, 8), 'AMX_SPMDAllGather(mine, all, 8)')
  const dv = new DataView(all.buffer)
  return Array.from({ length: numprocs }, (_, i) => Number(dv.getBigUint64(8 * i, true)))
}

/** The 32-bit word at Addr `addr` of this task's segment (unsigned). */
export function loadWord(addr) {
  return mem.getUint32(addr, true)
}
/** Stores a 32-bit word at Addr `addr` of this task's segment. */
export function storeWord(addr, val) {
  mem.setUint32(addr, val >>> 0, true)
}

const HI = (a) => Math.floor(a / 0x100000000) | 0
const LO = (a) => a | 0
const DWORD = (hi, lo) => (hi >>> 0) * 0x100000000 + (lo >>> 0)

// ───────────────────────────── statistics ─────────────────────────────

let statsCalls = 0
let globalStats = null
const utf8 = new TextEncoder()
const utf8d = new TextDecoder()

function statsRequestHandler(token, buf, nbytes, procnum) {
  const s = JSON.parse(utf8d.decode(buf.slice(0, nbytes)))
  if (procnum < 0 || procnum >= numprocs) console.log(`ERROR: stats from bad proc ${procnum}`)
  for (const [k, v] of Object.entries(s)) globalStats[k] = (globalStats[k] ?? 0) + v
  statsCalls++
}

/**
 * AMUDP's printGlobalStats, over what the program counted itself (`stats`: name → number; am2
 * has no endpoint statistics): a barrier, 10 ms of polling for stragglers, a barrier, every task's
 * counts to task 0 as a Medium, task 0 adds them up and prints a "Global stats" block on stderr.
 */
export function printGlobalStats(stats = {}) {
  statsCalls = 0
  globalStats = {}
  AM_Safe(AMX_SPMDBarrier(), 'AMX_SPMDBarrier()')
  const t0 = getCurrentTimeMicrosec()
  while (getCurrentTimeMicrosec() - t0 < 10000) AM_Safe(AM_Poll(eb), 'AM_Poll(eb)')
  AM_Safe(AMX_SPMDBarrier(), 'AMX_SPMDBarrier()')
  const msg = utf8.encode(JSON.stringify(stats))
  AM_Safe(AM_RequestI1(ep, 0, STATS_REQ_HANDLER, msg, msg.length, myproc), 'AM_RequestI1(ep, 0, STATS_REQ_HANDLER, ...)')
  if (myproc === 0) {
    while (statsCalls < numprocs) AM_PollBlock(eb)
    const lines = Object.entries(globalStats).map(([k, v]) => `  ${k}: ${v}`)
    process.stderr.write(
      '--------------------------------------------------\nGlobal stats:\n' +
        (lines.length > 0 ? lines.join('\n') + '\n' : '') +
        '--------------------------------------------------\n',
    )
  }
  AM_Safe(AMX_SPMDBarrier(), 'AMX_SPMDBarrier()')
}

// ───────────────────────────── synchronous get/put ─────────────────────────────

let scratch = 0 // Addr of 4 words: get done flag, get value, put done flag, spare
let readCtr = 0 // Addr of the readWord counter
let writeCtr = 0 // Addr of the writeWord counter

function getReplyHandler(token, ctrH, ctrL, destH, destL, val) {
  storeWord(DWORD(destH, destL), val)
  storeWord(DWORD(ctrH, ctrL), 1)
}

function getRequestHandler(token, ctrH, ctrL, destH, destL, addrH, addrL) {
  AM_Safe(AM_Reply5(token, GET_REP_HANDLER, ctrH, ctrL, destH, destL, loadWord(DWORD(addrH, addrL))), 'AM_Reply5(token, GET_REP_HANDLER, ...)')
}

/** The 32-bit word at Addr `addr` of task `proc`'s segment (waits for it). */
export function getWord(proc, addr) {
  const done = scratch
  const val = scratch + 4
  storeWord(done, 0)
  AM_Safe(AM_Request6(ep, proc, GET_REQ_HANDLER, HI(done), LO(done), HI(val), LO(val), HI(addr), LO(addr)), 'AM_Request6(ep, proc, GET_REQ_HANDLER, ...)')
  while (loadWord(done) === 0) AM_PollBlock(eb)
  return loadWord(val)
}

function putReplyHandler(token, ctrH, ctrL) {
  storeWord(DWORD(ctrH, ctrL), 1)
}

function putRequestHandler(token, ctrH, ctrL, destH, destL, val) {
  storeWord(DWORD(destH, destL), val)
  AM_Safe(AM_Reply2(token, PUT_REP_HANDLER, ctrH, ctrL), 'AM_Reply2(token, PUT_REP_HANDLER, ...)')
}

/** Stores `val` at Addr `addr` of task `proc`'s segment (waits for the acknowledgement). */
export function putWord(proc, addr, val) {
  const done = scratch + 8
  storeWord(done, 0)
  AM_Safe(AM_Request5(ep, proc, PUT_REQ_HANDLER, HI(done), LO(done), HI(addr), LO(addr), val | 0), 'AM_Request5(ep, proc, PUT_REQ_HANDLER, ...)')
  while (loadWord(done) === 0) AM_PollBlock(eb)
}

// ───────────────────────────── asynchronous read/write ─────────────────────────────

function readReplyHandler(token, ctrH, ctrL, destH, destL, val) {
  storeWord(DWORD(destH, destL), val)
  const c = DWORD(ctrH, ctrL)
  storeWord(c, loadWord(c) - 1)
}

function readRequestHandler(token, ctrH, ctrL, destH, destL, addrH, addrL) {
  AM_Safe(AM_Reply5(token, READ_REP_HANDLER, ctrH, ctrL, destH, destL, loadWord(DWORD(addrH, addrL))), 'AM_Reply5(token, READ_REP_HANDLER, ...)')
}

/** Starts reading the word at Addr `addr` of task `proc` into my Addr `destAddr`; readSync waits. */
export function readWord(destAddr, proc, addr) {
  storeWord(readCtr, loadWord(readCtr) + 1)
  AM_Safe(
    AM_Request6(ep, proc, READ_REQ_HANDLER, HI(readCtr), LO(readCtr), HI(destAddr), LO(destAddr), HI(addr), LO(addr)),
    'AM_Request6(ep, proc, READ_REQ_HANDLER, ...)',
  )
}

/** Waits until every readWord has landed. */
export function readSync() {
  while (loadWord(readCtr) !== 0) AM_PollBlock(eb)
}

function writeReplyHandler(token, ctrH, ctrL) {
  const c = DWORD(ctrH, ctrL)
  storeWord(c, loadWord(c) - 1)
}

function writeRequestHandler(token, ctrH, ctrL, destH, destL, val) {
  storeWord(DWORD(destH, destL), val)
  AM_Safe(AM_Reply2(token, WRITE_REP_HANDLER, ctrH, ctrL), 'AM_Reply2(token, WRITE_REP_HANDLER, ...)')
}

/** Starts storing `val` at Addr `addr` of task `proc`; writeSync waits for the acknowledgements. */
export function writeWord(proc, addr, val) {
  storeWord(writeCtr, loadWord(writeCtr) + 1)
  AM_Safe(AM_Request5(ep, proc, WRITE_REQ_HANDLER, HI(writeCtr), LO(writeCtr), HI(addr), LO(addr), val | 0), 'AM_Request5(ep, proc, WRITE_REQ_HANDLER, ...)')
}

/** Waits until every writeWord has been acknowledged. */
export function writeSync() {
  while (loadWord(writeCtr) !== 0) AM_PollBlock(eb)
}

// ───────────────────────────── the ping programs (testping, testlatency, testlatencyM) ─────────────────────────────

export const PING_REQ_HANDLER = 1
export const PING_REP_HANDLER = 2

/** What the ping handlers count: messages still expected, requests and replies handled. */
export const ping = { numleft: 0, requests: 0, replies: 0 }

/**
 * Registers the ping handlers on the endpoint: the request handler counts, runs `check(msg, nbytes)`
 * (a Medium request's payload, if given) and answers with a Reply0; the reply handler counts.
 */
export function setupPingHandlers(check = null) {
  AM_Safe(
    AM_SetHandler(ep, PING_REQ_HANDLER, (token, msg, nbytes) => {
      ping.numleft--
      ping.requests++
      if (check !== null) check(msg, nbytes)
      AM_Safe(AM_Reply0(token, PING_REP_HANDLER), 'AM_Reply0(token, PING_REP_HANDLER)')
    }),
    'AM_SetHandler(ep, PING_REQ_HANDLER, ...)',
  )
  AM_Safe(
    AM_SetHandler(ep, PING_REP_HANDLER, () => {
      ping.numleft--
      ping.replies++
    }),
    'AM_SetHandler(ep, PING_REP_HANDLER, ...)',
  )
}

/** A sender's line: total microseconds, requests/sec and µs per request; the server's "done". */
export function printRequestRate(sender, total, iters) {
  if (sender) {
    console.log(
      `Slave ${myproc}: ${total} microseconds total, throughput: ${Math.floor((1e6 * iters) / total)} requests/sec ` +
        `(${(total / iters).toFixed(3)} us / request)`,
    )
  } else {
    console.log(`Slave ${myproc} done.`)
  }
}

/** The latency programs' check of the ping counts (task 0 serves, the others send); returns the errors. */
export function checkPingCounts(iters) {
  const expected = numprocs === 1 ? [iters, iters] : myproc === 0 ? [(numprocs - 1) * iters, 0] : [0, iters]
  if (ping.requests === expected[0] && ping.replies === expected[1]) return 0
  console.log(`ERROR: proc ${myproc}: handled ${ping.requests} requests and ${ping.replies} replies, expected ${expected[0]} and ${expected[1]}`)
  return 1
}

// ───────────────────────────── startup and exit ─────────────────────────────

/** A handler 0 that reports a returned message as an error and ends the job. */
function returnedMessageHandler(status, opcode, token) {
  fatal(`ERROR: proc ${myproc}: returned message, status ${status}, opcode ${opcode}`)
}

/** Registers the utility handlers (225..233) and a reporting handler 0 on `activeep`. */
export function setupUtilHandlers(activeep, activeeb) {
  ep = activeep
  eb = activeeb
  AM_Safe(AM_SetHandler(ep, 0, returnedMessageHandler), 'AM_SetHandler(ep, 0, returnedMessageHandler)')
  const table = [
    [STATS_REQ_HANDLER, statsRequestHandler],
    [GET_REQ_HANDLER, getRequestHandler],
    [GET_REP_HANDLER, getReplyHandler],
    [PUT_REQ_HANDLER, putRequestHandler],
    [PUT_REP_HANDLER, putReplyHandler],
    [READ_REQ_HANDLER, readRequestHandler],
    [READ_REP_HANDLER, readReplyHandler],
    [WRITE_REQ_HANDLER, writeRequestHandler],
    [WRITE_REP_HANDLER, writeReplyHandler],
  ]
  for (const [i, fn] of table) AM_Safe(AM_SetHandler(ep, i, fn), `AM_SetHandler(ep, ${i}, ${fn.name})`)
  scratch = segMalloc(16)
  readCtr = segMalloc(8)
  writeCtr = segMalloc(8)
}

/**
 * TEST_STARTUP: joins the job (AMX_SPMDStartup), checks that the program got `minargs` to
 * `maxargs` arguments (else prints the usage and fails), registers the utility handlers.
 * Returns the program's arguments (process.argv after the program).
 */
export function TEST_STARTUP(minargs, maxargs, usage) {
  const ebr = ref(null)
  const epr = ref(null)
  AM_Safe(AMX_SPMDStartup(ebr, epr), 'AMX_SPMDStartup(&eb, &ep)')
  myproc = AMX_SPMDMyProc()
  numprocs = AMX_SPMDNumProcs()
  const argv = process.argv.slice(2)
  if (argv.length < minargs || argv.length > maxargs) {
    const prog = (process.argv[1] ?? 'test').split(/[\\/]/).pop()
    process.stderr.write(`Usage: ${prog} ${usage}\n`)
    AMX_SPMDExit(1)
  }
  setupUtilHandlers(epr.value, ebr.value)
  return argv
}

/** The end of every test: a barrier, then this task exits (non-zero when `errs` > 0: the job fails). */
export function finish(errs = 0) {
  AM_Safe(AMX_SPMDBarrier(), 'AMX_SPMDBarrier()')
  AMX_SPMDExit(errs > 0 ? 1 : 0)
}
