/**
 * Runs the program's completion, send-completion and error handlers for every part of a context,
 * and reports asynchronous errors (docs/lapi.md, "Asynchronous errors and LAPI's default error
 * handling"). While such a handler runs it may call LAPI, so the counter bumps a running wait
 * holds back go to memory first and no bump is handed to a wait meanwhile (sync/counters.ts,
 * `enterUser`).
 */
import { describeError } from '../base/errors.js'
import { endTask } from './failure.js'
import { ErrClass } from '../base/constants.js'
import { LapiStatus as S, statusName, statusText } from '../base/status.js'
import type { ContextState } from '../core/state.js'
import type { compl_hndlr_t, LAPI_err_hndlr, scompl_hndlr_t } from '../base/types.js'
import type { Counters } from './counters.js'

export class UserCode {
  private readonly s: ContextState
  private readonly counters: Counters
  private readonly handle: number
  private readonly errHndlr: LAPI_err_hndlr | null

  constructor(s: ContextState, counters: Counters, errHndlr: LAPI_err_hndlr | null) {
    this.s = s
    this.counters = counters
    this.handle = s.handle
    this.errHndlr = errHndlr
  }

  /**
   * Reports an asynchronous error (`code`, class `cls`, about a message from or an operation with
   * task `src`; `what` failed, with `cause` when it threw) to the err_hndlr given at init. With no
   * err_hndlr, LAPI's default: the error is reported and the task ends with a non-zero exit,
   * which ends the job.
   */
  reportError(code: number, cls: number, src: number, cause?: unknown, what = 'a handler'): void {
    const s = this.s
    s.log.error({ code, cls: errClassName(cls), src, err: cause }, `asynchronous error: ${what}`)
    if (this.errHndlr === null) {
      const how =
        cause !== undefined ? `threw: ${describeError(cause)}` : `failed: ${statusName(code) ?? code} (${code}): ${statusText(code) ?? 'unknown error'}`
      endTask(
        s.taskId,
        `${what} (${errClassName(cls)}, peer task ${src}) ${how}\n` +
          "(no error handler was given to LAPI_Init, so LAPI's default error handling ends the task, and with it the job)",
      )
    }
    this.counters.enterUser()
    try {
      this.errHndlr(this.handle, code, cls, s.taskId, src)
    } catch (e) {
      s.log.error({ err: e }, 'the error handler threw')
    } finally {
      this.counters.userCode--
    }
  }

  /**
   * The job is aborted because of task `cause` (it failed, or its process was lost; -1: no task):
   * the err_hndlr given at init hears of it (LAPI_ERR_TGT_PURGED, an internal error about that
   * task) before the blocking call that saw it throws. Without one, nothing more is said here: the
   * job's end names the cause.
   */
  reportAbort(cause: number): void {
    if (this.errHndlr === null || cause === this.s.taskId) return
    this.counters.enterUser()
    try {
      this.errHndlr(this.handle, S.ERR_TGT_PURGED, ErrClass.INT_ERR, this.s.taskId, cause)
    } catch (e) {
      this.s.log.error({ err: e }, 'the error handler threw')
    } finally {
      this.counters.userCode--
    }
  }

  /** Runs a send-completion handler (the origin buffers of an operation with `tgt` may be reused). */
  runSendHandler(h: scompl_hndlr_t, sinfo: unknown, tgt: number, cls: number): void {
    this.counters.enterUser()
    try {
      h(this.handle, sinfo, { src: tgt, reason: S.SUCCESS })
    } catch (e) {
      this.reportError(S.ERR_UNKNOWN, cls, tgt, e, 'a send-completion handler')
    } finally {
      this.counters.userCode--
    }
  }

  /** Runs a completion handler (a message from, or a Get of, task `tgt` is complete). */
  runComplHandler(h: compl_hndlr_t, info: unknown, tgt: number, cls: number): void {
    this.counters.enterUser()
    try {
      h(this.handle, info)
    } catch (e) {
      this.reportError(S.ERR_UNKNOWN, cls, tgt, e, 'a completion handler')
    } finally {
      this.counters.userCode--
    }
  }
}

const ERR_CLASS_NAMES = ['GET_ERR', 'PUT_ERR', 'RMW_ERR', 'AM_ERR', 'INT_ERR', 'TMR_ERR']

function errClassName(cls: number): string {
  return ERR_CLASS_NAMES[cls] ?? `error class ${cls}`
}
