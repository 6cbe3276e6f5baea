/**
 * The status codes of @amlapi/pgas: what the flat face returns and a PgasError carries. 0 is
 * success; each failure has its own code, so that a compiler's runtime can branch on it.
 */
import { AmlapiError } from '@amlapi/lapi'

export const PgasStatus = {
  OK: 0,
  /** An argument of the wrong type or range (a length, an offset, a count). */
  ERR_BAD_ARG: 1,
  /** A task id outside 0..size-1. */
  ERR_BAD_TASK: 2,
  /** An address range outside the target's segment. */
  ERR_OUT_OF_SEGMENT: 3,
  /** An atomic on a word that is not aligned to its size. */
  ERR_ALIGN: 4,
  /** Tasks called different collectives, or the same one with different sizes or roots. */
  ERR_COLL_MISMATCH: 5,
  /** Barrier ids that do not match (GASNet's GASNET_ERR_BARRIER_MISMATCH). */
  ERR_BARRIER_MISMATCH: 6,
  /** No room left in the segment. */
  ERR_NOMEM: 7,
  /** A handle that is not (or no longer) a pending operation. */
  ERR_BAD_HANDLE: 8,
  /** A remote procedure not registered on the target. */
  ERR_RPC_UNKNOWN: 9,
  /** A remote procedure threw at the target. */
  ERR_RPC_FAILED: 10,
  /** The runtime is not initialised, or was finalised. */
  ERR_NOT_INIT: 11,
  /** A call in the wrong state (a barrier wait without a notify, a lock released by a task not holding it). */
  ERR_STATE: 12,
  /** The LAPI layer refused the operation (the message names the LAPI code). */
  ERR_LAPI: 13,
  /** An access of one byte or more at address 0: the null address, on every task and every path. */
  ERR_NULL_PTR: 14,
} as const

export type PgasStatusCode = (typeof PgasStatus)[keyof typeof PgasStatus]

const NAMES: Record<number, string> = {}
for (const [k, v] of Object.entries(PgasStatus)) NAMES[v] = `PGAS_${k}`

/** The name of a status code (`PGAS_ERR_ALIGN`), or `PGAS_<n>` for an unknown one. */
export function pgasStatusName(code: number): string {
  return NAMES[code] ?? `PGAS_${code}`
}

/**
 * What the idiomatic face throws: an AmlapiError whose `code` is the status's flat-face name
 * (`'PGAS_ERR_BAD_TASK'`, as {@link pgasStatusName} gives it) and `status` the PgasStatus (2).
 */
export class PgasError extends AmlapiError {
  /** The status's name, e.g. `PGAS_ERR_BAD_TASK`. */
  declare readonly code: string
  /** The PgasStatus, e.g. 2: what the flat face returns for the same failure. */
  declare readonly status: number
  /** `code` is the PgasStatus; `what` names the call; `detail`, when given, says what was wrong, with the values. */
  constructor(code: number, what: string, detail?: string) {
    const name = pgasStatusName(code)
    super(name, `${what}: ${name}${detail !== undefined && detail !== '' ? `: ${detail}` : ''}`, code)
    this.name = 'PgasError'
  }
}

/** The PgasStatus a thrown PgasError carries (matched by name, so that one from another copy of the package counts), else undefined. */
export function pgasStatusOf(e: unknown): number | undefined {
  if (typeof e !== 'object' || e === null || (e as { name?: unknown }).name !== 'PgasError') return undefined
  const s = (e as { status?: unknown }).status
  return typeof s === 'number' ? s : undefined
}

/** Throws a PgasError for a non-zero code. */
export function check(code: number, what: string): void {
  if (code !== 0) throw new PgasError(code, what)
}
