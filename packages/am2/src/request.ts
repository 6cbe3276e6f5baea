/**
 * AM-2 requests and replies, from the call to the send (a layer of the runtime: runtime.ts): the
 * argument checks, the rule that only request handlers (and code outside handlers) may send, flow
 * control (a request takes one of its peer's instances, polling first and waiting, polling, when
 * none is free; a reply takes none and never waits), the record of each outstanding request (for
 * returning it should its peer leave), and the poll every request makes after it has sent.
 */
import { WaitCall, type Lapi } from '@amlapi/lapi'
import { AM_MAX_NUM_HANDLERS, AM_MAX_SHORT, AmFault, AmStatus } from './constants.js'
import { Token, type Bundle, type Endpoint, type Peer } from './objects.js'
import { Poller } from './poll.js'
import * as types from './types.js'
import { CAT_LONG, CAT_MEDIUM, CAT_SHORT, K_GET, K_REQUEST, MAX_DEPTH, NO_SLOT } from './wire.js'

// What this file reads of types.ts and copy.ts, as module constants: TurboFan folds a module's own
// constants into the code that reads them, but loads an imported binding from its cell, with a
// hole check, at every use (the per-message paths read these).
const { MAX_LONG, MAX_MEDIUM, MAX_SEG_LENGTH, REC, T_REQUEST, isU32 } = types

const S = AmStatus

/** The requests and replies of this task. */
export class Requests extends Poller {
  /** The arguments of each request in progress (requests nest: a handler run by a request's poll may request). */
  private readonly argFrames: Int32Array[] = []
  private reqDepth = 0
  private credPeer: Peer | null = null
  private credBundle: Bundle | null = null
  private readonly credCond: () => boolean

  constructor(lapi: Lapi) {
    super(lapi)
    this.credCond = () => this.credPeer!.top > 0 || this.credBundle!.queue.size > 0 || this.returns.length > 0
  }

  /**
   * A request (Short, Medium, Long, or with `get` a GetXfer) to translation `index`; `args` holds
   * `nargs` int32 arguments. Polls first, then waits (polling) for a free instance toward the peer
   * unless `async` (then AM_ERR_IN_USE).
   */
  request(
    ep: Endpoint,
    index: number,
    cat: number,
    handler: number,
    nargs: number,
    args: Int32Array,
    src: unknown,
    nbytes: number,
    off: number,
    off2: number,
    async: boolean,
    get = false,
  ): number {
    if (!this.isEndpoint(ep)) return S.ERR_BAD_ARG
    if (typeof index !== 'number' || index >>> 0 !== index || index >= ep.numTrans) return S.ERR_BAD_ARG
    const name = ep.trName[index]!
    if (name === -1) return S.ERR_BAD_ARG
    if (ep.depth === 0) return S.ERR_NOT_INIT
    const rc = this.checkSend(ep, cat, handler, nargs, src, nbytes, off, get)
    if (rc !== 0) return rc
    if (get && (!isU32(off2) || off2 + nbytes > MAX_SEG_LENGTH)) return S.ERR_BAD_ARG
    const r = this.running
    if (r !== null && r.state !== T_REQUEST) return S.ERR_RESOURCE // reply handlers and handler 0 do not send
    if (this.lapi.inHeaderHandler) return S.ERR_RESOURCE
    // the poll below may run handlers that send (and reuse the scratch arguments): keep ours
    const depth = this.reqDepth
    let frame = this.argFrames[depth]
    if (frame === undefined) {
      frame = new Int32Array(AM_MAX_SHORT)
      this.argFrames[depth] = frame
    }
    for (let i = 0; i < nargs; i++) frame[i] = args[i]!
    this.reqDepth = depth + 1
    try {
      return this.requestPolled(ep, index, cat, handler, nargs, frame, src, nbytes, off, off2, async, get)
    } finally {
      this.reqDepth = depth
    }
  }

  private requestPolled(
    ep: Endpoint,
    index: number,
    cat: number,
    handler: number,
    nargs: number,
    args: Int32Array,
    src: unknown,
    nbytes: number,
    off: number,
    off2: number,
    async: boolean,
    get: boolean,
  ): number {
    const p = ep.peers[index]!
    const loop = p.task === this.taskId
    // A request polls (as AMUDP's do), after it has sent: the poll is then off the path of the
    // message. Only when no instance toward the peer is free does it poll first (and wait).
    if (ep.freed === 0 && !loop && p.top === 0) {
      this.pollBundle(ep.bundle)
      if (p.top === 0 && ep.freed === 0) {
        if (async) return S.ERR_IN_USE
        this.waitCredit(ep, p)
      }
    }
    const rc = ep.freed !== 0 ? S.ERR_BAD_ARG : this.sendRequest(ep, index, p, loop, cat, handler, nargs, args, src, nbytes, off, off2, get)
    this.pollBundle(ep.bundle) // (which also runs handler 0 with a request that could not go)
    return rc
  }

  /** The send of a request whose instance wait is over: the header, its record, and the message. */
  private sendRequest(
    ep: Endpoint,
    index: number,
    p: Peer,
    loop: boolean,
    cat: number,
    handler: number,
    nargs: number,
    args: Int32Array,
    src: unknown,
    nbytes: number,
    off: number,
    off2: number,
    get: boolean,
  ): number {
    let kind = cat | K_REQUEST
    if (get) kind |= K_GET
    if (!loop && !this.lapi.taskAliveHint(p.task)) {
      this.returnLocally(ep, index, p, kind, handler, nargs, args, nbytes, off, off2, AmFault.EUNREACHABLE)
      return S.OK
    }
    let slot = NO_SLOT
    if (!loop) {
      const inst = p.free[--p.top]!
      p.busy[inst] = 1
      p.outstanding++
      ep.outstanding++
      slot = index * MAX_DEPTH + inst
      const rec = p.rec
      const b = inst * REC
      // (| 0: what an Int32Array store does anyway, said so that V8 need not convert through a double)
      rec[b] = kind
      rec[b + 1] = handler | 0
      rec[b + 2] = nargs | 0
      rec[b + 3] = nbytes | 0
      rec[b + 4] = off | 0
      rec[b + 5] = off2 | 0
      for (let i = 0; i < nargs; i++) rec[b + 6 + i] = args[i]!
    }
    const rc = this.send(
      ep,
      p.task,
      p.id,
      ep.trTagLo[index]!,
      ep.trTagHi[index]!,
      kind,
      handler,
      nargs,
      args,
      get ? null : src,
      get ? 0 : nbytes,
      get ? nbytes : 0,
      off,
      off2,
      slot,
    )
    if (rc !== S.OK && slot !== NO_SLOT) this.releaseInstance(ep, p, slot % MAX_DEPTH) // not sent: not in flight
    return rc
  }

  /** A reply through a request handler's token. Never polls, never waits for flow control. */
  reply(t: Token, cat: number, handler: number, nargs: number, args: Int32Array, src: unknown, nbytes: number, off: number): number {
    if (!(t instanceof Token) || t.state !== T_REQUEST) return S.ERR_RESOURCE
    const r = this.running
    if (r === null || r.state !== T_REQUEST) return S.ERR_RESOURCE // not from a reply handler or handler 0
    if (t.replied !== 0) return S.ERR_RESOURCE
    const ep = t.ep!
    const rc = this.checkSend(ep, cat, handler, nargs, src, nbytes, off, false)
    if (rc !== 0) return rc
    t.replied = 1
    const peer = t.peer
    return this.send(ep, t.srcTask, t.srcId, ep.trTagLo[peer]!, ep.trTagHi[peer]!, cat, handler, nargs, args, src, nbytes, 0, off, 0, t.slot)
  }

  private checkSend(ep: Endpoint, cat: number, handler: number, nargs: number, src: unknown, nbytes: number, off: number, get: boolean): number {
    if (typeof handler !== 'number' || handler >>> 0 !== handler || handler >= AM_MAX_NUM_HANDLERS) return S.ERR_BAD_ARG
    if (nargs >>> 0 !== nargs || nargs > AM_MAX_SHORT) return S.ERR_BAD_ARG
    if (cat === CAT_SHORT) return S.OK
    if (!isU32(nbytes)) return S.ERR_BAD_ARG
    if (nbytes > (cat === CAT_MEDIUM ? MAX_MEDIUM : MAX_LONG)) return S.ERR_BAD_ARG
    if (cat === CAT_LONG && (!isU32(off) || off + nbytes > MAX_SEG_LENGTH)) return S.ERR_BAD_ARG
    if (get) {
      // the data lands in our own segment: check it here
      if (ep.segLen === 0 || off + nbytes > ep.segLen) return S.ERR_BAD_ARG
      return S.OK
    }
    if (nbytes === 0) return S.OK
    if (src instanceof Uint8Array) return nbytes <= src.length ? S.OK : S.ERR_BAD_ARG
    if (typeof src === 'number') return isU32(src) && src !== 0 && src + nbytes <= this.segmentSize ? S.OK : S.ERR_BAD_ARG
    return S.ERR_BAD_ARG
  }

  /** Waits (polling the bundle) until peer `p` of `ep` has a free instance, or is gone. */
  private waitCredit(ep: Endpoint, p: Peer): void {
    const b = ep.bundle
    while (p.top === 0 && ep.freed === 0) {
      if (!this.lapi.taskAlive(p.task)) {
        this.failPeer(ep, p)
        break
      }
      const pc = this.credPeer
      const pb = this.credBundle
      this.credPeer = p
      this.credBundle = b
      try {
        this.waitFor(b, this.credCond, WaitCall.AM_REQUEST_CREDIT)
      } finally {
        this.credPeer = pc
        this.credBundle = pb
      }
      this.pollBundle(b)
    }
  }
}
