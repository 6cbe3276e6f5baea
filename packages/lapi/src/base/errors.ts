/**
 * The errors LAPI throws to the program: a LapiError carries the LAPI code and its C name (the
 * idiomatic API's failures); a JobAbortedError ends a blocking call of a job being torn down.
 */
import { statusName, statusText } from './status.js'

/**
 * An error carrying a LAPI return code. Match on `code` (e.g. `'LAPI_ERR_TGT'`) or `rc` (428), not
 * on `instanceof`: errors crossing threads arrive as plain objects.
 */
export class LapiError extends Error {
  /** The C name, e.g. `LAPI_ERR_TGT`. */
  readonly code: string
  /** The numeric code, e.g. 428. */
  readonly rc: number
  /** `context` names the call; `detail`, when given, says what was wrong instead of the code's general text. */
  constructor (rc: number, context?: string, detail?: string) {
    const code = statusName(rc) ?? `LAPI_ERR_${rc}`
    super(`${context !== undefined ? context + ': ' : ''}${code} (${rc}): ${detail ?? statusText(rc) ?? 'unknown error code'}`)
    this.name = 'LapiError'
    this.code = code
    this.rc = rc
  }

  /** A plain record that survives postMessage; rebuild with `LapiError.fromRecord`. */
  toRecord (): { code: string; rc: number; message: string } {
    return { code: this.code, rc: this.rc, message: this.message }
  }
}

/** Thrown out of a blocking call when the job is being torn down because another task failed. */
export class JobAbortedError extends Error {
  readonly task: number
  constructor (task: number) {
    super(`the job was aborted (${task >= 0 ? `task ${task} failed` : 'it timed out or was interrupted'}); this task stops`)
    this.name = 'JobAbortedError'
    this.task = task
  }
}

/** Throws a LapiError for a non-zero LAPI code. */
export function check (rc: number, context?: string): void {
  if (rc !== 0) throw new LapiError(rc, context)
}

/** An error in words for a report: its stack where it has one (which starts with name and message). */
export function describeError (e: unknown): string {
  if (e instanceof Error) return e.stack ?? `${e.name}: ${e.message}`
  return String(e)
}
