/** Errors of the idiomatic API: a thrown LapiError carries the LAPI code and its C name. */
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
  constructor (rc: number, context?: string) {
    const code = statusName(rc) ?? `LAPI_ERR_${rc}`
    super(`${context !== undefined ? context + ': ' : ''}${code} (${rc}): ${statusText(rc) ?? 'unknown error code'}`)
    this.name = 'LapiError'
    this.code = code
    this.rc = rc
  }

  /** A plain record that survives postMessage; rebuild with `LapiError.fromRecord`. */
  toRecord (): { code: string; rc: number; message: string } {
    return { code: this.code, rc: this.rc, message: this.message }
  }
}

/** Throws a LapiError for a non-zero LAPI code. */
export function check (rc: number, context?: string): void {
  if (rc !== 0) throw new LapiError(rc, context)
}
