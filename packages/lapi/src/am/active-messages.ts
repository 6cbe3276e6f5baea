/**
 * The active-message layer of one task (docs/lapi.md, "Active messages"; IBM's LAPI_Amsend and
 * LAPI_Amsendv pages): builds its parts once and wires them — the sending side (am/send.ts), the
 * way out for packets (am/outgoing.ts), the dispatcher (am/dispatcher.ts) with the receiving side
 * (am/receiver.ts, am/reassembly.ts) and the end of each message there (am/completions.ts), the
 * rendezvous (am/rendezvous.ts) and the test transport (am/chaos.ts) — and holds them for the
 * context.
 *
 * Counters when things go wrong: a header index not registered at the target, a header handler
 * that throws, or a landing buffer that cannot hold the message — the message is discarded, the
 * error goes to the target's err_hndlr (AM_ERR), the target counter does not move, the origin's
 * completion counter does (so no origin waits forever).
 */
import type { RemoteOps } from '../net/remote-ops.js'
import type { Checks } from '../core/checks.js'
import type { HandlerTable } from '../core/handler-table.js'
import type { Rings } from '../core/rings.js'
import type { ContextState } from '../core/state.js'
import type { Counters } from '../sync/counters.js'
import type { Idler } from '../sync/idle.js'
import type { UserCode } from '../sync/user-code.js'
import { ChaosTransport } from './chaos.js'
import { Completions } from './completions.js'
import { Dispatcher } from './dispatcher.js'
import { Outgoing } from './outgoing.js'
import { Reassembly } from './reassembly.js'
import { Receiver } from './receiver.js'
import { Rendezvous } from './rendezvous.js'
import { Sender } from './send.js'
import { AmState } from './state.js'

export class ActiveMessages {
  /** The statistics of sending and of dropped packets. */
  readonly state: AmState
  /** The target side's one-packet receipt (its count of messages taken in place). */
  readonly receiver: Receiver
  /** The end of each message at its target (its count of messages received). */
  readonly done: Completions
  /** LAPI_Amsend, LAPI_Amsendv and the negotiated-payload sends. */
  readonly send: Sender
  /** The dispatcher: what every wait of the task runs. */
  readonly dispatcher: Dispatcher
  private readonly out: Outgoing

  constructor(s: ContextState, rings: Rings, checks: Checks, table: HandlerTable, counters: Counters, user: UserCode, idler: Idler, remote: RemoteOps) {
    const a = new AmState()
    const chaos = new ChaosTransport(s, rings.outbox)
    const out = new Outgoing(s, a, rings, chaos, idler, counters, user)
    const done = new Completions(s, rings.inbox, counters, user)
    const rx = new Receiver(s, a, rings.polled[0]!.u8, table, counters, user, done)
    const rndv = new Rendezvous(s, a, out, remote)
    const reassembly = new Reassembly(s, a, rx, done, rndv, table, checks, counters, user)
    this.state = a
    this.receiver = rx
    this.done = done
    this.out = out
    this.send = new Sender(s, a, rings, out, rndv, checks, table, counters, chaos.on)
    this.dispatcher = new Dispatcher(s, a, rings, rx, done, reassembly, rndv, chaos, remote)
    out.attach(this.dispatcher)
  }

  /** Waits (taking packets in) until the way to `tgt` has a free slot; returns its body offset. */
  waitForSlot(tgt: number): number {
    return this.out.waitForSlot(tgt)
  }
}
