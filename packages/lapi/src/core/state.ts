/**
 * The state of one task's context that its parts share: who the task is (its ids, the job's
 * settings, its segment's memory manager, its logger), its views of every task's segment, its
 * words of the job's control block, which tasks share its memory, its network engine, and the few
 * flags that one part sets and others read. The Context builds it once; every part holds it.
 */
import { availableParallelism } from 'node:os'
import type { BufferManager } from '@amlapi/bufmgr'
import type { Logger } from 'pino'
import type { JobConfig } from '../base/config.js'
import {
  TASK_DOORBELL,
  TASK_SLEEPING,
  TASK_WAIT_CALL,
  TASK_WAIT_VAL,
  TASK_WAIT_WORD,
  WATCH_CALL,
  setRemoteBell,
  taskWord,
  watchWord,
} from '../layout/control.js'
import { processOf, type JobSpec } from '../layout/job-spec.js'
import { NetEngine } from '../engine/engine.js'
import { logger } from '../base/log.js'
import type { SegmentViews } from './types.js'

export class ContextState {
  readonly handle: number
  readonly taskId: number
  readonly numTasks: number
  readonly config: Readonly<JobConfig>
  readonly segmentSize: number
  readonly spec: JobSpec
  readonly mem: BufferManager
  readonly log: Logger
  /** The job's control block (layout/control.ts). */
  readonly ctl: Int32Array
  readonly seg: SegmentViews
  /** Int32 view of the own segment (counters). */
  readonly mySeg32: Int32Array
  /** 1 for a task that LAPI_Purge_totask cut off (until LAPI_Resume_totask), index = task id. */
  readonly purged: Uint8Array
  /** 1 for the tasks of this process (shared memory), 0 for those reached over the network. */
  readonly local: Uint8Array
  /** This task's network state words (null in a job of one process): layout/job-spec.ts NET_*. */
  readonly netState: Int32Array | null
  /** This thread's network engine (null in a job of one process): it sends and takes in what crosses processes. */
  readonly net: NetEngine | null
  /**
   * More tasks in the job than CPUs: a spin only keeps the awaited task (or, in a job of several
   * processes, the agent and the other processes) off the CPU it needs.
   */
  readonly crowded: boolean
  /** This task's words of the control block: its doorbell, its sleeper count, what its wait waits for. */
  readonly myDoorbell: number
  readonly mySleeping: number
  readonly myWaitWord: number
  readonly myWaitVal: number
  readonly myWaitCall: number
  /** This task's watch line (WATCH_CALL; WORD and VAL follow): the blocking call it is in, for reports. */
  readonly myWatch: number

  /**
   * 1 while a header handler runs (communication calls are refused), else 0. The flags the hot
   * paths test are small integers, not booleans: V8 types a boolean field only as an oddball, so
   * every test of one compiles to a full truthiness check (about ten instructions); a Smi's is one.
   */
  inHeaderHandler = 0
  /** Interrupt mode (LAPI_Senv INTERRUPT_SET): 1 on, 0 polling. */
  interrupt: number
  /** This thread's pending Atomics.waitAsync sleeps on its doorbell (interrupt loop, promise waits). */
  asyncSleepers = 0
  /** >0 while an active-message send waits for ring space: the dispatcher only takes packets in. */
  sendBlocked = 0

  constructor(handle: number, spec: JobSpec, mem: BufferManager, interrupt: number) {
    this.handle = handle
    this.spec = spec
    // (as int32s: these go into packets and bounds checks of the fast paths, which then need no conversion)
    this.taskId = spec.taskId | 0
    this.numTasks = spec.numTasks | 0
    this.config = spec.config
    this.segmentSize = spec.config.segmentSize | 0
    this.mem = mem
    this.interrupt = interrupt
    this.log = logger('lapi', { task: spec.taskId, job: spec.jobId })
    this.ctl = new Int32Array(spec.control)
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
    this.purged = new Uint8Array(spec.numTasks)
    const lo = spec.firstTask
    this.local = new Uint8Array(spec.numTasks)
    for (let t = lo; t < lo + spec.localTasks; t++) this.local[t] = 1
    const state = spec.netState[spec.taskId]
    this.netState = state !== null && state !== undefined ? new Int32Array(state) : null
    this.myDoorbell = taskWord(spec.taskId, TASK_DOORBELL)
    this.mySleeping = taskWord(spec.taskId, TASK_SLEEPING)
    this.myWaitWord = taskWord(spec.taskId, TASK_WAIT_WORD)
    this.myWaitVal = taskWord(spec.taskId, TASK_WAIT_VAL)
    this.myWaitCall = taskWord(spec.taskId, TASK_WAIT_CALL)
    this.myWatch = watchWord(spec.numTasks, spec.taskId, WATCH_CALL)
    this.crowded = spec.numTasks > availableParallelism()
    // (a task spins on the network, and reads the connections itself, only where every task of the
    // job can have a CPU: all of them run on this host, lapirun --procs)
    this.net = spec.net !== null ? new NetEngine(spec, processOf(spec.numTasks, spec.processes, spec.taskId), spec.taskId + 1, null, !this.crowded) : null
    if (this.net !== null) {
      const net = this.net
      setRemoteBell(() => net.kick())
    }
  }
}
