/**
 * Making a job's shared memory (`createJob`) for the tasks of one process, sized and checked
 * against what the host allows (`checkJobFits`); and the job of one task that a program run with
 * plain `node` makes itself (`currentJobSpec`).
 */
import { readFileSync } from 'node:fs'
import { totalmem } from 'node:os'
import { resolveConfig, type JobConfig } from '../base/config.js'
import { lazyLoad } from '../base/lazy.js'
import { controlLayout, createControl } from '../layout/control.js'
import { controlQueueBytes, createControlQueue, createParkedGets } from '../layout/engine.js'
import { MAX_TASKS, SPEC_VERSION, netStateBytes, placement, specFromAgent, type JobSpec } from '../layout/job-spec.js'
import { WASM_PAGE, trySharedMemory, type WasmMemory } from '../layout/memory.js'
import { createInbox, netRingAt, netRingGeometry, ringGeometry, startRingsAt, type RingGeometry } from '../layout/ring.js'
import { streamBufferBytes } from '../transport/stream-path.js'
import { DEFAULT_TRANSPORT, transportKind } from '../transport/registry.js'
import type { FaultSpec } from '../transport/faults.js'
import type { StreamShared } from '../layout/stream.js'
import { PACKET_HEADER_BYTES } from '../transport/packet.js'

/** The tasks of this process when it is one of several (`procs`, `rank`); all of them otherwise. */
export interface ProcessPart {
  procs: number
  rank: number
  /** The transport between the processes, by its name in transport/registry.ts (default DEFAULT_TRANSPORT). */
  transport?: string
  /** What the transport's kind makes its shared memory with, of the transport itself (`Transport.geometry`). */
  geometry?: unknown
  /** Fault injection (each kind takes those its path applies). */
  faults?: FaultSpec
}

/**
 * A segment of `bytes` as a shared WebAssembly.Memory, so that WebAssembly code can work on it in
 * place (it also starts on a page boundary); null where `bytes` is not a whole number of its pages
 * or the engine refuses the memory (an address-space limit): the segment is then a plain buffer.
 */
function segmentMemory(bytes: number): WasmMemory | null {
  return bytes % WASM_PAGE === 0 ? trySharedMemory(bytes / WASM_PAGE) : null
}

/** Creates the shared memory of a job of `numTasks` tasks for the tasks of this process. */
export function createJob(numTasks: number, config: JobConfig, part: ProcessPart = { procs: 1, rank: 0 }): Omit<JobSpec, 'taskId'> {
  if (!Number.isInteger(numTasks) || numTasks < 1 || numTasks > MAX_TASKS) throw new RangeError(`invalid number of tasks ${numTasks}`)
  const { first, count } = placement(numTasks, part.procs, part.rank)
  const segments: Array<SharedArrayBuffer | null> = new Array<SharedArrayBuffer | null>(numTasks).fill(null)
  const segmentMemories: Array<WasmMemory | null> = new Array<WasmMemory | null>(numTasks).fill(null)
  const inboxes: Array<SharedArrayBuffer | null> = new Array<SharedArrayBuffer | null>(numTasks).fill(null)
  const netOut: Array<SharedArrayBuffer | null> = new Array<SharedArrayBuffer | null>(numTasks).fill(null)
  const netState: Array<SharedArrayBuffer | null> = new Array<SharedArrayBuffer | null>(numTasks).fill(null)
  const ring = ringGeometry(count, config.ringSlots, PACKET_HEADER_BYTES + config.maxPktSz)
  const netRing = netOutGeometry(ring)
  const netIn = part.procs > 1 ? netRingGeometry(ring) : null
  const firstPacket = config.chaos?.firstPacket
  for (let t = first; t < first + count; t++) {
    segmentMemories[t] = segmentMemory(config.segmentSize)
    segments[t] = segmentMemories[t]?.buffer ?? new SharedArrayBuffer(config.segmentSize)
    inboxes[t] = createInbox(ring, netIn)
    if (firstPacket !== undefined && firstPacket !== 0) startRingsAt(inboxes[t]!, ring, firstPacket | 0, netIn)
    if (part.procs > 1) {
      netOut[t] = createInbox(netRing)
      netState[t] = new SharedArrayBuffer(netStateBytes(numTasks))
    }
  }
  return {
    version: SPEC_VERSION,
    // (node:crypto loaded here, where a spec is made, not in every thread that reads one)
    jobId: lazyLoad<typeof import('node:crypto')>('node:crypto').randomBytes(8).toString('hex'),
    numTasks,
    config,
    firstTask: first,
    localTasks: count,
    processes: part.procs,
    segments,
    segmentMemories,
    control: createControl(numTasks, first, count),
    inboxes,
    ring,
    netIn,
    netOut,
    netState,
    netRing,
    net:
      part.procs > 1
        ? {
            transport: part.transport ?? DEFAULT_TRANSPORT,
            stream: netShared(numTasks, part),
            stats: new SharedArrayBuffer(64),
            control: createControlQueue(controlQueueBytes(streamBufferBytes(numTasks))),
            gets: createParkedGets(),
          }
        : null,
  }
}

/**
 * The geometry of a task's ring toward the network: as many slots as its network ring (a batch of
 * answers goes out in one write only as far as the ring holds it), each NET_TAG_BYTES longer for
 * the destination tag (`netTagOffset`).
 */
function netOutGeometry(ring: RingGeometry): RingGeometry {
  return netRingGeometry(ring, NET_TAG_BYTES)
}

/** Bytes a slot of a ring toward the network has beyond an inbox slot (the destination tag's room). */
const NET_TAG_BYTES = 64

/** The frame path's shared memory, as the transport's kind makes it. */
function netShared(numTasks: number, part: ProcessPart): StreamShared {
  return transportKind(part.transport ?? DEFAULT_TRANSPORT).createShared(part.procs, streamBufferBytes(numTasks), part.rank, {
    faults: part.faults ?? null,
    ...(part.geometry !== undefined ? { geometry: part.geometry } : {}),
  })
}

/** Memory of a task's thread (a V8 isolate and Node's per-worker state): about 14 MiB measured on Node 20. */
export const WORKER_BYTES = 16 * 1024 * 1024
/** A task's state per task of the job (message ids and reassembly, the network state words): an estimate. */
export const PER_PEER_BYTES = 512

/** What one process holding `localTasks` tasks of a job of `numTasks` over `procs` processes (over `transport`) needs, in bytes, and its parts per task. */
export function processMemory(
  numTasks: number,
  config: JobConfig,
  localTasks: number,
  procs: number,
  transport = DEFAULT_TRANSPORT,
): { bytes: number; segment: number; rings: number; thread: number; frames: number } {
  const page = 65536
  const ring = ringGeometry(localTasks, config.ringSlots, PACKET_HEADER_BYTES + config.maxPktSz)
  const inbox = Math.ceil((netRingAt(ring) + (procs > 1 ? netRingGeometry(ring).ringBytes : 0)) / page) * page
  const netOut = procs > 1 ? Math.ceil(netOutGeometry(ring).ringBytes / page) * page : 0
  const rings = inbox + netOut
  const thread = WORKER_BYTES + PER_PEER_BYTES * numTasks
  // (the frame path's memory, as its kind says, and the agent's control queue, once per process)
  const frames = procs > 1 ? transportKind(transport).memoryBytes(procs, streamBufferBytes(numTasks)) + controlQueueBytes(streamBufferBytes(numTasks)) : 0
  const bytes = localTasks * (config.segmentSize + rings + thread) + controlLayout(numTasks).byteLength + frames
  return { bytes, segment: config.segmentSize, rings, thread, frames }
}

/** Memory this host lets the job have: its RAM, or less where a cgroup limit says so. */
export function memoryLimit(): number {
  let limit = totalmem()
  for (const f of ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']) {
    try {
      const v = Number(readFileSync(f, 'utf8').trim())
      if (Number.isFinite(v) && v > 0 && v < limit) limit = v
    } catch {
      /* no such limit here */
    }
  }
  return limit
}

const GiB = (b: number): string => `${(b / 2 ** 30).toFixed(1)} GiB`
const MiB = (b: number): string => `${(b / 2 ** 20).toFixed(b < 2 ** 20 ? 2 : 0)} MiB`

/**
 * Throws an Error saying what does not fit when the processes `ranks` of a job (those on this host)
 * need more memory than the host allows (`memoryLimit`): segments, inbox rings and task threads,
 * all of which a job may touch in full, and the frame path of the transport named `transport`.
 * Called before anything is started.
 */
export function checkJobFits(numTasks: number, config: JobConfig, procs: number, ranks: number[], limit = memoryLimit(), transport = DEFAULT_TRANSPORT): void {
  let need = 0
  let per = processMemory(numTasks, config, 1, procs, transport)
  for (const r of ranks) {
    const m = processMemory(numTasks, config, placement(numTasks, procs, r).count, procs, transport)
    need += m.bytes
    per = m
  }
  if (need <= limit) return
  const tasks = ranks.reduce((a, r) => a + placement(numTasks, procs, r).count, 0)
  throw new Error(
    `a job of ${numTasks} tasks needs ${GiB(need)} of memory here (${tasks} task${tasks === 1 ? '' : 's'} in ${ranks.length} process${ranks.length === 1 ? '' : 'es'}; ` +
      `per task: a ${MiB(per.segment)} segment, ${MiB(per.rings)} of inbox rings, about ${MiB(per.thread)} for its thread` +
      `${per.frames > 0 ? `; per process: ${MiB(per.frames)} of network buffers` : ''}), and this host allows ${GiB(limit)}: ` +
      'give the tasks smaller segments (--segment-size), fewer tasks per process, or more hosts',
  )
}

let standalone: JobSpec | undefined

/**
 * The spec of the job this thread belongs to: the one its agent passed in `workerData`, or, for a
 * program not started by an agent, a job of one task made on first use.
 */
export function currentJobSpec(): JobSpec {
  const spec = specFromAgent()
  if (spec !== undefined) return spec
  if (standalone === undefined) standalone = { ...createJob(1, resolveConfig()), taskId: 0 }
  return standalone
}
