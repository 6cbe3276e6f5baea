/**
 * Flow control and the requests that cannot be answered (a layer of the runtime: runtime.ts). A
 * request holds one of its peer's instances (a `Peer`'s free stack and records, taken by the
 * request side) until its reply or its return frees it here; a request to a task that has left
 * the job comes back at once to handler 0 (EUNREACHABLE), and the outstanding requests to a peer
 * found gone come back too (ECONGESTION when it left, EUNREACHABLE when it failed or was lost).
 */
import { AmFault } from './constants.js'
import type { Bundle, Endpoint, Peer } from './objects.js'
import { Registry } from './registry.js'
import * as types from './types.js'
import { DEPTH_BITS, K_RETURNED, MAX_DEPTH, NO_SLOT } from './wire.js'

// What this file reads of types.ts and copy.ts, as module constants: TurboFan folds a module's own
// constants into the code that reads them, but loads an imported binding from its cell, with a
// hole check, at every use (the per-message paths read these).
const { REC } = types

/** The instances of this task's endpoints toward their peers. */
export class Flow extends Registry {
  /** A request that cannot go (its peer left the job): handler 0 gets it back with `status`. */
  protected returnLocally(
    ep: Endpoint,
    index: number,
    p: Peer,
    kind: number,
    handler: number,
    nargs: number,
    args: ArrayLike<number>,
    nbytes: number,
    off: number,
    off2: number,
    status: number,
  ): void {
    const t = this.takeToken()
    t.ep = ep
    t.kind = kind | K_RETURNED
    t.handler = handler
    t.nargs = nargs
    t.status = status
    t.fault = 0
    t.srcTask = p.task
    t.srcId = p.id
    t.dstId = ep.id
    t.tagLo = ep.trTagLo[index]!
    t.tagHi = ep.trTagHi[index]!
    t.nbytes = nbytes
    t.slot = NO_SLOT
    t.off = off
    t.off2 = off2
    t.peer = index
    for (let i = 0; i < nargs; i++) t.args[i] = args[i]!
    this.enqueue(t, ep.bundle, true)
  }

  /**
   * Returns every outstanding request to a peer that is gone and frees its instances: ECONGESTION
   * when it left the job, EUNREACHABLE when it failed or its process was lost.
   */
  protected failPeer(ep: Endpoint, p: Peer): void {
    const index = p.index
    const status = this.lapi.taskFailed(p.task) ? AmFault.EUNREACHABLE : AmFault.ECONGESTION
    for (let inst = 0; inst < p.busy.length; inst++) {
      if (p.busy[inst] === 0) continue
      const b = inst * REC
      const r = p.rec
      this.releaseInstance(ep, p, inst)
      this.returnLocally(ep, index, p, r[b]!, r[b + 1]!, r[b + 2]!, r.subarray(b + 6, b + 6 + r[b + 2]!), r[b + 3]!, r[b + 4]!, r[b + 5]!, status)
    }
  }

  /** Looks for peers that left the job with requests of the bundle's endpoints outstanding. */
  checkPeers(b: Bundle): void {
    // (index loops: this runs too seldom to be optimized, and an array's iterator would be allocated)
    const eps = b.endpoints
    for (let i = 0; i < eps.length; i++) {
      const ep = eps[i]!
      if (ep.outstanding === 0) continue
      const peers = ep.peerList
      for (let k = 0; k < peers.length; k++) {
        const p = peers[k]!
        if (p.outstanding > 0 && p.task !== this.taskId && !this.lapi.taskAlive(p.task)) this.failPeer(ep, p)
      }
    }
  }

  protected releaseInstance(ep: Endpoint, p: Peer, inst: number): void {
    p.busy[inst] = 0
    p.free[p.top++] = inst
    p.outstanding--
    ep.outstanding--
  }

  /** The reply (or return) of instance `slot` of `ep` arrived: free it. */
  protected releaseSlot(ep: Endpoint, slot: number): void {
    if (slot < 0) return
    // (a shift, not (slot / MAX_DEPTH) | 0: code V8 has not optimized yet boxes the quotient, 16 bytes a reply)
    const index = slot >> DEPTH_BITS
    const inst = slot & (MAX_DEPTH - 1)
    const p = index < ep.peers.length ? ep.peers[index] : undefined
    if (p === undefined || inst >= p.busy.length || p.busy[inst] === 0) return
    this.releaseInstance(ep, p, inst)
  }
}
