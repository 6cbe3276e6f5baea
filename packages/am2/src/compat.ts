/**
 * The C-style AM-2 names (API.md): constants with AMUDP's values, re-exported once from
 * constants.ts so each is defined in one place.
 */
import { AmFault, AmOpcode, AmStatus } from './constants.js'

export { AM_SEQ, AM_PAR, AM_NOEVENTS, AM_NOTEMPTY, AM_NONE, AM_ALL } from './constants.js'
export const AM_OK = AmStatus.OK
export const AM_ERR_NOT_INIT = AmStatus.ERR_NOT_INIT
export const AM_ERR_BAD_ARG = AmStatus.ERR_BAD_ARG
export const AM_ERR_RESOURCE = AmStatus.ERR_RESOURCE
export const AM_ERR_NOT_SENT = AmStatus.ERR_NOT_SENT
export const AM_ERR_IN_USE = AmStatus.ERR_IN_USE
export const EBADARGS = AmFault.EBADARGS
export const EBADENTRY = AmFault.EBADENTRY
export const EBADTAG = AmFault.EBADTAG
export const EBADHANDLER = AmFault.EBADHANDLER
export const EBADSEGOFF = AmFault.EBADSEGOFF
export const EBADLENGTH = AmFault.EBADLENGTH
export const EBADENDPOINT = AmFault.EBADENDPOINT
export const ECONGESTION = AmFault.ECONGESTION
export const EUNREACHABLE = AmFault.EUNREACHABLE
export const EREPLYREJECTED = AmFault.EREPLYREJECTED
export const AM_REQUEST_M = AmOpcode.AM_REQUEST_M
export const AM_REQUEST_IM = AmOpcode.AM_REQUEST_IM
export const AM_REQUEST_XFER_M = AmOpcode.AM_REQUEST_XFER_M
export const AM_REPLY_M = AmOpcode.AM_REPLY_M
export const AM_REPLY_IM = AmOpcode.AM_REPLY_IM
export const AM_REPLY_XFER_M = AmOpcode.AM_REPLY_XFER_M
