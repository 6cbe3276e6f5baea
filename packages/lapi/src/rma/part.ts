/**
 * What every RMA part (put-get.ts, vector.ts, read-modify-write.ts) is built from: the task's
 * state, its rings, the argument checks, the counters, the runner of user handlers, and the
 * operations on tasks of other processes.
 */
import type { RemoteOps } from '../net/remote-ops.js'
import type { Checks } from '../core/checks.js'
import type { Rings } from '../core/rings.js'
import type { ContextState } from '../core/state.js'
import type { Counters } from '../sync/counters.js'
import type { UserCode } from '../sync/user-code.js'

export abstract class RmaPart {
  protected readonly s: ContextState
  protected readonly rings: Rings
  protected readonly checks: Checks
  protected readonly counters: Counters
  protected readonly user: UserCode
  protected readonly remote: RemoteOps

  constructor(s: ContextState, rings: Rings, checks: Checks, counters: Counters, user: UserCode, remote: RemoteOps) {
    this.s = s
    this.rings = rings
    this.checks = checks
    this.counters = counters
    this.user = user
    this.remote = remote
  }
}
