/**
 * @packageDocumentation
 * `@amlapi/lapi`: IBM's LAPI for JavaScript threads. A job is N tasks (worker threads started by
 * `lapirun` or `runJob`); each task owns a segment (a SharedArrayBuffer) and moves data with
 * one-sided Put, Get and read-modify-write, observed through counters.
 *
 * @example
 * ```js
 * import { Lapi } from '@amlapi/lapi'
 * const lapi = Lapi.init()
 * const right = (lapi.rank + 1) % lapi.size
 * const buf = lapi.malloc(64), done = lapi.counter()
 * const bufs = lapi.addressInit(buf)          // every task's buf, index = task id
 * lapi.put(right, 5, bufs[right], new TextEncoder().encode('hello'), { tgtCntr: done })  // bumps right's `done`
 * done.wait(1)       // my left neighbour's Put landed in `buf`
 * lapi.gfence(); lapi.finalize()
 * ```
 */
export { Lapi, type LapiInitOptions, type XferCounters } from './lapi.js'
export { Counter } from './counter.js'
export { AmlapiError } from '@amlapi/bufmgr'
export { LapiError } from './base/errors.js'
export { JobAbortedError } from './base/errors.js'
export type { HandlerFn, DispatcherStats } from './core/types.js'
export { LapiStatus, statusName, statusText, type LapiStatusName } from './base/status.js'
export { Query, RmwOp, VecType, XferType, InitFlag, RetFlag, CtlFlag, ErrClass, MsgState, LAPI_MAX_MSG_SZ } from './base/constants.js'
export { runJob, type RunJobOptions, type JobResult } from './launch/run-job.js'
export type { JobReports } from './launch/options.js'
export { jobData } from './layout/job-spec.js'
export { WaitCall } from './layout/control.js'
export { logger } from './base/log.js'
export type { JitMode } from './base/jit.js'
export { resolveConfig, parseSize, parseChaos, DEFAULT_CONFIG, type JobConfig, type ChaosConfig } from './base/config.js'
export type { Addr, Ref, LocalBuf, SegmentMemory, lapi_vec_t, lapi_info_t, compl_hndlr_t, scompl_hndlr_t } from './base/types.js'
export type { hdr_hndlr_t, vhdr_hndlr_t, short_hndlr_t, lapi_return_info_t } from './am/types.js'
export { ref } from './base/types.js'
