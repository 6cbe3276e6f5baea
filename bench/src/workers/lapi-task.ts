/**
 * A task of the LAPI benchmark job (2 tasks, started with runJob). It joins LAPI in polling mode,
 * exchanges its buffers and counters, then runs the operation patterns the benchmark's main thread
 * asks for through a command block (lib/lapi-layout.ts). Task 0 times each run.
 *
 * Patterns (one operation = what the series' figure counts):
 *   put-rtt   0 Puts `size` bytes into 1 with 1's counter as target counter; 1 waits on it and
 *             Puts back into 0 likewise. One round trip = one operation.
 *   get-lat   0 Gets `size` bytes from 1 and waits on its origin counter (blocking Get).
 *   put-bw    0 Puts `iterations` messages of `size` bytes into 1 (target counter); 1 waits for all
 *             of them and answers with a zero-byte Put (the ack ends the timing).
 *   get-bw    0 Gets `iterations` messages of `size` bytes, waits once for all origin counters.
 *   rmw-rate  0 does FETCH_AND_ADD on a word of 1 and waits on the origin counter (blocking Rmw).
 *   am-rtt    Amsend ping-pong, each side waiting on its target counter. Header-handler path: a
 *             message that fits one packet is consumed in the header handler, which copies
 *             udata_one_pkt_ptr out with Uint8Array.set (as the SAB ring's receiver copies each
 *             message out), larger ones land in a buffer; no completion handler.
 *             Completion-handler path: the header handler returns the buffer and a completion
 *             handler (which runs after the data landed, queued to the next dispatcher round).
 *   am-bw     0 Amsends `iterations` messages of `size` bytes; 1 waits for all, answers with an
 *             empty Amsend.
 *   am-self   0 Amsends to itself and waits on its target counter, one message at a time, with the
 *             header-handler path's handler; 1 takes no part. One operation = one message: what
 *             the library's code costs a message (send, dispatch, handler, counter wait) without
 *             the hop between cores; its same-thread ring skips the atomic read of each STAMP.
 * All calls go through the C-style face with preallocated Refs: nothing is allocated per operation.
 */
import * as L from '@amlapi/lapi/compat'
import { jobData } from '@amlapi/lapi'
import { AM_CMPL_INDEX, AM_HDR_INDEX, LapiOp, openCommands, type LapiBenchData } from '../lib/lapi-layout.js'

const data = jobData() as LapiBenchData
const { maxSize } = data

function check(rc: number, what: string): void {
  if (rc !== 0) {
    const s = L.ref('')
    L.LAPI_Msg_string(rc, s)
    throw new Error(`${what}: ${rc} ${s.value}`)
  }
}

const href = L.ref(0)
check(L.LAPI_Init(href, { protocol: L.LAPI_INTERRUPT_OFF }), 'LAPI_Init')
const h = href.value
const r = L.ref(0)
check(L.LAPI_Qenv(h, L.TASK_ID, r), 'Qenv')
const me = r.value
const peer = 1 - me
const malloc = (n: number): number => {
  const a = L.ref(0)
  check(L.LAPIX_Malloc(h, n, a), 'malloc')
  return a.value
}
const buf = malloc(maxSize)
const src = malloc(maxSize)
const cntr = malloc(8)
const org = malloc(8)
const word = malloc(8)
const gather = (v: number): number[] => {
  const t: number[] = []
  check(L.LAPI_Address_init(h, v, t), 'Address_init')
  return t
}
const peerBuf = gather(buf)[peer]!
const peerCntr = gather(cntr)[peer]!
const peerWord = gather(word)[peer]!
L.LAPIX_View(h, src, maxSize).fill(me + 1)
const inVal = new Int32Array([1])
let sink = 0
// The header-handler path consumes a one-packet message by copying its data out of the packet
// (udata_one_pkt_ptr is valid only during the call) into the task's own memory, as the SAB ring
// baseline's receiver copies each message out with Uint8Array.set.
const keep = new Uint8Array(maxSize)
function onePacket(_h: number, _u: Uint8Array, _l: number, info: L.lapi_return_info_t): number | null {
  const d = info.udata_one_pkt_ptr
  if (d !== null) {
    if (d.length > 0) keep.set(d)
    return null
  }
  return buf
}
function noop(): void {
  sink++
}
function withCompletion(_h: number, _u: Uint8Array, _l: number, _i: L.lapi_return_info_t, comp: L.Ref<L.compl_hndlr_t | null>): number | null {
  comp.value = noop
  return buf
}
check(L.LAPI_Addr_set(h, onePacket, AM_HDR_INDEX), 'Addr_set')
check(L.LAPI_Addr_set(h, withCompletion, AM_CMPL_INDEX), 'Addr_set')
const prev = L.ref(0)

/** Runs `iters` operations of pattern `op` (both tasks call it with the same arguments). */
function runOp(op: number, size: number, iters: number): void {
  switch (op) {
    case LapiOp.PUT_RTT:
      if (me === 0) {
        for (let i = 0; i < iters; i++) {
          L.LAPI_Put(h, peer, size, peerBuf, src, peerCntr, 0, 0)
          L.LAPI_Waitcntr(h, cntr, 1, null)
        }
      } else {
        for (let i = 0; i < iters; i++) {
          L.LAPI_Waitcntr(h, cntr, 1, null)
          L.LAPI_Put(h, peer, size, peerBuf, src, peerCntr, 0, 0)
        }
      }
      break
    case LapiOp.GET_LAT:
      if (me === 0) {
        for (let i = 0; i < iters; i++) {
          L.LAPI_Get(h, peer, size, peerBuf, buf, 0, org)
          L.LAPI_Waitcntr(h, org, 1, null)
        }
      }
      break
    case LapiOp.PUT_BW:
      if (me === 0) {
        for (let i = 0; i < iters; i++) L.LAPI_Put(h, peer, size, peerBuf, src, peerCntr, 0, 0)
        L.LAPI_Waitcntr(h, cntr, 1, null)
      } else {
        L.LAPI_Waitcntr(h, cntr, iters, null)
        L.LAPI_Put(h, peer, 0, 0, null, peerCntr, 0, 0)
      }
      break
    case LapiOp.GET_BW:
      if (me === 0) {
        for (let i = 0; i < iters; i++) L.LAPI_Get(h, peer, size, peerBuf, buf, 0, org)
        L.LAPI_Waitcntr(h, org, iters, null)
      }
      break
    case LapiOp.RMW_RATE:
      if (me === 0) {
        for (let i = 0; i < iters; i++) {
          L.LAPI_Rmw(h, L.FETCH_AND_ADD, peer, peerWord, inVal, prev, org)
          L.LAPI_Waitcntr(h, org, 1, null)
        }
      }
      break
    case LapiOp.AM_RTT_HDR:
    case LapiOp.AM_RTT_CMPL: {
      const hdl = op === LapiOp.AM_RTT_HDR ? AM_HDR_INDEX : AM_CMPL_INDEX
      const data = size > 0 ? src : null
      if (me === 0) {
        for (let i = 0; i < iters; i++) {
          L.LAPI_Amsend(h, peer, hdl, null, 0, data, size, peerCntr, 0, 0)
          L.LAPI_Waitcntr(h, cntr, 1, null)
        }
      } else {
        for (let i = 0; i < iters; i++) {
          L.LAPI_Waitcntr(h, cntr, 1, null)
          L.LAPI_Amsend(h, peer, hdl, null, 0, data, size, peerCntr, 0, 0)
        }
      }
      break
    }
    case LapiOp.AM_BW:
      if (me === 0) {
        for (let i = 0; i < iters; i++) L.LAPI_Amsend(h, peer, AM_HDR_INDEX, null, 0, src, size, peerCntr, org, 0)
        L.LAPI_Waitcntr(h, org, iters, null)
        L.LAPI_Waitcntr(h, cntr, 1, null)
      } else {
        L.LAPI_Waitcntr(h, cntr, iters, null)
        L.LAPI_Amsend(h, peer, AM_HDR_INDEX, null, 0, null, 0, peerCntr, 0, 0)
      }
      break
    case LapiOp.AM_SELF:
      if (me === 0) {
        const data = size > 0 ? src : null
        for (let i = 0; i < iters; i++) {
          L.LAPI_Amsend(h, me, AM_HDR_INDEX, null, 0, data, size, cntr, 0, 0)
          L.LAPI_Waitcntr(h, cntr, 1, null)
        }
      }
      break
    default:
      throw new Error(`unknown benchmark op ${op}`)
  }
}

const commands = await openCommands(data, me)
commands.serve((gen, op, size, iters) => {
  check(L.LAPI_Gfence(h), 'Gfence')
  const skip = Math.min(iters, data.skip ?? 0)
  if (skip > 0) runOp(op, size, skip)
  const t0 = performance.now()
  runOp(op, size, iters)
  const seconds = (performance.now() - t0) / 1000
  if (me === 0) {
    commands.finish(gen, seconds)
  }
})
check(L.LAPI_Term(h), 'Term')
if (sink < 0 || keep[0] === 255) process.stdout.write('')
