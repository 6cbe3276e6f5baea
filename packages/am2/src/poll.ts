/**
 * AM_Poll and AM_WaitSema (a layer of the runtime: runtime.ts): driving LAPI's dispatcher on
 * behalf of a bundle (so that its replies may run straight from it), then running the handlers of
 * the bundle's ready messages in order, a batch per poll; and what dispatching a message involves
 * besides its handler: returning a refused one to its sender, serving a GetXfer, the automatic
 * reply of a request whose handler did not reply, and, on empty polls now and then, looking for
 * peers that left the job.
 */
import { WaitCall } from '@amlapi/lapi'
import * as copy from './copy.js'
import type { Bundle, Endpoint, Token, error_handler } from './objects.js'
import { Sender } from './send.js'
import * as types from './types.js'
import { CAT_LONG, CAT_MASK, CAT_MEDIUM, CAT_SHORT, K_AUTO, K_GET, K_REQUEST, K_RETURNED, NO_SLOT, opcodeOf } from './wire.js'

// What this file reads of types.ts and copy.ts, as module constants: TurboFan folds a module's own
// constants into the code that reads them, but loads an imported binding from its cell, with a
// hole check, at every use (the per-message paths read these).
const { emptyBuf } = copy
const { MAX_NEST, T_DONE, T_REPLY, T_REQUEST, T_RETURNED } = types

/** Handlers run per AM_Poll call at most (AMUDP: max(10, depth)); the rest wait for the next. */
const POLL_BATCH = 64

/** The polls of this task. */
export class Poller extends Sender {
  private emptyPolls = 0

  /**
   * Runs the LAPI dispatcher once on behalf of bundle `b` (its replies may run from it);
   * `incidental` for a request's own poll.
   */
  private progressFor(b: Bundle, incidental: boolean): void {
    const outer = this.direct
    this.direct = b
    try {
      this.lapi.progress(incidental)
    } finally {
      this.direct = outer
    }
    this.rethrowDirect()
  }

  /** Waits (lapi.waitUntil) on behalf of bundle `b`, in blocking call `call` (a WaitCall). */
  protected waitFor(b: Bundle, cond: () => boolean, call: number): void {
    const outer = this.direct
    this.direct = b
    try {
      this.lapi.waitUntil(cond, call)
    } finally {
      this.direct = outer
    }
    this.rethrowDirect()
  }

  private rethrowDirect(): void {
    if (this.directError !== null) {
      const e = this.directError
      this.directError = null
      throw e
    }
  }

  /** AM_Poll: the network once, then up to POLL_BATCH queued handlers. Returns the messages handled. */
  poll(b: Bundle): number {
    const lapi = this.lapi
    if (lapi.inHeaderHandler) return 0
    // nothing in the inbox, nothing queued: a poll loop's empty round stays short, so a message
    // that arrives is seen sooner (the look leaves what it found for the dispatcher's round)
    if (b.queue.size === 0 && this.returns.length === 0 && !lapi.pending) {
      if ((++this.emptyPolls & 255) === 0) this.lookAround(b)
      return 0
    }
    this.directRuns = 0
    this.progressFor(b, false)
    const n = this.runQueued(b) + this.directRuns
    if (n === 0 && (++this.emptyPolls & 255) === 0) this.lookAround(b)
    return n
  }

  /**
   * Now and then, in a poll that found nothing: requests outstanding to peers that are gone come
   * back to handler 0 (at the next polls), and once none is left to hand over, a job being torn
   * down (a task failed, a process was lost) ends the poll loop as it ends a blocking call.
   */
  private lookAround(b: Bundle): void {
    this.checkPeers(b)
    if (b.queue.size === 0 && this.returns.length === 0) this.lapi.checkAborted()
  }

  /** A poll made by a Request (the network, and handlers unless nested too deep). */
  protected pollBundle(b: Bundle): void {
    this.progressFor(b, true)
    if (this.nest < MAX_NEST) this.runQueued(b)
  }

  private runQueued(b: Bundle): number {
    let n = 0
    if (this.returns.length === 0 && b.queue.size === 0) return 0
    const lapi = this.lapi
    // (the batch's replies to other processes go in one write when it ends, not one each)
    lapi.holdSends()
    try {
      while (this.returns.length > 0) {
        this.dispatch(this.returns.shift()!)
        n++
      }
      while (n < POLL_BATCH) {
        const i = b.queue.take()
        if (i < 0) break
        this.dispatch(this.tokens[i]!)
        n++
      }
    } finally {
      lapi.releaseSends()
    }
    return n
  }

  /** AM_WaitSema: sleeps (after the spin budget) until a message arrived, then polls. */
  waitSema(b: Bundle): number {
    for (;;) {
      const n = this.poll(b)
      if (n > 0) return n
      this.checkPeers(b)
      this.directRuns = 0
      this.waitFor(b, b.readyCond, WaitCall.AM_WAITSEMA)
      if (this.directRuns > 0) return this.directRuns + this.poll(b)
    }
  }

  /** AM_WaitSema without blocking the event loop (no spinning: an asynchronous doorbell wait). */
  async waitSemaAsync(b: Bundle): Promise<number> {
    for (;;) {
      const n = this.poll(b)
      if (n > 0) return n
      this.checkPeers(b)
      await this.lapi.waitUntilAsync(b.readyCond, WaitCall.AM_WAITSEMA)
    }
  }

  private dispatch(t: Token): void {
    const ep = t.ep
    if (t.fault !== 0) {
      this.sendReturn(t)
      this.release(t)
      return
    }
    if (ep === null || ep.freed !== 0) {
      this.release(t)
      return
    }
    const outer = this.running
    this.running = t
    this.nest++
    try {
      const kind = t.kind
      if ((kind & K_RETURNED) !== 0) {
        t.state = T_RETURNED
        ;(ep.handlers[0] as error_handler)(t.status, opcodeOf(kind), t)
      } else if ((kind & K_GET) !== 0) {
        t.state = T_DONE
        this.sendGetData(t)
      } else if ((kind & K_REQUEST) !== 0) {
        t.state = T_REQUEST
        t.replied = 0
        this.invoke(t, ep)
        this.autoReply(t, ep)
      } else {
        t.state = T_REPLY
        this.invoke(t, ep)
      }
    } catch (e) {
      this.handlerThrew(t, e)
      // (the requester gets its credit back all the same)
      if (t.state === T_REQUEST) this.autoReply(t, ep)
      throw e
    } finally {
      this.nest--
      this.running = outer
      this.release(t)
    }
  }

  /**
   * The automatic reply of a request its handler did not reply to: the credit of the request's
   * instance. A request between endpoints of this task holds none (NO_SLOT) and needs no reply.
   */
  private autoReply(t: Token, ep: Endpoint): void {
    if (t.replied === 0 && t.slot !== NO_SLOT) {
      t.replied = 1
      const p = t.peer
      this.send(ep, t.srcTask, t.srcId, ep.trTagLo[p]!, ep.trTagHi[p]!, K_AUTO, 0, 0, this.argScratch, null, 0, 0, 0, 0, t.slot)
    }
  }

  /** The data of an AM_GetXferM, back to the requester as a Long reply (its handler runs there). */
  private sendGetData(t: Token): void {
    const ep = t.ep!
    const p = t.peer
    const n = t.nbytes
    const src: Uint8Array | number = ep.segAddr >= 0 ? ep.segAddr + t.off2 : ep.segView(t.off2, n)
    this.send(ep, t.srcTask, t.srcId, ep.trTagLo[p]!, ep.trTagHi[p]!, CAT_LONG, t.handler, t.nargs, t.args, n === 0 ? null : src, n, 0, t.off, 0, t.slot)
  }

  private invoke(t: Token, ep: Endpoint): void {
    const cat = t.kind & CAT_MASK
    const n = t.nbytes
    this.invokeWith(t, ep, cat === CAT_SHORT || n === 0 ? emptyBuf : cat === CAT_MEDIUM ? (t.heap ?? this.arenaView(t.bufAddr, n)) : ep.segView(t.off, n))
  }
}
