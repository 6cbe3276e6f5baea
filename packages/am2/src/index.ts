/**
 * @packageDocumentation
 * `@amlapi/am2`: the AM-2 active message API (Mainwaring & Culler) over `@amlapi/lapi`, ported from
 * Berkeley's AMLAPI. This build has its constants (the return codes, the statuses and opcodes of
 * returned messages, bundle modes, event masks, special tags and limits) and, internally, AMLAPI's
 * bundle task queue (task-queue.ts). The bundles, endpoints and Short/Medium/Xfer requests and
 * replies are to be built on LAPI's active messages.
 */
export {
  AmStatus, AmFault, AmOpcode, AM_SEQ, AM_PAR, AM_NOEVENTS, AM_NOTEMPTY, AM_NONE, AM_ALL, AM_MAX_SHORT,
  AM_MAX_NUM_HANDLERS, AM_INITIAL_NUM_TRANSLATIONS, AM_MAX_NUM_TRANSLATIONS, amStatusName, amFaultName, amOpcodeName,
  type AmStatusCode, type AmFaultCode,
} from './constants.js'
