/**
 * Errors thrown by the buffer manager (a BufMgrError is an AmlapiError with no C number). Exhaustion is not an error on the hot path: `alloc()`
 * returns 0; only `allocOrThrow()` turns it into `EXHAUSTED`.
 */
import { AmlapiError } from './amlapi-error.js'

/** The error codes of {@link BufMgrError}, as an `as const` object (match on `err.code`). */
export const BufMgrErrorCode = {
  /** `nbytes` is not a non-negative safe integer. */
  BAD_SIZE: 'BAD_SIZE',
  /** `allocOrThrow()` found no free region of the requested size. */
  EXHAUSTED: 'EXHAUSTED',
  /** The address was handed out before and has already been freed. */
  DOUBLE_FREE: 'DOUBLE_FREE',
  /** The address was never handed out: 0, outside the managed range, not aligned, or free space. */
  NOT_ALLOCATED: 'NOT_ALLOCATED',
  /** The address lies inside a live region but is not its start. */
  INTERIOR: 'INTERIOR',
  /** A constructor option is invalid. */
  BAD_OPTIONS: 'BAD_OPTIONS',
} as const

/** One of the {@link BufMgrErrorCode} strings. */
export type BufMgrErrorCode = (typeof BufMgrErrorCode)[keyof typeof BufMgrErrorCode]

/**
 * The error thrown for misuse of a {@link BufferManager} (and for `allocOrThrow()` exhaustion): an
 * {@link AmlapiError} whose `code` is one of {@link BufMgrErrorCode} and whose `status` is
 * undefined (the buffer manager has no C face). Users should match on `code` rather than
 * `instanceof`: an error posted to another thread loses its class but `{ code, message }` survive.
 */
export class BufMgrError extends AmlapiError {
  /** What went wrong; one of {@link BufMgrErrorCode}. */
  declare readonly code: BufMgrErrorCode

  /**
   * @param code    [in] the error code
   * @param message [in] the exact cause, with the figures involved
   */
  constructor(code: BufMgrErrorCode, message: string) {
    super(code, message)
    this.name = 'BufMgrError'
  }
}
