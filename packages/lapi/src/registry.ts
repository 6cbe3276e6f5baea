/**
 * The contexts of this thread, by handle number (what C calls lapi_handle_t). One context may be
 * open at a time (LAPI_Init while one is open returns LAPI_ERR_ALL_HNDL_IN_USE); a context can be
 * opened again after LAPI_Term and gets a new handle, so a stale handle stays invalid.
 */
import { BufferManager } from '@amlapi/bufmgr'
import { Context } from './context.js'
import { currentJobSpec } from './launch/create-job.js'
import { LapiStatus as S } from './base/status.js'
import type { lapi_info_t } from './base/types.js'

const contexts: Array<Context | undefined> = []
let open: Context | undefined
let segmentMemory: BufferManager | undefined
let nextHandle = 0

/** Opens a context; returns it, or a LAPI code. */
export function openContext(info: lapi_info_t | null | undefined): Context | number {
  if (info !== null && info !== undefined) {
    if (typeof info !== 'object') return S.ERR_INFO_NULL
    if (info.err_hndlr !== undefined && info.err_hndlr !== null && typeof info.err_hndlr !== 'function') return S.ERR_INFO_NONZERO
    if (info.protocol !== undefined && (!Number.isInteger(info.protocol) || (info.protocol & ~0xe0000000) !== 0)) return S.ERR_INFO_NONZERO
  }
  if (open !== undefined && !open.isTerminated) return S.ERR_ALL_HNDL_IN_USE
  const spec = currentJobSpec()
  if (segmentMemory === undefined) segmentMemory = new BufferManager({ buffer: spec.segments[spec.taskId]! }) // LAPIX_Malloc zero-fills itself; staging copies need not
  const ctx = new Context(nextHandle++, spec, segmentMemory, info ?? null)
  contexts[ctx.handle] = ctx
  open = ctx
  return ctx
}

/** The open context of a handle, or undefined (terminated, never opened, not a number). */
export function contextOf(hndl: number): Context | undefined {
  const c = typeof hndl === 'number' ? contexts[hndl] : undefined
  return c === undefined || c.isTerminated ? undefined : c
}

/** The open context of this thread, or undefined. */
export function currentContext(): Context | undefined {
  return open === undefined || open.isTerminated ? undefined : open
}
