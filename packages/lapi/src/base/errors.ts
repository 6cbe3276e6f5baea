/**
 * The errors LAPI throws to the program, both AmlapiErrors: a LapiError carries the LAPI code's C
 * name and number (the idiomatic API's failures); a JobAbortedError ends a blocking call of a job
 * being torn down.
 */
import { AmlapiError } from '@amlapi/bufmgr'
import { statusName, statusText, type LapiStatus } from './status.js'

/**
 * An error carrying a LAPI return code: `code` is its C name (`'LAPI_ERR_TGT'`), `status` its
 * number (428). Match on `code`, not on `instanceof`: errors crossing threads arrive as plain
 * objects.
 */
export class LapiError extends AmlapiError {
  /** The C name, e.g. `LAPI_ERR_TGT`. */
  declare readonly code: string
  /** The LAPI return code, e.g. 428 (a {@link LapiStatus}). */
  declare readonly status: number
  /** `context` names the call; `detail`, when given, says what was wrong instead of the code's general text. */
  constructor(rc: number, context?: string, detail?: string) {
    const code = statusName(rc) ?? `LAPI_ERR_${rc}`
    super(code, `${context !== undefined ? context + ': ' : ''}${code} (${rc}): ${detail ?? statusText(rc) ?? 'unknown error code'}`, rc)
    this.name = 'LapiError'
  }

  /**
   * The numeric code, e.g. 428.
   * @deprecated Read `status` (the same number, under the name every amlapi error uses); `rc` goes
   * in the next release.
   */
  get rc(): number {
    return this.status
  }

  /** A plain record that survives postMessage (a structured clone of an Error keeps its message, not its class or fields). */
  toRecord(): { code: string; status: number; rc: number; message: string } {
    return { code: this.code, status: this.status, rc: this.status, message: this.message }
  }
}

/**
 * Thrown out of a blocking call when the job is being torn down because another task failed:
 * `code` `'LAPI_JOB_ABORTED'`, no `status` (no C call returns it; the error handler hears of the
 * same event as `LAPI_ERR_TGT_PURGED`, a code a purged target also gives), `task` the task that
 * failed (-1 for a timeout or an interrupt).
 */
export class JobAbortedError extends AmlapiError {
  /** The task whose failure ended the job, or -1 when it timed out or was interrupted. */
  readonly task: number
  constructor(task: number) {
    super('LAPI_JOB_ABORTED', `the job was aborted (${task >= 0 ? `task ${task} failed` : 'it timed out or was interrupted'}); this task stops`)
    this.name = 'JobAbortedError'
    this.task = task
  }
}

/** Throws a LapiError for a non-zero LAPI code. */
export function check(rc: number, context?: string): void {
  if (rc !== 0) throw new LapiError(rc, context)
}

/** An error in words for a report: its stack where it has one (which starts with name and message). */
export function describeError(e: unknown): string {
  if (e instanceof Error) return e.stack ?? `${e.name}: ${e.message}`
  return String(e)
}
