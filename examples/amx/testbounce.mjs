// testbounce: Long round trip with data verification (the AMX test suite, AM-2 reference
// section 4). Tasks pair up (0,1), (2,3), ...; the odd one starts (P must be even, or 1). Each
// iteration the initiator fills its segment at offset 100 with the words (count << 16) + i for
// AM_MaxLong() / 4 words and sends them as RequestXfer1(offset 100, AM_MaxLong() bytes, arg 666);
// the partner's handler checks argument, length, address and pattern, rewrites the buffer with
// the next count's pattern and ReplyXfer1s it back to offset 100, where the reply handler checks
// it again. The segment (AM_MaxLong() + 100 bytes) is in the task's LAPI segment when it fits.
// Run: npx --no -- lapirun -n 2 examples/amx/testbounce.mjs [iters] [P|B]
import { AM_MaxLong, AM_OK, AM_RequestXfer1, AM_ReplyXfer1, AM_SetHandler, AM_SetSeg, AMX_Malloc, AMX_SPMDBarrier, AMX_View, ref } from '@amlapi/am2/compat'
import {
  AM_Safe,
  TEST_STARTUP,
  ep,
  fatal,
  finish,
  getCurrentTimeMicrosec,
  myproc,
  numprocs,
  parseCount,
  parsePolling,
  pollWait,
  printGlobalStats,
} from './apputils.mjs'

const LARGE_REQ_HANDLER = 5
const LARGE_REP_HANDLER = 6

let count = 0
let done = false
let errs = 0
let seg = null // Uint8Array, AM_MaxLong() + 100 bytes

function report(msg) {
  if (errs++ < 10) console.log(`ERROR: proc ${myproc}: ${msg}`)
}

function fill(buf, c) {
  const w = new Uint32Array(buf.buffer, buf.byteOffset, buf.length >>> 2)
  const base = (c << 16) >>> 0
  for (let i = 0; i < w.length; i++) w[i] = (base + i) >>> 0
}

function verify(buf, c, who) {
  const w = new Uint32Array(buf.buffer, buf.byteOffset, buf.length >>> 2)
  const base = (c << 16) >>> 0
  for (let i = 0; i < w.length; i++) {
    if (w[i] !== (base + i) >>> 0) {
      report(`${who}: mismatched data recvdbuf[${i}]=${w[i]}, expected ${(base + i) >>> 0}`)
      return
    }
  }
}

function checkArgs(buf, nbytes, arg, who) {
  if (arg !== 666) report(`${who}: arg ${arg} != 666`)
  if (nbytes !== AM_MaxLong()) report(`${who}: nbytes ${nbytes} != ${AM_MaxLong()}`)
  if (buf.buffer !== seg.buffer || buf.byteOffset !== seg.byteOffset + 100) report(`${who}: buf is not segment + 100`)
}

function largeRequestHandler(token, buf, nbytes, arg) {
  checkArgs(buf, nbytes, arg, 'large_request_handler')
  verify(buf, count, 'large_request_handler')
  count++
  fill(buf, count)
  if (numprocs > 1) count++
  AM_Safe(AM_ReplyXfer1(token, 100, LARGE_REP_HANDLER, buf, nbytes, 666), 'AM_ReplyXfer1(token, 100, LARGE_REP_HANDLER, buf, nbytes, 666)')
}

function largeReplyHandler(token, buf, nbytes, arg) {
  checkArgs(buf, nbytes, arg, 'large_reply_handler')
  if (numprocs > 1) count++
  verify(buf, count, 'large_reply_handler')
  count++
  done = true
}

const argv = TEST_STARTUP(0, 2, 'iters (Poll/Block)')
AM_Safe(AM_SetHandler(ep, LARGE_REQ_HANDLER, largeRequestHandler), 'AM_SetHandler(ep, LARGE_REQ_HANDLER, ...)')
AM_Safe(AM_SetHandler(ep, LARGE_REP_HANDLER, largeReplyHandler), 'AM_SetHandler(ep, LARGE_REP_HANDLER, ...)')
const iters = parseCount(argv[0])
const polling = parsePolling(argv[1])
if (numprocs % 2 !== 0 && numprocs > 1) fatal('requires an even or unary number of processors')

const maxLong = AM_MaxLong()
{
  const a = ref(0)
  seg = AMX_Malloc(maxLong + 100, a) === AM_OK ? AMX_View(a.value, maxLong + 100) : new Uint8Array(maxLong + 100)
}
AM_Safe(AM_SetSeg(ep, seg, maxLong + 100), 'AM_SetSeg(ep, seg, AM_MaxLong() + 100)')
const partner = myproc % 2 === 0 ? (myproc + 1) % numprocs : myproc - 1

AM_Safe(AMX_SPMDBarrier(), 'AMX_SPMDBarrier()')
if (myproc === 0) console.log(`Running ${iters} iterations of bulk bounce test (${maxLong} bytes each way)...`)

const begin = getCurrentTimeMicrosec()
if (myproc % 2 === 1 || numprocs === 1) {
  const srcmem = seg.subarray(100, 100 + maxLong)
  for (let q = 0; q < iters; q++) {
    fill(srcmem, count)
    done = false
    AM_Safe(
      AM_RequestXfer1(ep, partner, 100, LARGE_REQ_HANDLER, srcmem, maxLong, 666),
      'AM_RequestXfer1(ep, partner, 100, LARGE_REQ_HANDLER, srcmem, AM_MaxLong(), 666)',
    )
    pollWait(polling, () => done)
  }
} else {
  pollWait(polling, () => count >= iters * 2)
}
const total = Math.max(getCurrentTimeMicrosec() - begin, 1)

console.log(`Slave ${myproc}: ${total} microseconds total, throughput: ${((1e6 * maxLong * iters) / total / 1024).toFixed(3)} KB/sec`)
if (count !== 2 * iters) report(`count ${count}, expected ${2 * iters}`)

printGlobalStats({ 'bounce round trips': myproc % 2 === 1 || numprocs === 1 ? iters : 0 })
finish(errs)
