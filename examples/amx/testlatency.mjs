// testlatency: round-trip latency (the AMX test suite, AM-2 reference section 4). Each task other
// than 0 sends one Request0 to task 0 and waits for its Reply0, `iters` times (strict ping-pong);
// task 0 only serves. "us / request" is the round-trip time. With one task, task 0 pings itself.
// Run: npx lapirun -n 2 examples/amx/testlatency.mjs [iters] [P|B]
import { AM_Request0, AM_Reply0, AM_SetHandler, AMX_SPMDBarrier } from '@amlapi/am2/compat'
import {
  AM_Safe, TEST_STARTUP, ep, finish, getCurrentTimeMicrosec, myproc, numprocs, outputTimerStats, parseCount, parsePolling,
  pollWait, printGlobalStats,
} from './apputils.mjs'

const PING_REQ_HANDLER = 1
const PING_REP_HANDLER = 2

let numleft = 0
let requests = 0
let replies = 0

function pingRequestHandler (token) {
  numleft--
  requests++
  AM_Safe(AM_Reply0(token, PING_REP_HANDLER), 'AM_Reply0(token, PING_REP_HANDLER)')
}

function pingReplyHandler (token) {
  numleft--
  replies++
}

const argv = TEST_STARTUP(0, 2, 'iters (Poll/Block)')
AM_Safe(AM_SetHandler(ep, PING_REQ_HANDLER, pingRequestHandler), 'AM_SetHandler(ep, PING_REQ_HANDLER, ...)')
AM_Safe(AM_SetHandler(ep, PING_REP_HANDLER, pingReplyHandler), 'AM_SetHandler(ep, PING_REP_HANDLER, ...)')
const iters = parseCount(argv[0])
const polling = parsePolling(argv[1])
const done = () => numleft === 0

outputTimerStats()
AM_Safe(AMX_SPMDBarrier(), 'AMX_SPMDBarrier()')
if (myproc === 0) console.log(`Running ${iters} iterations of latency test...`)
if (myproc === 0 && numprocs > 1) numleft = (numprocs - 1) * iters
AM_Safe(AMX_SPMDBarrier(), 'AMX_SPMDBarrier()')

const sender = myproc !== 0 || numprocs === 1
const begin = getCurrentTimeMicrosec()
if (!sender) {
  pollWait(polling, done)
} else {
  const expect = numprocs > 1 ? 1 : 2
  for (let k = 0; k < iters; k++) {
    numleft = expect
    AM_Safe(AM_Request0(ep, 0, PING_REQ_HANDLER), 'AM_Request0(ep, 0, PING_REQ_HANDLER)')
    pollWait(polling, done)
  }
}
const total = Math.max(getCurrentTimeMicrosec() - begin, 1)

if (sender) {
  console.log(`Slave ${myproc}: ${total} microseconds total, throughput: ${Math.floor(1e6 * iters / total)} requests/sec ` +
    `(${(total / iters).toFixed(3)} us / request)`)
} else {
  console.log(`Slave ${myproc} done.`)
}

let errs = 0
const expected = numprocs === 1 ? [iters, iters] : myproc === 0 ? [(numprocs - 1) * iters, 0] : [0, iters]
if (requests !== expected[0] || replies !== expected[1]) {
  console.log(`ERROR: proc ${myproc}: handled ${requests} requests and ${replies} replies, expected ${expected[0]} and ${expected[1]}`)
  errs++
}
printGlobalStats({ 'ping requests handled': requests, 'ping replies handled': replies })
finish(errs)
