/**
 * What a task receives from its agent to join a job (`JobSpec`): the job's shared memory and
 * settings, and the words of each task's network state. The agent (runJob, lapirun) makes one spec
 * per process (launch/create-job.ts) and hands each task worker its copy with its own task id in
 * `workerData`.
 */
import { workerData } from 'node:worker_threads'
import type { JobConfig } from '../base/config.js'
import type { StreamShared } from './stream.js'
import type { RingGeometry } from './ring.js'
import type { WasmMemory } from './memory.js'

/** Key of the spec inside `workerData`. */
export const SPEC_KEY = '__amlapi_job'
export const SPEC_VERSION = 4
/** Key of `RunJobOptions.data` inside `workerData`. */
export const DATA_KEY = '__amlapi_data'

/** What the agent put under `key` in this thread's `workerData` (undefined in a thread it did not start). */
function fromAgent(key: string): unknown {
  const wd = workerData as Record<string, unknown> | null | undefined
  return wd !== null && typeof wd === 'object' ? wd[key] : undefined
}

/** What the processes of a job share to reach the network (JobSpec.net). */
export interface NetShared {
  /** The transport's name (transport/registry.ts): which frame path `stream` is, in every thread. */
  transport: string
  /** The frame path's memory (its descriptors and buffers, and what the transport adds). */
  stream: StreamShared
  /** Engine statistics. */
  stats: SharedArrayBuffer
  /**
   * Control messages a task took off the network for the agent: Int32 words START, END (bytes),
   * then records of [peer u32][length u32][body], taken and consumed under the network lock.
   */
  control: SharedArrayBuffer
  /** Get answers that wait for room toward their origin, set aside (engine/engine.ts, `park`). */
  gets: SharedArrayBuffer
}

/** The `data` the agent passed to `runJob` (undefined in a job not started by runJob or without it). */
export function jobData(): unknown {
  return fromAgent(DATA_KEY)
}

export interface JobSpec {
  version: number
  /** Random id of the job (hex), for logs. */
  jobId: string
  numTasks: number
  /** The task this spec is for. */
  taskId: number
  config: JobConfig
  /** The tasks of this process: firstTask … firstTask + localTasks - 1 (all of them in a job of one process). */
  firstTask: number
  localTasks: number
  /** Processes of the job (1: no network). */
  processes: number
  /** One segment per task, index = task id; null for a task of another process. */
  segments: Array<SharedArrayBuffer | null>
  /**
   * The shared WebAssembly.Memory whose buffer is each segment, index = task id: null where the
   * segment is a plain SharedArrayBuffer (its size not a whole number of 64 KiB pages, or the engine
   * refused the memory) and for a task of another process.
   */
  segmentMemories: Array<WasmMemory | null>
  /** The job control block of this process (control.ts). */
  control: SharedArrayBuffer
  /**
   * One inbox per task of this process, index = task id (null for other processes' tasks): ring i
   * carries packets from task firstTask + i; in a job of several processes the network ring
   * (`netIn`, at `netRingAt(ring)`) follows, with what the engine brings in from the network.
   */
  inboxes: Array<SharedArrayBuffer | null>
  /** Geometry of every inbox ring from a task of this process. */
  ring: RingGeometry
  /** Geometry of an inbox's network ring (null in a job of one process). */
  netIn: RingGeometry | null
  /**
   * Per task of this process (index = task id; null elsewhere, and all null in a job of one
   * process): its one ring toward the network (to the agent), whose slots carry the destination
   * task after the packet (`netTagOffset`), and its network state words (`NET_*`).
   */
  netOut: Array<SharedArrayBuffer | null>
  netState: Array<SharedArrayBuffer | null>
  /** Geometry of a ring toward the network. */
  netRing: RingGeometry
  /** The process's way to the network, shared by its threads (engine/engine.ts); null in a job of one process. Set once the process is connected. */
  net: NetShared | null
}

// <layout net-state> written by scripts/gen-layouts.mjs from its table: do not edit by hand
// a task's network state (JobSpec.netState, Int32 index), in a job of N tasks:
//   0       NS_DIRTY
//   1       NS_DROPPED
//   2…15    (reserved)
//   16…     NS_LANDED_AT
/** 1 when LANDED_FROM moved since the agent last looked (written by the task, cleared by the agent). */
export const NS_DIRTY = 0
/** Packets for this task its agent dropped as malformed or misaddressed (added to the dispatcher's count). */
export const NS_DROPPED = 1
/** Three tables of N words: per task, messages this task sent it that landed there (the agent adds what acks say); LANDED_FROM (`netLandedFrom`); ACKED_FROM (`netAckedFrom`). */
export const NS_LANDED_AT = 16
// </layout net-state>
/** Word index of LANDED_FROM[src] (messages from src that completed here; the network engine sends the news). */
export function netLandedFrom(numTasks: number, src: number): number {
  return NS_LANDED_AT + numTasks + src
}
/** Word index of ACKED_FROM[src] (LANDED_FROM as last acknowledged; written under the network lock). */
export function netAckedFrom(numTasks: number, src: number): number {
  return NS_LANDED_AT + 2 * numTasks + src
}
export function netStateBytes(numTasks: number): number {
  return 4 * (NS_LANDED_AT + 3 * numTasks)
}

/** Bytes of slot body between the packet and the destination tag, for rings toward the network: where the tag is, from the body's offset. */
export function netTagOffset(ring: RingGeometry): number {
  return ring.slotBytes - 4
}

/** Which tasks process `rank` of `procs` holds, for a job of `numTasks` (API.md: ⌊p·N/P⌋ …). */
export function placement(numTasks: number, procs: number, rank: number): { first: number; count: number } {
  const first = Math.floor((rank * numTasks) / procs)
  return { first, count: Math.floor(((rank + 1) * numTasks) / procs) - first }
}

/** The process that holds task `t` in a job of `numTasks` tasks over `procs` processes. */
export function processOf(numTasks: number, procs: number, t: number): number {
  // the inverse of placement: the largest p with ⌊p·N/P⌋ ≤ t
  let p = Math.floor(((t + 1) * procs - 1) / numTasks)
  while (p > 0 && placement(numTasks, procs, p).first > t) p--
  while (p + 1 < procs && placement(numTasks, procs, p + 1).first <= t) p++
  return p
}

/** Most tasks of one job (task ids and counts travel as 32-bit words; memory is the real limit: `checkJobFits`). */
export const MAX_TASKS = 65536

/** Whether this thread is a task started by an agent (lapirun, runJob), not a plain `node` program. */
export function underAgent(): boolean {
  return fromAgent(SPEC_KEY) !== undefined
}

/** The spec this thread's agent passed in `workerData`, checked for its version (undefined in a thread no agent started). */
export function specFromAgent(): JobSpec | undefined {
  const spec = fromAgent(SPEC_KEY) as JobSpec | undefined
  if (spec !== undefined && spec.version !== SPEC_VERSION) throw new Error(`job spec version ${spec.version} is not ${SPEC_VERSION}`)
  return spec
}
