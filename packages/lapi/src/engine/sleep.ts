/**
 * A task's sleep, as the network engine sees it (engine/; docs/transports.md, "Who polls, who
 * sleeps"): before a task sleeps, what it held back goes and the connections go back to the agent
 * (`beforeSleep`); or, where the task is its process's only one, it may sleep in the kernel on
 * the connections themselves (`sleepBegin`, `sleepStill`, then FramePath.sleep and `sleepEnd`).
 */
import { CTL_AGENT_QUIET, agentQuiet } from '../layout/control.js'
import { OWNER_AGENT, OWNER_TASKS, ENG_BLOCKED, ENG_CTRL, ENG_FDSLEEP, ENG_OWNER, ENG_PARKED } from '../layout/engine.js'
import { acks, pendingOut, release, ringsPending, send, sendOut } from './egress.js'
import { HANDOVER_WAIT_MS, askForConnections, clearTxpend, giveBack, tryLock } from './lock.js'
import type { EngineState } from './state.js'

/** A task that may have read the connections is about to sleep: the agent reads them meanwhile. */
export function beforeSleep(s: EngineState): void {
  // what this thread left to go with later sends goes now
  if (pendingOut(s)) send(s, true)
  giveBack(s)
}

/**
 * A waiting task is about to sleep (docs/transports.md, "Who polls, who sleeps"): whether it may
 * sleep in the kernel on the connections (`sleep`, then `sleepEnd`) rather than on its doorbell.
 * It may where it is its process's only task (no other task of it rings its doorbell), reads
 * the connections (else it asks for them and waits up to HANDOVER_WAIT_MS for them), the agent
 * sleeps with nothing to do (`agentQuiet`: its rings could not reach this sleep; else it waits up
 * to HANDOVER_WAIT_MS for that), and nothing waits to be sent or handed to the agent: then a
 * message that comes wakes this task, and nothing else has to.
 * The caller re-checks its condition after a true answer.
 */
export function sleepBegin(s: EngineState): boolean {
  if (!s.fdSleeps || !s.path.canSleep()) return false
  const w = s.w
  if (Atomics.load(w, ENG_OWNER) !== OWNER_TASKS) {
    // (asks for them and gives the agent the CPU for a moment to hand them over, as a waiting
    // poll does: on a crowded host the agent would otherwise take them back before the next sleep)
    askForConnections(s, OWNER_AGENT, true)
    if (Atomics.load(w, ENG_OWNER) !== OWNER_TASKS) return false
  }
  if (!agentQuiet(s.ctl)) {
    // (the agent is at work, a hand-over or a round: it says when it is done)
    Atomics.wait(s.ctl, CTL_AGENT_QUIET, 0, HANDOVER_WAIT_MS)
    if (!agentQuiet(s.ctl)) return false
  }
  if (!tryLock(s)) return false
  clearTxpend(s)
  sendOut(s)
  acks(s, true)
  const ok = s.path.flush() === 0 && Atomics.load(w, ENG_CTRL) === 0 && w[ENG_BLOCKED] === 0 && w[ENG_PARKED] === 0 && !ringsPending(s)
  // (set under the lock: the agent takes the connections back only under it, seeing this)
  if (ok) Atomics.store(w, ENG_FDSLEEP, 1)
  release(s)
  return ok
}

/**
 * After `sleepBegin` and the caller's re-check of its condition, which may have taken frames in
 * (a wait looks at its inbox, and so at the network): whether the sleep may still go ahead —
 * nothing was handed to the agent meanwhile, whose rings could not reach it.
 */
export function sleepStill(s: EngineState): boolean {
  const w = s.w
  return Atomics.load(w, ENG_CTRL) === 0 && Atomics.load(w, ENG_BLOCKED) === 0 && Atomics.load(w, ENG_PARKED) === 0 && agentQuiet(s.ctl)
}

/** The sleep that `sleepBegin` allowed is over. */
export function sleepEnd(s: EngineState): void {
  Atomics.store(s.w, ENG_FDSLEEP, 0)
}
