/**
 * What the network engine does to this process's tasks beside their rings (engine/): it rings
 * their doorbells and bumps their counters — at once, or, in the agent's rounds, owed until the
 * round has let the lock go — and counts the packets it drops for them.
 */
import { counterWakes, ringCounter, ringDoorbell } from '../layout/control.js'
import { NS_DROPPED } from '../layout/job-spec.js'
import type { EngineState, LocalTask } from './state.js'

/** What a doorbell is rung for: anything (BELL_ANY), or acknowledgements, which no counter wait is waiting for (BELL_ACK). */
export const BELL_ANY = 1
export const BELL_ACK = 2

/** Rings task `t`'s doorbell for `kind` (BELL_ANY wins when both are owed). */
function ring(ctl: Int32Array, t: number, kind: number): void {
  if ((kind & BELL_ANY) !== 0) ringDoorbell(ctl, t)
  // (word -1 is no counter: a task asleep in a counter wait stays asleep, any other is woken)
  else ringCounter(ctl, t, -1, 0)
}

/**
 * Rings task `t`'s doorbell: at once, or, in the agent's rounds (`owing`), once the round has let
 * the lock go. On a CPU the woken task shares with the agent it would otherwise run at once, find
 * the lock taken or its packet not yet there, and sleep again: two wakes instead of one.
 */
export function bell(s: EngineState, t: LocalTask, kind = BELL_ANY): void {
  // (a task's own thread is awake: the round it runs goes on to what it handed itself)
  if (t.id + 1 === s.me) return
  if (s.owing) s.owedBell[t.at]! |= kind
  else ring(s.ctl, t.id, kind)
}

/** Rings what the round owes (see `bell`). */
export function payBells(s: EngineState): void {
  s.owing = false
  for (const t of s.tasks) {
    const w = s.owedCounter[t.at]!
    if (w >= 0) {
      s.owedCounter[t.at] = -1
      ringCounter(s.ctl, t.id, w, Atomics.load(t.i32, w))
    }
    const b = s.owedBell[t.at]!
    if (b !== 0) {
      s.owedBell[t.at] = 0
      ring(s.ctl, t.id, b)
    }
  }
}

/**
 * Bumps counter `c` of task `t`. In the agent's rounds (`owing`) returns whether its owed ring
 * will wake the task (asleep in a wait the bump ends); elsewhere false (it rings at once).
 */
export function bumpCounter(s: EngineState, t: LocalTask, c: number): boolean {
  if (c === 0) return false
  if ((c & 3) !== 0 || c + 4 > s.segSize) {
    drop(s, t)
    return false
  }
  const w = c >>> 2
  const v = Atomics.add(t.i32, w, 1) + 1
  if (!s.owing) {
    ringCounter(s.ctl, t.id, w, v)
    return false
  }
  // (one counter per task is remembered; a second one's owed ring is paid now)
  const prev = s.owedCounter[t.at]!
  if (prev >= 0 && prev !== w) ringCounter(s.ctl, t.id, prev, Atomics.load(t.i32, prev))
  s.owedCounter[t.at] = w
  return counterWakes(s.ctl, t.id, w, v)
}

/** Drops a malformed packet for task `t`, counted for it (its dispatcher statistics show it) and here. */
export function drop(s: EngineState, t: LocalTask): boolean {
  s.path.dropped()
  Atomics.add(t.state, NS_DROPPED, 1)
  return true
}
