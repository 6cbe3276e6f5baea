/**
 * The bundles and endpoints of this task (a layer of the runtime: runtime.ts), and everything set
 * on them before messages flow: allocation, freeing and moving, the endpoint table by local id
 * (which the receive side reads), receive tags, segments, translation tables (map, unmap, their
 * size, the tags stamped on messages), AM_SetExpectedResources (which freezes the table and makes
 * each mapped peer's flow-control state), handler tables and event masks. Every method checks its
 * arguments and returns an AM code.
 */
import type { Ref } from '@amlapi/lapi'
import {
  AM_ALL,
  AM_INITIAL_NUM_TRANSLATIONS,
  AM_MAX_NUM_HANDLERS,
  AM_MAX_NUM_TRANSLATIONS,
  AM_NOEVENTS,
  AM_NONE,
  AM_NOTEMPTY,
  AM_PAR,
  AM_SEQ,
  AmStatus,
} from './constants.js'
import { Bundle, Endpoint, Peer, defaultHandler0, type am_handler } from './objects.js'
import { Tokens } from './tokens.js'
import * as types from './types.js'
import { MAX_DEPTH } from './wire.js'

// What this file reads of types.ts and copy.ts, as module constants: TurboFan folds a module's own
// constants into the code that reads them, but loads an imported binding from its cell, with a
// hole check, at every use (the per-message paths read these).
const { isNameOk, isU32, tagOk } = types

const S = AmStatus

/** Endpoints per task (local ids are u16). */
const MAX_ENDPOINTS = 65535
/** Live bundles per task (AMUDP: 255). */
const MAX_BUNDLES = 255

/** An index of `ep`'s translation table (mapped or not). */
function isTransIndex(ep: Endpoint, i: unknown): i is number {
  return typeof i === 'number' && Number.isInteger(i) && i >= 0 && i < ep.numTrans
}

/** The bundles and endpoints of this task. */
export class Registry extends Tokens {
  readonly bundles = new Set<Bundle>()
  /** The endpoints by local id. */
  protected readonly endpoints: Array<Endpoint | undefined> = []
  private nextEp = 0

  allocateBundle(type: number, eb: Ref<Bundle | null> | null | undefined): number {
    if (eb === null || eb === undefined || typeof eb !== 'object') return S.ERR_BAD_ARG
    if (type === AM_PAR) return S.ERR_RESOURCE
    if (type !== AM_SEQ) return S.ERR_BAD_ARG
    if (this.bundles.size >= MAX_BUNDLES) return S.ERR_RESOURCE
    const b = new Bundle()
    b.owner = this
    this.bundles.add(b)
    eb.value = b
    return S.OK
  }

  freeBundle(b: Bundle): number {
    if (!this.isBundle(b)) return S.ERR_BAD_ARG
    for (const ep of [...b.endpoints]) this.freeEndpoint(ep)
    b.freed = 1
    this.bundles.delete(b)
    // drop whatever is still queued
    for (;;) {
      const t = b.queue.take()
      if (t < 0) break
      this.release(this.tokens[t]!)
    }
    return S.OK
  }

  isBundle(b: unknown): b is Bundle {
    return b instanceof Bundle && b.freed === 0 && b.owner === this
  }

  isEndpoint(ep: unknown): ep is Endpoint {
    return ep instanceof Endpoint && ep.freed === 0 && this.endpoints[ep.id] === ep
  }

  allocateEndpoint(b: Bundle, ep: Ref<Endpoint | null> | null | undefined, name: Ref<number> | null | undefined): number {
    if (!this.isBundle(b)) return S.ERR_BAD_ARG
    if (ep === null || ep === undefined || typeof ep !== 'object') return S.ERR_BAD_ARG
    if (name !== null && name !== undefined && typeof name !== 'object') return S.ERR_BAD_ARG
    let id = -1
    for (let i = 0; i < MAX_ENDPOINTS; i++) {
      const c = (this.nextEp + i) % MAX_ENDPOINTS
      if (this.endpoints[c] === undefined) {
        id = c
        break
      }
    }
    if (id < 0) return S.ERR_RESOURCE
    this.nextEp = (id + 1) % MAX_ENDPOINTS
    const e = new Endpoint(id, this.taskId * 65536 + id, b, defaultHandler0)
    this.endpoints[id] = e
    b.endpoints.push(e)
    ep.value = e
    if (name !== null && name !== undefined) name.value = e.name
    return S.OK
  }

  freeEndpoint(ep: Endpoint): number {
    if (!this.isEndpoint(ep)) return S.ERR_BAD_ARG
    ep.freed = 1
    this.endpoints[ep.id] = undefined
    const list = ep.bundle.endpoints
    list.splice(list.indexOf(ep), 1)
    return S.OK
  }

  moveEndpoint(ep: Endpoint, from: Bundle, to: Bundle): number {
    if (!this.isEndpoint(ep) || !this.isBundle(from) || !this.isBundle(to)) return S.ERR_BAD_ARG
    if (ep.bundle !== from) return S.ERR_RESOURCE
    from.endpoints.splice(from.endpoints.indexOf(ep), 1)
    to.endpoints.push(ep)
    ep.bundle = to
    return S.OK
  }

  setTag(ep: Endpoint, tag: unknown): number {
    if (!this.isEndpoint(ep) || !tagOk(tag)) return S.ERR_BAD_ARG
    ep.tag = tag
    ep.tagLo = Number(tag & 0xffffffffn)
    ep.tagHi = Number(tag >> 32n)
    ep.tagMode = tag === AM_NONE ? 0 : tag === AM_ALL ? 1 : 2
    return S.OK
  }

  setSeg(ep: Endpoint, seg: unknown, nbytes: unknown): number {
    if (!this.isEndpoint(ep) || !isU32(nbytes)) return S.ERR_BAD_ARG
    if (seg === null || seg === undefined || seg === 0) {
      if (nbytes !== 0) return S.ERR_BAD_ARG
      ep.seg = null
      ep.segAddr = -1
      ep.segLen = 0
      ep.segU8 = null
    } else if (seg instanceof Uint8Array) {
      if (nbytes > seg.length) return S.ERR_BAD_ARG
      ep.seg = seg
      ep.segLen = nbytes
      if (seg.buffer === this.segBuffer) {
        ep.segAddr = seg.byteOffset
        ep.segU8 = this.lapi.view(ep.segAddr, nbytes)
      } else {
        ep.segAddr = -1
        ep.segU8 = seg.subarray(0, nbytes)
      }
    } else if (typeof seg === 'number') {
      if (!isU32(seg) || seg + nbytes > this.segmentSize) return S.ERR_BAD_ARG
      ep.seg = seg
      ep.segAddr = seg
      ep.segLen = nbytes
      ep.segU8 = this.lapi.view(seg, nbytes)
    } else {
      return S.ERR_BAD_ARG
    }
    return S.OK
  }

  // ───────────────────────────── translations and handlers ─────────────────────────────

  map(ep: Endpoint, index: unknown, name: unknown, tag: unknown): number {
    if (!this.isEndpoint(ep)) return S.ERR_BAD_ARG
    if (!isTransIndex(ep, index)) return S.ERR_BAD_ARG
    if (!isNameOk(name) || !tagOk(tag)) return S.ERR_BAD_ARG
    if (ep.depth !== 0 || ep.trName[index] !== -1) return S.ERR_RESOURCE
    ep.trName[index] = name
    ep.setTranslationTag(index, tag)
    const had = ep.byName.get(name)
    if (had === undefined || had > index) ep.byName.set(name, index)
    ep.lastName = -1
    return S.OK
  }

  mapAny(ep: Endpoint, index: Ref<number> | null | undefined, name: unknown, tag: unknown): number {
    if (!this.isEndpoint(ep) || index === null || index === undefined || typeof index !== 'object') return S.ERR_BAD_ARG
    if (!isNameOk(name) || !tagOk(tag)) return S.ERR_BAD_ARG
    if (ep.depth !== 0) return S.ERR_RESOURCE
    const i = ep.trName.indexOf(-1)
    if (i < 0) return S.ERR_RESOURCE
    const rc = this.map(ep, i, name, tag)
    if (rc === S.OK) index.value = i
    return rc
  }

  unmap(ep: Endpoint, index: unknown): number {
    if (!this.isEndpoint(ep)) return S.ERR_BAD_ARG
    if (!isTransIndex(ep, index)) return S.ERR_BAD_ARG
    if (ep.depth !== 0 || ep.trName[index] === -1) return S.ERR_RESOURCE
    const name = ep.trName[index]!
    ep.trName[index] = -1
    if (ep.byName.get(name) === index) {
      ep.byName.delete(name)
      const other = ep.trName.indexOf(name)
      if (other >= 0) ep.byName.set(name, other)
    }
    ep.lastName = -1
    return S.OK
  }

  setNumTranslations(ep: Endpoint, n: unknown): number {
    if (!this.isEndpoint(ep)) return S.ERR_BAD_ARG
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > AM_MAX_NUM_TRANSLATIONS) return S.ERR_BAD_ARG
    if (ep.depth !== 0) return S.ERR_RESOURCE
    const size = n < AM_INITIAL_NUM_TRANSLATIONS ? AM_INITIAL_NUM_TRANSLATIONS : n
    for (let i = size; i < ep.numTrans; i++) if (ep.trName[i] !== -1) return S.ERR_RESOURCE
    const names = new Array<number>(size).fill(-1)
    const tags = new Array<bigint>(size).fill(0n)
    const lo = new Uint32Array(size)
    const hi = new Uint32Array(size)
    const keep = size < ep.numTrans ? size : ep.numTrans
    for (let i = 0; i < keep; i++) {
      names[i] = ep.trName[i]!
      tags[i] = ep.trTag[i]!
      lo[i] = ep.trTagLo[i]!
      hi[i] = ep.trTagHi[i]!
    }
    ep.trName = names
    ep.trTag = tags
    ep.trTagLo = lo
    ep.trTagHi = hi
    ep.numTrans = size
    return S.OK
  }

  translationInUse(ep: Endpoint, i: unknown): number {
    if (!this.isEndpoint(ep)) return S.ERR_BAD_ARG
    if (!isTransIndex(ep, i)) return S.ERR_BAD_ARG
    return ep.trName[i] === -1 ? S.ERR_RESOURCE : S.OK
  }

  setExpectedResources(ep: Endpoint, nEndpoints: unknown, nOutstanding: unknown): number {
    if (!this.isEndpoint(ep)) return S.ERR_BAD_ARG
    if (typeof nEndpoints !== 'number' || !Number.isInteger(nEndpoints) || nEndpoints < 0) return S.ERR_BAD_ARG
    if (typeof nOutstanding !== 'number' || !Number.isInteger(nOutstanding) || nOutstanding < 1 || nOutstanding > MAX_DEPTH) return S.ERR_BAD_ARG
    if (ep.depth !== 0) return S.ERR_RESOURCE
    ep.depth = nOutstanding
    ep.peers = new Array<Peer | undefined>(ep.numTrans)
    for (let i = 0; i < ep.numTrans; i++) {
      if (ep.trName[i] !== -1) {
        const p = new Peer(i, ep.trName[i]!, nOutstanding)
        ep.peers[i] = p
        ep.peerList.push(p)
      }
    }
    return S.OK
  }

  setHandler(ep: Endpoint, index: unknown, fn: unknown): number {
    if (!this.isEndpoint(ep) || typeof fn !== 'function') return S.ERR_BAD_ARG
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= AM_MAX_NUM_HANDLERS) return S.ERR_BAD_ARG
    ep.handlers[index] = fn as am_handler
    return S.OK
  }

  setHandlerAny(ep: Endpoint, index: Ref<number> | null | undefined, fn: unknown): number {
    if (!this.isEndpoint(ep) || typeof fn !== 'function' || index === null || index === undefined || typeof index !== 'object') return S.ERR_BAD_ARG
    for (let i = 1; i < AM_MAX_NUM_HANDLERS; i++) {
      if (ep.handlers[i] === null) {
        ep.handlers[i] = fn as am_handler
        index.value = i
        return S.OK
      }
    }
    return S.ERR_RESOURCE
  }

  setEventMask(b: Bundle, mask: unknown): number {
    if (!this.isBundle(b) || (mask !== AM_NOEVENTS && mask !== AM_NOTEMPTY)) return S.ERR_BAD_ARG
    b.mask = mask
    return S.OK
  }
}
