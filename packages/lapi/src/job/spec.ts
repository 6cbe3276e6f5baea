/**
 * What a task receives from its agent to join a job: the job's shared memory and settings. The
 * agent (runJob, lapirun) creates one spec per process and hands each task worker its copy with its
 * own task id in `workerData`; a program run with plain `node` makes a job of one task itself.
 */
import { randomBytes } from 'node:crypto'
import { workerData } from 'node:worker_threads'
import { resolveConfig, type JobConfig } from '../config.js'
import { createControl } from './control.js'
import { PACKET_HEADER_BYTES } from '../transport/packet.js'
import { createInbox, ringGeometry, startRingsAt, type RingGeometry } from '../transport/ring.js'

/** Key of the spec inside `workerData`. */
export const SPEC_KEY = '__amlapi_job'
export const SPEC_VERSION = 1
/** Key of `RunJobOptions.data` inside `workerData`. */
export const DATA_KEY = '__amlapi_data'

/** What the agent put under `key` in this thread's `workerData` (undefined in a thread it did not start). */
function fromAgent (key: string): unknown {
  const wd = workerData as Record<string, unknown> | null | undefined
  return wd !== null && typeof wd === 'object' ? wd[key] : undefined
}

/** The `data` the agent passed to `runJob` (undefined in a job not started by runJob or without it). */
export function jobData (): unknown {
  return fromAgent(DATA_KEY)
}

export interface JobSpec {
  version: number
  /** Random id of the job (hex), for logs and, later, packet keys. */
  jobId: string
  numTasks: number
  /** The task this spec is for. */
  taskId: number
  config: JobConfig
  /** One segment per task, index = task id. */
  segments: SharedArrayBuffer[]
  /** The job control block (control.ts). */
  control: SharedArrayBuffer
  /** One inbox per task, index = task id: a ring per task of the process plus the agent's. */
  inboxes: SharedArrayBuffer[]
  /** Geometry of every inbox ring. */
  ring: RingGeometry
}

/** Creates the shared memory of a job of `numTasks` tasks in this process. */
export function createJob (numTasks: number, config: JobConfig): Omit<JobSpec, 'taskId'> {
  if (!Number.isInteger(numTasks) || numTasks < 1 || numTasks > 4096) throw new RangeError(`invalid number of tasks ${numTasks}`)
  const segments: SharedArrayBuffer[] = []
  const inboxes: SharedArrayBuffer[] = []
  const ring = ringGeometry(numTasks, config.ringSlots, PACKET_HEADER_BYTES + config.maxPktSz)
  for (let t = 0; t < numTasks; t++) {
    segments.push(new SharedArrayBuffer(config.segmentSize))
    inboxes.push(createInbox(ring))
    const firstPacket = config.chaos?.firstPacket
    if (firstPacket !== undefined && firstPacket !== 0) startRingsAt(inboxes[t]!, ring, firstPacket | 0)
  }
  return {
    version: SPEC_VERSION,
    jobId: randomBytes(8).toString('hex'),
    numTasks,
    config,
    segments,
    control: createControl(numTasks),
    inboxes,
    ring,
  }
}

let standalone: JobSpec | undefined

/** Whether this thread is a task started by an agent (lapirun, runJob), not a plain `node` program. */
export function underAgent (): boolean {
  return fromAgent(SPEC_KEY) !== undefined
}

/**
 * The spec of the job this thread belongs to: the one its agent passed in `workerData`, or, for a
 * program not started by an agent, a job of one task made on first use.
 */
export function currentJobSpec (): JobSpec {
  const spec = fromAgent(SPEC_KEY) as JobSpec | undefined
  if (spec !== undefined) {
    if (spec.version !== SPEC_VERSION) throw new Error(`job spec version ${spec.version} is not ${SPEC_VERSION}`)
    return spec
  }
  if (standalone === undefined) standalone = { ...createJob(1, resolveConfig()), taskId: 0 }
  return standalone
}
