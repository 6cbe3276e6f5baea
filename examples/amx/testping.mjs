// testping: pipelined small-message throughput (the AMX test suite, AM-2 reference section 4).
// Every task other than 0 sends `iters` Request0s to task 0 back to back (limited only by flow
// control); task 0 replies to each with a Reply0. With one task, task 0 pings itself.
// Run: npx lapirun -n 2 examples/amx/testping.mjs [iters] [P|B]
import { AM_Request0, AM_Reply0, AM_SetHandler, AMX_SPMDBarrier } from '@amlapi/am2/compat'
import {
  AM_Safe, TEST_STARTUP, ep, finish, getCurrentTimeMicrosec, myproc, numprocs, parseCount, parsePolling, pollWait,
  printGlobalStats,
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

if (numprocs === 1) numleft = 2 * iters
else if (myproc === 0) numleft = (numprocs - 1) * iters
else numleft = iters

AM_Safe(AMX_SPMDBarrier(), 'AMX_SPMDBarrier()')
if (myproc === 0) console.log(`Running ${iters} iterations of ping test...`)

const sender = myproc !== 0 || numprocs === 1
const begin = getCurrentTimeMicrosec()
if (sender) {
  for (let k = 0; k < iters; k++) AM_Safe(AM_Request0(ep, 0, PING_REQ_HANDLER), 'AM_Request0(ep, 0, PING_REQ_HANDLER)')
}
pollWait(polling, () => numleft === 0)
const total = Math.max(getCurrentTimeMicrosec() - begin, 1)

if (sender) {
  console.log(`Slave ${myproc}: ${total} microseconds total, throughput: ${Math.floor(1e6 * iters / total)} requests/sec ` +
    `(${(total / iters).toFixed(3)} us / request)`)
} else {
  console.log(`Slave ${myproc} done.`)
}

let errs = 0
if (numleft !== 0) { console.log(`ERROR: proc ${myproc}: ${numleft} messages missing`); errs++ }
printGlobalStats({ 'ping requests handled': requests, 'ping replies handled': replies })
finish(errs)
