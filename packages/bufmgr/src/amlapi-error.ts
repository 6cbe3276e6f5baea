/**
 * The base class of every error the amlapi packages throw. It lives in @amlapi/bufmgr, the package
 * every other one imports, so that there is one class; lapi, am2 and pgas re-export it.
 */

/**
 * What every amlapi package throws: `BufMgrError`, `LapiError`, `JobAbortedError`, `AmError` and
 * `PgasError` all extend it, with the same fields.
 *
 * - `code`: a stable upper-snake string naming the failure. Where the failure has a number in a
 *   C-style face it is that number's C name, spelled as the C original (or the flat face) spells
 *   it: `'LAPI_ERR_TGT'`, `'AM_ERR_BAD_ARG'`, `'PGAS_ERR_BAD_TASK'` (what `statusName`,
 *   `amStatusName` and `pgasStatusName` return). The buffer manager, which has no C face, names its
 *   failures itself (`'DOUBLE_FREE'`). No two packages share a code, so one `switch` on `code`
 *   serves them all.
 * - `status`: that C number (`LapiStatus`, `AmStatus`, `PgasStatus`: what the C-style face would
 *   have returned), or undefined where there is none (bufmgr).
 * - `message`: the call and the values involved.
 *
 * Match on `code` rather than on `instanceof` where an error may have crossed threads: a structured
 * clone keeps `message` but not the class.
 */
export class AmlapiError extends Error {
  /** The stable name of the failure, e.g. `'LAPI_ERR_TGT'` or `'DOUBLE_FREE'`. */
  readonly code: string
  /** The C-style face's number for the failure (e.g. 428 for `LAPI_ERR_TGT`), where it has one. */
  readonly status?: number

  /**
   * @param code    [in] the stable name of the failure
   * @param message [in] the call and the values involved
   * @param status  [in] the C number, where there is one
   */
  constructor(code: string, message: string, status?: number) {
    super(message)
    this.name = 'AmlapiError'
    this.code = code
    this.status = status
  }
}
