// testbulk: Long-message bandwidth (the AMX test suite, AM-2 reference section 4). `size` bytes
// (default 512) go as ceil(size / AM_MaxLong()) Long requests of AM_MaxLong() bytes (the last one
// the remainder) to (rank + 1) mod P, at offset 100 of its segment (chunk + 100 bytes), with
// argument 666; each is answered by a Reply0. Half duplex (H, the default): odd ranks send (P must
// be even, or 1); full duplex (F): every rank sends. The source is filled with the 32-bit words
// 0, 1, 2, ... and lives in the task's LAPI segment (AMX_Malloc) when it fits, so the Long goes
// from there without a staging copy. The request handler checks the argument, the length, the
// address and the data.
// Run: npx --no -- lapirun -n 2 examples/amx/testbulk.mjs [iters] [size] [P|B] [H|F]
import { AM_MaxLong, AM_OK, AM_RequestXfer1, AM_Reply0, AM_SetHandler, AM_SetSeg, AMX_Malloc, AMX_SPMDBarrier, AMX_View, ref } from '@amlapi/am2/compat'
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

const BULK_REQ_HANDLER = 1
const BULK_REP_HANDLER = 2

let done = 0
let errs = 0
let size = 512
let seg = null // my segment (msgSize + 100 bytes)
let checked = 0

function report(msg) {
  if (errs++ < 10) console.log(`ERROR: proc ${myproc}: ${msg}`)
}

function bulkRequestHandler(token, buf, nbytes, arg) {
  const maxLong = AM_MaxLong()
  if (arg !== 666) report(`bulk_request_handler: arg ${arg} != 666`)
  if (nbytes !== maxLong && nbytes !== size % maxLong) report(`bulk_request_handler: nbytes ${nbytes}`)
  if (buf.buffer !== seg.buffer || buf.byteOffset !== seg.byteOffset + 100) report('bulk_request_handler: buf is not segment + 100')
  // verify the data (the first message of each size, and every 16th after it: the check costs
  // more than the copy)
  if (checked++ % 16 === 0) {
    const words = new DataView(buf.buffer, buf.byteOffset, nbytes)
    for (let i = 0; i < nbytes >>> 2; i++) {
      const w = words.getUint32(4 * i, true)
      if (w !== i) {
        report(`mismatched data recvdbuf[${i}]=${w}`)
        break
      }
    }
  }
  AM_Safe(AM_Reply0(token, BULK_REP_HANDLER), 'AM_Reply0(token, BULK_REP_HANDLER)')
  done++
}

function bulkReplyHandler(token) {
  done++
}

const argv = TEST_STARTUP(0, 4, 'iters (bulkmsgsize) (Poll/Block) (Half/Full)')
AM_Safe(AM_SetHandler(ep, BULK_REQ_HANDLER, bulkRequestHandler), 'AM_SetHandler(ep, BULK_REQ_HANDLER, ...)')
AM_Safe(AM_SetHandler(ep, BULK_REP_HANDLER, bulkReplyHandler), 'AM_SetHandler(ep, BULK_REP_HANDLER, ...)')

const iters = parseCount(argv[0])
if (argv[1] !== undefined) size = Number.parseInt(argv[1], 10)
if (!(size >= 0)) size = 512
const polling = parsePolling(argv[2])
let fullduplex = false
if (argv[3] !== undefined) {
  switch (argv[3][0]) {
    case 'h':
    case 'H':
      fullduplex = false
      break
    case 'f':
    case 'F':
      fullduplex = true
      break
    default:
      fatal('duplex must be H or F..')
  }
}
if (!fullduplex && numprocs > 1 && numprocs % 2 !== 0) fatal('half duplex requires an even number of processors')

const maxLong = AM_MaxLong()
const msgSize = size > maxLong ? maxLong : size
const nummsgs = size % maxLong === 0 ? size / maxLong : Math.floor(size / maxLong) + 1

// The source: in the task's LAPI segment when it fits (then the Long's data goes from there without
// a staging copy), else on the heap. The receiving segment (chunk + 100 bytes): on the heap, as
// AMUDP's (measured: no slower than a segment in LAPI memory).
let srcmem
const a = ref(0)
if (msgSize > 0 && AMX_Malloc(msgSize, a) === AM_OK) srcmem = AMX_View(a.value, msgSize)
else srcmem = new Uint8Array(msgSize)
seg = new Uint8Array(msgSize + 100)
const where = (u8) => (u8.buffer instanceof SharedArrayBuffer ? 'LAPI segment' : 'heap')
{
  const dv = new DataView(srcmem.buffer, srcmem.byteOffset, msgSize)
  for (let i = 0; i < msgSize >>> 2; i++) dv.setUint32(4 * i, i, true)
}
AM_Safe(AM_SetSeg(ep, seg, msgSize + 100), 'AM_SetSeg(ep, seg, msgSize + 100)')
const rightguy = (myproc + 1) % numprocs

AM_Safe(AMX_SPMDBarrier(), 'AMX_SPMDBarrier()')
if (myproc === 0) {
  console.log(
    `Running ${fullduplex ? 'full-duplex' : 'half-duplex'} bulk test sz=${size} ` +
      `(${nummsgs} Long message(s) of at most ${maxLong} bytes, source in the ${where(srcmem)}, segment in the ${where(seg)})...`,
  )
}

const sender = fullduplex || myproc % 2 === 1 || numprocs === 1
const begin = getCurrentTimeMicrosec()
if (sender) {
  for (let q = 0; q < iters; q++) {
    let n = maxLong
    for (let j = 0; j < nummsgs; j++) {
      if (j === nummsgs - 1 && size % maxLong !== 0) n = size % maxLong // the last one
      AM_Safe(AM_RequestXfer1(ep, rightguy, 100, BULK_REQ_HANDLER, srcmem, n, 666), 'AM_RequestXfer1(ep, rightguy, 100, BULK_REQ_HANDLER, srcmem, n, 666)')
    }
  }
}
let expectedmsgs = nummsgs * iters
if (numprocs === 1 || fullduplex) expectedmsgs *= 2
pollWait(polling, () => done >= expectedmsgs)
const total = Math.max(getCurrentTimeMicrosec() - begin, 1)

if (sender) {
  console.log(`Slave ${myproc}: ${total} microseconds total, throughput: ${((1e6 * size * iters) / total / 1024).toFixed(3)} KB/sec`)
}
if (done !== expectedmsgs) report(`${done} messages handled, expected ${expectedmsgs}`)

printGlobalStats({ 'bulk messages handled': done })
finish(errs)
