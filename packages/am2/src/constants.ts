/**
 * AM-2's constants with the values AMUDP and AMMPI use (the AM-2 specification and AMUDP's amudp.h): return
 * codes of the calls, the statuses and opcodes handler 0 receives for returned messages, bundle
 * types, event masks, special tags and limits.
 */

/** Return codes of every AM_* call. */
export const AmStatus = {
  OK: 0,
  ERR_NOT_INIT: 1,
  ERR_BAD_ARG: 2,
  ERR_RESOURCE: 3,
  ERR_NOT_SENT: 4,
  ERR_IN_USE: 5,
} as const
export type AmStatusCode = (typeof AmStatus)[keyof typeof AmStatus]

/** The status handler 0 gets for a returned (undeliverable) message. */
export const AmFault = {
  EBADARGS: 1,
  EBADENTRY: 2,
  EBADTAG: 3,
  EBADHANDLER: 4,
  EBADSEGOFF: 5,
  EBADLENGTH: 6,
  EBADENDPOINT: 7,
  ECONGESTION: 8,
  EUNREACHABLE: 9,
  EREPLYREJECTED: 10,
} as const
export type AmFaultCode = (typeof AmFault)[keyof typeof AmFault]

/** Which call produced a returned message (`op_t`). */
export const AmOpcode = {
  AM_REQUEST_M: 1,
  AM_REQUEST_IM: 2,
  AM_REQUEST_XFER_M: 3,
  AM_REPLY_M: 4,
  AM_REPLY_IM: 5,
  AM_REPLY_XFER_M: 6,
} as const

/** Bundle access modes: only AM_SEQ is supported (AM_PAR is refused with AM_ERR_RESOURCE). */
export const AM_SEQ = 0
export const AM_PAR = 1
/** Event masks of a bundle. */
export const AM_NOEVENTS = 0
export const AM_NOTEMPTY = 1
/** Special endpoint tags: AM_NONE refuses every message, AM_ALL accepts every message. */
export const AM_NONE = 0n
export const AM_ALL = 1n

/** Limits. */
export const AM_MAX_SHORT = 16
export const AM_MAX_NUM_HANDLERS = 256
export const AM_INITIAL_NUM_TRANSLATIONS = 256
export const AM_MAX_NUM_TRANSLATIONS = 1 << 20

const STATUS_NAMES = ['AM_OK', 'AM_ERR_NOT_INIT', 'AM_ERR_BAD_ARG', 'AM_ERR_RESOURCE', 'AM_ERR_NOT_SENT', 'AM_ERR_IN_USE'] as const
const FAULT_NAMES = [
  '',
  'EBADARGS',
  'EBADENTRY',
  'EBADTAG',
  'EBADHANDLER',
  'EBADSEGOFF',
  'EBADLENGTH',
  'EBADENDPOINT',
  'ECONGESTION',
  'EUNREACHABLE',
  'EREPLYREJECTED',
] as const
const OPCODE_NAMES = ['', 'AM_REQUEST_M', 'AM_REQUEST_IM', 'AM_REQUEST_XFER_M', 'AM_REPLY_M', 'AM_REPLY_IM', 'AM_REPLY_XFER_M'] as const

/** The C name of an AM return code (`AM_ERR_BAD_ARG` for 2), or undefined. */
export function amStatusName(code: number): string | undefined {
  return STATUS_NAMES[code]
}
/** The C name of a returned-message status (`EBADTAG` for 3), or undefined. */
export function amFaultName(status: number): string | undefined {
  return status > 0 ? FAULT_NAMES[status] : undefined
}
/** The C name of an opcode (`AM_REQUEST_M` for 1), or undefined. */
export function amOpcodeName(op: number): string | undefined {
  return op > 0 ? OPCODE_NAMES[op] : undefined
}
