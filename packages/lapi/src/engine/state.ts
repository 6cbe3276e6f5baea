/**
 * What one thread's network engine holds (engine/): its views of the process's shared network
 * memory (layout/engine.ts), the ends of the local tasks' rings and their segments, where every
 * task of the job lives, the scratch packet its answers are made in, and the counts and clock
 * readings its rounds keep. The engine's parts (lock.ts, egress.ts, ingress.ts, target.ts,
 * sleep.ts, tasks.ts) are functions of it; NetEngine (engine.ts) holds one.
 */
import { netTagOffset, placement, type JobSpec } from '../layout/job-spec.js'
import { CQ_END, CQ_HEADER, CQ_START } from '../layout/engine.js'
import { netRingAt } from '../layout/ring.js'
import type { FramePath } from '../transport/contract.js'
import { BODY_PACKET, NET_PUT_DIRECT_MAX, PACKET_HEADER_BYTES } from '../transport/packet.js'
import { RingReader, RingWriter } from '../transport/ring.js'
import { transportKind } from '../transport/registry.js'

/** Body bytes of an answer without payload (an acknowledgement, an Rmw's old value). */
export const ANSWER_BYTES = BODY_PACKET + PACKET_HEADER_BYTES

// a thread's clock readings (EngineState.times)
export const TM_WRITE = 0
export const TM_READ = 1
export const TM_CLOCK = 2

// engine statistics (Float64, under the lock)
export const ST_PACKETS_OUT = 0
export const ST_PACKETS_IN = 1
export const ST_ACKS = 2

/** A local task's ends, as an engine sees them. */
export interface LocalTask {
  id: number
  /** Its index among this process's tasks. */
  at: number
  out: RingReader
  netIn: RingWriter
  u8: Uint8Array
  i32: Int32Array
  i64: BigInt64Array
  state: Int32Array
}

export class EngineState {
  readonly ctl: Int32Array
  /** The process's network block (W_*). */
  readonly w: Int32Array
  /** Engine statistics (ST_*). */
  readonly st: Float64Array
  readonly path: FramePath
  /** This thread's lock id: its task id + 1, or AGENT_ID. */
  readonly me: number
  readonly rank: number
  readonly n: number
  readonly lo: number
  readonly tasks: LocalTask[]
  readonly procOf: Int32Array
  readonly segSize: number
  readonly tag: number
  readonly bodyRoom: number
  /** The largest frame body taken in: a ring slot's, or a direct Put's (NET_PUT_DIRECT_MAX). */
  readonly frameRoom: number
  readonly scratch: Uint8Array
  readonly sdv: DataView
  /** DataViews of frame bodies, by the receive buffer's view (the buffers of all peers are views of one memory). */
  readonly views: Map<Uint8Array, DataView>
  /** The agent's handler of control messages; null in a task (it leaves them to the agent). */
  readonly onControl: ((peer: number, body: Uint8Array) => void) | null

  /**
   * Whether this task asks for the connections when it polls: only where the job's tasks can each
   * have a CPU to spin on. Where they cannot (more tasks on the host than CPUs), a polling task
   * would only keep the agent and the other processes off the CPU they need, and the agent's event
   * loop reads for everyone.
   */
  readonly asks: boolean

  /** Whether this thread may sleep in the kernel on the connections: the only task of its process (`sleepBegin`). */
  readonly fdSleeps: boolean

  /** The control queue (layout/engine.ts, CQ_*): its bytes, its positions, a DataView of it. */
  readonly cq: Uint8Array
  readonly cqw: Int32Array
  readonly cqv: DataView
  /** The list of Get answers set aside (layout/engine.ts, GQ_*). */
  readonly gq: Int32Array

  /** Whether doorbells are owed rather than rung (the agent's rounds), and what is owed: per local task, a bell, and a counter word (-1 none). */
  owing: boolean
  readonly owedBell: Uint8Array
  readonly owedCounter: Int32Array

  /**
   * This thread's clock readings (performance.now ms; a typed array, as a double stored in a field
   * would be boxed): when its last write ended (TM_WRITE), when it last read in an incidental poll
   * (TM_READ), and the clock as the last send's coalescing test read it (TM_CLOCK, -1: none since),
   * for the poll that follows it on the side of the same send: one clock read per request, not two.
   */
  readonly times: Float64Array
  /** Frames this thread handed in. */
  framesIn: number
  /** `framesIn` at this thread's last write. */
  framesAtWrite: number
  /** Packets this thread's sends left in its ring since it last framed (`holdInRing`). */
  ringHeld: number
  /** `holdSends` calls not yet released, and whether a kick waits for the last release. */
  holds: number
  kickOwed: boolean
  /** Rounds acknowledgements have waited for a frame to ride on. */
  ackRounds: number
  /** See NetEngine.acksDue. */
  acksDue: boolean
  /** The receive buffer whose DataView was asked for last, and that view (`dvOf`). */
  lastU8: Uint8Array | null
  lastDv: DataView | null

  constructor(spec: Omit<JobSpec, 'taskId'>, rank: number, holder: number, onControl: ((peer: number, body: Uint8Array) => void) | null, asks: boolean) {
    this.tasks = []
    this.views = new Map()
    this.asks = asks && onControl === null
    this.fdSleeps = onControl === null && spec.localTasks === 1
    const net = spec.net!
    this.ctl = new Int32Array(spec.control)
    this.w = new Int32Array(net.stream.words)
    this.st = new Float64Array(net.stats)
    this.path = transportKind(net.transport).createPath(net.stream, rank)
    this.me = holder
    this.rank = rank
    this.onControl = onControl
    this.n = spec.numTasks
    this.lo = spec.firstTask
    this.segSize = spec.config.segmentSize
    this.tag = netTagOffset(spec.ring)
    this.bodyRoom = spec.ring.slotBytes - 4
    this.frameRoom = Math.max(this.bodyRoom, BODY_PACKET + PACKET_HEADER_BYTES + NET_PUT_DIRECT_MAX)
    this.procOf = new Int32Array(this.n)
    for (let p = 0; p < spec.processes; p++) {
      const { first, count } = placement(this.n, spec.processes, p)
      for (let t = first; t < first + count; t++) this.procOf[t] = p
    }
    for (let t = spec.firstTask; t < spec.firstTask + spec.localTasks; t++) {
      const seg = spec.segments[t]!
      this.tasks.push({
        id: t,
        at: t - spec.firstTask,
        out: new RingReader(spec.netOut[t]!, spec.netRing, 0),
        netIn: new RingWriter(spec.inboxes[t]!, spec.netIn!, 0, netRingAt(spec.ring)),
        u8: new Uint8Array(seg),
        i32: new Int32Array(seg),
        i64: new BigInt64Array(seg, 0, seg.byteLength >>> 3),
        state: new Int32Array(spec.netState[t]!),
      })
    }
    this.owing = false
    this.owedBell = new Uint8Array(spec.localTasks)
    this.owedCounter = new Int32Array(spec.localTasks).fill(-1)
    this.scratch = new Uint8Array(spec.ring.slotBytes)
    this.sdv = new DataView(this.scratch.buffer)
    this.gq = new Int32Array(net.gets)
    this.cq = new Uint8Array(net.control)
    this.cqw = new Int32Array(net.control, 0, 2)
    this.cqv = new DataView(net.control)
    if (this.cqw[CQ_END] === 0) {
      this.cqw[CQ_START] = CQ_HEADER
      this.cqw[CQ_END] = CQ_HEADER
    }
    this.times = new Float64Array([-1, -1, -1])
    this.framesIn = 0
    this.framesAtWrite = 0
    this.ringHeld = 0
    this.holds = 0
    this.kickOwed = false
    this.ackRounds = 0
    this.acksDue = false
    this.lastU8 = null
    this.lastDv = null
  }
}
