/**
 * What each task is doing, for the report of a job that hangs (`lapirun --timeout`, the first
 * Ctrl-C, SIGUSR1) and for the debug log: read from the control block as records (a process of a
 * job of several sends its tasks' records to the rendezvous) and put in words the same way in one
 * process as in many.
 *
 * A task in a blocking call names it in its watch line at every step of the wait, spinning or
 * asleep (see Idler.watch); a task asleep in its event loop or in a promise wait names it in
 * WAIT_CALL with SLEEPING set. One that does neither is running its own code.
 */
import {
  TASK_SLEEPING,
  TASK_STATE,
  TASK_WAIT_CALL,
  TASK_WAIT_VAL,
  TASK_WAIT_WORD,
  TaskState,
  WAIT_BARRIER,
  WAIT_COUNTER,
  WAIT_FENCE,
  WATCH_CALL,
  WATCH_VAL,
  WATCH_WORD,
  WaitCall,
  taskWord,
  watchWord,
} from '../layout/control.js'

/** One task as a report sees it (plain data: it crosses processes as a message). */
export interface TaskWatch {
  task: number
  /** TaskState as the control block says. */
  state: number
  /** Its thread's exit code once it has ended here, else null. */
  code: number | null
  /** The blocking call it is in (WaitCall + 1 | wait kind << 16), 0: none. */
  call: number
  /** What that wait waits for: a counter's word in its segment (0 = none) and the value, or the barrier generation. */
  word: number
  val: number
  /** The awaited counter's value now, where the task waits for one of its own segment. */
  holds: number | null
}

/** How long a report watches the tasks for one in a blocking call, ms. */
export const WATCH_MS = 100
/** Tasks a report lists one by one. */
export const REPORT_TASKS = 32

/** Task `t` now (`segment`: its segment, to read an awaited counter; `code`: its exit code, if its thread has ended). */
export function readTask(ctl: Int32Array, numTasks: number, t: number, segment: Int32Array | null, code: number | null): TaskWatch {
  const state = Atomics.load(ctl, taskWord(t, TASK_STATE))
  const w = watchWord(numTasks, t, WATCH_CALL)
  let call = Atomics.load(ctl, w)
  let word = 0
  let val = 0
  if (call !== 0) {
    word = ctl[w + WATCH_WORD - WATCH_CALL]!
    val = ctl[w + WATCH_VAL - WATCH_CALL]!
  } else if (Atomics.load(ctl, taskWord(t, TASK_SLEEPING)) !== 0) {
    // (asleep in its event loop, or in a promise wait)
    const rec = Atomics.load(ctl, taskWord(t, TASK_WAIT_CALL))
    call = ((rec & 0xffff) + 1) | (rec & ~0xffff)
    word = Atomics.load(ctl, taskWord(t, TASK_WAIT_WORD))
    val = Atomics.load(ctl, taskWord(t, TASK_WAIT_VAL))
  }
  const holds = call !== 0 && call >>> 16 === WAIT_COUNTER && word !== 0 && segment !== null && word < segment.length ? Atomics.load(segment, word) : null
  return { task: t, state, code, call, word, val, holds }
}

/**
 * The records of the tasks `local` says are this process's, watched for up to WATCH_MS: a task
 * seen in a blocking call (or not running) once is taken as seen; one never seen in one is running
 * its own code. `codes[t]` is t's exit code once its thread ended.
 */
export async function watchTasks(
  ctl: Int32Array,
  numTasks: number,
  segments: ReadonlyArray<SharedArrayBuffer | null>,
  codes: ReadonlyArray<number | undefined>,
  local: (t: number) => boolean,
): Promise<TaskWatch[]> {
  const seen = new Array<TaskWatch | undefined>(numTasks).fill(undefined)
  const read = (t: number): TaskWatch => {
    const seg = segments[t]
    return readTask(ctl, numTasks, t, seg !== null && seg !== undefined ? new Int32Array(seg) : null, codes[t] ?? null)
  }
  const end = performance.now() + WATCH_MS
  for (;;) {
    let open = 0
    for (let t = 0; t < numTasks; t++) {
      if (!local(t) || seen[t] !== undefined) continue
      const w = read(t)
      if (w.call !== 0 || w.state !== TaskState.RUNNING || w.code !== null) seen[t] = w
      else open++
    }
    if (open === 0 || performance.now() >= end) break
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
  const out: TaskWatch[] = []
  for (let t = 0; t < numTasks; t++) if (local(t)) out.push(seen[t] ?? read(t))
  return out
}

const CALL_NAMES: readonly string[] = [
  'the event loop',
  'LAPI_Waitcntr',
  'LAPI_Fence',
  'LAPI_Gfence',
  'LAPI_Address_init',
  'LAPI_Address_init64',
  'a send',
  'Lapi.waitUntil',
  'AM_WaitSema',
  'AMX_SPMDBarrier',
  'AMX_SPMDAllGather',
  'an AM-2 request',
  'an AM-2 request',
  'an atomic operation on a task of another process',
  'a poll',
  'a PGAS barrier or collective',
  'a PGAS RPC',
  'a PGAS operation',
]

/** The name of a WaitCall, for messages. */
export function waitCallName(call: number): string {
  return CALL_NAMES[call] ?? `blocking call ${call}`
}

const STATE_TEXT = ['had not joined the job (no LAPI_Init yet)', 'running', 'had left the job (LAPI_Term)', 'had ended', 'had failed']

/**
 * Task `w` in words. `arrived`: for a task in a barrier, who had arrived, in words (the report
 * counts it over every task it has).
 */
export function describeWatch(w: TaskWatch, arrived = ''): string {
  const t = w.task
  if (w.code !== null) return `task ${t} had ended (exit code ${w.code})`
  if (w.state !== TaskState.RUNNING) return `task ${t} ${STATE_TEXT[w.state] ?? `was in state ${w.state}`}`
  if (w.call === 0) return `task ${t} was running its own code (not waiting in a LAPI or AM-2 call)`
  const call = (w.call & 0xffff) - 1
  const kind = w.call >>> 16
  switch (call) {
    case WaitCall.EVENT_LOOP:
      return `task ${t} was idle in its event loop (awaiting a promise)`
    case WaitCall.WAITCNTR: {
      if (w.word === 0) return `task ${t} was waiting in LAPI_Waitcntr for a counter to reach ${w.val}`
      const now = w.holds !== null ? ` (it holds ${w.holds})` : ''
      return `task ${t} was waiting in LAPI_Waitcntr for the counter at Addr ${w.word * 4} to reach ${w.val}${now}`
    }
    case WaitCall.GFENCE:
    case WaitCall.ADDRESS_INIT:
    case WaitCall.ADDRESS_INIT64:
      if (kind === WAIT_FENCE) return `task ${t} was waiting in ${waitCallName(call)} for its active messages to land`
      if (kind === WAIT_BARRIER) return `task ${t} was waiting in ${waitCallName(call)} for the other tasks${arrived !== '' ? ` (${arrived})` : ''}`
      return `task ${t} was waiting in ${waitCallName(call)}`
    case WaitCall.FENCE:
      return `task ${t} was waiting in LAPI_Fence for its active messages to land`
    case WaitCall.SEND:
      return `task ${t} was waiting in a send for room in task ${w.val}'s inbox`
    case WaitCall.AM_REQUEST_CREDIT:
      return `task ${t} was waiting in an AM-2 request for a free request slot toward its peer`
    case WaitCall.AM_REQUEST_BUFFER:
      return `task ${t} was waiting in an AM-2 request for its earlier bulk data to be taken`
    case WaitCall.POLL:
      return `task ${t} was polling (LAPI_Probe, LAPI_Msgpoll, AM_Poll or a progress call)`
    case WaitCall.AMX_SPMD_BARRIER:
    case WaitCall.AMX_SPMD_ALLGATHER:
    case WaitCall.PGAS_COLLECTIVE:
      return `task ${t} was waiting in ${waitCallName(call)}${arrived !== '' ? ` (${arrived})` : ''}`
    default:
      return `task ${t} was waiting in ${waitCallName(call)}`
  }
}

/**
 * The collective a running task waits in, whose arrivals a report counts: 'lapi' (the job
 * barrier of LAPI_Gfence and LAPI_Address_init), 'amx' (AMX_SPMDBarrier and AllGather), 'pgas'
 * (a PGAS barrier or collective); null for any other state.
 */
function collectiveOf(w: TaskWatch): string | null {
  if (w.code !== null || w.state !== TaskState.RUNNING || w.call === 0) return null
  if (w.call >>> 16 === WAIT_BARRIER) return 'lapi'
  const call = (w.call & 0xffff) - 1
  if (call === WaitCall.AMX_SPMD_BARRIER || call === WaitCall.AMX_SPMD_ALLGATHER) return 'amx'
  return call === WaitCall.PGAS_COLLECTIVE ? 'pgas' : null
}

/** Tasks in words: "2", "1, 4, 7", "1, 2, 3 … (9 in all)". */
function taskList(ts: number[]): string {
  return ts.length <= 8 ? ts.join(', ') : `${ts.slice(0, 8).join(', ')} … (${ts.length} in all)`
}

/**
 * The report of a job of `numTasks` tasks from the records of the tasks it has (in any order) and
 * lines about the rest (`more`: a process that did not answer, each process's network), indented
 * a line each. A barrier's arrivals are counted over every record: who waits in it has arrived.
 */
export function formatReport(records: readonly TaskWatch[], numTasks: number, more: readonly string[] = []): string {
  const sorted = [...records].sort((a, b) => a.task - b.task)
  const known = sorted.map((w) => w.task)
  const arrived = new Map<string, string>()
  for (const g of ['lapi', 'amx', 'pgas']) {
    const at = new Set(sorted.filter((w) => collectiveOf(w) === g).map((w) => w.task))
    if (at.size === 0) continue
    const not = known.filter((t) => !at.has(t))
    arrived.set(g, `${at.size} of ${numTasks} had arrived${not.length > 0 ? `; not task${not.length > 1 ? 's' : ''} ${taskList(not)}` : ''}`)
  }
  const lines = sorted.map((w) => describeWatch(w, arrived.get(collectiveOf(w) ?? '') ?? ''))
  const shown = lines.slice(0, REPORT_TASKS)
  if (lines.length > REPORT_TASKS) shown.push(`… and ${lines.length - REPORT_TASKS} more tasks`)
  return [...shown, ...more].map((l) => `  ${l}`).join('\n')
}
