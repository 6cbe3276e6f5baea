/**
 * The state of a process's network in words, for the report of a job that timed out and the
 * debug line of a failed one (agent/watch.ts puts the tasks' watch lines in words).
 */
import type { JobSpec } from '../layout/job-spec.js'
import type { Transport } from '../transport/contract.js'
import { transportKind } from '../transport/registry.js'
import { AGENT_ID, OWNER_TASKS, ENG_BLOCKED, ENG_CTRL, ENG_FDSLEEP, ENG_LOCK, ENG_OWNER, ENG_PARKED, ENG_WANT } from '../layout/engine.js'
import type { NetEngine } from '../engine/engine.js'
import { describeWatch, readTask } from './watch.js'

/** What the report reads: the agent's parts and counts. */
export interface NetworkView {
  spec: Omit<JobSpec, 'taskId'>
  rank: number
  engine: NetEngine
  transport: Transport
  /** Chunks the event loop read, waiting for the lock: peer, bytes, length, … */
  inbound: ReadonlyArray<number | Uint8Array>
  /** Whether a peer may be paused (its bytes wait for room). */
  paused: boolean
  handovers: number
  /** Control messages dropped. */
  dropped: number
  wakes: number
}

/**
 * Who reads the connections and holds the lock, what waits (to be sent, for room in a task's ring,
 * for the agent), and per peer the bytes received and not yet taken in: plain reads, no lock.
 * With `detail` (the debug line of a failed job) also this process's tasks, their rings (read
 * under the lock when it is free: NetEngine.ringState) and the counts.
 */
export function describeNetwork(v: NetworkView, detail: boolean): string {
  const spec = v.spec
  const w = new Int32Array(spec.net!.stream.words)
  const lock = Atomics.load(w, ENG_LOCK)
  const flags = [
    Atomics.load(w, ENG_WANT) !== 0 ? 'a task asks for the connections' : '',
    Atomics.load(w, ENG_BLOCKED) !== 0 ? "frames wait for room in a task's network ring" : '',
    Atomics.load(w, ENG_PARKED) !== 0 ? 'Get answers wait for room toward their origin' : '',
    Atomics.load(w, ENG_CTRL) !== 0 ? 'a control message waits for this thread' : '',
    Atomics.load(w, ENG_FDSLEEP) !== 0 ? 'the task sleeps on the connections' : '',
    v.paused ? 'a peer is paused (its bytes wait for room)' : '',
  ].filter((f) => f !== '')
  const path = v.engine.path
  const kind = transportKind(spec.net!.transport)
  const peers: string[] = []
  for (let p = 0; p < spec.processes; p++) {
    if (p === v.rank) continue
    let chunks = 0
    for (let k = 0; k < v.inbound.length; k += 3) if (v.inbound[k] === p) chunks++
    peers.push(`process ${p}: ${path.unparsed(p)} bytes not taken in, ${chunks} reads held by the agent, flags ${kind.peerFlags(spec.net!.stream, p)}`)
  }
  const line =
    `network of process ${v.rank}: the connections read by ${Atomics.load(w, ENG_OWNER) === OWNER_TASKS ? 'the tasks' : 'the agent'} ` +
    `(${v.handovers} hand-overs), the lock ${lock === 0 ? 'free' : lock === AGENT_ID ? 'held by the agent' : `held by task ${lock - 1}`}, ` +
    `${path.queued()} bytes waiting to be sent${flags.length > 0 ? `; ${flags.join('; ')}` : ''}; ${peers.join('; ')}`
  if (!detail) return line
  // (for the debug log: this process's own tasks, whose report another process's may have
  // replaced, the rings, and the counts)
  const ctl = new Int32Array(spec.control)
  const tasks: string[] = []
  for (let t = spec.firstTask; t < spec.firstTask + spec.localTasks; t++) {
    tasks.push(describeWatch(readTask(ctl, spec.numTasks, t, null, null)))
  }
  const s = v.transport.stats()
  return (
    `${line}; ${tasks.join('; ')}; ${v.engine.ringState()}; frames sent ${s.framesSent}, received ${s.framesReceived}, dropped ${s.framesDropped}; ` +
    `bytes sent ${s.bytesSent}, received ${s.bytesReceived}; control messages dropped ${v.dropped}; agent wakes ${v.wakes}`
  )
}
