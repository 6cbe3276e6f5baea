/**
 * The agents' control protocol: the messages the agents of a job's processes exchange, each a
 * FRAME_CONTROL frame whose body is a msgpackr map (a task that reads the connections queues the
 * bodies for its agent as they came, engine.ts `takeControl`). The union of their types, the one
 * decoder of a body that came from the network, which checks every field against the job and the
 * sender, and the encoder, whose bytes are those of the maps below in this key order.
 *
 *   arrive   to process 0: the sender's tasks have all arrived at the barrier that ends with
 *            generation g; f and i are their entries of the float64 and int64 all-gather tables
 *            (both halves, 8 bytes per task and half)
 *   release  from process 0: barrier generation g is complete; f and i are the whole tables
 *   state    task `task` of the sender ended (`state`: EXITED, FAILED or TERMINATED), its process
 *            then at barrier generation g
 *   abort    the job is aborted: the failed task (or -1) and why
 */
import { TaskState } from '../layout/control.js'
import { placement } from '../layout/job-spec.js'
import { decodeBody, encodeMessage } from '../transport/messages.js'

export interface ArriveMessage {
  t: 'arrive'
  g: number
  f: Uint8Array
  i: Uint8Array
}
export interface ReleaseMessage {
  t: 'release'
  g: number
  f: Uint8Array
  i: Uint8Array
}
export interface StateMessage {
  t: 'state'
  task: number
  state: EndState
  g: number
}
export interface AbortMessage {
  t: 'abort'
  task: number
  reason: string
}
export type ControlMessage = ArriveMessage | ReleaseMessage | StateMessage | AbortMessage

/** The states a `state` message may report. */
export type EndState = typeof TaskState.EXITED | typeof TaskState.FAILED | typeof TaskState.TERMINATED

/** What a decoder checks a message against: the job's size and the receiving process. */
export interface ControlJob {
  numTasks: number
  processes: number
  /** The process that received the message. */
  rank: number
}

/** A decoded message, or why the body was not one. */
export type DecodedControl = { ok: true; message: ControlMessage } | { ok: false; reason: string }

/** Each kind's fields, in the order the encoder writes them. */
const FIELDS: Readonly<Record<ControlMessage['t'], readonly string[]>> = {
  arrive: ['t', 'g', 'f', 'i'],
  release: ['t', 'g', 'f', 'i'],
  state: ['t', 'task', 'state', 'g'],
  abort: ['t', 'task', 'reason'],
}

/**
 * Message `m` with its 4-byte length prefix (transport/messages.ts `encodeMessage`; the agent
 * queues the body after it). The same bytes as the plain maps of each kind.
 */
export function encodeControl(m: ControlMessage): Buffer {
  switch (m.t) {
    case 'arrive':
      return encodeMessage({ t: 'arrive', g: m.g, f: m.f, i: m.i })
    case 'release':
      return encodeMessage({ t: 'release', g: m.g, f: m.f, i: m.i })
    case 'state':
      return encodeMessage({ t: 'state', task: m.task, state: m.state, g: m.g })
    case 'abort':
      return encodeMessage({ t: 'abort', task: m.task, reason: m.reason })
  }
}

/**
 * The control message in `body` (a frame's body, without a length prefix) from process `peer`,
 * every field checked: the kind, no field missing or extra, generations 32-bit integers, gather
 * entries of the sender's tasks (arrive, to process 0 only) or of the job's (release, from process
 * 0 only), a task ending that is the sender's, an abort's task in the job or -1. Never throws:
 * what is wrong comes back as a reason, in words.
 */
export function decodeControl(body: Uint8Array, peer: number, job: ControlJob): DecodedControl {
  let m: unknown
  try {
    m = decodeBody(body)
  } catch (e) {
    return no(`not msgpack (${clip(e instanceof Error ? e.message : String(e))})`)
  }
  if (typeof m !== 'object' || m === null || Object.getPrototypeOf(m) !== Object.prototype) return no(`not a map but ${what(m)}`)
  const r = m as Record<string, unknown>
  const t = Object.hasOwn(r, 't') ? r['t'] : undefined
  if (typeof t !== 'string') return no(`no kind (field t: ${what(t)})`)
  if (!Object.hasOwn(FIELDS, t)) return no(`an unknown kind ${what(t)}`)
  const kind = t as ControlMessage['t']
  const wrong = fieldsOf(r, FIELDS[kind])
  if (wrong !== null) return no(`${kind}: ${wrong}`)
  switch (kind) {
    case 'arrive': {
      if (job.rank !== 0) return no(`arrive: sent to process ${job.rank} (only process 0 gathers)`)
      const { count } = placement(job.numTasks, job.processes, peer)
      const bad = generation(r['g']) ?? table('f', r['f'], 16 * count) ?? table('i', r['i'], 16 * count)
      if (bad !== null) return no(`arrive: ${bad}`)
      return yes({ t: 'arrive', g: r['g'] as number, f: r['f'] as Uint8Array, i: r['i'] as Uint8Array })
    }
    case 'release': {
      if (peer !== 0) return no(`release: sent by process ${peer} (only process 0 releases)`)
      const bad = generation(r['g']) ?? table('f', r['f'], 16 * job.numTasks) ?? table('i', r['i'], 16 * job.numTasks)
      if (bad !== null) return no(`release: ${bad}`)
      return yes({ t: 'release', g: r['g'] as number, f: r['f'] as Uint8Array, i: r['i'] as Uint8Array })
    }
    case 'state': {
      const task = r['task']
      const state = r['state']
      const { first, count } = placement(job.numTasks, job.processes, peer)
      if (typeof task !== 'number' || !Number.isInteger(task) || task < first || task >= first + count) {
        return no(`state: task ${what(task)} is not one of process ${peer}'s (${first}-${first + count - 1})`)
      }
      if (state !== TaskState.EXITED && state !== TaskState.FAILED && state !== TaskState.TERMINATED) {
        return no(`state: ${what(state)} is not the state of a task that ended`)
      }
      const bad = generation(r['g'])
      if (bad !== null) return no(`state: ${bad}`)
      return yes({ t: 'state', task, state, g: r['g'] as number })
    }
    case 'abort': {
      const task = r['task']
      const reason = r['reason']
      if (typeof task !== 'number' || !Number.isInteger(task) || task < -1 || task >= job.numTasks) {
        return no(`abort: task ${what(task)} is neither a task of the job (0-${job.numTasks - 1}) nor -1`)
      }
      if (typeof reason !== 'string') return no(`abort: the reason is ${what(reason)}, not a string`)
      return yes({ t: 'abort', task, reason })
    }
  }
}

function yes(message: ControlMessage): DecodedControl {
  return { ok: true, message }
}

function no(reason: string): DecodedControl {
  return { ok: false, reason }
}

/** Why map `r` does not have exactly the fields `want`, or null. */
function fieldsOf(r: Record<string, unknown>, want: readonly string[]): string | null {
  for (const k of want) if (!Object.hasOwn(r, k)) return `no field ${k}`
  const keys = Object.keys(r)
  if (keys.length !== want.length) for (const k of keys) if (!want.includes(k)) return `an unexpected field ${what(k)}`
  return null
}

/** Why `g` is no barrier generation (a 32-bit integer, as the control block holds it), or null. */
function generation(g: unknown): string | null {
  return typeof g === 'number' && (g | 0) === g ? null : `the generation ${what(g)} is no 32-bit integer`
}

/** Why `v` is not gather table `name` of `bytes` bytes, or null. */
function table(name: string, v: unknown, bytes: number): string | null {
  if (v instanceof Uint8Array && v.length === bytes) return null
  return `field ${name} is ${what(v)}, not ${bytes} bytes`
}

/** A value from the network, briefly, for a reason. */
function what(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(clip(v))
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint' || v === null || v === undefined) return String(v)
  if (v instanceof Uint8Array) return `${v.length} bytes`
  if (Array.isArray(v)) return `an array of ${v.length}`
  if (typeof v !== 'object') return `a ${typeof v}`
  const proto: unknown = Object.getPrototypeOf(v)
  if (proto === Object.prototype) return 'a map'
  // (a Date, or what msgpackr makes of a byte no value starts with)
  const name: unknown = proto !== null && typeof proto === 'object' ? (proto as { constructor?: { name?: unknown } }).constructor?.name : undefined
  return `a value of type ${typeof name === 'string' ? clip(name) : 'unknown'}`
}

/** At most 60 characters of `s`. */
function clip(s: string): string {
  return s.length <= 60 ? s : `${s.slice(0, 60)}…`
}
