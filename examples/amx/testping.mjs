// testping: pipelined small-message throughput (the AMX test suite, AM-2 reference section 4).
// Every task other than 0 sends `iters` Request0s to task 0 back to back (limited only by flow
// control); task 0 replies to each with a Reply0. With one task, task 0 pings itself.
// Run: npx --no -- lapirun -n 2 examples/amx/testping.mjs [iters] [P|B]
import { AM_Request0, AMX_SPMDBarrier } from '@amlapi/am2/compat'
import {
  AM_Safe,
  PING_REQ_HANDLER,
  TEST_STARTUP,
  ep,
  finish,
  getCurrentTimeMicrosec,
  myproc,
  numprocs,
  parseCount,
  parsePolling,
  ping,
  pollWait,
  printGlobalStats,
  printRequestRate,
  setupPingHandlers,
} from './apputils.mjs'

const argv = TEST_STARTUP(0, 2, 'iters (Poll/Block)')
setupPingHandlers()
const iters = parseCount(argv[0])
const polling = parsePolling(argv[1])

if (numprocs === 1) ping.numleft = 2 * iters
else if (myproc === 0) ping.numleft = (numprocs - 1) * iters
else ping.numleft = iters

AM_Safe(AMX_SPMDBarrier(), 'AMX_SPMDBarrier()')
if (myproc === 0) console.log(`Running ${iters} iterations of ping test...`)

const sender = myproc !== 0 || numprocs === 1
const begin = getCurrentTimeMicrosec()
if (sender) {
  for (let k = 0; k < iters; k++) AM_Safe(AM_Request0(ep, 0, PING_REQ_HANDLER), 'AM_Request0(ep, 0, PING_REQ_HANDLER)')
}
pollWait(polling, () => ping.numleft === 0)
const total = Math.max(getCurrentTimeMicrosec() - begin, 1)

printRequestRate(sender, total, iters)

let errs = 0
if (ping.numleft !== 0) {
  console.log(`ERROR: proc ${myproc}: ${ping.numleft} messages missing`)
  errs++
}
printGlobalStats({ 'ping requests handled': ping.requests, 'ping replies handled': ping.replies })
finish(errs)
