/**
 * The LAPI context of one task: the single implementation behind both faces (the idiomatic `Lapi`
 * and the C-style `LAPI_*` functions). Every method validates its arguments and returns a LAPI
 * status code (0 = LAPI_SUCCESS); out-values go through `Ref`s. Neither face adds logic.
 *
 * One-sided operations between tasks of one process are performed by the calling thread itself on
 * the target's segment (docs/architecture.md, "One-sided operations"): `Uint8Array.set` for data,
 * `Atomics` for counters and read-modify-write. No code of the target runs, so they complete even
 * when the target is stuck in a busy loop. Each counter a call bumps at another task is followed by
 * a ring of that task's doorbell, so a task sleeping in a wait wakes up.
 *
 * Counter order of a Put (table 2.12 of the LAPI reference): the data lands, then the target
 * counter, then the origin counter (origin buffer reusable) and the completion counter (target
 * done). A Get: the data arrives, the target counter (target buffer free), then the origin counter.
 */
import { availableParallelism } from 'node:os'
import { BufferManager } from '@amlapi/bufmgr'
import type { Logger } from 'pino'
import { ErrClass, InitFlag, LAPI_MAX_MSG_SZ, Query, RmwOp, VecType, XferType } from './constants.js'
import type { JobConfig } from './config.js'
import {
  T_DOORBELL, T_EXIT_GEN, T_SLEEPING, T_STATE, TaskState, W_ABORT, W_ABORT_TASK, W_BAR_COUNT, W_BAR_GEN, W_BAR_LOCAL, ringAgent, setRemoteBell,
  T_WAIT_CALL, T_WAIT_VAL, T_WAIT_WORD, WAIT_BARRIER, WaitCall, WAIT_COND, WAIT_COUNTER, WAIT_FENCE, WAIT_RING, controlLayout, ringCounter, ringDoorbell, taskWord,
} from './job/control.js'
import { NET_DROPPED, processOf, type JobSpec } from './job/spec.js'
import { RingReader, RingWriter, type OutRing } from './transport/ring.js'
import { RemoteSource, RemoteWriter } from './net/remote-ends.js'
import { RemoteOps } from './net/remote-ops.js'
import { NetEngine } from './agent/engine.js'
import { ActiveMessages, type short_hndlr_t } from './am.js'
import { counterOk } from './args.js'
import { rmw32, rmw64 } from './rmw.js'
import { WORD_COPY, copy, copyBuf, copyShared, copyWords } from './copy.js'
import { LapiError, describeError } from './errors.js'
import { logger } from './log.js'
import { LapiStatus as S, statusName, statusText } from './status.js'
import { endTask } from './job/failure.js'
import type {
  Addr, compl_hndlr_t, lapi_info_t, lapi_msg_info_t, lapi_vec_t, LAPI_err_hndlr, LocalBuf, Ref, scompl_hndlr_t,
} from './types.js'

/** What `Context.stats()` / `Lapi.stats()` report. */
export interface DispatcherStats {
  /** Packets dropped because their version, type or length was wrong. */
  packetsDropped: number
  /** Duplicate packets recognised and dropped. */
  duplicatesDropped: number
  /** Active messages that completed here (all data in place). */
  messagesReceived: number
  /** Active messages whose origin buffers became reusable. */
  messagesSent: number
  /** Of messagesReceived, those an in-place receiver took (Lapi.setLibraryShortHandler). */
  receivedInPlace: number
  /** Times a blocking wait of this task slept on its doorbell after its spin budget ran out. */
  sleeps: number
  /**
   * The spin budget the next blocking wait starts with, µs (adaptive: docs/architecture.md,
   * "Progress, waiting and doorbells").
   */
  spinUs: number
  /** Times a short sleep made the spin budget grow. */
  spinGrown: number
}

/** Thrown out of a blocking call when the job is being torn down because another task failed. */
export class JobAbortedError extends Error {
  readonly task: number
  constructor (task: number) {
    super(`the job was aborted (${task >= 0 ? `task ${task} failed` : 'it timed out or was interrupted'}); this task stops`)
    this.name = 'JobAbortedError'
    this.task = task
  }
}

/** A registered header handler (typed loosely here; the AM layer defines its exact shape). */
export type HandlerFn = (...args: never[]) => unknown

/** Index ranges of the handler table (docs/lapi.md, "Handler table"). */
export interface HandlerRanges {
  /** Addr_set indices: 1 .. user-1 (LOC_ADDRTBL_SZ = user). */
  user: number
  /** First index reserved for layered libraries (am2): user .. user+LIBRARY_SLOTS-1. */
  library: number
  /** First index of the automatic range (functions given to Address_init or as hdr_hdl). */
  auto: number
  /** Table length. */
  size: number
}
export const LIBRARY_SLOTS = 64
export const AUTO_SLOTS = 1024


const TIMEOUT_MIN = 10
const TIMEOUT_MAX = 86400
const TIMEOUT_DEFAULT = 900
const ACK_THRESHOLD_MAX = 30
/** Longest single Atomics.wait, ms: a sleeper re-checks the abort flag at least this often. */
const SLEEP_SLICE_MS = 500
/** Rounds of a wait loop between two looks at the clock. */
const SPIN_BATCH = 64

/** Tasks' segments seen from this thread. */
export interface SegmentViews { u8: Uint8Array[]; i32: Int32Array[]; i64: BigInt64Array[] }

/**
 * Contexts of this thread that may hold TAILs back (polling mode): a task whose program ends
 * without LAPI_Term publishes them as its thread exits, so no sender's fence waits for a message
 * this task handled.
 */
const holding = new Set<Context>()
let exitHook = false

export class Context {
  readonly handle: number
  readonly taskId: number
  readonly numTasks: number
  readonly config: Readonly<JobConfig>
  readonly segmentSize: number
  readonly spec: JobSpec
  readonly mem: BufferManager
  readonly log: Logger
  readonly ranges: HandlerRanges

  /** @internal */
  readonly ctl: Int32Array
  private readonly gatherF64: Float64Array
  private readonly gatherI64: BigInt64Array
  /** @internal */
  readonly seg: SegmentViews
  /** Int32 view of the own segment (counters). */
  /** @internal */
  readonly mySeg32: Int32Array
  /** @internal */
  readonly handlers: Array<HandlerFn | null>
  private readonly handlerIndex = new Map<HandlerFn, number>()
  /** In-place receivers of SHORT packets, by table index (library range only; see setLibraryShortHandler). */
  private readonly shortHandlers: Array<short_hndlr_t | null>
  /** @internal */
  readonly purged: Uint8Array
  /**
   * What the dispatcher tells each source, index = task id: the ring from a task of this process,
   * or for a task of another process the stand-in that records its messages landed here.
   * @internal
   */
  readonly inbox: Array<RingReader | RemoteSource>
  /** The rings of the inbox the dispatcher reads: one per task of this process, then the network's. */
  readonly polled: RingReader[]
  /** The task whose ring `polled[i]` is (-1: the network ring, whose producer is the agent). */
  readonly polledTask: Int32Array
  /** The way to each task, index = task id: a ring of its inbox, or the stand-in toward the network. */
  readonly outbox: OutRing[]
  /** 1 for the tasks of this process (shared memory), 0 for those reached over the network. */
  readonly local: Uint8Array
  /** This task's network state words (null in a job of one process): job/spec.ts NET_*. */
  readonly netState: Int32Array | null
  private readonly errHndlr: LAPI_err_hndlr | null
  private readonly epoch: number
  /** @internal */
  readonly myDoorbell: number
  /** @internal */
  readonly mySleeping: number
  private readonly myWaitWord: number
  private readonly myWaitVal: number
  private readonly myWaitCall: number
  /** The active-message engine (am.ts). @internal */
  readonly am: ActiveMessages
  /** One-sided operations on tasks of other processes (net/remote-ops.ts). @internal */
  readonly remote: RemoteOps
  /** This thread's network engine (null in a job of one process): it sends and takes in what crosses processes. @internal */
  readonly net: NetEngine | null
  /** 1 right after inboxPending ran the engine: the dispatcher round that follows need not run it again. @internal */
  netFresh = 0

  private nextAuto: number
  private gatherGen = 0
  /** 1 once LAPI_Term ran (a number: see ActiveMessages.inHeaderHandler). */
  private terminated = 0
  private interruptArmed = false

  // settings (LAPI_Senv)
  private errorChk = 1
  private interrupt: number
  /**
   * The dispatcher may hold TAIL back until the task's next step in LAPI (`ActiveMessages.tailsHeld`):
   * in polling mode, unless ACK_THRESHOLD is 1 (LAPI's acknowledgements are then not batched).
   */
  holdTails = 0

  private holds (): number { return this.interrupt === 0 && this.ackThreshold > 1 ? 1 : 0 }
  private timeout = TIMEOUT_DEFAULT
  private ackThreshold = ACK_THRESHOLD_MAX

  constructor (handle: number, spec: JobSpec, mem: BufferManager, info: lapi_info_t | null) {
    this.handle = handle
    this.spec = spec
    // (as int32s: these go into packets and bounds checks of the fast paths, which then need no conversion)
    this.taskId = spec.taskId | 0
    this.numTasks = spec.numTasks | 0
    this.config = spec.config
    this.segmentSize = spec.config.segmentSize | 0
    this.mem = mem
    this.errHndlr = info?.err_hndlr ?? null
    this.epoch = info?.epoch_num ?? 0
    this.interrupt = ((info?.protocol ?? 0) & InitFlag.LAPI_INTERRUPT_OFF) !== 0 ? 0 : 1
    this.log = logger('lapi', { task: spec.taskId, job: spec.jobId })
    this.ctl = new Int32Array(spec.control)
    const layout = controlLayout(spec.numTasks)
    this.gatherF64 = new Float64Array(spec.control, layout.gatherF64, 2 * spec.numTasks)
    this.gatherI64 = new BigInt64Array(spec.control, layout.gatherI64, 2 * spec.numTasks)
    this.seg = { u8: [], i32: [], i64: [] }
    // (a task of another process has empty views: every path to it goes through `local` first)
    const none = new SharedArrayBuffer(8)
    for (const sab of spec.segments) {
      const b = sab ?? none
      this.seg.u8.push(new Uint8Array(b, 0, sab === null ? 0 : b.byteLength))
      this.seg.i32.push(new Int32Array(b, 0, sab === null ? 0 : b.byteLength >>> 2))
      this.seg.i64.push(new BigInt64Array(b, 0, sab === null ? 0 : b.byteLength >>> 3))
    }
    this.mySeg32 = this.seg.i32[spec.taskId]!
    const user = spec.config.locAddrTblSz
    this.ranges = { user, library: user, auto: user + LIBRARY_SLOTS, size: user + LIBRARY_SLOTS + AUTO_SLOTS }
    this.handlers = new Array<HandlerFn | null>(this.ranges.size).fill(null)
    this.shortHandlers = new Array<short_hndlr_t | null>(this.ranges.size).fill(null)
    this.nextAuto = this.ranges.auto
    this.purged = new Uint8Array(spec.numTasks)
    const lo = spec.firstTask
    const nLocal = spec.localTasks
    this.local = new Uint8Array(spec.numTasks)
    for (let t = lo; t < lo + nLocal; t++) this.local[t] = 1
    const myInbox = spec.inboxes[spec.taskId]!
    const state = spec.netState[spec.taskId]
    this.netState = state !== null && state !== undefined ? new Int32Array(state) : null
    // My inbox: ring i from task lo + i, ring nLocal from the network (the agent).
    this.inbox = []
    this.polled = []
    for (let t = 0; t < spec.numTasks; t++) {
      if (this.local[t] === 1) {
        const r = new RingReader(myInbox, spec.ring, t - lo)
        this.inbox.push(r)
        this.polled.push(r)
      } else {
        this.inbox.push(new RemoteSource(spec.numTasks, t, this.netState!))
      }
    }
    this.polledTask = new Int32Array(this.polled.length + (spec.processes > 1 ? 1 : 0))
    for (let i = 0; i < nLocal; i++) this.polledTask[i] = lo + i
    if (spec.processes > 1) {
      // what the agent brings in from the network (any remote source; the packets say which)
      this.polled.push(new RingReader(myInbox, spec.ring, nLocal))
      this.polledTask[nLocal] = -1
    }
    this.outbox = []
    const toNet = spec.netOut[spec.taskId]
    const netWriter = toNet !== null && toNet !== undefined ? new RingWriter(toNet, spec.netRing, 0) : null
    for (let t = 0; t < spec.numTasks; t++) {
      if (this.local[t] === 1) this.outbox.push(new RingWriter(spec.inboxes[t]!, spec.ring, spec.taskId - lo))
      else this.outbox.push(new RemoteWriter(netWriter!, spec.ring, t, this.netState!, this.ctl))
    }
    ;(this.inbox[spec.taskId] as RingReader).sameThreadWriter(this.outbox[spec.taskId] as RingWriter)
    this.myDoorbell = taskWord(spec.taskId, T_DOORBELL)
    this.mySleeping = taskWord(spec.taskId, T_SLEEPING)
    this.myWaitWord = taskWord(spec.taskId, T_WAIT_WORD)
    this.myWaitVal = taskWord(spec.taskId, T_WAIT_VAL)
    this.myWaitCall = taskWord(spec.taskId, T_WAIT_CALL)
    // (adaptive spinning only where every task of the job, all in this process, can have a CPU:
    // with more tasks than CPUs a longer spin only keeps the awaited task off the CPU it needs)
    const cfg = spec.config
    // (in a job of several processes with more tasks than CPUs a spin only keeps the agent and the
    // other processes off the CPU they need: waits sleep at once, and the agent wakes them)
    const crowded = spec.numTasks > availableParallelism()
    this.spinBaseMs = spec.processes > 1 && crowded ? 0 : cfg.spinUs / 1000
    this.spinMs = this.spinBaseMs
    this.spinMaxMs = cfg.spinUs > 0 && spec.numTasks <= availableParallelism() ? Math.max(cfg.spinUs, cfg.spinMaxUs) / 1000 : this.spinBaseMs
    this.am = new ActiveMessages(this)
    this.remote = new RemoteOps(this)
    // (a task spins on the network, and reads the connections itself, only where every task of the
    // job can have a CPU: all of them run on this host, lapirun --procs)
    this.net = spec.net !== null
      ? new NetEngine(spec, processOf(spec.numTasks, spec.processes, spec.taskId), spec.taskId + 1, null, !crowded)
      : null
    if (this.net !== null) { const net = this.net; setRemoteBell(() => net.kick()) }
    Atomics.store(this.ctl, taskWord(spec.taskId, T_STATE), TaskState.RUNNING)
    this.holdTails = this.holds()
    holding.add(this)
    if (!exitHook) {
      exitHook = true
      process.once('exit', (code) => {
        for (const c of holding) c.flushTails()
        logger('lapi', { task: spec.taskId, job: spec.jobId }).debug({ code }, 'task exiting')
      })
    }
    if (this.interrupt === 1) this.startInterrupts()
    this.log.debug({ numTasks: spec.numTasks, interrupt: this.interrupt }, 'context initialised')
  }

  // ───────────────────────────── life cycle and environment ─────────────────────────────

  get isTerminated (): boolean { return this.terminated !== 0 }
  /** Interrupt mode (LAPI_Senv INTERRUPT_SET): 1 on, 0 polling. */
  get interruptMode (): number { return this.interrupt }

  /** LAPI_Term: local; later calls on this handle return LAPI_ERR_HNDL_INVALID. */
  term (): number {
    if (this.terminated) return S.ERR_HNDL_INVALID
    // (a Term from a handler inline in a drain: the rest of that drain holds nothing either)
    this.holdTails = 0
    this.flushTails()
    holding.delete(this)
    if (this.am.holding) this.am.flushChaos(true)
    this.terminated = 1
    Atomics.store(this.ctl, taskWord(this.taskId, T_STATE), TaskState.TERMINATED)
    this.log.debug('context terminated')
    return S.SUCCESS
  }

  /** LAPI_Qenv. */
  qenv (query: number, ret: Ref<number> | null | undefined): number {
    if (ret === null || ret === undefined || typeof ret !== 'object') return S.ERR_RET_PTR_NULL
    let v: number
    switch (query) {
      case Query.TASK_ID: v = this.taskId; break
      case Query.NUM_TASKS: v = this.numTasks; break
      case Query.MAX_UHDR_SZ: v = this.config.maxUhdrSz; break
      case Query.MAX_DATA_SZ: v = LAPI_MAX_MSG_SZ; break
      case Query.ERROR_CHK: v = this.errorChk; break
      case Query.TIMEOUT: v = this.timeout; break
      case Query.MIN_TIMEOUT: v = TIMEOUT_MIN; break
      case Query.MAX_TIMEOUT: v = TIMEOUT_MAX; break
      case Query.INTERRUPT_SET: v = this.interrupt; break
      case Query.MAX_PORTS: v = 1; break
      case Query.MAX_PKT_SZ: v = this.config.maxPktSz; break
      case Query.NUM_REX_BUFS: v = this.config.ringSlots; break
      case Query.REX_BUF_SZ: v = this.config.maxPktSz; break
      case Query.LOC_ADDRTBL_SZ: v = this.ranges.user; break
      case Query.EPOCH_NUM: v = this.epoch; break
      case Query.USE_THRESH: v = 1; break
      case Query.RCV_FIFO_SIZE: v = this.config.ringSlots * this.config.maxPktSz; break
      case Query.MAX_ATOM_SIZE: v = 8; break
      case Query.BUF_CP_SIZE: v = 64; break
      case Query.MAX_PKTS_OUT: v = this.config.ringSlots; break
      case Query.ACK_THRESHOLD: v = this.ackThreshold; break
      case Query.QUERY_SHM_ENABLED: v = 1; break
      case Query.QUERY_SHM_NUM_TASKS: v = this.spec.localTasks; break
      default: return S.ERR_QUERY_TYPE
    }
    ret.value = v
    return S.SUCCESS
  }

  /** LAPI_Senv: ERROR_CHK (0/1), INTERRUPT_SET (0/1), TIMEOUT (MIN..MAX s), ACK_THRESHOLD (1..30). */
  senv (query: number, val: number): number {
    if (!Number.isInteger(val)) return query === Query.ERROR_CHK || query === Query.INTERRUPT_SET ||
      query === Query.TIMEOUT || query === Query.ACK_THRESHOLD ? S.ERR_SET_VAL : S.ERR_QUERY_TYPE
    switch (query) {
      case Query.ERROR_CHK:
        if (val !== 0 && val !== 1) return S.ERR_SET_VAL
        this.errorChk = val; return S.SUCCESS
      case Query.INTERRUPT_SET:
        if (val !== 0 && val !== 1) return S.ERR_SET_VAL
        this.interrupt = val
        this.holdTails = this.holds()
        if (val === 1) { this.flushTails(); this.startInterrupts() }
        return S.SUCCESS
      case Query.TIMEOUT:
        if (val < TIMEOUT_MIN || val > TIMEOUT_MAX) return S.ERR_SET_VAL
        this.timeout = val; return S.SUCCESS
      case Query.ACK_THRESHOLD:
        if (val < 1 || val > ACK_THRESHOLD_MAX) return S.ERR_SET_VAL
        this.ackThreshold = val
        this.holdTails = this.holds()
        this.flushTails()
        return S.SUCCESS
      default: return S.ERR_QUERY_TYPE
    }
  }

  /**
   * Interrupt mode: while the task's code is idle in the event loop, a waitAsync on the doorbell
   * wakes this loop whenever something arrives, and it runs the dispatcher, so handlers run without
   * any LAPI call being made (LAPI's notification thread). It holds no ref on the event loop: a task
   * whose code is done still exits. It ends when interrupt mode is switched off or at LAPI_Term.
   */
  private startInterrupts (): void {
    if (this.interruptArmed) return
    this.interruptArmed = true
    void this.interruptLoop()
  }

  private async interruptLoop (): Promise<void> {
    const ctl = this.ctl
    try {
      while (this.interrupt === 1 && !this.terminated) {
        this.flushTails()
        Atomics.store(ctl, this.myWaitCall, WaitCall.EVENT_LOOP)
        const seen = Atomics.load(ctl, this.myDoorbell)
        this.enterAsyncSleep()
        try {
          if (!this.inboxPending() && !this.am.busy) {
            const w = Atomics.waitAsync(ctl, this.myDoorbell, seen, SLEEP_SLICE_MS)
            if (w.async) await w.value
          } else {
            await new Promise<void>((resolve) => setImmediate(resolve))
          }
        } finally {
          this.leaveAsyncSleep()
        }
        if (this.interrupt !== 1 || this.terminated || Atomics.load(ctl, W_ABORT) !== 0) break
        this.progress()
      }
    } catch (e) {
      this.log.error({ err: e }, 'interrupt-mode dispatcher stopped')
    } finally {
      this.interruptArmed = false
    }
  }

  // ───────────────────────────── memory ─────────────────────────────

  /** LAPIX_Malloc: `nbytes` zero-filled, 8-byte aligned bytes of the own segment. */
  malloc (nbytes: number, ret: Ref<Addr> | null | undefined): number {
    if (ret === null || ret === undefined || typeof ret !== 'object') return S.ERR_RET_PTR_NULL
    if (!Number.isSafeInteger(nbytes) || nbytes < 0) return S.ERR_DATA_LEN
    const a = this.mem.alloc(nbytes, true)
    if (a === 0) return S.ERR_MEMORY_EXHAUSTED
    ret.value = a
    return S.SUCCESS
  }

  /** LAPIX_Free: returns ORG_ADDR_NULL for 0 or an address LAPIX_Malloc did not hand out. */
  free (addr: Addr): number {
    if (typeof addr !== 'number' || addr === 0 || !this.mem.isLive(addr)) return S.ERR_ORG_ADDR_NULL
    this.mem.free(addr)
    return S.SUCCESS
  }

  /** LAPIX_View: a live view of `nbytes` of the own segment at `addr`; RangeError out of range. */
  view (addr: Addr, nbytes: number): Uint8Array {
    if (!Number.isSafeInteger(addr) || !Number.isSafeInteger(nbytes) || addr < 0 || nbytes < 0 || addr + nbytes > this.segmentSize) {
      throw new RangeError(`LAPIX_View(${addr}, ${nbytes}) is outside the segment of ${this.segmentSize} bytes`)
    }
    return new Uint8Array(this.spec.segments[this.taskId]!, addr, nbytes)
  }

  // ───────────────────────────── counters ─────────────────────────────

  /** LAPI_Setcntr. */
  setcntr (cntr: Addr, val: number): number {
    if (!this.isCounter(cntr)) return S.ERR_CNTR_NULL
    if (!Number.isInteger(val)) return S.ERR_CNTR_VAL
    Atomics.store(this.seg.i32[this.taskId]!, cntr >>> 2, val)
    return S.SUCCESS
  }

  /** LAPI_Getcntr (runs the dispatcher once first, as LAPI calls do in polling mode). */
  getcntr (cntr: Addr, val: Ref<number> | null | undefined): number {
    if (!this.isCounter(cntr)) return S.ERR_CNTR_NULL
    if (val === null || val === undefined || typeof val !== 'object') return S.ERR_RET_PTR_NULL
    if (!this.am.inHeaderHandler) this.progress()
    val.value = Atomics.load(this.mySeg32, cntr >>> 2)
    return S.SUCCESS
  }

  /**
   * LAPI_Waitcntr: blocks until the counter is ≥ `val`, then subtracts `val` and reports the value
   * left. Spins (running the dispatcher) for `spinUs`, then sleeps on the task's doorbell.
   */
  waitcntr (cntr: Addr, val: number, cur: Ref<number> | null | undefined): number {
    const rc = this.checkWait(cntr, val)
    if (rc !== 0) return rc
    if (this.am.inHeaderHandler) return S.ERR_POLLING_NET
    this.flushTails()
    const i32 = this.mySeg32
    const idx = cntr >>> 2
    // bumps a waiting dispatcher handed straight to this wait (see waitSlow) count as in memory
    // (a plain read that shows the wait not over needs no atomic one: see `reached`)
    const got = i32[idx]! < val || Atomics.load(i32, idx) < val ? this.waitSlow(i32, idx, val) : 0
    const d = got - val
    if (d !== 0) {
      const left = Atomics.add(i32, idx, d) + d
      if (cur !== null && cur !== undefined) cur.value = left
      if (got !== 0 && this.asyncSleepers !== 0) ringDoorbell(this.ctl, this.taskId)
    } else if (cur !== null && cur !== undefined) {
      cur.value = Atomics.load(i32, idx)
    }
    return S.SUCCESS
  }

  /**
   * The waiting loop of waitcntr: look at the counter (`reached`), look at the inbox and run the
   * dispatcher only when a packet waits or work is queued; every
   * SPIN_BATCH rounds run the dispatcher anyway and look at the clock (performance.now is too dear
   * to call every round), and once the spin budget is spent sleep on the doorbell. Each round
   * keeps one atomic read, the inbox's: a spin of plain reads alone measured slower (the other
   * thread's hop took longer), as a loop of plain loads of a line another core writes keeps the
   * core busier; the call of an atomic read paces the loop.
   */
  private waitSlow (i32: Int32Array, idx: number, val: number): number {
    let spinStart = 0
    const am = this.am
    // (a wait nested in a handler runs while the outer's bumps are in memory: see enterUser)
    const outer = this.absorbWord
    this.absorbWord = idx
    try {
      for (;;) {
        for (let k = 0; k < SPIN_BATCH; k++) {
          if (this.reached(i32, idx, val)) return this.absorbed
          if (this.inboxPending() || am.busy) this.progress()
        }
        this.progress()
        if (Atomics.load(i32, idx) + this.absorbed >= val) return this.absorbed
        // what this wait took so far goes to memory before it may sleep on the counter
        if (this.absorbed !== 0) this.flushAbsorbed()
        spinStart = this.idle(spinStart, WAIT_COUNTER, WaitCall.WAITCNTR, i32, idx, val)
      }
    } catch (e) {
      this.flushAbsorbed()
      throw e
    } finally {
      this.absorbed = 0
      this.absorbWord = outer
    }
  }

  /**
   * Whether the wait on counter word `idx` for `val` is over (the counter plus what the wait took).
   * A plain read first, as a hint: a look that finds the wait not over costs no atomic operation
   * (an atomic read is a call in Node 20, ~100 instructions), and a value read late only makes the
   * wait look again. When the hint shows the wait over, an atomic read confirms it, which also
   * orders the reads of the data the counted operations wrote; it is skipped when this wait's own
   * dispatcher rounds took enough (`absorbed`), as their packets were read after atomic reads of
   * their stamps. (Other tasks' counter updates add; only a Put or Rmw that another task aims at
   * the counter word itself, racing with the wait, could make that case differ.)
   */
  private reached (i32: Int32Array, idx: number, val: number): boolean {
    const a = this.absorbed
    return i32[idx]! + a >= val && (a >= val || Atomics.load(i32, idx) + a >= val)
  }

  /**
   * The counter word (of the own segment) the innermost running Waitcntr waits on, or -1. While it
   * waits, the dispatcher hands bumps of that counter straight to it (`absorbed`) instead of adding
   * them in memory, and the wait subtracts only the difference when it ends: a message that
   * completes the wait then costs no atomic read-modify-write of the counter, on either side.
   * Only the wait's own dispatcher rounds hand bumps over: `absorbed` goes into memory before any
   * user code runs (a header handler: `flushAbsorbed`; a completion, send-completion or error
   * handler: `enterUser`, which also stops the hand-over while it runs) and before the sleep, so
   * no code of this task ever sees the difference.
   */
  private absorbWord = -1
  /** Bumps of `absorbWord` the running wait has taken and memory does not show yet. */
  private absorbed = 0
  /** Completion, send-completion and error handlers running (nested); bumps go to memory meanwhile. */
  private userCode = 0

  /** Puts the held-back bumps into memory and counts a handler that may call LAPI as running. */
  private enterUser (): void {
    this.flushAbsorbed()
    this.userCode++
  }

  /** @internal Puts the bumps the running wait took into memory. */
  flushAbsorbed (): void {
    if (this.absorbed !== 0) {
      Atomics.add(this.mySeg32, this.absorbWord, this.absorbed)
      this.absorbed = 0
      if (this.asyncSleepers !== 0) ringDoorbell(this.ctl, this.taskId)
    }
  }

  /**
   * Waits asynchronously (Atomics.waitAsync on the doorbell, so the event loop stays free) until the
   * counter is ≥ `val`, subtracts `val` and resolves with the value left. Validates like waitcntr;
   * resolves with a negative LAPI code instead of waiting when the arguments are bad.
   */
  async waitcntrAsync (cntr: Addr, val: number): Promise<number> {
    const rc = this.checkWait(cntr, val)
    if (rc !== 0) throw new LapiError(rc, 'Waitcntr')
    const i32 = this.mySeg32
    const idx = cntr >>> 2
    for (;;) {
      this.progress()
      if (Atomics.load(i32, idx) >= val) return Atomics.sub(i32, idx, val) - val
      await this.idleAsync(WAIT_COUNTER, WaitCall.WAITCNTR, i32, idx, val)
    }
  }

  /**
   * Sleeps without blocking the thread until the doorbell moves from `seen` (or a slice passes).
   * A pending Atomics.waitAsync does not keep Node's event loop alive, so a timer does.
   */
  private async sleepAsync (seen: number): Promise<void> {
    const w = Atomics.waitAsync(this.ctl, this.myDoorbell, seen, SLEEP_SLICE_MS)
    if (!w.async) return
    const keepAlive = setTimeout(noop, SLEEP_SLICE_MS + 50)
    try { await w.value } finally { clearTimeout(keepAlive) }
  }

  private checkWait (cntr: Addr, val: number): number {
    if ((cntr >>> 0) === cntr && cntr !== 0 && (cntr & 3) === 0 && cntr + 4 <= this.segmentSize && (val | 0) === val) return 0
    if (!this.isCounter(cntr)) return S.ERR_CNTR_NULL
    if (typeof val !== 'number' || !Number.isInteger(val)) return S.ERR_CNTR_VAL
    return 0
  }

  // ───────────────────────────── contiguous one-sided transfers ─────────────────────────────

  /**
   * LAPI_Put. The common case of a fine-grained PGAS put is checked and done here, in a function
   * small enough to be inlined into the caller: a few aligned words from the own segment to
   * another task's, with a target counter at most. Everything else goes to `putAny`.
   */
  put (tgt: number, len: number, tgtAddr: Addr, org: LocalBuf, tgtCntr: Addr, orgCntr: Addr, cmplCntr: Addr): number {
    const size = this.segmentSize
    if (typeof org === 'number' && ((tgtAddr | org | len) & 3) === 0 && len <= WORD_COPY && (tgt >>> 0) === tgt &&
      tgt < this.numTasks && tgt !== this.taskId && this.purged[tgt] === 0 && this.local[tgt] === 1 && (tgtAddr >>> 0) === tgtAddr && (org >>> 0) === org &&
      (len >>> 0) === len && tgtAddr + len <= size && org + len <= size && tgtAddr !== 0 && org !== 0 &&
      (orgCntr | cmplCntr) === 0 && counterOk(tgtCntr, size) && !this.am.inHeaderHandler) {
      const d32 = this.seg.i32[tgt]!
      copyWords(d32, tgtAddr, this.mySeg32, org, len)
      if (tgtCntr !== 0) {
        const w = tgtCntr >>> 2
        ringCounter(this.ctl, tgt, w, Atomics.add(d32, w, 1) + 1)
      }
      // (a step in LAPI: slots the dispatcher gave back go out now, after the Put itself)
      this.flushTails()
      return S.SUCCESS
    }
    return this.putAny(tgt, len, tgtAddr, org, tgtCntr, orgCntr, cmplCntr, null, null)
  }

  /** LAPI_Put in general (and the PUT member of LAPI_Xfer, with its send-completion handler). */
  putAny (tgt: number, len: number, tgtAddr: Addr, org: LocalBuf, tgtCntr: Addr, orgCntr: Addr, cmplCntr: Addr,
    shdlr: scompl_hndlr_t | null, sinfo: unknown): number {
    this.flushTails()
    const rc = this.checkContig(tgt, len, tgtAddr, org, tgtCntr, orgCntr, cmplCntr)
    if (rc !== 0 || this.am.inHeaderHandler) return rc !== 0 ? rc : S.ERR_POLLING_NET
    if (this.local[tgt] === 0) return this.remote.put(tgt, len, tgtAddr, org, tgtCntr, orgCntr, cmplCntr, shdlr, sinfo)
    if (len > 0) {
      const seg = this.seg
      if (typeof org === 'number') copyShared(seg.u8[tgt]!, seg.i32[tgt]!, tgtAddr, seg.u8[this.taskId]!, this.mySeg32, org, len)
      else copyBuf(seg.u8[tgt]!, tgtAddr, org!, 0, len, tgt === this.taskId)
    }
    if (tgtCntr !== 0) this.bump(tgt, tgtCntr)
    if (orgCntr !== 0) this.bumpLocal(orgCntr)
    if (shdlr !== null) this.runSendHandler(shdlr, sinfo, tgt, ErrClass.PUT_ERR)
    if (cmplCntr !== 0) this.bumpLocal(cmplCntr)
    return S.SUCCESS
  }

  /** LAPI_Get (and the GET member of LAPI_Xfer when `chndlr` is given). */
  get (tgt: number, len: number, tgtAddr: Addr, org: LocalBuf, tgtCntr: Addr, orgCntr: Addr,
    chndlr: compl_hndlr_t | null = null, cinfo: unknown = null): number {
    this.flushTails()
    const rc = this.checkContig(tgt, len, tgtAddr, org, tgtCntr, orgCntr, 0)
    if (rc !== 0 || this.am.inHeaderHandler) return rc !== 0 ? rc : S.ERR_POLLING_NET
    if (this.local[tgt] === 0) return this.remote.get(tgt, len, tgtAddr, org, tgtCntr, orgCntr, chndlr, cinfo)
    if (len > 0) {
      const seg = this.seg
      if (typeof org === 'number') copyShared(seg.u8[this.taskId]!, this.mySeg32, org, seg.u8[tgt]!, seg.i32[tgt]!, tgtAddr, len)
      else copyBuf(org!, 0, seg.u8[tgt]!, tgtAddr, len, tgt === this.taskId)
    }
    if (tgtCntr !== 0) this.bump(tgt, tgtCntr)
    if (chndlr !== null) this.runComplHandler(chndlr, cinfo, tgt, ErrClass.GET_ERR)
    if (orgCntr !== 0) this.bumpLocal(orgCntr)
    return S.SUCCESS
  }

  /**
   * The checks of a contiguous transfer in one pass. The first test is what every correct call
   * passes, in integer arithmetic only; anything else goes to `classifyContig` for the exact code.
   */
  private checkContig (tgt: number, len: number, tgtAddr: Addr, org: LocalBuf, c1: Addr, c2: Addr, c3: Addr): number {
    const seg = this.segmentSize
    if ((tgt >>> 0) === tgt && tgt < this.numTasks && this.purged[tgt] === 0 &&
      (len >>> 0) === len && (tgtAddr >>> 0) === tgtAddr && tgtAddr + len <= seg && (tgtAddr !== 0 || len === 0) &&
      counterOk(c1, seg) && counterOk(c2, seg) && counterOk(c3, seg)) {
      if (typeof org === 'number') {
        if ((org >>> 0) === org && org + len <= seg && (org !== 0 || len === 0)) return 0
      } else if (org instanceof Uint8Array && org.length >= len) return 0
    }
    return this.classifyContig(tgt, len, tgtAddr, org, c1, c2, c3)
  }

  /** The exact code for a contiguous transfer that failed the fast check (0 if it is fine after all). */
  private classifyContig (tgt: number, len: number, tgtAddr: Addr, org: LocalBuf, c1: Addr, c2: Addr, c3: Addr): number {
    let rc = this.checkTarget(tgt)
    if (rc !== 0) return rc
    if (!isLen(len)) return S.ERR_DATA_LEN
    rc = this.checkRemote(tgtAddr, len)
    if (rc !== 0) return rc
    rc = this.checkLocal(org, len)
    if (rc !== 0) return rc
    if (!this.isCounterOpt(c1) || !this.isCounterOpt(c2) || !this.isCounterOpt(c3)) return S.ERR_CNTR_NULL
    return 0
  }

  // ───────────────────────────── vector transfers ─────────────────────────────

  /** LAPI_Putv: gathers the origin vector and scatters into the target vector (addresses in `tgt`). */
  putv (tgt: number, tgtVec: lapi_vec_t | null, orgVec: lapi_vec_t | null, tgtCntr: Addr, orgCntr: Addr, cmplCntr: Addr,
    shdlr: scompl_hndlr_t | null = null, sinfo: unknown = null): number {
    if (this.am.inHeaderHandler) return S.ERR_POLLING_NET
    this.flushTails()
    let rc = this.checkTarget(tgt)
    if (rc !== 0) return rc
    rc = this.checkVecPair(tgtVec, orgVec)
    if (rc !== 0) return rc
    if (!this.isCounterOpt(tgtCntr) || !this.isCounterOpt(orgCntr) || !this.isCounterOpt(cmplCntr)) return S.ERR_CNTR_NULL
    if (this.local[tgt] === 0) return this.remote.putv(tgt, tgtVec!, orgVec!, tgtCntr, orgCntr, cmplCntr, shdlr, sinfo)
    this.moveVec(orgVec!, this.taskId, tgtVec!, tgt)
    this.bump(tgt, tgtCntr)
    this.bumpLocal(orgCntr)
    if (shdlr !== null) this.runSendHandler(shdlr, sinfo, tgt, ErrClass.PUT_ERR)
    this.bumpLocal(cmplCntr)
    return S.SUCCESS
  }

  /** LAPI_Getv: gathers the target vector (addresses in `tgt`) into the origin vector. */
  getv (tgt: number, tgtVec: lapi_vec_t | null, orgVec: lapi_vec_t | null, tgtCntr: Addr, orgCntr: Addr,
    chndlr: compl_hndlr_t | null = null, cinfo: unknown = null): number {
    if (this.am.inHeaderHandler) return S.ERR_POLLING_NET
    this.flushTails()
    let rc = this.checkTarget(tgt)
    if (rc !== 0) return rc
    rc = this.checkVecPair(tgtVec, orgVec)
    if (rc !== 0) return rc
    if (!this.isCounterOpt(tgtCntr) || !this.isCounterOpt(orgCntr)) return S.ERR_CNTR_NULL
    if (this.local[tgt] === 0) return this.remote.getv(tgt, tgtVec!, orgVec!, tgtCntr, orgCntr, chndlr, cinfo)
    this.moveVec(tgtVec!, tgt, orgVec!, this.taskId)
    this.bump(tgt, tgtCntr)
    if (chndlr !== null) this.runComplHandler(chndlr, cinfo, tgt, ErrClass.GET_ERR)
    this.bumpLocal(orgCntr)
    return S.SUCCESS
  }

  // ───────────────────────────── atomics ─────────────────────────────

  /**
   * LAPI_Rmw on a 32-bit word: `inVal[0]` is the operand (COMPARE_AND_SWAP: `inVal[0]` compare,
   * `inVal[1]` new value). `prev` gets the old value, or TRUE/FALSE for COMPARE_AND_SWAP.
   */
  rmw (op: number, tgt: number, tgtVar: Addr, inVal: ArrayLike<number> | null | undefined, prev: Ref<number> | null | undefined,
    orgCntr: Addr, shdlr: scompl_hndlr_t | null = null, sinfo: unknown = null): number {
    if (this.am.inHeaderHandler) return S.ERR_POLLING_NET
    this.flushTails()
    let rc = this.checkRmw(op, tgt, tgtVar, 4)
    if (rc !== 0) return rc
    if (inVal === null || inVal === undefined || typeof inVal !== 'object') return S.ERR_IN_VAL_NULL
    const need = op === RmwOp.COMPARE_AND_SWAP ? 2 : 1
    if (inVal.length < need) return S.ERR_IN_VAL_NULL
    for (let i = 0; i < need; i++) if (typeof inVal[i] !== 'number' || !Number.isFinite(inVal[i])) return S.ERR_IN_VAL_NULL
    if (!this.isCounterOpt(orgCntr)) return S.ERR_CNTR_NULL
    if (this.local[tgt] === 0) {
      rc = this.remote.rmw32(op, tgt, tgtVar, inVal[0]! | 0, need === 2 ? inVal[1]! | 0 : 0, prev ?? null, orgCntr, shdlr, sinfo)
      return rc === 0 ? this.rmwAnswer(orgCntr, prev) : rc
    }
    rc = 0
    const a = this.seg.i32[tgt]!
    const idx = tgtVar >>> 2
    const old = rmw32(a, idx, op, inVal[0]! | 0, need === 2 ? inVal[1]! | 0 : 0)
    if (prev !== null && prev !== undefined) prev.value = old
    if (shdlr !== null) this.runSendHandler(shdlr, sinfo, tgt, ErrClass.RMW_ERR)
    this.bumpLocal(orgCntr)
    return S.SUCCESS
  }

  /**
   * An Rmw sent to a task of another process with `prev` and no origin counter: its caller has no
   * way to learn when `prev` is valid, so the call waits for the answer (as the same call on a
   * co-located task, which completes inside it). With an origin counter it returns at once.
   */
  private rmwAnswer (orgCntr: Addr, prev: Ref<number> | Ref<bigint> | null | undefined): number {
    if (orgCntr !== 0 || prev === null || prev === undefined) return S.SUCCESS
    return this.remote.waitAnswer(this.remote.lastId)
  }

  /** LAPI_Rmw64 on a 64-bit word (`tgtVar` 8-byte aligned); operands are bigints. */
  rmw64 (op: number, tgt: number, tgtVar: Addr, inVal: ArrayLike<bigint> | null | undefined, prev: Ref<bigint> | null | undefined,
    orgCntr: Addr, shdlr: scompl_hndlr_t | null = null, sinfo: unknown = null): number {
    if (this.am.inHeaderHandler) return S.ERR_POLLING_NET
    this.flushTails()
    const rc = this.checkRmw(op, tgt, tgtVar, 8)
    if (rc !== 0) return rc
    if (inVal === null || inVal === undefined || typeof inVal !== 'object') return S.ERR_IN_VAL_NULL
    const need = op === RmwOp.COMPARE_AND_SWAP ? 2 : 1
    if (inVal.length < need) return S.ERR_IN_VAL_NULL
    for (let i = 0; i < need; i++) if (typeof inVal[i] !== 'bigint') return S.ERR_IN_VAL_NULL
    if (!this.isCounterOpt(orgCntr)) return S.ERR_CNTR_NULL
    if (this.local[tgt] === 0) {
      const r = this.remote.rmw64(op, tgt, tgtVar, BigInt.asIntN(64, inVal[0]!), need === 2 ? BigInt.asIntN(64, inVal[1]!) : 0n, prev ?? null, orgCntr, shdlr, sinfo)
      return r === 0 ? this.rmwAnswer(orgCntr, prev) : r
    }
    const a = this.seg.i64[tgt]!
    const idx = tgtVar >>> 3
    const v0 = BigInt.asIntN(64, inVal[0]!)
    const old = rmw64(a, idx, op, v0, need === 2 ? BigInt.asIntN(64, inVal[1]!) : 0n)
    if (prev !== null && prev !== undefined) prev.value = old
    if (shdlr !== null) this.runSendHandler(shdlr, sinfo, tgt, ErrClass.RMW_ERR)
    this.bumpLocal(orgCntr)
    return S.SUCCESS
  }

  // ───────────────────────────── generalized transfer ─────────────────────────────

  /**
   * LAPI_Amsend: an active message to `tgt`; `hdr` is the header handler's table index there (or a
   * function registered here, SPMD style). See am.ts for the protocol.
   */
  amsend (tgt: number, hdr: number | HandlerFn | null, uhdr: LocalBuf, uhdrLen: number, udata: LocalBuf, udataLen: number,
    tgtCntr: Addr, orgCntr: Addr, cmplCntr: Addr, shdlr: scompl_hndlr_t | null = null, sinfo: unknown = null): number {
    return this.am.amsend(tgt, hdr, uhdr, uhdrLen, udata, udataLen, tgtCntr, orgCntr, cmplCntr, shdlr, sinfo)
  }

  /** LAPI_Amsendv: an active message whose data is gathered from `orgVec`. */
  amsendv (tgt: number, hdr: number | HandlerFn | null, uhdr: LocalBuf, uhdrLen: number, orgVec: lapi_vec_t | null,
    tgtCntr: Addr, orgCntr: Addr, cmplCntr: Addr, shdlr: scompl_hndlr_t | null = null, sinfo: unknown = null): number {
    return this.am.amsendv(tgt, hdr, uhdr, uhdrLen, orgVec, tgtCntr, orgCntr, cmplCntr, shdlr, sinfo)
  }

  /** LAPI_Xfer for the AM, AMV, PUT, GET, PUTV, GETV and RMW types. */
  xfer (cmd: unknown): number {
    if (cmd === null || typeof cmd !== 'object') return S.ERR_XFER_CMD
    if (this.am.inHeaderHandler) return S.ERR_POLLING_NET
    const c = cmd as Record<string, unknown>
    const cn = (k: string): Addr => (c[k] ?? 0) as Addr
    const fn = <T>(k: string): T | null => (typeof c[k] === 'function' ? c[k] as T : null)
    switch (c['Xfer_type']) {
      case XferType.LAPI_AM_XFER:
        return this.amsend(c['tgt'] as number, c['hdr_hdl'] as number | HandlerFn, c['uhdr'] as LocalBuf, (c['uhdr_len'] ?? 0) as number,
          c['udata'] as LocalBuf, (c['udata_len'] ?? 0) as number, cn('tgt_cntr'), cn('org_cntr'), cn('cmpl_cntr'),
          fn<scompl_hndlr_t>('shdlr'), c['sinfo'] ?? null)
      case XferType.LAPI_AMV_XFER:
        return this.amsendv(c['tgt'] as number, c['hdr_hdl'] as number | HandlerFn, c['uhdr'] as LocalBuf, (c['uhdr_len'] ?? 0) as number,
          c['org_vec'] as lapi_vec_t | null, cn('tgt_cntr'), cn('org_cntr'), cn('cmpl_cntr'), fn<scompl_hndlr_t>('shdlr'), c['sinfo'] ?? null)
      case XferType.LAPI_PUT_XFER:
        return this.putAny(c['tgt'] as number, c['len'] as number, c['tgt_addr'] as Addr, c['org_addr'] as LocalBuf,
          cn('tgt_cntr'), cn('org_cntr'), cn('cmpl_cntr'), fn<scompl_hndlr_t>('shdlr'), c['sinfo'] ?? null)
      case XferType.LAPI_GET_XFER:
        return this.get(c['tgt'] as number, c['len'] as number, c['tgt_addr'] as Addr, c['org_addr'] as LocalBuf,
          cn('tgt_cntr'), cn('org_cntr'), fn<compl_hndlr_t>('chndlr'), c['cinfo'] ?? null)
      case XferType.LAPI_PUTV_XFER:
        return this.putv(c['tgt'] as number, c['tgt_vec'] as lapi_vec_t | null, c['org_vec'] as lapi_vec_t | null,
          cn('tgt_cntr'), cn('org_cntr'), cn('cmpl_cntr'), fn<scompl_hndlr_t>('shdlr'), c['sinfo'] ?? null)
      case XferType.LAPI_GETV_XFER:
        return this.getv(c['tgt'] as number, c['tgt_vec'] as lapi_vec_t | null, c['org_vec'] as lapi_vec_t | null,
          cn('tgt_cntr'), cn('org_cntr'), fn<compl_hndlr_t>('chndlr'), c['cinfo'] ?? null)
      case XferType.LAPI_RMW_XFER: {
        const size = c['size']
        if (size !== 32 && size !== 64) return S.ERR_OP_SZ
        if (size === 32) {
          return this.rmw(c['op'] as number, c['tgt'] as number, c['tgt_var'] as Addr, c['in_val'] as ArrayLike<number> | null,
            c['prev_tgt_val'] as Ref<number> | null, cn('org_cntr'), fn<scompl_hndlr_t>('shdlr'), c['sinfo'] ?? null)
        }
        return this.rmw64(c['op'] as number, c['tgt'] as number, c['tgt_var'] as Addr, c['in_val'] as ArrayLike<bigint> | null,
          c['prev_tgt_val'] as Ref<bigint> | null, cn('org_cntr'), fn<scompl_hndlr_t>('shdlr'), c['sinfo'] ?? null)
      }
      default: return S.ERR_XFER_CMD
    }
  }

  // ───────────────────────────── progress and synchronization ─────────────────────────────

  /**
   * One round of the dispatcher: drains every ring of the inbox (at most one ring's worth of
   * packets from each, so one sender cannot starve the others). Returns the packets handled.
   */
  progress (): number {
    return this.am.progress()
  }

  /** Publishes the TAILs the dispatcher held back (`ActiveMessages.tailsHeld`): every LAPI step of the task does. */
  flushTails (): void {
    const am = this.am
    if (am.tailsHeld) am.publishTails()
  }

  /** True when a packet waits in the inbox. */
  inboxPending (): boolean {
    // (what crossed the network may still be in the socket: take it in first)
    if (this.net !== null) this.net.poll(true)
    const rings = this.polled
    for (let i = 0; i < rings.length; i++) {
      if (rings[i]!.nonEmpty) {
        // (the dispatcher round that follows need not run the engine again)
        this.netFresh = 1
        return true
      }
    }
    return false
  }

  /** Active messages of this task that have not landed at their targets yet (the fence waits for 0). */
  outstanding (): number {
    let n = 0
    const out = this.outbox
    // (per ring, never below 0: a ring whose count a new writer took over can show more landed than sent)
    for (let t = 0; t < out.length; t++) { const o = out[t]!.outstanding(); if (o > 0) n += o }
    return n
  }

  /** Dispatcher statistics: packets dropped as malformed, duplicates dropped, messages completed. */
  stats (): DispatcherStats {
    const am = this.am
    const net = this.netState
    return { packetsDropped: am.dropped + (net !== null ? Atomics.load(net, NET_DROPPED) : 0), duplicatesDropped: am.duplicates, messagesReceived: am.recvCompleted, messagesSent: am.sendCompleted,
      receivedInPlace: am.inPlaceCompleted, sleeps: this.sleeps, spinUs: this.spinMs * 1000,
      spinGrown: this.spinGrown }
  }

  /** LAPI_Probe. */
  probe (): number {
    if (this.am.inHeaderHandler) return S.ERR_POLLING_NET
    this.progress()
    return S.SUCCESS
  }

  /**
   * LAPI_Msgpoll: runs the dispatcher up to `cnt` times, returning as soon as something completed;
   * `info.status` gets the MsgState bits (LAPI_DISP_CNTR when it looped `cnt` times for nothing).
   */
  msgpoll (cnt: number, info: lapi_msg_info_t | null | undefined): number {
    if (info === null || info === undefined || typeof info !== 'object') return S.ERR_MSG_INFO_NULL
    if (!Number.isInteger(cnt) || cnt < 0) return S.ERR_SET_VAL
    if (this.am.inHeaderHandler) return S.ERR_POLLING_NET
    const am = this.am
    const sent = am.sendCompleted
    const recv = am.recvCompleted
    for (let i = 0; i < cnt; i++) {
      this.progress()
      const st = (am.sendCompleted !== sent ? 1 : 0) | (am.recvCompleted !== recv ? 2 : 0)
      if (st !== 0) { info.status = st; return S.SUCCESS }
    }
    info.status = 8
    return S.SUCCESS
  }

  /** The condition of the running waitUntil (WAIT_COND), null otherwise. */
  private waitCond: (() => boolean) | null = null

  /**
   * Blocks the thread, running the dispatcher, until `cond()` is true (checked after every round;
   * it must not send). Spins for the configured budget, then sleeps on the doorbell, which any
   * packet or counter update of this task rings. `cond` is kept for the sleep check, so pass a
   * long-lived function to wait without allocating. Returns 0, or LAPI_ERR_POLLING_NET inside a
   * header handler.
   */
  waitUntil (cond: () => boolean, call: number = WaitCall.WAIT_UNTIL): number {
    if (this.am.inHeaderHandler) return S.ERR_POLLING_NET
    this.flushTails()
    let spinStart = 0
    const outer = this.waitCond
    try {
      const am = this.am
      for (;;) {
        this.progress()
        if (cond()) return S.SUCCESS
        for (let k = 0; k < SPIN_BATCH; k++) {
          if (this.inboxPending() || am.busy) this.progress()
          if (cond()) return S.SUCCESS
        }
        this.waitCond = cond
        spinStart = this.idle(spinStart, WAIT_COND, call, null, 0, 0)
      }
    } finally {
      this.waitCond = outer
    }
  }

  /** Like waitUntil, but the event loop keeps running (no spinning; an asynchronous doorbell wait). */
  async waitUntilAsync (cond: () => boolean, call: number = WaitCall.WAIT_UNTIL): Promise<number> {
    if (this.am.inHeaderHandler) return S.ERR_POLLING_NET
    for (;;) {
      this.progress()
      if (cond()) return S.SUCCESS
      const outer = this.waitCond
      this.waitCond = cond
      try { await this.idleAsync(WAIT_COND, call, null, 0, 0) } finally { this.waitCond = outer }
    }
  }

  /** Whether task `t` is still in the job (false once it called LAPI_Term, exited or failed). */
  taskAlive (t: number): boolean {
    if (!Number.isInteger(t) || t < 0 || t >= this.numTasks) return false
    const st = Atomics.load(this.ctl, taskWord(t, T_STATE))
    return st === TaskState.NEW || st === TaskState.RUNNING
  }

  /**
   * taskAlive for hot send paths: one plain read of the task's state (no atomic call), so a task
   * that left a moment ago may still look alive, as it may to any check made just before it
   * left; the send then goes into its ring, which nobody reads any more (a full one is found
   * out by the send's wait for room once the task has exited: it reads the state atomically).
   */
  taskAliveHint (t: number): boolean {
    if ((t >>> 0) >= this.numTasks) return false
    const st = this.ctl[taskWord(t, T_STATE)]!
    return st === TaskState.NEW || st === TaskState.RUNNING
  }

  /** Whether this context is inside a LAPI header handler (where nothing may send or wait). */
  get inHeaderHandler (): boolean { return this.am.inHeaderHandler !== 0 }

  /**
   * LAPI_Fence: every operation this task started before it is complete at its target. Put, Get
   * and Rmw between co-located tasks complete inside the call; active messages are outstanding
   * until their data has landed at the target (a data fence: completion handlers may still run).
   */
  fence (): number { return this.fenceIn(WaitCall.FENCE) }

  /** The fence of blocking call `call` (a WaitCall: LAPI_Fence or LAPI_Gfence). */
  private fenceIn (call: number): number {
    if (this.am.inHeaderHandler) return S.ERR_POLLING_NET
    this.flushTails()
    let spinStart = 0
    this.progress()
    while (this.outstanding() > 0) {
      this.progress()
      if (this.outstanding() === 0) break
      spinStart = this.idle(spinStart, WAIT_FENCE, call, null, 0, 0)
    }
    return S.SUCCESS
  }

  /** LAPI_Gfence: a fence, then a barrier of all tasks. */
  gfence (): number {
    const rc = this.fenceIn(WaitCall.GFENCE)
    if (rc !== 0) return rc
    this.barrier(WaitCall.GFENCE)
    return S.SUCCESS
  }

  /** The same as gfence, but waiting asynchronously. */
  async gfenceAsync (): Promise<number> {
    if (this.am.inHeaderHandler) return S.ERR_POLLING_NET
    // the fence, without blocking the event loop
    for (;;) {
      this.progress()
      if (this.outstanding() <= 0) break
      await this.idleAsync(WAIT_FENCE, WaitCall.GFENCE, null, 0, 0)
    }
    const gen = this.arrive()
    while (Atomics.load(this.ctl, W_BAR_GEN) === gen) {
      this.progress()
      this.checkBarrierPeers(gen)
      await this.idleAsync(WAIT_BARRIER, WaitCall.GFENCE, null, 0, gen)
    }
    return S.SUCCESS
  }

  /**
   * LAPI_Address_init: all-gather of one number per task. `out[i]` gets task i's value. A function
   * is registered in the automatic range of the handler table and its index contributed instead.
   */
  addressInit (mine: number | HandlerFn | null | undefined, out: number[] | null | undefined): number {
    if (out === null || out === undefined || !Array.isArray(out)) return S.ERR_ADDR_TBL_NULL
    if (this.am.inHeaderHandler) return S.ERR_POLLING_NET
    let v: number
    if (typeof mine === 'function') {
      const idx = this.registerAuto(mine as HandlerFn)
      if (idx < 0) return S.ERR_MEMORY_EXHAUSTED
      v = idx
    } else if (mine === null || mine === undefined) v = 0
    else if (typeof mine === 'number' && Number.isFinite(mine)) v = mine
    else return S.ERR_ORG_ADDR_NULL
    const base = (this.gatherGen++ & 1) * this.numTasks
    this.gatherF64[base + this.taskId] = v
    this.barrier(WaitCall.ADDRESS_INIT)
    for (let i = 0; i < this.numTasks; i++) out[i] = this.gatherF64[base + i]!
    return S.SUCCESS
  }

  /** LAPI_Address_init64: the same with 64-bit integers. */
  addressInit64 (mine: bigint, out: bigint[] | null | undefined): number {
    if (out === null || out === undefined || !Array.isArray(out)) return S.ERR_ADDR_TBL_NULL
    if (typeof mine !== 'bigint') return S.ERR_ORG_ADDR_NULL
    if (this.am.inHeaderHandler) return S.ERR_POLLING_NET
    const base = (this.gatherGen++ & 1) * this.numTasks
    this.gatherI64[base + this.taskId] = BigInt.asIntN(64, mine)
    this.barrier(WaitCall.ADDRESS_INIT64)
    for (let i = 0; i < this.numTasks; i++) out[i] = this.gatherI64[base + i]!
    return S.SUCCESS
  }

  // ───────────────────────────── handler table ─────────────────────────────

  /** LAPI_Addr_set: registers `fn` at `index` (1..LOC_ADDRTBL_SZ-1); null clears the entry. */
  addrSet (fn: HandlerFn | null, index: number): number {
    if (!Number.isInteger(index) || index < 1 || index >= this.ranges.user) return S.ERR_ADDR_HNDL_RANGE
    if (fn !== null && typeof fn !== 'function') return S.ERR_ORG_ADDR_NULL
    this.setHandlerAt(index, fn)
    return S.SUCCESS
  }

  /** LAPI_Addr_get: the function at `index`, or null. */
  addrGet (ret: Ref<HandlerFn | null> | null | undefined, index: number): number {
    if (ret === null || ret === undefined || typeof ret !== 'object') return S.ERR_RET_PTR_NULL
    if (!Number.isInteger(index) || index < 1 || index >= this.ranges.user) return S.ERR_ADDR_HNDL_RANGE
    ret.value = this.handlers[index] ?? null
    return S.SUCCESS
  }

  /**
   * Registers a handler of a layered library (am2) at `slot` of the reserved library range
   * (0..LIBRARY_SLOTS-1). Returns the table index, or -1 when the slot is out of range.
   */
  setLibraryHandler (slot: number, fn: HandlerFn | null): number {
    if (!Number.isInteger(slot) || slot < 0 || slot >= LIBRARY_SLOTS) return -1
    this.setHandlerAt(this.ranges.library + slot, fn)
    // a slot given up or given a new header handler loses its in-place receiver (it belonged to
    // the old one)
    this.shortHandlers[this.ranges.library + slot] = null
    return this.ranges.library + slot
  }

  /**
   * Sets the in-place receiver of the SHORT packets without data, and of those of at most 32
   * bytes of user header and data, sent to library slot `slot` (its header handler keeps every
   * other packet). Returns the table index; -1 when the slot is out of range, or when
   * `fn` is not null and the slot has no header handler.
   */
  setLibraryShortHandler (slot: number, fn: short_hndlr_t | null): number {
    if (!Number.isInteger(slot) || slot < 0 || slot >= LIBRARY_SLOTS) return -1
    const index = this.ranges.library + slot
    if (fn !== null && this.handlers[index] === null) return -1
    this.shortHandlers[index] = fn
    return index
  }

  /** The in-place receiver at table index `index` (any int: a packet says it), or null. */
  shortHandlerAt (index: number): short_hndlr_t | null {
    return (index >>> 0) < this.shortHandlers.length ? this.shortHandlers[index]! : null
  }

  /** The handler at a table index, or null. */
  handlerAt (index: number): HandlerFn | null {
    return Number.isInteger(index) && index > 0 && index < this.handlers.length ? this.handlers[index] ?? null : null
  }

  /** The table index a function is registered at (any range), or -1. */
  indexOfHandler (fn: HandlerFn): number {
    return this.handlerIndex.get(fn) ?? -1
  }

  // ───────────────────────────── recovery ─────────────────────────────

  /** LAPI_Purge_totask: local; later sends to `dest` return LAPI_ERR_TGT_PURGED until resumed. */
  purgeTotask (dest: number): number {
    if (!isTask(dest, this.numTasks)) return S.ERR_TGT
    this.purged[dest] = 1
    return S.SUCCESS
  }

  /** LAPI_Resume_totask. */
  resumeTotask (dest: number): number {
    if (!isTask(dest, this.numTasks)) return S.ERR_TGT
    this.purged[dest] = 0
    return S.SUCCESS
  }

  // ───────────────────────────── internals ─────────────────────────────

  /**
   * Reports an asynchronous error (`code`, class `cls`, about a message from or an operation with
   * task `src`; `what` failed, with `cause` when it threw) to the err_hndlr given at init. With no
   * err_hndlr, LAPI's default: the error is reported and the task ends with a non-zero exit,
   * which ends the job.
   */
  reportError (code: number, cls: number, src: number, cause?: unknown, what = 'a handler'): void {
    this.log.error({ code, cls: errClassName(cls), src, err: cause }, `asynchronous error: ${what}`)
    if (this.errHndlr === null) {
      const how = cause !== undefined ? `threw: ${describeError(cause)}` : `failed: ${statusName(code) ?? code} (${code}): ${statusText(code) ?? 'unknown error'}`
      endTask(this.taskId, `${what} (${errClassName(cls)}, peer task ${src}) ${how}\n` +
        '(no error handler was given to LAPI_Init, so LAPI\'s default error handling ends the task, and with it the job)')
    }
    this.enterUser()
    try {
      this.errHndlr(this.handle, code, cls, this.taskId, src)
    } catch (e) {
      this.log.error({ err: e }, 'the error handler threw')
    } finally {
      this.userCode--
    }
  }

  /** @internal */
  runSendHandler (h: scompl_hndlr_t, sinfo: unknown, tgt: number, cls: number): void {
    this.enterUser()
    try {
      h(this.handle, sinfo, { src: tgt, reason: S.SUCCESS })
    } catch (e) {
      this.reportError(S.ERR_UNKNOWN, cls, tgt, e, 'a send-completion handler')
    } finally {
      this.userCode--
    }
  }

  /** @internal */
  runComplHandler (h: compl_hndlr_t, info: unknown, tgt: number, cls: number): void {
    this.enterUser()
    try {
      h(this.handle, info)
    } catch (e) {
      this.reportError(S.ERR_UNKNOWN, cls, tgt, e, 'a completion handler')
    } finally {
      this.userCode--
    }
  }

  /** @internal */
  setHandlerAt (index: number, fn: HandlerFn | null): void {
    const old = this.handlers[index]
    if (old !== null && old !== undefined && this.handlerIndex.get(old) === index) this.handlerIndex.delete(old)
    this.handlers[index] = fn
    if (fn !== null && !this.handlerIndex.has(fn)) this.handlerIndex.set(fn, index)
  }

  /** @internal */
  registerAuto (fn: HandlerFn): number {
    const have = this.handlerIndex.get(fn)
    if (have !== undefined) return have
    if (this.nextAuto >= this.ranges.size) return -1
    const idx = this.nextAuto++
    this.setHandlerAt(idx, fn)
    return idx
  }

  /** @internal */
  checkTarget (tgt: number): number {
    if (!isTask(tgt, this.numTasks)) return S.ERR_TGT
    if (this.purged[tgt] !== 0) return S.ERR_TGT_PURGED
    return 0
  }

  /** [addr, addr+len) must lie inside a (target) segment; addr 0 only with len 0. */
  private checkRemote (addr: Addr, len: number): number {
    if (typeof addr !== 'number' || !Number.isInteger(addr)) return S.ERR_TGT_ADDR_NULL
    if (addr === 0) return len === 0 ? 0 : S.ERR_TGT_ADDR_NULL
    if (addr < 0 || addr + len > this.segmentSize) return S.ERR_TGT_EXTENT
    return 0
  }

  /** A local buffer: an Addr range inside the own segment, or a Uint8Array of at least `len` bytes. */
  /** @internal */
  checkLocal (buf: LocalBuf | undefined, len: number): number {
    if (buf === null || buf === undefined || buf === 0) return len === 0 ? 0 : S.ERR_ORG_ADDR_NULL
    if (typeof buf === 'number') {
      if (!Number.isInteger(buf)) return S.ERR_ORG_ADDR_NULL
      if (buf < 0 || buf + len > this.segmentSize) return S.ERR_ORG_EXTENT
      return 0
    }
    if (!(buf instanceof Uint8Array)) return S.ERR_ORG_ADDR_NULL
    return buf.length >= len ? 0 : S.ERR_ORG_EXTENT
  }

  private checkRmw (op: number, tgt: number, tgtVar: Addr, width: number): number {
    if (op !== RmwOp.FETCH_AND_ADD && op !== RmwOp.FETCH_AND_OR && op !== RmwOp.SWAP && op !== RmwOp.COMPARE_AND_SWAP) return S.ERR_RMW_OP
    const rc = this.checkTarget(tgt)
    if (rc !== 0) return rc
    if (typeof tgtVar !== 'number' || !Number.isInteger(tgtVar) || tgtVar === 0) return S.ERR_TGT_VAR_NULL
    if (tgtVar < 0 || tgtVar % width !== 0 || tgtVar + width > this.segmentSize) return S.ERR_TGT_EXTENT
    return 0
  }

  /** A counter address: 4-byte aligned and inside a segment (all segments have one size). */
  private isCounter (c: Addr): boolean {
    return typeof c === 'number' && Number.isInteger(c) && c > 0 && (c & 3) === 0 && c + 4 <= this.segmentSize
  }

  /** @internal */
  isCounterOpt (c: Addr | undefined | null): boolean {
    return c === 0 || c === undefined || c === null || this.isCounter(c)
  }

  /** Bumps counter `c` of task `t` and wakes t if it sleeps waiting for exactly this (no-op for c = 0). */
  /** @internal */
  bump (t: number, c: Addr): void {
    if (!c) return
    if (this.local[t] === 0) { this.remote.bump(t, c); return }
    const w = c >>> 2
    const v = Atomics.add(this.seg.i32[t]!, w, 1) + 1
    ringCounter(this.ctl, t, w, v)
  }

  /** @internal */
  bumpLocal (c: Addr): void {
    if (!c) return
    const w = c >>> 2
    if (w === this.absorbWord && this.userCode === 0) { this.absorbed++; return }
    Atomics.add(this.mySeg32, w, 1)
    // Only this thread bumps its own counters, so it cannot be asleep in Atomics.wait now: only
    // its promise waits (waitAsync) need the doorbell, and it knows itself whether any is pending.
    if (this.asyncSleepers !== 0) ringDoorbell(this.ctl, this.taskId)
  }

  /** This thread's pending Atomics.waitAsync sleeps on its doorbell (interrupt loop, promise waits). */
  private asyncSleepers = 0
  /** @internal True while a promise wait of this thread may sleep on its doorbell. */
  get hasAsyncSleepers (): boolean { return this.asyncSleepers !== 0 }

  /** @internal */
  checkAbort (): void {
    if (Atomics.load(this.ctl, W_ABORT) !== 0) {
      const cause = Atomics.load(this.ctl, W_ABORT_TASK)
      if (!this.abortSeen) { this.abortSeen = true; this.log.debug({ cause }, 'the job is aborted: this task stops') }
      throw new JobAbortedError(cause)
    }
  }

  private abortSeen = false

  /**
   * One step of a blocking wait whose condition is not met: spin while the spin budget lasts, then
   * sleep on the doorbell. The condition is re-checked after SLEEPING is set (see ringDoorbell):
   * WAIT_COUNTER `i32[idx] < val`; WAIT_BARRIER barrier generation still `val`; WAIT_RING my ring
   * in task `val`'s inbox still full; WAIT_FENCE active messages of mine still outstanding.
   * A task never sleeps while packets wait in its inbox or work is queued. `call` (a WaitCall)
   * names the blocking call the wait belongs to, recorded for the agent's report when it sleeps.
   * Returns the new start of the spin period.
   * @internal
   */
  idle (spinStart: number, kind: number, call: number, i32: Int32Array | null, idx: number, val: number): number {
    this.checkAbort()
    const now = performance.now()
    if (spinStart === 0) return now
    if (now - spinStart < this.spinMs) return spinStart
    const am = this.am
    if (am.holding) am.flushChaos(true)
    this.flushTails()
    const ctl = this.ctl
    this.recordWait(kind, call, i32, idx, val)
    const seen = Atomics.load(ctl, this.myDoorbell)
    Atomics.add(ctl, this.mySleeping, 1)
    let woke = 'none'
    if (this.mustSleep(kind, i32, idx, val)) {
      this.sleeps++
      // (while this task sleeps nobody may be reading the network for it: the agent does)
      if (this.net !== null) this.net.beforeSleep()
      woke = Atomics.wait(ctl, this.myDoorbell, seen, SLEEP_SLICE_MS)
    }
    Atomics.sub(ctl, this.mySleeping, 1)
    const after = performance.now()
    if (woke === 'ok') this.adaptSpin(after - now)
    else if (woke === 'timed-out') this.spinMs = this.spinBaseMs
    return after
  }

  /**
   * Records in the control block what the wait about to sleep waits for (WAIT_WORD and WAIT_VAL,
   * which also tell a counter's notifier whether to wake it) and in which blocking call (WAIT_CALL).
   */
  private recordWait (kind: number, call: number, i32: Int32Array | null, idx: number, val: number): void {
    const ctl = this.ctl
    Atomics.store(ctl, this.myWaitWord, kind === WAIT_COUNTER && i32 === this.mySeg32 ? idx : 0)
    Atomics.store(ctl, this.myWaitVal, val)
    Atomics.store(ctl, this.myWaitCall, call | (kind << 16))
  }

  /** The spin budget of the next wait, ms: `spinUs` to begin with, adapted by `adaptSpin`. */
  private spinMs: number
  /** The configured budget (`spinUs`) and the most it may grow to (`spinMaxUs`; equal: no adaptation), ms. */
  private readonly spinBaseMs: number
  private readonly spinMaxMs: number
  /** Times a blocking wait slept, and times the budget grew (DispatcherStats). */
  private sleeps = 0
  private spinGrown = 0

  /**
   * A doorbell ended a sleep after `sleptMs`: had the wait spun that much longer it would not have
   * slept. Two tasks answering each other fall into a lasting slow state otherwise when waking a
   * thread takes longer than the spin budget (a VM's halted vCPU, a busy host): each waits out its
   * budget while the other is being woken, so each sleeps and every message costs a wake-up. So
   * after such a sleep the next waits spin `spinUs` + 2 × sleptMs (when that is at most
   * `spinMaxUs`), which ends the chain. One sample of a wake-up can be short (the doorbell came
   * just after the wait fell asleep) and the next wake-up longer, so the first wait that sleeps
   * although the budget had grown grows it again, to `spinUs` + 2 × (the budget + sleptMs): twice
   * the whole wait. A second one shows that spinning longer does not help (the awaited thread may
   * need this very CPU, as when another process takes the other one): the budget goes back to
   * `spinUs`, as it does after a sleep longer than that bound or a whole sleep slice without a
   * doorbell (nobody was about to answer).
   */
  private adaptSpin (sleptMs: number): void {
    const base = this.spinBaseMs
    if (this.spinMs === base) {
      const want = base + 2 * sleptMs
      if (want <= this.spinMaxMs) {
        this.spinMs = want
        this.spinGrown++
        this.spinMissed = 0
      }
      return
    }
    const want = base + 2 * (this.spinMs + sleptMs)
    if (this.spinMissed === 0 && want <= this.spinMaxMs) {
      this.spinMs = want
      this.spinGrown++
      this.spinMissed = 1
    } else {
      this.spinMs = base
    }
  }

  /** Waits that slept although the budget had grown, since it last grew from `spinUs` (0 or 1). */
  private spinMissed = 0

  /**
   * The asynchronous twin of `idle` (promise waits, the event loop stays free): no spinning, an
   * `Atomics.waitAsync` on the doorbell. Async sleepers count 2 in SLEEPING and are always woken.
   */
  private async idleAsync (kind: number, call: number, i32: Int32Array | null, idx: number, val: number): Promise<void> {
    this.checkAbort()
    const am = this.am
    if (am.holding) am.flushChaos(true)
    this.flushTails()
    const ctl = this.ctl
    this.recordWait(kind, call, i32, idx, val)
    const seen = Atomics.load(ctl, this.myDoorbell)
    this.enterAsyncSleep()
    try {
      if (this.mustSleep(kind, i32, idx, val)) await this.sleepAsync(seen)
    } finally {
      this.leaveAsyncSleep()
    }
  }

  /** A promise wait of this thread announces itself: 2 in SLEEPING (always woken), and the local count. */
  private enterAsyncSleep (): void {
    this.asyncSleepers++
    Atomics.add(this.ctl, this.mySleeping, 2)
  }

  private leaveAsyncSleep (): void {
    Atomics.sub(this.ctl, this.mySleeping, 2)
    this.asyncSleepers--
  }

  /** Whether a waiter may sleep (called after it announced itself in SLEEPING): see `idle`. */
  private mustSleep (kind: number, i32: Int32Array | null, idx: number, val: number): boolean {
    if (this.inboxPending() || this.am.busy) return false
    switch (kind) {
      case WAIT_COUNTER: return Atomics.load(i32!, idx) < val
      case WAIT_BARRIER: return Atomics.load(this.ctl, W_BAR_GEN) === val
      case WAIT_RING: return this.outbox[val]!.pending() >= this.spec.ring.slots
      case WAIT_COND: return !this.waitCond!()
      default: return this.outstanding() > 0
    }
  }

  /** Arrives at the job barrier; returns the generation to wait out. The last arriver releases all. */
  private arrive (): number {
    const ctl = this.ctl
    const gen = Atomics.load(ctl, W_BAR_GEN)
    const spec = this.spec
    if (Atomics.add(ctl, W_BAR_COUNT, 1) === spec.localTasks - 1) {
      // (nobody of this process can arrive again before the release)
      Atomics.store(ctl, W_BAR_COUNT, 0)
      if (spec.processes > 1) {
        // the agent completes it with the other processes' agents, then releases us
        Atomics.store(ctl, W_BAR_LOCAL, (gen + 1) | 0)
        ringAgent(ctl)
      } else {
        Atomics.add(ctl, W_BAR_GEN, 1)
        for (let t = 0; t < this.numTasks; t++) if (t !== this.taskId) ringDoorbell(ctl, t)
      }
    }
    return gen
  }

  /** A barrier of all tasks, making progress while it waits, for blocking call `call` (a WaitCall). */
  private barrier (call: number): void {
    this.flushTails()
    const gen = this.arrive()
    let spinStart = 0
    while (Atomics.load(this.ctl, W_BAR_GEN) === gen) {
      this.progress()
      this.checkBarrierPeers(gen)
      spinStart = this.idle(spinStart, WAIT_BARRIER, call, null, 0, gen)
    }
  }

  /** A barrier can never complete once a peer has left the job: fail instead of hanging. */
  private checkBarrierPeers (gen: number): void {
    this.checkAbort()
    for (let t = 0; t < this.numTasks; t++) {
      const st = Atomics.load(this.ctl, taskWord(t, T_STATE))
      // (a peer that left after the barrier completed is fine: it left only once it saw the new
      // generation, so having seen it gone, this read sees that generation too)
      if ((st === TaskState.EXITED || st === TaskState.FAILED) && Atomics.load(this.ctl, W_BAR_GEN) === gen) {
        // a task of another process that ended after passing this barrier: its release is on its way here
        if (st === TaskState.EXITED && this.local[t] === 0 && ((Atomics.load(this.ctl, taskWord(t, T_EXIT_GEN)) - gen) | 0) > 0) continue
        throw new Error(`task ${t} left the job while task ${this.taskId} waits for it in a collective (Gfence/Address_init)`)
      }
    }
  }

  /** @internal Checks one vector (`org`: the origin side, whose pieces may be Uint8Arrays); 0 or the code. */
  checkOneVec (v: lapi_vec_t | null | undefined, org: boolean): number {
    if (v === null || v === undefined || typeof v !== 'object') return org ? S.ERR_ORG_VEC_NULL : S.ERR_TGT_VEC_NULL
    const t = v.vec_type
    if (t !== VecType.LAPI_GEN_IOVECTOR && t !== VecType.LAPI_GEN_STRIDED_XFER && t !== VecType.LAPI_GEN_GENERIC) return org ? S.ERR_ORG_VEC_TYPE : S.ERR_TGT_VEC_TYPE
    return checkVec(v, org, this.segmentSize)
  }

  /** Checks an origin/target vector pair (both described in the origin's memory). */
  private checkVecPair (tgtVec: lapi_vec_t | null, orgVec: lapi_vec_t | null): number {
    if (orgVec === null || orgVec === undefined || typeof orgVec !== 'object') return S.ERR_ORG_VEC_NULL
    if (tgtVec === null || tgtVec === undefined || typeof tgtVec !== 'object') return S.ERR_TGT_VEC_NULL
    const ot = orgVec.vec_type
    const tt = tgtVec.vec_type
    if (ot !== VecType.LAPI_GEN_IOVECTOR && ot !== VecType.LAPI_GEN_STRIDED_XFER && ot !== VecType.LAPI_GEN_GENERIC) return S.ERR_ORG_VEC_TYPE
    if (tt !== VecType.LAPI_GEN_IOVECTOR && tt !== VecType.LAPI_GEN_STRIDED_XFER && tt !== VecType.LAPI_GEN_GENERIC) return S.ERR_TGT_VEC_TYPE
    if (ot !== tt) return S.ERR_VEC_TYPE_DIFF
    let rc = checkVec(orgVec, true, this.segmentSize)
    if (rc !== 0) return rc
    rc = checkVec(tgtVec, false, this.segmentSize)
    if (rc !== 0) return rc
    if (ot === VecType.LAPI_GEN_GENERIC) return 0
    if (orgVec.num_vecs !== tgtVec.num_vecs) return S.ERR_VEC_NUM_DIFF
    if (ot === VecType.LAPI_GEN_STRIDED_XFER) {
      return orgVec.info[1] === tgtVec.info[1] ? 0 : S.ERR_VEC_LEN_DIFF
    }
    for (let i = 0; i < orgVec.num_vecs; i++) if (orgVec.len![i] !== tgtVec.len![i]) return S.ERR_VEC_LEN_DIFF
    return 0
  }

  /**
   * Copies the bytes of vector `src` (addresses in task `st`) into vector `dst` (addresses in task
   * `dt`). The vectors were checked. GENERIC flows piece by piece and stops when either side is
   * exhausted (the LAPI_Amsendv rule: excess origin bytes are dropped).
   */
  private moveVec (src: lapi_vec_t, st: number, dst: lapi_vec_t, dt: number): void {
    const su8 = this.seg.u8[st]!
    const du8 = this.seg.u8[dt]!
    if (src.vec_type === VecType.LAPI_GEN_STRIDED_XFER) {
      const sb = src.info[0] as number
      const block = src.info[1] as number
      const ss = src.info[2] as number
      const db = dst.info[0] as number
      const ds = dst.info[2] as number
      for (let i = 0; i < src.num_vecs; i++) copy(du8, db + i * ds, su8, sb + i * ss, block)
      return
    }
    if (src.vec_type === VecType.LAPI_GEN_IOVECTOR) {
      for (let i = 0; i < src.num_vecs; i++) {
        const n = src.len![i]!
        if (n > 0) copyPiece(du8, dst.info[i]!, 0, su8, src.info[i]!, 0, n)
      }
      return
    }
    let si = 0; let so = 0; let di = 0; let dOff = 0
    while (si < src.num_vecs && di < dst.num_vecs) {
      const sl = src.len![si]! - so
      const dl = dst.len![di]! - dOff
      if (sl === 0) { si++; so = 0; continue }
      if (dl === 0) { di++; dOff = 0; continue }
      const n = sl < dl ? sl : dl
      copyPiece(du8, dst.info[di]!, dOff, su8, src.info[si]!, so, n)
      so += n; dOff += n
    }
  }
}

function noop (): void {}

const ERR_CLASS_NAMES = ['GET_ERR', 'PUT_ERR', 'RMW_ERR', 'AM_ERR', 'INT_ERR', 'TMR_ERR']

function errClassName (cls: number): string {
  return ERR_CLASS_NAMES[cls] ?? `error class ${cls}`
}

function isTask (t: number, n: number): boolean {
  return typeof t === 'number' && Number.isInteger(t) && t >= 0 && t < n
}

function isLen (len: number): boolean {
  return typeof len === 'number' && Number.isInteger(len) && len >= 0 && len <= LAPI_MAX_MSG_SZ
}

/** Checks one vector: origin side (`org`) may hold Uint8Arrays; addresses must lie in a segment. */
function checkVec (v: lapi_vec_t, org: boolean, segSize: number): number {
  const E_TYPE = org ? S.ERR_ORG_VEC_TYPE : S.ERR_TGT_VEC_TYPE
  const E_ADDR = org ? S.ERR_ORG_VEC_ADDR : S.ERR_TGT_VEC_ADDR
  const E_LEN = org ? S.ERR_ORG_VEC_LEN : S.ERR_TGT_VEC_LEN
  const E_EXT = org ? S.ERR_ORG_EXTENT : S.ERR_TGT_EXTENT
  const n = v.num_vecs
  if (!Number.isInteger(n) || n < 0 || !Array.isArray(v.info)) return E_TYPE
  if (v.vec_type === VecType.LAPI_GEN_STRIDED_XFER) {
    if (v.info.length < 3) return E_TYPE
    const base = v.info[0]; const block = v.info[1]; const stride = v.info[2]
    if (base === null || base === undefined || base === 0) return n === 0 ? 0 : (org ? S.ERR_STRIDE_ORG_VEC_ADDR_NULL : S.ERR_STRIDE_TGT_VEC_ADDR_NULL)
    if (typeof base !== 'number' || !Number.isInteger(base) || base < 0) return E_ADDR
    if (typeof block !== 'number' || !Number.isInteger(block) || block < 0 || block > LAPI_MAX_MSG_SZ) return E_LEN
    if (typeof stride !== 'number' || !Number.isInteger(stride) || stride < block) return org ? S.ERR_ORG_STRIDE : S.ERR_TGT_STRIDE
    if (n > 0 && base + (n - 1) * stride + block > segSize) return E_EXT
    return 0
  }
  if (!Array.isArray(v.len) || v.len.length < n || v.info.length < n) return E_LEN
  for (let i = 0; i < n; i++) {
    const len = v.len[i]!
    if (typeof len !== 'number' || !Number.isInteger(len) || len < 0 || len > LAPI_MAX_MSG_SZ) return E_LEN
    const a = v.info[i]
    if (a === null || a === undefined || a === 0) { if (len > 0) return E_ADDR; continue }
    if (typeof a === 'number') {
      if (!Number.isInteger(a) || a < 0) return E_ADDR
      if (a + len > segSize) return E_EXT
    } else if (org && a instanceof Uint8Array) {
      if (a.length < len) return E_EXT
    } else return E_ADDR
  }
  return 0
}

/** Copies `n` bytes between a piece (an Addr in a segment view, or a Uint8Array) and another. */
function copyPiece (du8: Uint8Array, d: Addr | Uint8Array, dOff: number, su8: Uint8Array, s: Addr | Uint8Array, sOff: number, n: number): void {
  if (typeof d === 'number') {
    if (typeof s === 'number') copy(du8, d + dOff, su8, s + sOff, n)
    else copy(du8, d + dOff, s, sOff, n)
  } else if (typeof s === 'number') copy(d, dOff, su8, s + sOff, n)
  else copy(d, dOff, s, sOff, n)
}
