/**
 * A task of the AM-2 benchmark job (2 tasks, started with runJob, C-style `@amlapi/am2/compat`).
 * AMX_SPMDStartup gives each task one bundle and endpoint with every task mapped at translation
 * index = task id; each task gives its endpoint a segment from AMX_Malloc. Then it runs the
 * patterns the main thread asks for through the command block (lib/lapi-layout.ts `C`,
 * lib/am2-layout.ts `Am2Op`), each run after an AMX_SPMDBarrier. Task 1 requests and times; task 0
 * serves: it polls (AM_Poll) until it has handled every request of the run. Both sides busy-poll.
 *
 * Patterns (one operation = what the series' figure counts):
 *   short-rtt   AM_RequestM with M = size/4 arguments; the handler answers AM_Reply0; task 1 polls
 *               until the reply handler ran. One round trip.
 *   medium-rtt  AM_RequestI0 of `size` bytes from an ordinary Uint8Array; Short reply.
 *   long-rtt    AM_RequestXfer0 of `size` bytes from segment memory (AMX_Malloc) to offset 0 of
 *               task 0's segment; Short reply.
 *   rate        `iterations` Short requests with size/4 arguments (AM_Request0 at size 0) back to
 *               back (flow control: up to AM2_DEPTH in flight), each answered with AM_Reply0; the
 *               time runs until the last reply handler ran (testping's pattern). One request = one
 *               operation.
 *   long-bw     `iterations` messages of `size` bytes, each sent as AM_RequestXfer0 chunks of at
 *               most AM_MaxLong bytes from segment memory (no staging copy), each chunk answered;
 *               the time runs until the last reply (testbulk's pattern).
 *   medium-bw   the same with AM_RequestI0 from an ordinary Uint8Array (AM_MaxMedium chunks).
 * Nothing is allocated per operation by this program (handlers are plain functions, no rest args).
 */
import * as A from '@amlapi/am2/compat'
import { jobData } from '@amlapi/lapi'
import { AM2_DEPTH, Am2Op, type Am2BenchData } from '../lib/am2-layout.js'
import { openCommands } from '../lib/lapi-layout.js'

const data = jobData() as Am2BenchData
const { maxSize, timeoutMs } = data

function check(rc: number, what: string): void {
  if (rc !== A.AM_OK) throw new Error(`${what}: AM code ${rc}`)
}

const ebRef = A.ref<A.eb_t | null>(null)
const epRef = A.ref<A.ep_t | null>(null)
check(A.AMX_SPMDStartup(ebRef, epRef, AM2_DEPTH), 'AMX_SPMDStartup')
const eb = ebRef.value!
const ep = epRef.value!
const me = A.AMX_SPMDMyProc()
if (A.AMX_SPMDNumProcs() !== 2) throw new Error('the AM-2 benchmark job wants 2 tasks')
/** Translation index of the serving task (index = task id). */
const SERVER = 0

const segBytes = Math.max(64, maxSize)
const addr = A.ref(0)
check(A.AMX_Malloc(segBytes, addr), 'AMX_Malloc (segment)')
check(A.AM_SetSeg(ep, addr.value, segBytes), 'AM_SetSeg')
check(A.AMX_Malloc(segBytes, addr), 'AMX_Malloc (Long source)')
const longSrc = addr.value
A.AMX_View(longSrc, segBytes).fill(me + 1)
const mediumSrc = new Uint8Array(segBytes).fill(me + 1)
const maxLong = A.AM_MaxLong()
const maxMedium = A.AM_MaxMedium()

const H_SHORT = 1
const H_BULK = 2
const H_REPLY = 3
let served = 0
let replies = 0
function onShort(token: A.Token): void {
  served++
  check(A.AM_Reply0(token, H_REPLY), 'AM_Reply0')
}
function onBulk(token: A.Token, _buf: Uint8Array, _nbytes: number): void {
  served++
  check(A.AM_Reply0(token, H_REPLY), 'AM_Reply0')
}
function onReply(_token: A.Token): void {
  replies++
}
check(A.AM_SetHandler(ep, H_SHORT, onShort), 'AM_SetHandler')
check(A.AM_SetHandler(ep, H_BULK, onBulk), 'AM_SetHandler')
check(A.AM_SetHandler(ep, H_REPLY, onReply), 'AM_SetHandler')

let deadline = 0
let polls = 0
/** One AM_Poll; every 2^16 polls, the run's deadline. */
function poll(): void {
  A.AM_Poll(eb)
  if ((++polls & 0xffff) === 0 && performance.now() > deadline) {
    throw new Error(`AM-2 benchmark task ${me}: a run took longer than ${timeoutMs} ms (served ${served}, replies ${replies})`)
  }
}

function shortRequest(nargs: number, i: number): number {
  switch (nargs) {
    case 0:
      return A.AM_Request0(ep, SERVER, H_SHORT)
    case 1:
      return A.AM_Request1(ep, SERVER, H_SHORT, i)
    case 2:
      return A.AM_Request2(ep, SERVER, H_SHORT, i, i)
    case 4:
      return A.AM_Request4(ep, SERVER, H_SHORT, i, i, i, i)
    case 8:
      return A.AM_Request8(ep, SERVER, H_SHORT, i, i, i, i, i, i, i, i)
    case 16:
      return A.AM_Request16(ep, SERVER, H_SHORT, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i)
    default:
      throw new Error(`Short round trip: ${nargs} arguments is not one of the measured counts`)
  }
}

const chunks = (size: number, max: number): number => (size === 0 ? 1 : Math.ceil(size / max))

/** Requests task 0 handles in a run. */
function expected(op: number, size: number, iters: number): number {
  if (op === Am2Op.LONG_BW) return iters * chunks(size, maxLong)
  if (op === Am2Op.MEDIUM_BW) return iters * chunks(size, maxMedium)
  return iters
}

/** Sends `size` bytes as messages of at most `max` bytes each: `send(offset, bytes)` per chunk. */
function sendChunks(size: number, max: number, send: (off: number, n: number) => void): void {
  let off = 0
  do {
    const n = Math.min(max, size - off)
    send(off, n)
    off += n
  } while (off < size)
}

/** One chunk of a Long stream: from segment memory into the server's segment at the same offset. */
function sendLong(off: number, n: number): void {
  check(A.AM_RequestXfer0(ep, SERVER, off, H_BULK, longSrc + off, n), 'AM_RequestXfer0')
}

/** One chunk of a Medium stream, from an ordinary Uint8Array. */
function sendMedium(_off: number, n: number): void {
  check(A.AM_RequestI0(ep, SERVER, H_BULK, mediumSrc, n), 'AM_RequestI0')
}

/** Each round trip of a SHORT_RTT_MEDIAN run, ms. */
let times = new Float64Array(0)

/** Task 1's side of a run; returns the elapsed seconds. */
function request(op: number, size: number, iters: number): number {
  const t0 = performance.now()
  switch (op) {
    case Am2Op.SHORT_RTT: {
      const nargs = size >> 2
      for (let i = 0; i < iters; i++) {
        check(shortRequest(nargs, i), 'AM_RequestM')
        while (replies === i) poll()
      }
      break
    }
    case Am2Op.SHORT_RTT_MEDIAN: {
      const nargs = size >> 2
      if (times.length < iters) times = new Float64Array(iters)
      for (let i = 0; i < iters; i++) {
        const t = performance.now()
        check(shortRequest(nargs, i), 'AM_RequestM')
        while (replies === i) poll()
        times[i] = performance.now() - t
      }
      const sorted = times.subarray(0, iters).sort()
      return (iters * sorted[iters >> 1]!) / 1000
    }
    case Am2Op.MEDIUM_RTT:
      for (let i = 0; i < iters; i++) {
        check(A.AM_RequestI0(ep, SERVER, H_BULK, mediumSrc, size), 'AM_RequestI0')
        while (replies === i) poll()
      }
      break
    case Am2Op.LONG_RTT:
      for (let i = 0; i < iters; i++) {
        check(A.AM_RequestXfer0(ep, SERVER, 0, H_BULK, longSrc, size), 'AM_RequestXfer0')
        while (replies === i) poll()
      }
      break
    case Am2Op.RATE: {
      const nargs = size >> 2
      for (let i = 0; i < iters; i++) check(shortRequest(nargs, i), 'AM_RequestM')
      while (replies < iters) poll()
      break
    }
    case Am2Op.LONG_BW:
      for (let i = 0; i < iters; i++) sendChunks(size, maxLong, sendLong)
      while (replies < expected(op, size, iters)) poll()
      break
    case Am2Op.MEDIUM_BW:
      for (let i = 0; i < iters; i++) sendChunks(size, maxMedium, sendMedium)
      while (replies < expected(op, size, iters)) poll()
      break
    default:
      throw new Error(`unknown AM-2 benchmark op ${op}`)
  }
  return (performance.now() - t0) / 1000
}

const commands = await openCommands(data, me)
commands.serve((gen, op, size, iters) => {
  // counts are reset before the barrier: once past it the other task may send at once
  served = 0
  replies = 0
  check(A.AMX_SPMDBarrier(), 'AMX_SPMDBarrier')
  deadline = performance.now() + timeoutMs
  const skip = Math.min(iters, data.skip ?? 0)
  if (me === SERVER) {
    const want = expected(op, size, skip) + expected(op, size, iters)
    while (served < want) poll()
  } else {
    // (the untimed requests are all answered when request() returns: the timed ones count from 0)
    if (skip > 0) {
      request(op, size, skip)
      replies = 0
    }
    commands.finish(gen, request(op, size, iters))
  }
})
check(A.AM_Terminate(), 'AM_Terminate')
