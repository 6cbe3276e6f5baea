/**
 * @packageDocumentation
 * `@amlapi/am2`: the AM-2 active message API (Mainwaring & Culler) over `@amlapi/lapi`, ported from
 * Berkeley's AMLAPI: bundles, endpoints, tags, translation and handler tables, Short/Medium/Long
 * requests and replies, returned messages, AM_Poll and AM_WaitSema. This is the idiomatic face:
 * methods throw `AmError` (carrying the AM code) where the C-style functions of
 * `@amlapi/am2/compat` return it. Both run the same implementation.
 *
 * @example
 * ```js
 * import { Am2 } from '@amlapi/am2'
 * const { endpoint: ep, bundle, rank, size } = Am2.spmd()
 * let got = 0
 * ep.setHandler(1, (token, x) => { got += x; token.reply(2) })
 * ep.setHandler(2, () => {})
 * Am2.barrier()
 * ep.request((rank + 1) % size, 1, 42)
 * while (got === 0) bundle.wait()
 * Am2.barrier()
 * ```
 */
import type { Lapi } from '@amlapi/lapi'
import { AM_SEQ, AmStatus } from './constants.js'
import type { Bundle, Endpoint } from './objects.js'
import { amInit, amTerminate, currentRuntime } from './runtime.js'
import { AmError, MAX_LONG, MAX_MEDIUM, check } from './types.js'
import { currentSpmd, spmdExit, spmdStartup } from './spmd.js'
import { MAX_DEPTH } from './wire.js'

export {
  AmStatus,
  AmFault,
  AmOpcode,
  AM_SEQ,
  AM_PAR,
  AM_NOEVENTS,
  AM_NOTEMPTY,
  AM_NONE,
  AM_ALL,
  AM_MAX_SHORT,
  AM_MAX_NUM_HANDLERS,
  AM_INITIAL_NUM_TRANSLATIONS,
  AM_MAX_NUM_TRANSLATIONS,
  amStatusName,
  amFaultName,
  amOpcodeName,
  type AmStatusCode,
  type AmFaultCode,
} from './constants.js'
export { AmlapiError } from '@amlapi/bufmgr'
export { AmError, MAX_MEDIUM, MAX_LONG, MAX_SEG_LENGTH, type AmSeg, type en_t } from './types.js'
export {
  Bundle,
  Endpoint,
  Token,
  defaultHandler0,
  type short_handler,
  type bulk_handler,
  type error_handler,
  type am_handler,
} from './objects.js'
export { DEFAULT_DEPTH } from './spmd.js'

/**
 * What {@link Am2.spmd} returns: this task's bundle and endpoint, its rank and the job size. The
 * rank and size stay one property away afterwards as {@link Am2.rank} and {@link Am2.size}.
 */
export interface SpmdInfo {
  /** This task's bundle (AM_SEQ): poll it or wait on it to run the endpoint's handlers. */
  bundle: Bundle
  /**
   * This task's endpoint, in `bundle`. Its translation table maps every task at index = task id
   * (with that task's tag), so `endpoint.request(r, ...)` goes to the task of rank r.
   */
  endpoint: Endpoint
  /** This task's rank in the job, 0..size-1 (LAPI's task id; AMX_SPMDMyProc). */
  rank: number
  /** Tasks in the job (AMX_SPMDNumProcs). */
  size: number
  /** @deprecated Read `size` (the same number); `procs` goes in the release after 0.1.0. */
  procs: number
}

/** What `Am2.stats()` reports. */
export interface Am2Stats {
  /** Mediums whose payload the bufmgr arena had no room for (they went to heap buffers). */
  heapMediums: number
  /** Heap buffers made for them; the rest reused pooled ones. */
  heapBuffersMade: number
}

const NO_INIT = 'AM-2 is not initialised in this task: Am2.init() (AM_Init) or Am2.spmd() first'
const NO_SPMD = 'Am2.spmd() (AMX_SPMDStartup) has not run in this task'

/** The AM-2 library of this task (static methods). */
export class Am2 {
  private constructor() {
    /* static only */
  }

  /** AM_Init: joins the LAPI context `lapi` (default: the open one, or a new one). Reference-counted. */
  static init(lapi?: Lapi): void {
    check(amInit(lapi), 'AM_Init')
  }

  /** Leaves AM-2 (AM_Terminate); the last of the `init`s to leave frees the runtime (and the LAPI context it opened). */
  static finalize(): void {
    check(amTerminate(), 'AM_Terminate')
  }

  /** @deprecated Call `Am2.finalize()` (the same call); `terminate()` goes in the release after 0.1.0. */
  static terminate(): void {
    Am2.finalize()
  }

  /** AM_AllocateBundle(AM_SEQ). */
  static allocateBundle(): Bundle {
    const rt = currentRuntime()
    if (rt === null) throw new AmError(AmStatus.ERR_NOT_INIT, 'AM_AllocateBundle', NO_INIT)
    const r: { value: Bundle | null } = { value: null }
    const rc = rt.allocateBundle(AM_SEQ, r)
    if (rc !== 0)
      throw new AmError(
        rc,
        'AM_AllocateBundle',
        rc === AmStatus.ERR_RESOURCE ? 'a task has at most 255 bundles at once (free one with AM_FreeBundle)' : undefined,
      )
    return r.value!
  }

  /**
   * Counts of this task's AM-2 runtime: `heapMediums`, Mediums whose payload the bufmgr arena (8 MiB)
   * had no room for, which went to heap buffers; `heapBuffersMade`, the heap buffers made for them
   * (the others reused pooled ones: up to 64 MiB of them are kept).
   */
  static stats(): Am2Stats {
    const rt = currentRuntime()
    if (rt === null) throw new AmError(AmStatus.ERR_NOT_INIT, 'Am2.stats', NO_INIT)
    return { heapMediums: rt.heapMediums, heapBuffersMade: rt.heapBuffersMade }
  }

  /** Largest Medium payload, bytes. */
  static get maxMedium(): number {
    return MAX_MEDIUM
  }
  /** Largest Long payload, bytes. */
  static get maxLong(): number {
    return MAX_LONG
  }

  /**
   * AMX_SPMDStartup, collective: every task of the job calls it once, and it returns when all have.
   * Joins the job (`Am2.init`), creates this task's bundle and endpoint, maps every task at
   * index = its task id with that task's tag, sets `depth` requests in flight per peer (default:
   * AMLAPI_NETWORKDEPTH, else {@link DEFAULT_DEPTH}) and waits for every task to get there, so
   * requests may go out as soon as it returns.
   *
   * @param depth requests in flight per peer, 1..1024; 0 or left out: the default.
   * @returns `{ bundle, endpoint, rank, size }` ({@link SpmdInfo}); `rank` and `size` are also
   *   {@link Am2.rank} and {@link Am2.size} from now on.
   * @throws AmError AM_ERR_RESOURCE when called a second time, AM_ERR_BAD_ARG for a bad `depth`.
   *
   * @example
   * ```js
   * const { endpoint, bundle } = Am2.spmd()
   * endpoint.request((Am2.rank + 1) % Am2.size, 1, 42)
   * ```
   */
  static spmd(depth?: number): SpmdInfo {
    const eb: { value: Bundle | null } = { value: null }
    const ep: { value: Endpoint | null } = { value: null }
    const rc = spmdStartup(eb, ep, depth)
    if (rc !== 0) {
      throw new AmError(
        rc,
        'AMX_SPMDStartup',
        rc === AmStatus.ERR_RESOURCE
          ? 'it runs once per job (Am2.spmd was called already)'
          : rc === AmStatus.ERR_BAD_ARG
            ? `depth ${typeof depth === 'bigint' ? `${String(depth)}n (a BigInt)` : String(depth)} is not allowed: 1 to ${MAX_DEPTH} requests in flight per peer, or 0 for the default`
            : undefined,
      )
    }
    const s = currentSpmd()!
    return { bundle: eb.value!, endpoint: ep.value!, rank: s.rank, size: s.procs, procs: s.procs }
  }

  /**
   * This task's rank (task id), 0..{@link Am2.size}-1 (AMX_SPMDMyProc). Valid after
   * {@link Am2.spmd}; throws AmError AM_ERR_NOT_INIT before.
   */
  static get rank(): number {
    const s = currentSpmd()
    if (s === null) throw new AmError(AmStatus.ERR_NOT_INIT, 'Am2.rank', NO_SPMD)
    return s.rank
  }

  /**
   * Tasks in the job (AMX_SPMDNumProcs). Valid after {@link Am2.spmd}; throws AmError
   * AM_ERR_NOT_INIT before.
   */
  static get size(): number {
    const s = currentSpmd()
    if (s === null) throw new AmError(AmStatus.ERR_NOT_INIT, 'Am2.size', NO_SPMD)
    return s.procs
  }

  /** @deprecated Read `Am2.size` (the same number); `procs` goes in the release after 0.1.0. */
  static get procs(): number {
    const s = currentSpmd()
    if (s === null) throw new AmError(AmStatus.ERR_NOT_INIT, 'Am2.procs', NO_SPMD)
    return s.procs
  }

  /** AMX_SPMDBarrier, collective (runs handlers while it waits). */
  static barrier(): void {
    const s = currentSpmd()
    if (s === null) throw new AmError(AmStatus.ERR_NOT_INIT, 'AMX_SPMDBarrier', NO_SPMD)
    s.barrier()
  }

  /** AMX_SPMDAllGather: every task's `src` bytes, concatenated in rank order. */
  static allGather(src: Uint8Array): Uint8Array {
    const s = currentSpmd()
    if (s === null) throw new AmError(AmStatus.ERR_NOT_INIT, 'AMX_SPMDAllGather', NO_SPMD)
    const dst = new Uint8Array(src.length * s.procs)
    s.allGather(src, dst, src.length)
    return dst
  }

  /** AMX_SPMDExit. */
  static exit(code: number): never {
    return spmdExit(code)
  }
}
