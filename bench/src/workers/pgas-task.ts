/**
 * A task of a PGAS benchmark job (2 or 4 tasks, started with runJob). It starts `@amlapi/pgas`
 * (`Pgas.init()`, over a LAPI context in polling mode) and, in the job that measures it, AM-2 on
 * the same LAPI context (`@amlapi/am2/compat`, AMX_SPMDStartup: one endpoint per task, every task
 * mapped at index = task id). Then it runs the patterns the main thread asks for through the
 * command block (lib/lapi-layout.ts `C`, lib/pgas-layout.ts `PgasOp`), each run after a PGAS
 * barrier. Every task times its own part of a run from the end of that barrier; the last one to
 * finish reports the longest time (lib/pgas-layout.ts `T`).
 *
 * Patterns (one operation = what the series' figure counts):
 *   barrier     pg.barrier() (anonymous; a dissemination barrier, ⌈log2 P⌉ rounds).
 *   allreduce   pg.allreduce(send, recv, ReduceOp.SUM) on size/8 Float64 (the series: one, 8 B).
 *   bcast       pg.bcast(buf, 0) of `size` bytes from task 0 to every task; `buf` a Uint8Array in
 *               the task's segment (pg.alloc, pg.localView), as a PGAS program keeps shared data.
 *   alltoall    pg.alltoall(send, recv) of `size`-byte Uint8Arrays in the segment: size / P bytes
 *               to each task.
 *   bcast-private, alltoall-private   the same with Uint8Arrays of the task's own heap.
 *   am2-rtt     AM_Request0 from task 1 to task 0, answered with AM_Reply0; task 1 polls until
 *               the reply handler ran. One round trip. Task 0 polls until it served them all.
 * Each run ends with a check of what the collectives delivered (outside the timed loop).
 */
import * as A from '@amlapi/am2/compat'
import { jobData } from '@amlapi/lapi'
import { Pgas, ReduceOp } from '@amlapi/pgas'
import { openCommands } from '../lib/lapi-layout.js'
import { PGAS_AM2_DEPTH, PgasOp, T, type PgasBenchData } from '../lib/pgas-layout.js'

const data = jobData() as PgasBenchData
const { maxSize, timeoutMs } = data

const pg = Pgas.init()
const me = pg.rank
const P = pg.size

const times = new Float64Array(data.times, T.SECONDS_BYTE, P)
const finished = new Int32Array(data.times, 0, 1)

// ───────────────────────────── AM-2 (the job that measures its round trip) ─────────────────────────────

function check(rc: number, what: string): void {
  if (rc !== A.AM_OK) throw new Error(`${what}: AM code ${rc}`)
}

const H_SHORT = 1
const H_REPLY = 2
const SERVER = 0
let eb: A.eb_t | null = null
let ep: A.ep_t | null = null
let served = 0
let replies = 0
function onShort(token: A.Token): void {
  served++
  check(A.AM_Reply0(token, H_REPLY), 'AM_Reply0')
}
function onReply(_token: A.Token): void {
  replies++
}
if (data.am2) {
  const ebRef = A.ref<A.eb_t | null>(null)
  const epRef = A.ref<A.ep_t | null>(null)
  check(A.AMX_SPMDStartup(ebRef, epRef, PGAS_AM2_DEPTH), 'AMX_SPMDStartup')
  eb = ebRef.value!
  ep = epRef.value!
  check(A.AM_SetHandler(ep, H_SHORT, onShort), 'AM_SetHandler')
  check(A.AM_SetHandler(ep, H_REPLY, onReply), 'AM_SetHandler')
}

let deadline = 0
let polls = 0
/** One AM_Poll; every 2^16 polls, the run's deadline. */
function poll(): void {
  A.AM_Poll(eb!)
  if ((++polls & 0xffff) === 0) overdue()
}

function overdue(): void {
  if (performance.now() > deadline) {
    throw new Error(`PGAS benchmark task ${me} of ${P}: a run took longer than ${timeoutMs} ms (served ${served}, replies ${replies})`)
  }
}

// ───────────────────────────── buffers ─────────────────────────────

const red = new Float64Array(Math.max(1, maxSize >> 3))
const redOut = new Float64Array(red.length)
/** A buffer of `maxSize` bytes in this task's segment. */
const inSegment = (): Uint8Array => pg.localView(pg.alloc(maxSize), maxSize)!
const segBufs = { bcast: inSegment(), send: inSegment(), recv: inSegment() }
const heapBufs = { bcast: new Uint8Array(maxSize), send: new Uint8Array(maxSize), recv: new Uint8Array(maxSize) }

/** What task `from` sends task `to` in an all-to-all of run `gen`. */
const blockByte = (gen: number, from: number, to: number): number => (gen * 31 + from * 7 + to) & 0xff

function fail(gen: number, what: string): never {
  throw new Error(`PGAS benchmark task ${me} of ${P}, run ${gen}: ${what}`)
}

/** This task's part of a run; returns its elapsed seconds (from after the starting barrier). */
function runOp(gen: number, op: number, size: number, iters: number): number {
  switch (op) {
    case PgasOp.BARRIER: {
      const t0 = performance.now()
      for (let i = 0; i < iters; i++) {
        pg.barrier()
        if ((i & 63) === 63) overdue()
      }
      return (performance.now() - t0) / 1000
    }
    case PgasOp.ALLREDUCE: {
      if (size < 8 || size % 8 !== 0 || size > red.length * 8) fail(gen, `all-reduce of ${size} B (a multiple of 8 up to ${red.length * 8})`)
      const send = red.subarray(0, size >> 3)
      const recv = redOut.subarray(0, size >> 3)
      send.fill(me + 1)
      const t0 = performance.now()
      for (let i = 0; i < iters; i++) {
        pg.allreduce(send, recv, ReduceOp.SUM)
        if ((i & 63) === 63) overdue()
      }
      const s = (performance.now() - t0) / 1000
      const want = (P * (P + 1)) / 2
      if (recv[0] !== want || recv[recv.length - 1] !== want) fail(gen, `all-reduce gave ${recv[0]}, not ${want}`)
      return s
    }
    case PgasOp.BCAST:
    case PgasOp.BCAST_PRIVATE: {
      if (size < 1 || size > maxSize) fail(gen, `broadcast of ${size} B (1 to ${maxSize})`)
      const buf = (op === PgasOp.BCAST ? segBufs : heapBufs).bcast.subarray(0, size)
      const v = (gen & 0xff) ^ 0x5a
      if (me === 0) {
        buf[0] = v
        buf[size - 1] = v
      } else {
        buf[0] = ~v & 0xff
        buf[size - 1] = ~v & 0xff
      }
      const t0 = performance.now()
      for (let i = 0; i < iters; i++) {
        pg.bcast(buf, 0)
        if ((i & 15) === 15) overdue()
      }
      const s = (performance.now() - t0) / 1000
      if (buf[0] !== v || buf[size - 1] !== v) fail(gen, 'the broadcast did not deliver what task 0 sent')
      return s
    }
    case PgasOp.ALLTOALL:
    case PgasOp.ALLTOALL_PRIVATE: {
      if (size < P || size > maxSize || size % P !== 0) fail(gen, `all-to-all of ${size} B (a multiple of ${P} up to ${maxSize})`)
      const bs = size / P
      const bufs = op === PgasOp.ALLTOALL ? segBufs : heapBufs
      const send = bufs.send.subarray(0, size)
      const recv = bufs.recv.subarray(0, size)
      for (let t = 0; t < P; t++) send.fill(blockByte(gen, me, t), t * bs, (t + 1) * bs)
      const t0 = performance.now()
      for (let i = 0; i < iters; i++) {
        pg.alltoall(send, recv)
        if ((i & 15) === 15) overdue()
      }
      const s = (performance.now() - t0) / 1000
      for (let t = 0; t < P; t++) {
        const want = blockByte(gen, t, me)
        if (recv[t * bs] !== want || recv[(t + 1) * bs - 1] !== want) fail(gen, `the all-to-all block from task ${t} is not what it sent`)
      }
      return s
    }
    case PgasOp.AM2_SHORT_RTT: {
      if (ep === null) fail(gen, 'this job did not start AM-2')
      if (P !== 2) fail(gen, 'the AM-2 round trip runs in the 2-task job')
      if (me === SERVER) {
        while (served < iters) poll()
        return 0
      }
      const t0 = performance.now()
      for (let i = 0; i < iters; i++) {
        check(A.AM_Request0(ep, SERVER, H_SHORT), 'AM_Request0')
        while (replies === i) poll()
      }
      return (performance.now() - t0) / 1000
    }
    default:
      return fail(gen, `unknown PGAS benchmark op ${op}`)
  }
}

const commands = await openCommands(data, me)
commands.serve((gen, op, size, iters) => {
  // AM-2 counts are reset before the barrier: once past it the other task may send at once
  served = 0
  replies = 0
  pg.barrier()
  deadline = performance.now() + timeoutMs
  times[me] = runOp(gen, op, size, iters)
  if (Atomics.add(finished, 0, 1) === P - 1) {
    // (the last one: every other task wrote its time before its add)
    Atomics.store(finished, 0, 0)
    let longest = 0
    for (let t = 0; t < P; t++) longest = Math.max(longest, times[t]!)
    commands.finish(gen, longest)
  }
})
if (ep !== null) check(A.AM_Terminate(), 'AM_Terminate')
pg.finalize()
pg.lapi.finalize()
