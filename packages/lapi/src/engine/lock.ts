/**
 * The process's network lock (engine/): the protocol between the threads that run the engine —
 * its tasks and its agent — over the words of the network block (layout/engine.ts).
 *
 * LOCK is taken with a compare-and-swap and never waited for; a thread that finds it taken sets
 * TXPEND (when it has packets to send), tries once more, and leaves — the holder looks at TXPEND
 * again after it lets go, and takes the lock back if it is set (`unlock`; egress.ts `release`
 * sends what waits). So no packet waits for a thread that is not coming back. OWNER says who
 * reads the connections: the agent's event loop (OWNER_AGENT) or the threads that poll
 * (OWNER_TASKS); a task that polls while the agent reads asks for them (WANT) once, and gives them
 * back (GIVEBACK) when it goes to sleep. The agent, when it must have the lock, waits for it
 * (LOCK_WAITER): a holder that lets go wakes it, and polls leave the lock to it meanwhile.
 */
import { ringAgent } from '../layout/control.js'
import {
  OWNER_AGENT,
  OWNER_TASKS,
  ENG_BLOCKED,
  ENG_GIVEBACK,
  ENG_LAST,
  ENG_LOCK,
  ENG_LOCK_WAITER,
  ENG_OWNER,
  ENG_POLLS,
  ENG_TXPEND,
  ENG_WANT,
} from '../layout/engine.js'
import type { EngineState } from './state.js'

/** How long a waiting task gives the agent its CPU to hand the connections over, ms. */
export const HANDOVER_WAIT_MS = 0.2

/** Takes the lock if it is free; a thread that was not its last holder re-reads the rings' positions. */
export function tryLock(s: EngineState): boolean {
  if (Atomics.compareExchange(s.w, ENG_LOCK, 0, s.me) !== 0) return false
  if (s.w[ENG_LAST] !== s.me) {
    // another thread moved the rings' positions: take them from memory
    for (const t of s.tasks) {
      t.out.resync()
      t.netIn.resync()
    }
    s.w[ENG_LAST] = s.me
  }
  return true
}

/** Lets the lock go; takes it back while packets wait that their sender could not send (TXPEND). */
export function unlock(s: EngineState): boolean {
  Atomics.store(s.w, ENG_LOCK, 0)
  // (the agent may be giving this thread its CPU until it lets go: wake it now, not after its bound)
  if (Atomics.load(s.w, ENG_LOCK_WAITER) !== 0) Atomics.notify(s.w, ENG_LOCK)
  if (Atomics.load(s.w, ENG_TXPEND) === 0) return false
  return tryLock(s)
}

/**
 * Clears TXPEND under the lock (the holder sends everything that waits): a store only when it is
 * set — one set after the look is seen when the lock is let go (`unlock`).
 */
export function clearTxpend(s: EngineState): void {
  if (s.w[ENG_TXPEND] !== 0) Atomics.store(s.w, ENG_TXPEND, 0)
}

/**
 * Counts a poll for the agent's idle test, which only asks whether POLLS changed since its last
 * look: a plain increment, as two tasks that bump it at once still change it.
 */
export function countPoll(s: EngineState): void {
  s.w[ENG_POLLS] = (s.w[ENG_POLLS]! + 1) | 0
}

/**
 * Asks the agent for the connections, once (it clears WANT when it hands them over); with `wait`,
 * gives it the CPU for up to HANDOVER_WAIT_MS to do so, while OWNER still says `owner`.
 */
export function askForConnections(s: EngineState, owner: number, wait: boolean): void {
  if (Atomics.compareExchange(s.w, ENG_WANT, 0, 1) === 0) ringAgent(s.ctl)
  if (wait) Atomics.wait(s.w, ENG_OWNER, owner, HANDOVER_WAIT_MS)
}

/** A task that may have read the connections stops polling: the agent reads them again. */
export function giveBack(s: EngineState): void {
  if (Atomics.load(s.w, ENG_OWNER) !== OWNER_TASKS) return
  Atomics.store(s.w, ENG_GIVEBACK, 1)
  ringAgent(s.ctl)
}

/** A task took packets from its network ring: frames that waited for the room may go on (the agent's, when it reads). */
export function roomFreed(s: EngineState): void {
  if (Atomics.load(s.w, ENG_BLOCKED) !== 0 && Atomics.load(s.w, ENG_OWNER) === OWNER_AGENT) ringAgent(s.ctl)
}
