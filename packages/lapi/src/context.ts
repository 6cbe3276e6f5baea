/**
 * The LAPI context of one task: the single implementation behind both faces (the idiomatic `Lapi`
 * and the C-style `LAPI_*` functions). It builds the parts once and wires them — the shared state
 * and ring ends (core/), counters and waiting (sync/), active messages (am/), one-sided transfers
 * (rma/, and net/ for tasks of other processes), collectives (collectives/) and the settings
 * (settings.ts) — and is the entry point of every LAPI call, which it hands to its part. Every
 * call validates its arguments and returns a LAPI status code (0 = LAPI_SUCCESS); out-values go
 * through `Ref`s. Neither face adds logic.
 */
import type { BufferManager } from '@amlapi/bufmgr'
import type { Logger } from 'pino'
import type { NetEngine } from './engine/engine.js'
import { InitFlag, XferType } from './base/constants.js'
import type { JobConfig } from './base/config.js'
import { TASK_STATE, TaskState, WaitCall, taskWord } from './layout/control.js'
import { NS_DROPPED, type JobSpec } from './layout/job-spec.js'
import type { OutRing } from './transport/ring.js'
import { RemoteOps } from './net/remote-ops.js'
import { logger } from './base/log.js'
import { LapiStatus as S } from './base/status.js'
import { Checks, isTask } from './core/checks.js'
import { viewWhy } from './core/explain.js'
import { HandlerTable } from './core/handler-table.js'
import { Rings } from './core/rings.js'
import { ContextState } from './core/state.js'
import type { DispatcherStats, HandlerFn, HandlerRanges, RemoteHost, SegmentViews } from './core/types.js'
import { Counters } from './sync/counters.js'
import { Idler } from './sync/idle.js'
import { Interrupts } from './sync/interrupts.js'
import { UserCode } from './sync/user-code.js'
import { Waits } from './sync/waits.js'
import { ActiveMessages } from './am/active-messages.js'
import type { Dispatcher } from './am/dispatcher.js'
import type { Sender } from './am/send.js'
import type { short_hndlr_t } from './am/types.js'
import { PutGet } from './rma/put-get.js'
import { ReadModifyWrite } from './rma/read-modify-write.js'
import { VectorTransfers } from './rma/vector.js'
import { AddressInit } from './collectives/address-init.js'
import { Barrier } from './collectives/barrier.js'
import { Settings } from './settings.js'
import type { Addr, compl_hndlr_t, lapi_info_t, lapi_msg_info_t, lapi_vec_t, LocalBuf, Ref, scompl_hndlr_t, SegmentMemory } from './base/types.js'

/**
 * Contexts of this thread that may hold TAILs back (polling mode): a task whose program ends
 * without LAPI_Term publishes them as its thread exits, so no sender's fence waits for a message
 * this task handled.
 */
const holding = new Set<Context>()
let exitHook = false

/** Whether any of the numbers a call takes is a BigInt (on the failure branch only: a check's arithmetic threw). */
function anyBigint(a: unknown, b: unknown, c: unknown, d: unknown, e: unknown, f: unknown): boolean {
  return typeof a === 'bigint' || typeof b === 'bigint' || typeof c === 'bigint' || typeof d === 'bigint' || typeof e === 'bigint' || typeof f === 'bigint'
}

function rethrow(e: unknown): never {
  throw e
}

/** The longest nap of a poll that found nothing on a crowded host (Context.napMs), ms. */
const POLL_NAP_MS = 1

export class Context implements RemoteHost {
  readonly handle: number
  readonly taskId: number
  readonly numTasks: number
  readonly config: Readonly<JobConfig>
  readonly segmentSize: number
  readonly spec: JobSpec
  readonly mem: BufferManager
  readonly log: Logger
  readonly ranges: HandlerRanges
  /** The way to each task, index = task id: a ring of its inbox, or the stand-in toward the network. */
  readonly outbox: OutRing[]
  /** 1 for the tasks of this process (shared memory), 0 for those reached over the network. */
  readonly local: Uint8Array
  /** This task's network state words (null in a job of one process): layout/job-spec.ts NET_*. */
  readonly netState: Int32Array | null
  /** @internal */
  readonly ctl: Int32Array
  /** @internal */
  readonly seg: SegmentViews
  /** This thread's network engine (null in a job of one process): it sends and takes in what crosses processes. @internal */
  readonly net: NetEngine | null
  /** The active-message layer (am/). @internal */
  readonly am: ActiveMessages
  /** One step of every blocking wait: spin budget and sleeps (sync/idle.ts). @internal */
  readonly idler: Idler
  /**
   * How long a poll that found nothing naps on the doorbell (Idler.nap), ms: on a crowded host
   * (more tasks than CPUs), where a spinning poll only takes the CPU that the other tasks, the
   * agent and the other processes need to bring it something; 0 elsewhere.
   */
  private readonly napMs: number

  private readonly state: ContextState
  private readonly rings: Rings
  private readonly checks: Checks
  private readonly table: HandlerTable
  private readonly remote: RemoteOps
  private readonly counters: Counters
  private readonly user: UserCode
  private readonly sender: Sender
  private readonly dispatcher: Dispatcher
  private readonly waits: Waits
  private readonly interrupts: Interrupts
  private readonly settings: Settings
  private readonly putGet: PutGet
  private readonly vectors: VectorTransfers
  private readonly rmwOps: ReadModifyWrite
  private readonly barrier: Barrier
  private readonly gather: AddressInit
  /** 1 once LAPI_Term ran (a number: see ContextState.inHeaderHandler). */
  private terminated = 0

  constructor(handle: number, spec: JobSpec, mem: BufferManager, info: lapi_info_t | null) {
    const s = new ContextState(handle, spec, mem, ((info?.protocol ?? 0) & InitFlag.LAPI_INTERRUPT_OFF) !== 0 ? 0 : 1)
    this.state = s
    this.handle = handle
    this.spec = spec
    this.taskId = s.taskId
    this.numTasks = s.numTasks
    this.config = s.config
    this.segmentSize = s.segmentSize
    this.mem = mem
    this.log = s.log
    this.ctl = s.ctl
    this.seg = s.seg
    this.local = s.local
    this.netState = s.netState
    this.net = s.net
    const rings = new Rings(s)
    this.rings = rings
    this.outbox = rings.outbox
    this.checks = new Checks(s)
    this.table = new HandlerTable(spec.config.locAddrTblSz)
    this.ranges = this.table.ranges
    this.remote = new RemoteOps(this)
    this.idler = new Idler(s, rings)
    this.napMs = s.crowded ? POLL_NAP_MS : 0
    this.counters = new Counters(s, rings, this.checks, this.idler, this.remote)
    this.user = new UserCode(s, this.counters, info?.err_hndlr ?? null)
    // (the job's abort is an asynchronous error about the task that caused it: an err_hndlr hears of it once)
    this.idler.onAbortSeen = (cause) => this.user.reportAbort(cause)
    this.am = new ActiveMessages(s, rings, this.checks, this.table, this.counters, this.user, this.idler, this.remote)
    this.sender = this.am.send
    this.dispatcher = this.am.dispatcher
    // (the dispatcher is built after the counters and the idle step, which it uses; their waits run it)
    this.counters.attach(this.dispatcher)
    this.idler.attach(this.dispatcher)
    this.waits = new Waits(s, rings, this.idler, this.dispatcher)
    this.interrupts = new Interrupts(s, rings, this.idler, this.dispatcher)
    this.settings = new Settings(s, rings, this.interrupts, this.ranges, info?.epoch_num ?? 0)
    this.putGet = new PutGet(s, rings, this.checks, this.counters, this.user, this.remote)
    this.vectors = new VectorTransfers(s, rings, this.checks, this.counters, this.user, this.remote)
    this.rmwOps = new ReadModifyWrite(s, rings, this.checks, this.counters, this.user, this.remote)
    this.barrier = new Barrier(s, rings, this.idler, this.waits, this.dispatcher)
    this.gather = new AddressInit(s, this.table, this.barrier)
    Atomics.store(this.ctl, taskWord(spec.taskId, TASK_STATE), TaskState.RUNNING)
    rings.holdTails = this.settings.holds()
    holding.add(this)
    if (!exitHook) {
      exitHook = true
      process.once('exit', (code) => {
        for (const c of holding) c.flushTails()
        logger('lapi', { task: spec.taskId, job: spec.jobId }).debug({ code }, 'task exiting')
      })
    }
    if (s.interrupt === 1) this.interrupts.start()
    this.log.debug({ numTasks: spec.numTasks, interrupt: s.interrupt }, 'context initialised')
  }

  // ───────────────────────────── life cycle and environment ─────────────────────────────

  get isTerminated(): boolean {
    return this.terminated !== 0
  }
  /** Interrupt mode (LAPI_Senv INTERRUPT_SET): 1 on, 0 polling. */
  get interruptMode(): number {
    return this.state.interrupt
  }

  /** LAPI_Term: local; later calls on this handle return LAPI_ERR_HNDL_INVALID. */
  term(): number {
    if (this.terminated) return S.ERR_HNDL_INVALID
    // (a Term from a handler inline in a drain: the rest of that drain holds nothing either)
    this.rings.holdTails = 0
    this.rings.flushTails()
    holding.delete(this)
    const d = this.dispatcher
    if (d.holding) d.flushChaos(true)
    this.terminated = 1
    this.interrupts.stop()
    Atomics.store(this.ctl, taskWord(this.taskId, TASK_STATE), TaskState.TERMINATED)
    this.log.debug('context terminated')
    return S.SUCCESS
  }

  /** LAPI_Qenv. */
  qenv(query: number, ret: Ref<number> | null | undefined): number {
    return this.settings.qenv(query, ret)
  }

  /** LAPI_Senv: ERROR_CHK (0/1), INTERRUPT_SET (0/1), TIMEOUT (MIN..MAX s), ACK_THRESHOLD (1..30). */
  senv(query: number, val: number): number {
    return this.settings.senv(query, val)
  }

  // ───────────────────────────── memory ─────────────────────────────

  /** LAPIX_Malloc: `nbytes` zero-filled, 8-byte aligned bytes of the own segment. */
  malloc(nbytes: number, ret: Ref<Addr> | null | undefined): number {
    if (ret === null || ret === undefined || typeof ret !== 'object') return S.ERR_RET_PTR_NULL
    if (!Number.isSafeInteger(nbytes) || nbytes < 0) return S.ERR_DATA_LEN
    const a = this.mem.alloc(nbytes, true)
    if (a === 0) return S.ERR_MEMORY_EXHAUSTED
    ret.value = a
    return S.SUCCESS
  }

  /** LAPIX_Free: returns ORG_ADDR_NULL for 0 or an address LAPIX_Malloc did not hand out. */
  free(addr: Addr): number {
    if (typeof addr !== 'number' || addr === 0 || !this.mem.isLive(addr)) return S.ERR_ORG_ADDR_NULL
    this.mem.free(addr)
    return S.SUCCESS
  }

  /** LAPIX_View: a live view of `nbytes` of the own segment at `addr`; RangeError out of range. */
  view(addr: Addr, nbytes: number): Uint8Array {
    if (!Number.isSafeInteger(addr) || !Number.isSafeInteger(nbytes) || addr < 0 || nbytes < 0 || addr + nbytes > this.segmentSize) {
      throw new RangeError(viewWhy(addr, nbytes, this.segmentSize, this.taskId))
    }
    return new Uint8Array(this.spec.segments[this.taskId]!, addr, nbytes)
  }

  /** The own segment as a shared WebAssembly.Memory (addresses are the same), where it is one. */
  segmentMemory(): SegmentMemory | undefined {
    return this.spec.segmentMemories[this.taskId] ?? undefined
  }

  // ───────────────────────────── counters (sync/counters.ts) ─────────────────────────────

  /** LAPI_Setcntr. */
  setcntr(cntr: Addr, val: number): number {
    return this.counters.setcntr(cntr, val)
  }

  /** LAPI_Getcntr (runs the dispatcher once first, as LAPI calls do in polling mode). */
  getcntr(cntr: Addr, val: Ref<number> | null | undefined): number {
    return this.counters.getcntr(cntr, val)
  }

  /**
   * LAPI_Waitcntr: blocks until the counter is ≥ `val`, then subtracts `val` and reports the value
   * left. Spins (running the dispatcher) for `spinUs`, then sleeps on the task's doorbell.
   */
  waitcntr(cntr: Addr, val: number, cur: Ref<number> | null | undefined): number {
    // (a BigInt fails the checks' integer arithmetic by throwing: its code here; the try costs nothing when nothing throws)
    try {
      return this.counters.waitcntr(cntr, val, cur)
    } catch (e) {
      return typeof cntr === 'bigint' ? S.ERR_CNTR_NULL : typeof val === 'bigint' ? S.ERR_CNTR_VAL : rethrow(e)
    }
  }

  /**
   * Waits asynchronously (the event loop stays free) until the counter is ≥ `val`, subtracts `val`
   * and resolves with the value left; rejects with a LapiError when the arguments are bad.
   */
  waitcntrAsync(cntr: Addr, val: number): Promise<number> {
    return this.counters.waitcntrAsync(cntr, val)
  }

  // ───────────────────────────── one-sided transfers (rma/) ─────────────────────────────

  /** LAPI_Put. */
  put(tgt: number, len: number, tgtAddr: Addr, org: LocalBuf, tgtCntr: Addr, orgCntr: Addr, cmplCntr: Addr): number {
    // (a BigInt argument fails the fast checks' integer arithmetic: the checks that look at types give its code)
    try {
      return this.putGet.put(tgt, len, tgtAddr, org, tgtCntr, orgCntr, cmplCntr)
    } catch (e) {
      return this.checks.refused(e, tgt, len, tgtAddr, org, tgtCntr, orgCntr, cmplCntr)
    }
  }

  /** LAPI_Put in general (and the PUT member of LAPI_Xfer, with its send-completion handler). */
  putAny(
    tgt: number,
    len: number,
    tgtAddr: Addr,
    org: LocalBuf,
    tgtCntr: Addr,
    orgCntr: Addr,
    cmplCntr: Addr,
    shdlr: scompl_hndlr_t | null,
    sinfo: unknown,
  ): number {
    return this.putGet.putAny(tgt, len, tgtAddr, org, tgtCntr, orgCntr, cmplCntr, shdlr, sinfo)
  }

  /** LAPI_Get (and the GET member of LAPI_Xfer when `chndlr` is given). */
  get(
    tgt: number,
    len: number,
    tgtAddr: Addr,
    org: LocalBuf,
    tgtCntr: Addr,
    orgCntr: Addr,
    chndlr: compl_hndlr_t | null = null,
    cinfo: unknown = null,
  ): number {
    try {
      return this.putGet.get(tgt, len, tgtAddr, org, tgtCntr, orgCntr, chndlr, cinfo)
    } catch (e) {
      return this.checks.refused(e, tgt, len, tgtAddr, org, tgtCntr, orgCntr, 0)
    }
  }

  /** LAPI_Putv: gathers the origin vector and scatters into the target vector (addresses in `tgt`). */
  putv(
    tgt: number,
    tgtVec: lapi_vec_t | null,
    orgVec: lapi_vec_t | null,
    tgtCntr: Addr,
    orgCntr: Addr,
    cmplCntr: Addr,
    shdlr: scompl_hndlr_t | null = null,
    sinfo: unknown = null,
  ): number {
    return this.vectors.putv(tgt, tgtVec, orgVec, tgtCntr, orgCntr, cmplCntr, shdlr, sinfo)
  }

  /** LAPI_Getv: gathers the target vector (addresses in `tgt`) into the origin vector. */
  getv(
    tgt: number,
    tgtVec: lapi_vec_t | null,
    orgVec: lapi_vec_t | null,
    tgtCntr: Addr,
    orgCntr: Addr,
    chndlr: compl_hndlr_t | null = null,
    cinfo: unknown = null,
  ): number {
    return this.vectors.getv(tgt, tgtVec, orgVec, tgtCntr, orgCntr, chndlr, cinfo)
  }

  /**
   * LAPI_Rmw on a 32-bit word: `inVal[0]` is the operand (COMPARE_AND_SWAP: `inVal[0]` compare,
   * `inVal[1]` new value). `prev` gets the old value, or TRUE/FALSE for COMPARE_AND_SWAP.
   */
  rmw(
    op: number,
    tgt: number,
    tgtVar: Addr,
    inVal: ArrayLike<number> | null | undefined,
    prev: Ref<number> | null | undefined,
    orgCntr: Addr,
    shdlr: scompl_hndlr_t | null = null,
    sinfo: unknown = null,
  ): number {
    return this.rmwOps.rmw(op, tgt, tgtVar, inVal, prev, orgCntr, shdlr, sinfo)
  }

  /** LAPI_Rmw64 on a 64-bit word (`tgtVar` 8-byte aligned); operands are bigints. */
  rmw64(
    op: number,
    tgt: number,
    tgtVar: Addr,
    inVal: ArrayLike<bigint> | null | undefined,
    prev: Ref<bigint> | null | undefined,
    orgCntr: Addr,
    shdlr: scompl_hndlr_t | null = null,
    sinfo: unknown = null,
  ): number {
    return this.rmwOps.rmw64(op, tgt, tgtVar, inVal, prev, orgCntr, shdlr, sinfo)
  }

  /**
   * After an Rmw to task `tgt` returned 0: waits (making progress) until its old value is in
   * `prev`; only an Rmw on a task of another process, sent with an origin counter, has to wait.
   * 0, or the wait's LAPI code.
   */
  awaitRmw(tgt: number): number {
    return this.rmwOps.awaitAnswer(tgt)
  }

  // ───────────────────────────── active messages (am/) ─────────────────────────────

  /**
   * LAPI_Amsend: an active message to `tgt`; `hdr` is the header handler's table index there (or a
   * function registered here, SPMD style). See am/send.ts for the protocol.
   */
  amsend(
    tgt: number,
    hdr: number | HandlerFn | null,
    uhdr: LocalBuf,
    uhdrLen: number,
    udata: LocalBuf,
    udataLen: number,
    tgtCntr: Addr,
    orgCntr: Addr,
    cmplCntr: Addr,
    shdlr: scompl_hndlr_t | null = null,
    sinfo: unknown = null,
  ): number {
    try {
      return this.sender.amsend(tgt, hdr, uhdr, uhdrLen, udata, udataLen, tgtCntr, orgCntr, cmplCntr, shdlr, sinfo)
    } catch (e) {
      // (a BigInt fails the fast path's integer arithmetic before anything is sent; the general path's checks give its code)
      if (!anyBigint(tgt, uhdrLen, udataLen, tgtCntr, orgCntr, cmplCntr)) throw e
      return this.sender.amsendAny(tgt, hdr, uhdr, uhdrLen, udata, udataLen, tgtCntr, orgCntr, cmplCntr, shdlr, sinfo)
    }
  }

  /** LAPI_Amsendv: an active message whose data is gathered from `orgVec`. */
  amsendv(
    tgt: number,
    hdr: number | HandlerFn | null,
    uhdr: LocalBuf,
    uhdrLen: number,
    orgVec: lapi_vec_t | null,
    tgtCntr: Addr,
    orgCntr: Addr,
    cmplCntr: Addr,
    shdlr: scompl_hndlr_t | null = null,
    sinfo: unknown = null,
  ): number {
    return this.sender.amsendv(tgt, hdr, uhdr, uhdrLen, orgVec, tgtCntr, orgCntr, cmplCntr, shdlr, sinfo)
  }

  /**
   * Negotiated-payload send (`Lapi.prepareShort`): reserves a one-packet message to `tgt`'s handler
   * index `hdr` with `uhdrLen` bytes of user header; the index in `preparedWords` of its first
   * word, or -1 when it cannot take this path now.
   */
  prepareShort(tgt: number, hdr: number, uhdrLen: number): number {
    try {
      return this.sender.prepareShort(tgt, hdr, uhdrLen)
    } catch (e) {
      return anyBigint(tgt, hdr, uhdrLen, 0, 0, 0) ? -1 : rethrow(e)
    }
  }

  /** `prepareShort` for a message with `dataLen` bytes of data after the user header (`Lapi.prepareShortData`). */
  prepareShortData(tgt: number, hdr: number, uhdrLen: number, dataLen: number): number {
    try {
      return this.sender.prepareShortData(tgt, hdr, uhdrLen, dataLen)
    } catch (e) {
      return anyBigint(tgt, hdr, uhdrLen, dataLen, 0, 0) ? -1 : rethrow(e)
    }
  }

  /** The words of the packet prepareShort reserved (the target's inbox; valid until commitShort). */
  get preparedWords(): Int32Array {
    return this.sender.preparedWords
  }

  /** The bytes of the inbox preparedWords views (valid until commitShort). */
  get preparedBytes(): Uint8Array {
    return this.sender.preparedBytes
  }

  /** Sends the packet prepareShort reserved; false (nothing sent) when none is, or another send on its ring came between. */
  commitShort(): boolean {
    return this.sender.commitShort()
  }

  /** LAPI_Xfer for the AM, AMV, PUT, GET, PUTV, GETV and RMW types. */
  xfer(cmd: unknown): number {
    if (cmd === null || typeof cmd !== 'object') return S.ERR_XFER_CMD
    if (this.state.inHeaderHandler) return S.ERR_POLLING_NET
    const c = cmd as Record<string, unknown>
    const cn = (k: string): Addr => (c[k] ?? 0) as Addr
    const fn = <T>(k: string): T | null => (typeof c[k] === 'function' ? (c[k] as T) : null)
    switch (c['Xfer_type']) {
      case XferType.LAPI_AM_XFER:
        return this.amsend(
          c['tgt'] as number,
          c['hdr_hdl'] as number | HandlerFn,
          c['uhdr'] as LocalBuf,
          (c['uhdr_len'] ?? 0) as number,
          c['udata'] as LocalBuf,
          (c['udata_len'] ?? 0) as number,
          cn('tgt_cntr'),
          cn('org_cntr'),
          cn('cmpl_cntr'),
          fn<scompl_hndlr_t>('shdlr'),
          c['sinfo'] ?? null,
        )
      case XferType.LAPI_AMV_XFER:
        return this.amsendv(
          c['tgt'] as number,
          c['hdr_hdl'] as number | HandlerFn,
          c['uhdr'] as LocalBuf,
          (c['uhdr_len'] ?? 0) as number,
          c['org_vec'] as lapi_vec_t | null,
          cn('tgt_cntr'),
          cn('org_cntr'),
          cn('cmpl_cntr'),
          fn<scompl_hndlr_t>('shdlr'),
          c['sinfo'] ?? null,
        )
      case XferType.LAPI_PUT_XFER:
        return this.putAny(
          c['tgt'] as number,
          c['len'] as number,
          c['tgt_addr'] as Addr,
          c['org_addr'] as LocalBuf,
          cn('tgt_cntr'),
          cn('org_cntr'),
          cn('cmpl_cntr'),
          fn<scompl_hndlr_t>('shdlr'),
          c['sinfo'] ?? null,
        )
      case XferType.LAPI_GET_XFER:
        return this.get(
          c['tgt'] as number,
          c['len'] as number,
          c['tgt_addr'] as Addr,
          c['org_addr'] as LocalBuf,
          cn('tgt_cntr'),
          cn('org_cntr'),
          fn<compl_hndlr_t>('chndlr'),
          c['cinfo'] ?? null,
        )
      case XferType.LAPI_PUTV_XFER:
        return this.putv(
          c['tgt'] as number,
          c['tgt_vec'] as lapi_vec_t | null,
          c['org_vec'] as lapi_vec_t | null,
          cn('tgt_cntr'),
          cn('org_cntr'),
          cn('cmpl_cntr'),
          fn<scompl_hndlr_t>('shdlr'),
          c['sinfo'] ?? null,
        )
      case XferType.LAPI_GETV_XFER:
        return this.getv(
          c['tgt'] as number,
          c['tgt_vec'] as lapi_vec_t | null,
          c['org_vec'] as lapi_vec_t | null,
          cn('tgt_cntr'),
          cn('org_cntr'),
          fn<compl_hndlr_t>('chndlr'),
          c['cinfo'] ?? null,
        )
      case XferType.LAPI_RMW_XFER: {
        const size = c['size']
        if (size !== 32 && size !== 64) return S.ERR_OP_SZ
        if (size === 32) {
          return this.rmw(
            c['op'] as number,
            c['tgt'] as number,
            c['tgt_var'] as Addr,
            c['in_val'] as ArrayLike<number> | null,
            c['prev_tgt_val'] as Ref<number> | null,
            cn('org_cntr'),
            fn<scompl_hndlr_t>('shdlr'),
            c['sinfo'] ?? null,
          )
        }
        return this.rmw64(
          c['op'] as number,
          c['tgt'] as number,
          c['tgt_var'] as Addr,
          c['in_val'] as ArrayLike<bigint> | null,
          c['prev_tgt_val'] as Ref<bigint> | null,
          cn('org_cntr'),
          fn<scompl_hndlr_t>('shdlr'),
          c['sinfo'] ?? null,
        )
      }
      default:
        return S.ERR_XFER_CMD
    }
  }

  // ───────────────────────────── progress and synchronization ─────────────────────────────

  /**
   * One round of the dispatcher: drains every ring of the inbox (at most one ring's worth of
   * packets from each, so one sender cannot starve the others). Returns the packets handled.
   * `now` false: a poll on the side of a send (the network is read at most once per read gap).
   */
  progress(now = true): number {
    return this.dispatcher.progress(now)
  }

  /** A round of the dispatcher a program or a layer asks for (Lapi.progress): named a poll in the watch line meanwhile. */
  pollProgress(): number {
    // (a handler that throws leaves the poll too: its watch line must not say polling then)
    this.idler.pollBegin()
    try {
      return this.dispatcher.progress(true)
    } finally {
      this.idler.pollEnd()
    }
  }

  /** Publishes the TAILs the dispatcher held back (Rings.tailsHeld): every LAPI step of the task does. */
  flushTails(): void {
    this.rings.flushTails()
  }

  /**
   * Whether a dispatcher round would find something to do: a packet waiting in the inbox, or
   * queued work. A step in LAPI: it publishes the TAILs held back first.
   */
  workPending(): boolean {
    this.rings.flushTails()
    const d = this.dispatcher
    if (d.inboxPending() || d.busy) return true
    if (this.napMs > 0) this.idler.nap(this.napMs)
    return false
  }

  /** Dispatcher statistics: packets dropped as malformed, duplicates dropped, messages completed. */
  stats(): DispatcherStats {
    const am = this.am
    const a = am.state
    const net = this.netState
    const idler = this.idler
    return {
      packetsDropped: a.dropped + (net !== null ? Atomics.load(net, NS_DROPPED) : 0),
      duplicatesDropped: a.duplicates,
      messagesReceived: am.done.recvCompleted,
      messagesSent: a.sendCompleted,
      receivedInPlace: am.receiver.inPlaceCompleted,
      sleeps: idler.sleeps,
      spinUs: idler.spinMs * 1000,
      spinGrown: idler.spinGrown,
      connectionSleeps: idler.connectionSleeps,
    }
  }

  /** LAPI_Probe. */
  probe(): number {
    if (this.state.inHeaderHandler) return S.ERR_POLLING_NET
    this.idler.pollBegin()
    try {
      if (this.dispatcher.progress() === 0 && this.napMs > 0) this.idler.nap(this.napMs)
    } finally {
      this.idler.pollEnd()
    }
    return S.SUCCESS
  }

  /**
   * LAPI_Msgpoll: runs the dispatcher up to `cnt` times, returning as soon as something completed;
   * `info.status` gets the MsgState bits (LAPI_DISP_CNTR when it looped `cnt` times for nothing).
   */
  msgpoll(cnt: number, info: lapi_msg_info_t | null | undefined): number {
    if (info === null || info === undefined || typeof info !== 'object') return S.ERR_MSG_INFO_NULL
    if (!Number.isInteger(cnt) || cnt < 0) return S.ERR_SET_VAL
    if (this.state.inHeaderHandler) return S.ERR_POLLING_NET
    const a = this.am.state
    const done = this.am.done
    const sent = a.sendCompleted
    const recv = done.recvCompleted
    this.idler.pollBegin()
    try {
      for (let i = 0; i < cnt; i++) {
        this.dispatcher.progress()
        const st = (a.sendCompleted !== sent ? 1 : 0) | (done.recvCompleted !== recv ? 2 : 0)
        if (st !== 0) {
          info.status = st
          return S.SUCCESS
        }
      }
    } finally {
      this.idler.pollEnd()
    }
    info.status = 8
    return S.SUCCESS
  }

  /**
   * Blocks the thread, running the dispatcher, until `cond()` is true (checked after every round;
   * it must not send). Spins for the configured budget, then sleeps on the doorbell, which any
   * packet or counter update of this task rings. `cond` is kept for the sleep check, so pass a
   * long-lived function to wait without allocating. Returns 0, or LAPI_ERR_POLLING_NET inside a
   * header handler.
   */
  waitUntil(cond: () => boolean, call: number = WaitCall.WAIT_UNTIL): number {
    return this.waits.waitUntil(cond, call)
  }

  /** Like waitUntil, but the event loop keeps running (no spinning; an asynchronous doorbell wait). */
  waitUntilAsync(cond: () => boolean, call: number = WaitCall.WAIT_UNTIL): Promise<number> {
    return this.waits.waitUntilAsync(cond, call)
  }

  /** Whether task `t` is still in the job (false once it called LAPI_Term, exited or failed). */
  taskAlive(t: number): boolean {
    if (!Number.isInteger(t) || t < 0 || t >= this.numTasks) return false
    const st = Atomics.load(this.ctl, taskWord(t, TASK_STATE))
    return st === TaskState.NEW || st === TaskState.RUNNING
  }

  /** Whether task `t` failed or was lost. */
  taskFailed(t: number): boolean {
    if (!Number.isInteger(t) || t < 0 || t >= this.numTasks) return false
    return Atomics.load(this.ctl, taskWord(t, TASK_STATE)) === TaskState.FAILED
  }

  /** Throws JobAbortedError once the job is being torn down (Lapi.checkAborted). */
  checkAborted(): void {
    this.idler.checkAbort()
  }

  /**
   * taskAlive for hot send paths: one plain read of the task's state (no atomic call), so a task
   * that left a moment ago may still look alive, as it may to any check made just before it
   * left; the send then goes into its ring, which nobody reads any more (a full one is found
   * out by the send's wait for room once the task has exited: it reads the state atomically).
   */
  taskAliveHint(t: number): boolean {
    if (t >>> 0 >= this.numTasks) return false
    const st = this.ctl[taskWord(t, TASK_STATE)]!
    return st === TaskState.NEW || st === TaskState.RUNNING
  }

  /** Whether this context is inside a LAPI header handler (where nothing may send or wait). */
  get inHeaderHandler(): boolean {
    return this.state.inHeaderHandler !== 0
  }

  /**
   * LAPI_Fence: every operation this task started before it is complete at its target. Put, Get
   * and Rmw between co-located tasks complete inside the call; active messages are outstanding
   * until their data has landed at the target (a data fence: completion handlers may still run).
   */
  fence(): number {
    return this.waits.fence(WaitCall.FENCE)
  }

  // ───────────────────────────── collectives (collectives/) ─────────────────────────────

  /** LAPI_Gfence: a fence, then a barrier of all tasks. */
  gfence(): number {
    return this.barrier.gfence()
  }

  /** The same as gfence, but waiting asynchronously. */
  gfenceAsync(): Promise<number> {
    return this.barrier.gfenceAsync()
  }

  /**
   * LAPI_Address_init: all-gather of one number per task. `out[i]` gets task i's value. A function
   * is registered in the automatic range of the handler table and its index contributed instead.
   */
  addressInit(mine: number | HandlerFn | null | undefined, out: number[] | null | undefined): number {
    return this.gather.addressInit(mine, out)
  }

  /** LAPI_Address_init64: the same with 64-bit integers. */
  addressInit64(mine: bigint, out: bigint[] | null | undefined): number {
    return this.gather.addressInit64(mine, out)
  }

  // ───────────────────────────── handler table (core/handler-table.ts) ─────────────────────────────

  /** LAPI_Addr_set: registers `fn` at `index` (1..LOC_ADDRTBL_SZ-1); null clears the entry. */
  addrSet(fn: HandlerFn | null, index: number): number {
    return this.table.addrSet(fn, index)
  }

  /** LAPI_Addr_get: the function at `index`, or null. */
  addrGet(ret: Ref<HandlerFn | null> | null | undefined, index: number): number {
    return this.table.addrGet(ret, index)
  }

  /**
   * Registers a handler of a layered library (am2) at `slot` of the reserved library range
   * (0..LIBRARY_SLOTS-1). Returns the table index, or -1 when the slot is out of range.
   */
  setLibraryHandler(slot: number, fn: HandlerFn | null): number {
    return this.table.setLibraryHandler(slot, fn)
  }

  /**
   * Sets the in-place receiver of the one-packet messages sent to library slot `slot`. Returns the
   * table index; -1 when the slot is out of range, or when `fn` is not null and the slot has no
   * header handler.
   */
  setLibraryShortHandler(slot: number, fn: short_hndlr_t | null): number {
    return this.table.setLibraryShortHandler(slot, fn)
  }

  // ───────────────────────────── recovery ─────────────────────────────

  /** LAPI_Purge_totask: local; later sends to `dest` return LAPI_ERR_TGT_PURGED until resumed. */
  purgeTotask(dest: number): number {
    if (!isTask(dest, this.numTasks)) return S.ERR_TGT
    this.state.purged[dest] = 1
    return S.SUCCESS
  }

  /** LAPI_Resume_totask. */
  resumeTotask(dest: number): number {
    if (!isTask(dest, this.numTasks)) return S.ERR_TGT
    this.state.purged[dest] = 0
    return S.SUCCESS
  }

  // ───────────────────────────── handlers the parts run (sync/user-code.ts) ─────────────────────────────

  /** @internal */
  runSendHandler(h: scompl_hndlr_t, sinfo: unknown, tgt: number, cls: number): void {
    this.user.runSendHandler(h, sinfo, tgt, cls)
  }

  /** @internal */
  runComplHandler(h: compl_hndlr_t, info: unknown, tgt: number, cls: number): void {
    this.user.runComplHandler(h, info, tgt, cls)
  }

  /** @internal */
  bumpLocal(c: Addr): void {
    this.counters.bumpLocal(c)
  }
}
