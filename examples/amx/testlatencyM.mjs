// testlatencyM: round-trip latency with a Medium payload (the AMX test suite, AM-2 reference
// section 4). As testlatency, but each request is a Medium (AM_RequestI0) of `msgsize` zero bytes
// (default 1); the reply is a Short with no arguments. The request handler checks the length.
// Run: npx --no -- lapirun -n 2 examples/amx/testlatencyM.mjs [iters] [P|B] [msgsize]
import { AM_MaxMedium, AM_RequestI0, AMX_SPMDBarrier } from '@amlapi/am2/compat'
import {
  AM_Safe,
  PING_REQ_HANDLER,
  TEST_STARTUP,
  checkPingCounts,
  ep,
  fatal,
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

let msgsz = 1
let badLength = 0

const argv = TEST_STARTUP(0, 3, 'iters (Poll/Block) (msgsize)')
setupPingHandlers((msg, nbytes) => {
  if (nbytes !== msgsz || msg.length < nbytes) badLength++
})
const iters = parseCount(argv[0])
const polling = parsePolling(argv[1])
msgsz = parseCount(argv[2], 1)
if (msgsz < 0 || msgsz > AM_MaxMedium()) fatal(`msgsize must be 1..${AM_MaxMedium()}`)
const done = () => ping.numleft === 0

outputTimerStats()
AM_Safe(AMX_SPMDBarrier(), 'AMX_SPMDBarrier()')
if (myproc === 0) console.log(`Running ${iters} iterations of latency test (MSGSZ=${msgsz})...`)
if (myproc === 0 && numprocs > 1) ping.numleft = (numprocs - 1) * iters
AM_Safe(AMX_SPMDBarrier(), 'AMX_SPMDBarrier()')

const msg = new Uint8Array(msgsz)
const sender = myproc !== 0 || numprocs === 1
const begin = getCurrentTimeMicrosec()
if (!sender) {
  pollWait(polling, done)
} else {
  const expect = numprocs > 1 ? 1 : 2
  for (let k = 0; k < iters; k++) {
    ping.numleft = expect
    AM_Safe(AM_RequestI0(ep, 0, PING_REQ_HANDLER, msg, msgsz), 'AM_RequestI0(ep, 0, PING_REQ_HANDLER, msg, msgsz)')
    pollWait(polling, done)
  }
}
const total = Math.max(getCurrentTimeMicrosec() - begin, 1)

printRequestRate(sender, total, iters)

let errs = 0
if (badLength > 0) {
  console.log(`ERROR: proc ${myproc}: ${badLength} requests with a payload length other than ${msgsz}`)
  errs++
}
errs += checkPingCounts(iters)
printGlobalStats({ 'ping requests handled': ping.requests, 'ping replies handled': ping.replies })
finish(errs)
