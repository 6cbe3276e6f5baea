/**
 * The SPMD job helpers (AMUDP's AMX_SPMD*, over a lapirun job): one bundle and endpoint per task,
 * every task mapped at index = task id with its own unique tag, a barrier and an all-gather that
 * keep running AM handlers while they wait (so a task waiting in a barrier still serves the
 * requests of tasks that are not there yet), and the job exit.
 *
 * Barrier and all-gather are control messages on am2's second LAPI library slot, counted in its
 * header handler: every task sends its arrival (its contribution) to every other. Counts are kept
 * per parity of the call's generation: a task cannot be two calls ahead of another (it would need
 * that task's contribution to the call in between), so two counters suffice.
 */
import { WaitCall, type lapi_return_info_t, type Ref } from '@amlapi/lapi'
import { AM_SEQ, AmStatus } from './constants.js'
import type { Bundle, Endpoint } from './objects.js'
import { amInit, currentRuntime, type Runtime } from './runtime.js'
import { MAX_DEPTH } from './wire.js'

const S = AmStatus
const C_BARRIER = 1
const C_GATHER = 2
/** Default requests in flight per peer (AMUDP's NETWORKDEPTH default), overridden by AMLAPI_NETWORKDEPTH. */
export const DEFAULT_DEPTH = 128

/** The state of the SPMD layer of this task. */
export class Spmd {
  readonly rt: Runtime
  readonly bundle: Bundle
  readonly procs: number
  readonly rank: number
  private barGen = 0
  private readonly barCount = new Int32Array(2)
  private gatherGen = 0
  private readonly gatherCount = new Int32Array(2)
  private readonly staging: Uint8Array[] = [new Uint8Array(0), new Uint8Array(0)]
  private readonly ctl = new Uint8Array(16)
  private readonly ctlDv = new DataView(this.ctl.buffer)
  private waitParity = 0
  private readonly barDone: () => boolean
  private readonly gatherDone: () => boolean

  constructor(rt: Runtime, bundle: Bundle) {
    this.rt = rt
    this.bundle = bundle
    this.procs = rt.numTasks
    this.rank = rt.taskId
    this.barDone = () => this.barCount[this.waitParity]! >= this.procs - 1 || this.bundle.queue.size > 0 || rt.returns.length > 0
    this.gatherDone = () => this.gatherCount[this.waitParity]! >= this.procs || this.bundle.queue.size > 0 || rt.returns.length > 0
    rt.ctrlHandler = (src, u8, dv, b, len, info, comp, uinfo) => this.onCtrl(src, u8, dv, b, len, info, comp, uinfo)
  }

  private onCtrl(
    _src: number,
    u8: Uint8Array,
    dv: DataView,
    b: number,
    len: number,
    info: lapi_return_info_t,
    comp: Ref<unknown>,
    uinfo: Ref<unknown>,
  ): Uint8Array | null {
    if (len < 16) return null
    const type = u8[b]!
    const gen = dv.getUint32(b + 4, true)
    const parity = gen & 1
    if (type === C_BARRIER) {
      this.barCount[parity] = this.barCount[parity]! + 1
      return null
    }
    if (type !== C_GATHER) return null
    const rank = dv.getUint32(b + 8, true)
    const n = dv.getUint32(b + 12, true)
    if (rank >= this.procs || n !== info.msg_len) return null
    const land = this.stagingFor(parity, n).subarray(rank * n, rank * n + n)
    if (n === 0) {
      this.gatherCount[parity] = this.gatherCount[parity]! + 1
      return null
    }
    comp.value = this.gatherLanded
    uinfo.value = parity
    return land
  }

  private readonly gatherLanded = (_h: number, parity: unknown): void => {
    const p = parity as number
    this.gatherCount[p] = this.gatherCount[p]! + 1
  }

  private stagingFor(parity: number, n: number): Uint8Array {
    if (this.staging[parity]!.length < n * this.procs) {
      const s = new Uint8Array(n * this.procs)
      s.set(this.staging[parity]!)
      this.staging[parity] = s
    }
    return this.staging[parity]!
  }

  private sendCtl(type: number, gen: number, n: number, data: Uint8Array | null): void {
    const u8 = this.ctl
    const dv = this.ctlDv
    u8.fill(0)
    u8[0] = type
    dv.setUint32(4, gen, true)
    dv.setUint32(8, this.rank, true)
    dv.setUint32(12, n, true)
    for (let t = 0; t < this.procs; t++) {
      if (t === this.rank) continue
      const rc = this.rt.lapi.amsendCode(t, this.rt.hCtrl, u8, 16, data, n, 0)
      if (rc !== 0) throw new Error(`AMX_SPMD: task ${this.rank} cannot reach task ${t} (LAPI code ${rc})`)
    }
  }

  /** Waits until `done` holds, running the bundle's handlers meanwhile; `call` names the wait (WaitCall). */
  private serve(count: Int32Array, parity: number, need: number, done: () => boolean, call: number): void {
    const rt = this.rt
    while (count[parity]! < need) {
      rt.poll(this.bundle)
      if (count[parity]! >= need) break
      const outer = this.waitParity
      this.waitParity = parity
      try {
        rt.lapi.waitUntil(done, call)
      } finally {
        this.waitParity = outer
      }
    }
  }

  /** AMX_SPMDBarrier. */
  barrier(): void {
    const gen = this.barGen++
    const parity = gen & 1
    this.sendCtl(C_BARRIER, gen, 0, null)
    this.serve(this.barCount, parity, this.procs - 1, this.barDone, WaitCall.AMX_SPMD_BARRIER)
    this.barCount[parity] = this.barCount[parity]! - (this.procs - 1)
  }

  /** AMX_SPMDAllGather: `dst` gets every task's `len` bytes of `src`, in rank order. */
  allGather(src: Uint8Array, dst: Uint8Array, len: number): void {
    const gen = this.gatherGen++
    const parity = gen & 1
    const st = this.stagingFor(parity, len)
    st.set(src.subarray(0, len), this.rank * len)
    this.gatherCount[parity] = this.gatherCount[parity]! + 1
    this.sendCtl(C_GATHER, gen, len, len === 0 ? null : src.subarray(0, len))
    this.serve(this.gatherCount, parity, this.procs, this.gatherDone, WaitCall.AMX_SPMD_ALLGATHER)
    this.gatherCount[parity] = this.gatherCount[parity]! - this.procs
    dst.set(this.staging[parity]!.subarray(0, len * this.procs))
  }
}

/** The SPMD state of this task, or null before AMX_SPMDStartup. */
export function currentSpmd(): Spmd | null {
  const rt = currentRuntime()
  return rt === null ? null : (rt.spmd as Spmd | null)
}

function depthFromEnv(): number {
  const v = process.env['AMLAPI_NETWORKDEPTH']
  if (v === undefined || v === '') return DEFAULT_DEPTH
  const n = Number(v)
  return Number.isInteger(n) && n >= 1 && n <= MAX_DEPTH ? n : DEFAULT_DEPTH
}

/**
 * AMX_SPMDStartup: joins the job (AM_Init), creates this task's bundle and endpoint, maps every
 * task at index = its id with that task's tag, sets `depth` requests in flight per peer (default
 * AMLAPI_NETWORKDEPTH or 128), sets the own unique tag, and waits for every task to get there.
 * Returns an AM code; `eb`/`ep` get the bundle and endpoint.
 */
export function spmdStartup(eb: Ref<Bundle | null> | null | undefined, ep: Ref<Endpoint | null> | null | undefined, depth?: number): number {
  if (eb === null || eb === undefined || typeof eb !== 'object' || ep === null || ep === undefined || typeof ep !== 'object') return S.ERR_BAD_ARG
  const d = depth === undefined || depth === 0 ? depthFromEnv() : depth
  if (!Number.isInteger(d) || d < 1 || d > MAX_DEPTH) return S.ERR_BAD_ARG
  if (currentSpmd() !== null) return S.ERR_RESOURCE
  amInit()
  const rt = currentRuntime()!
  const b: Ref<Bundle | null> = { value: null }
  let rc = rt.allocateBundle(AM_SEQ, b)
  if (rc !== 0) return rc
  const e: Ref<Endpoint | null> = { value: null }
  rc = rt.allocateEndpoint(b.value!, e, null)
  if (rc !== 0) return rc
  const endpoint = e.value!
  const names = rt.lapi.addressInit(endpoint.name)
  const key = BigInt(Math.floor(Math.random() * 0x7fffffff) | 1) << 32n
  const myTag = key | BigInt((rt.taskId << 16) | 0x4d32)
  const tags = rt.lapi.addressInit64(myTag)
  for (let t = 0; t < rt.numTasks; t++) {
    rc = rt.map(endpoint, t, names[t]!, tags[t]!)
    if (rc !== 0) return rc
  }
  rc = rt.setExpectedResources(endpoint, rt.numTasks, d)
  if (rc !== 0) return rc
  rc = rt.setTag(endpoint, myTag)
  if (rc !== 0) return rc
  const s = new Spmd(rt, b.value!)
  rt.spmd = s
  // nobody sends before every task has its handlers in place
  rt.lapi.gfence()
  rt.log.debug({ rank: rt.taskId, procs: rt.numTasks, depth: d }, 'AMX_SPMDStartup: every task mapped')
  eb.value = b.value
  ep.value = endpoint
  return S.OK
}

/**
 * AMX_SPMDExit: ends this task with `code` (a worker thread of a lapirun job, or the process of a
 * one-task job). A non-zero code fails the task, which ends the whole job with a non-zero exit.
 */
export function spmdExit(code: number): never {
  const c = Number.isInteger(code) ? code : 1
  currentRuntime()?.log.debug({ code: c }, 'AMX_SPMDExit')
  process.exit(c)
}
