/**
 * The job barrier and LAPI_Gfence (a fence, then a barrier of all tasks). The tasks of a process
 * meet on the barrier words of the control block; the last to arrive releases them, or in a job of
 * several processes tells the agent, which completes the barrier with the other processes' agents
 * and then releases them. A barrier that a task left before completing fails instead of hanging.
 */
import {
  TASK_EXIT_GEN,
  TASK_STATE,
  TaskState,
  CTL_BAR_COUNT,
  CTL_BAR_GEN,
  CTL_BAR_LOCAL,
  WAIT_BARRIER,
  WAIT_FENCE,
  WaitCall,
  ringAgent,
  ringDoorbell,
  taskWord,
} from '../layout/control.js'
import { LapiStatus as S } from '../base/status.js'
import type { Rings } from '../core/rings.js'
import type { ContextState } from '../core/state.js'
import type { Progress } from '../core/types.js'
import type { Idler } from '../sync/idle.js'
import type { Waits } from '../sync/waits.js'

export class Barrier {
  private readonly s: ContextState
  private readonly rings: Rings
  private readonly idler: Idler
  private readonly waits: Waits
  private readonly dispatcher: Progress

  constructor(s: ContextState, rings: Rings, idler: Idler, waits: Waits, dispatcher: Progress) {
    this.s = s
    this.rings = rings
    this.idler = idler
    this.waits = waits
    this.dispatcher = dispatcher
  }

  /** LAPI_Gfence: a fence, then a barrier of all tasks. */
  gfence(): number {
    const rc = this.waits.fence(WaitCall.GFENCE)
    if (rc !== 0) return rc
    this.barrier(WaitCall.GFENCE)
    return S.SUCCESS
  }

  /** The same as gfence, but waiting asynchronously. */
  async gfenceAsync(): Promise<number> {
    if (this.s.inHeaderHandler) return S.ERR_POLLING_NET
    const d = this.dispatcher
    // the fence, without blocking the event loop
    for (;;) {
      d.progress()
      if (this.rings.outstanding() <= 0) break
      await this.idler.idleAsync(WAIT_FENCE, WaitCall.GFENCE, null, 0, 0)
    }
    const gen = this.arrive()
    while (Atomics.load(this.s.ctl, CTL_BAR_GEN) === gen) {
      d.progress()
      this.checkBarrierPeers(gen)
      await this.idler.idleAsync(WAIT_BARRIER, WaitCall.GFENCE, null, 0, gen)
    }
    return S.SUCCESS
  }

  /** A barrier of all tasks, making progress while it waits, for blocking call `call` (a WaitCall). */
  barrier(call: number): void {
    this.rings.flushTails()
    const gen = this.arrive()
    let spinStart = 0
    const d = this.dispatcher
    while (Atomics.load(this.s.ctl, CTL_BAR_GEN) === gen) {
      d.progress()
      this.checkBarrierPeers(gen)
      spinStart = this.idler.idle(spinStart, WAIT_BARRIER, call, null, 0, gen)
    }
    this.idler.waitDone(spinStart)
  }

  /** Arrives at the job barrier; returns the generation to wait out. The last arriver releases all. */
  private arrive(): number {
    const s = this.s
    const ctl = s.ctl
    const gen = Atomics.load(ctl, CTL_BAR_GEN)
    const spec = s.spec
    if (Atomics.add(ctl, CTL_BAR_COUNT, 1) === spec.localTasks - 1) {
      // (nobody of this process can arrive again before the release)
      Atomics.store(ctl, CTL_BAR_COUNT, 0)
      if (spec.processes > 1) {
        // the agent completes it with the other processes' agents, then releases us
        Atomics.store(ctl, CTL_BAR_LOCAL, (gen + 1) | 0)
        ringAgent(ctl)
      } else {
        Atomics.add(ctl, CTL_BAR_GEN, 1)
        for (let t = 0; t < s.numTasks; t++) if (t !== s.taskId) ringDoorbell(ctl, t)
      }
    }
    return gen
  }

  /** A barrier can never complete once a peer has left the job: fail instead of hanging. */
  private checkBarrierPeers(gen: number): void {
    const s = this.s
    this.idler.checkAbort()
    for (let t = 0; t < s.numTasks; t++) {
      const st = Atomics.load(s.ctl, taskWord(t, TASK_STATE))
      // (a peer that left after the barrier completed is fine: it left only once it saw the new
      // generation, so having seen it gone, this read sees that generation too)
      if ((st === TaskState.EXITED || st === TaskState.FAILED) && Atomics.load(s.ctl, CTL_BAR_GEN) === gen) {
        // a task of another process that ended after passing this barrier: its release is on its way here
        if (st === TaskState.EXITED && s.local[t] === 0 && ((Atomics.load(s.ctl, taskWord(t, TASK_EXIT_GEN)) - gen) | 0) > 0) continue
        throw new Error(`task ${t} left the job while task ${s.taskId} waits for it in a collective (Gfence/Address_init)`)
      }
    }
  }
}
