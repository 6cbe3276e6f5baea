/**
 * The job control block: one SharedArrayBuffer shared by every task of a process and its agent.
 * It holds the job's words (barrier, abort, the agent's doorbell), then one 64-byte line per task
 * (its doorbell, whether and on what it sleeps, its state), then one watch line per task (the
 * blocking call it is in, for the report of a job that hangs: a line of its own, written by the
 * task alone, so the notifiers' line stays quiet), then two all-gather tables of N float64
 * (Address_init) and two of N int64 (Address_init64), alternating by collective generation. The
 * offsets of each block's words are below, written by scripts/gen-layouts.mjs from its table. Each
 * word has a documented writer; all accesses go through Atomics.
 */

import { pageAlignedShared } from './memory.js'

// <layout control> written by scripts/gen-layouts.mjs from its table: do not edit by hand
// the control block's job words, at its start (Int32 index):
//   0       CTL_ABORT
//   1       CTL_ABORT_TASK
//   2       CTL_BAR_COUNT
//   3       CTL_BAR_GEN
//   4       CTL_AGENT_BELL
//   5       CTL_AGENT_SLEEPING
//   6       CTL_BAR_LOCAL
//   7       CTL_AGENT_QUIET
//   8       CTL_AGENT_QUIET_BELL
//   9…15    (reserved)
/** 0 = running; 1 = the job is being torn down (a task failed). */
export const CTL_ABORT = 0
/** The task that caused the abort, or -1. */
export const CTL_ABORT_TASK = 1
/** Tasks arrived at the current barrier. */
export const CTL_BAR_COUNT = 2
/** Barrier generation: bumped (and notified) when the last task arrives. */
export const CTL_BAR_GEN = 3
/** The agent's doorbell: bumped and notified (while CTL_AGENT_SLEEPING) by a task that left it network work. */
export const CTL_AGENT_BELL = 4
/** 1 while the agent waits for its doorbell. */
export const CTL_AGENT_SLEEPING = 5
/** The barrier generation whose local arrivals are complete and handed to the agent (jobs of several processes). */
export const CTL_BAR_LOCAL = 6
/** 1 while the agent sleeps having found nothing to do for the doorbell value in CTL_AGENT_QUIET_BELL (`agentQuiet`). */
export const CTL_AGENT_QUIET = 7
/** The doorbell value the agent found nothing to do for. */
export const CTL_AGENT_QUIET_BELL = 8
/** Where the task lines start: the job words' length. */
export const TASK_BASE = 16
// </layout control>

// <layout task> written by scripts/gen-layouts.mjs from its table: do not edit by hand
// a task's line: 16 words (one 64-byte line) per task t at TASK_BASE + TASK_WORDS·t:
//   0       TASK_DOORBELL
//   1       TASK_SLEEPING
//   2       TASK_STATE
//   3       TASK_WAIT_CALL
//   4       (reserved)
//   5       TASK_WAIT_WORD
//   6       TASK_WAIT_VAL
//   7       TASK_EXIT_GEN
//   8…15    (reserved)
/** Bumped and notified by whoever puts work in t's inbox or changes one of t's counters from outside. */
export const TASK_DOORBELL = 0
/** 1 while t is (about to be) in Atomics.wait on its doorbell; ≥ 2 for an async waiter; REMOTE for a task of another process. */
export const TASK_SLEEPING = 1
/** TaskState. */
export const TASK_STATE = 2
/** The blocking call t last went to sleep in (WaitCall | wait kind << 16), stored before TASK_SLEEPING. */
export const TASK_WAIT_CALL = 3
/** The counter t's sleeping thread waits for: its word index in t's segment (0 = anything); stored before TASK_SLEEPING. */
export const TASK_WAIT_WORD = 5
/** The value that counter must reach. */
export const TASK_WAIT_VAL = 6
/** For a remote task that ended: its process's barrier generation then (a barrier it passed is not one it left). */
export const TASK_EXIT_GEN = 7
/** Words of a task's line. */
export const TASK_WORDS = 16
// </layout task>

// <layout watch> written by scripts/gen-layouts.mjs from its table: do not edit by hand
// a task's watch line: 16 words per task t at TASK_BASE + TASK_WORDS·(N + t), written by t alone, read by reports:
//   0       WATCH_CALL
//   1       WATCH_WORD
//   2       WATCH_VAL
//   3…15    (reserved)
/** The blocking call t is in (WaitCall + 1 | wait kind << 16), 0 when none. */
export const WATCH_CALL = 0
/** What that wait waits for, as TASK_WAIT_WORD … */
export const WATCH_WORD = 1
/** … and TASK_WAIT_VAL. */
export const WATCH_VAL = 2
/** Words of a task's watch line. */
export const WATCH_WORDS = 16
// </layout watch>

/**
 * SLEEPING of a task in another process: whoever rings its doorbell (a packet for it, a message
 * of it landed) rings the agent's instead, which carries the news over the network.
 */
export const REMOTE = 0x40000000

/** Life of a task as the control block records it. */
export const TaskState = { NEW: 0, RUNNING: 1, TERMINATED: 2, EXITED: 3, FAILED: 4 } as const

/** Byte layout of a control block for `numTasks` tasks. */
export interface ControlLayout {
  numTasks: number
  /** Byte offset of the two float64 all-gather tables (2 × numTasks entries). */
  gatherF64: number
  /** Byte offset of the two int64 all-gather tables (2 × numTasks entries). */
  gatherI64: number
  byteLength: number
}

export function controlLayout(numTasks: number): ControlLayout {
  const words = TASK_BASE + (TASK_WORDS + WATCH_WORDS) * numTasks
  const gatherF64 = words * 4
  const gatherI64 = gatherF64 + 16 * numTasks
  return { numTasks, gatherF64, gatherI64, byteLength: gatherI64 + 16 * numTasks }
}

/** Word index of field `f` of task `t`. */
export function taskWord(t: number, f: number): number {
  return TASK_BASE + TASK_WORDS * t + f
}

/** Word index of field `f` of task `t`'s watch line, in a control block for `numTasks` tasks. */
export function watchWord(numTasks: number, t: number, f: number): number {
  return TASK_BASE + TASK_WORDS * numTasks + WATCH_WORDS * t + f
}

/**
 * Creates a zeroed control block for `numTasks` tasks, page-aligned (`pageAlignedShared`) so that
 * each task's 16 words are the one cache line the layout above says.
 */
export function createControl(numTasks: number, first = 0, count = numTasks): SharedArrayBuffer {
  const sab = pageAlignedShared(controlLayout(numTasks).byteLength)
  const ctl = new Int32Array(sab)
  ctl[CTL_ABORT_TASK] = -1
  for (let t = 0; t < numTasks; t++) if (t < first || t >= first + count) ctl[taskWord(t, TASK_SLEEPING)] = REMOTE
  return sab
}

/**
 * What ringing a remote task's doorbell does in this thread: by default the agent's doorbell; a
 * task of a job of several processes sends the news itself (its network engine's `kick`).
 */
let remoteBell: (() => void) | null = null

/** Sets what ringing a remote task's doorbell does in this thread (null: ring the agent). */
export function setRemoteBell(f: (() => void) | null): void {
  remoteBell = f
}

function ringRemote(ctl: Int32Array): void {
  if (remoteBell !== null) remoteBell()
  else ringAgent(ctl)
}

/** Rings the agent's doorbell (see AGENT_BELL): it has network work to do. */
export function ringAgent(ctl: Int32Array): void {
  if (Atomics.load(ctl, CTL_AGENT_SLEEPING) !== 0) {
    Atomics.add(ctl, CTL_AGENT_BELL, 1)
    Atomics.notify(ctl, CTL_AGENT_BELL)
  }
}

/**
 * Whether the agent sleeps with nothing to do: it went to sleep finding no work for its doorbell's
 * value, and nobody rang it since. What it does then without a ring (its timers) rings no task
 * but for an abort, so a task that sleeps where the agent's ring cannot reach it (in the kernel, on
 * the connections) misses nothing it waits for.
 */
export function agentQuiet(ctl: Int32Array): boolean {
  return Atomics.load(ctl, CTL_AGENT_QUIET) === 1 && Atomics.load(ctl, CTL_AGENT_QUIET_BELL) === Atomics.load(ctl, CTL_AGENT_BELL)
}

/**
 * Rings task `t`'s doorbell: if `t` sleeps (or is about to), bump the doorbell and wake it. Called
 * after the change the task waits for (counter, inbox, barrier) has been made visible.
 *
 * Why skipping the bump when SLEEPING is 0 is safe: the waiter does `seen = load(DOORBELL);
 * store(SLEEPING, 1); <re-check its condition>; wait(DOORBELL, seen)`, all sequentially
 * consistent. If our load of SLEEPING saw 0, the waiter's store comes later in that order, so its
 * re-check comes after our change and sees it: it does not sleep. If we saw 1, we bump and notify:
 * either the waiter has not reached `wait` (DOORBELL ≠ seen, so wait returns at once) or it is
 * woken. A spinning waiter therefore costs the notifier one load, no read-modify-write.
 */
export function ringDoorbell(ctl: Int32Array, t: number): void {
  const base = TASK_BASE + TASK_WORDS * t
  const sl = Atomics.load(ctl, base + TASK_SLEEPING)
  if (sl !== 0) {
    if (sl === REMOTE) {
      ringRemote(ctl)
      return
    }
    Atomics.add(ctl, base + TASK_DOORBELL, 1)
    Atomics.notify(ctl, base + TASK_DOORBELL)
  }
}

/**
 * Rings task `t`'s doorbell after bumping its counter at word `word` to `value`: like
 * ringDoorbell, but a thread sleeping in a counter wait is woken only when this is its counter and
 * it reached the awaited value, so a stream of operations does not wake the target for each one.
 * (Its WAIT_WORD/WAIT_VAL are stored before its SLEEPING, so a notifier that sees it sleeping sees
 * what it waits for; any pending async waiter, SLEEPING ≥ 2, is always woken.)
 */
export function ringCounter(ctl: Int32Array, t: number, word: number, value: number): void {
  const base = TASK_BASE + TASK_WORDS * t
  const sl = Atomics.load(ctl, base + TASK_SLEEPING)
  if (sl === 0) return
  if (sl === REMOTE) {
    ringRemote(ctl)
    return
  }
  if (sl === 1 && !waitEnds(ctl, base, word, value)) return
  Atomics.add(ctl, base + TASK_DOORBELL, 1)
  Atomics.notify(ctl, base + TASK_DOORBELL)
}

/** Whether a blocking wait of the task at `base` ends when counter `word` reaches `value` (any wait but a counter wait on another word or for more). */
function waitEnds(ctl: Int32Array, base: number, word: number, value: number): boolean {
  const w = Atomics.load(ctl, base + TASK_WAIT_WORD)
  return w === 0 || (w === word && value >= Atomics.load(ctl, base + TASK_WAIT_VAL))
}

/** Whether ringCounter(ctl, t, word, value) would wake task `t` of this process now. */
export function counterWakes(ctl: Int32Array, t: number, word: number, value: number): boolean {
  const base = TASK_BASE + TASK_WORDS * t
  const sl = Atomics.load(ctl, base + TASK_SLEEPING)
  if (sl === 0 || sl === REMOTE) return false
  return sl !== 1 || waitEnds(ctl, base, word, value)
}

/** Marks the job aborted because of task `t` and wakes every sleeper. Idempotent. */
export function abortJob(ctl: Int32Array, numTasks: number, t: number): void {
  if (Atomics.compareExchange(ctl, CTL_ABORT, 0, 1) === 0) Atomics.store(ctl, CTL_ABORT_TASK, t)
  for (let i = 0; i < numTasks; i++) {
    Atomics.add(ctl, taskWord(i, TASK_DOORBELL), 1)
    Atomics.notify(ctl, taskWord(i, TASK_DOORBELL))
  }
  Atomics.add(ctl, CTL_BAR_GEN, 0)
  Atomics.notify(ctl, CTL_BAR_GEN)
  Atomics.add(ctl, CTL_AGENT_BELL, 1)
  Atomics.notify(ctl, CTL_AGENT_BELL)
}

/** What a blocking wait waits for (Context.idle). */
export const WAIT_COUNTER = 0
export const WAIT_BARRIER = 1
export const WAIT_RING = 2
export const WAIT_FENCE = 3
/** A wait for a caller's condition (Context.waitUntil): any packet or counter wakes it. */
export const WAIT_COND = 4

/**
 * The blocking calls a task can sleep in, as recorded in its WAIT_CALL word: what the agent names
 * when a job times out. Layered libraries pass theirs to `Lapi.waitUntil`.
 */
export const WaitCall = {
  /** Idle in the event loop (interrupt mode, or a promise wait that named no call). */
  EVENT_LOOP: 0,
  WAITCNTR: 1,
  FENCE: 2,
  GFENCE: 3,
  ADDRESS_INIT: 4,
  ADDRESS_INIT64: 5,
  /** A send waiting for room in the target's inbox. */
  SEND: 6,
  /** `Lapi.waitUntil` of a program or a library that named no call. */
  WAIT_UNTIL: 7,
  AM_WAITSEMA: 8,
  AMX_SPMD_BARRIER: 9,
  AMX_SPMD_ALLGATHER: 10,
  /** An AM-2 request waiting for a free request slot toward its peer. */
  AM_REQUEST_CREDIT: 11,
  /** An AM-2 request waiting until the data of its earlier bulk sends was taken. */
  AM_REQUEST_BUFFER: 12,
  /** An atomic (fetch-and-add, swap, …) waiting for the answer of a task in another process. */
  RMW: 13,
  /** A poll (LAPI_Probe, LAPI_Msgpoll, AM_Poll, a progress call), or one that found nothing napping on a crowded host (Idler.nap). */
  POLL: 14,
  /** A PGAS barrier or collective (of the job or of a team). */
  PGAS_COLLECTIVE: 15,
  /** A PGAS remote procedure call waiting for its answer. */
  PGAS_RPC: 16,
  /** Another PGAS operation waiting for its completion (a message sent, a global allocation). */
  PGAS_OP: 17,
} as const
