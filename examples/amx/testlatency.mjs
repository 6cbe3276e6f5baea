// testlatency: round-trip latency (the AMX test suite, AM-2 reference section 4). Each task other
// than 0 sends one Request0 to task 0 and waits for its Reply0, `iters` times (strict ping-pong);
// task 0 only serves. "us / request" is the round-trip time. With one task, task 0 pings itself.
// Run: npx --no -- lapirun -n 2 examples/amx/testlatency.mjs [iters] [P|B]
import { AM_Request0, AMX_SPMDBarrier } from '@amlapi/am2/compat'
import {
  AM_Safe,
  PING_REQ_HANDLER,
  TEST_STARTUP,
  checkPingCounts,
  ep,
  finish,
  getCurrentTimeMicrosec,
  myproc,
  numprocs,
  outputTimerStats,
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
const done = () => ping.numleft === 0

outputTimerStats()
AM_Safe(AMX_SPMDBarrier(), 'AMX_SPMDBarrier()')
if (myproc === 0) console.log(`Running ${iters} iterations of latency test...`)
if (myproc === 0 && numprocs > 1) ping.numleft = (numprocs - 1) * iters
AM_Safe(AMX_SPMDBarrier(), 'AMX_SPMDBarrier()')

const sender = myproc !== 0 || numprocs === 1
const begin = getCurrentTimeMicrosec()
if (!sender) {
  pollWait(polling, done)
} else {
  const expect = numprocs > 1 ? 1 : 2
  for (let k = 0; k < iters; k++) {
    ping.numleft = expect
    AM_Safe(AM_Request0(ep, 0, PING_REQ_HANDLER), 'AM_Request0(ep, 0, PING_REQ_HANDLER)')
    pollWait(polling, done)
  }
}
const total = Math.max(getCurrentTimeMicrosec() - begin, 1)

printRequestRate(sender, total, iters)
const errs = checkPingCounts(iters)
printGlobalStats({ 'ping requests handled': ping.requests, 'ping replies handled': ping.replies })
finish(errs)
