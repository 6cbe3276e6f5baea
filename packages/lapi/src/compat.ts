/**
 * The C-style LAPI face (docs/lapi.md): every `LAPI_*` function with IBM's name and argument order, as a
 * one-line wrapper over the context behind the handle. Functions return LAPI codes (0 =
 * LAPI_SUCCESS) and never throw for a documented error; out-values go through `Ref`s.
 *
 * @example
 * ```js
 * import { LAPI_Init, LAPI_Qenv, LAPI_Put, LAPI_Waitcntr, TASK_ID, ref } from '@amlapi/lapi/compat'
 * const h = ref(0); LAPI_Init(h, null)
 * const me = ref(0); LAPI_Qenv(h.value, TASK_ID, me)
 * ```
 */
import { Query, RmwOp, VecType, XferType, InitFlag, RetFlag, CtlFlag, ErrClass, MsgState, XferFlag } from './base/constants.js'
import type { HandlerFn } from './core/types.js'
import type { hdr_hndlr_t, vhdr_hndlr_t } from './am/types.js'
import { contextOf, openContext } from './registry.js'
import { LapiStatus as S, LAPI_ERR_FIRSTCODE, LAPI_ERR_LASTCODE, statusText } from './base/status.js'
import type { Addr, lapi_handle_t, lapi_info_t, lapi_msg_info_t, lapi_vec_t, lapi_xfer_t, LocalBuf, Ref } from './base/types.js'

export type {
  Addr,
  lapi_cntr_t,
  lapi_handle_t,
  lapi_info_t,
  lapi_msg_info_t,
  lapi_vec_t,
  lapi_xfer_t,
  lapi_get_t,
  lapi_put_t,
  lapi_getv_t,
  lapi_putv_t,
  lapi_rmw_t,
  lapi_sh_info_t,
  LocalBuf,
  Ref,
  LAPI_err_hndlr,
  compl_hndlr_t,
  scompl_hndlr_t,
} from './base/types.js'
export { ref } from './base/types.js'
export type { hdr_hndlr_t, vhdr_hndlr_t, lapi_return_info_t } from './am/types.js'

const INVALID = S.ERR_HNDL_INVALID

/** LAPI_Init: joins the job; `hndl.value` receives the handle. */
export function LAPI_Init(hndl: Ref<lapi_handle_t> | null, lapi_info: lapi_info_t | null): number {
  if (hndl === null || hndl === undefined || typeof hndl !== 'object') return S.ERR_RET_PTR_NULL
  const c = openContext(lapi_info)
  if (typeof c === 'number') return c
  hndl.value = c.handle
  return S.SUCCESS
}
/** LAPI_Term: local; later calls with `hndl` return LAPI_ERR_HNDL_INVALID. */
export function LAPI_Term(hndl: lapi_handle_t): number {
  return contextOf(hndl)?.term() ?? INVALID
}
/** LAPI_Qenv: reads one setting (Query values). */
export function LAPI_Qenv(hndl: lapi_handle_t, query: number, ret_val: Ref<number>): number {
  return contextOf(hndl)?.qenv(query, ret_val) ?? INVALID
}
/** LAPI_Senv: sets ERROR_CHK, INTERRUPT_SET, TIMEOUT or ACK_THRESHOLD. */
export function LAPI_Senv(hndl: lapi_handle_t, query: number, set_val: number): number {
  return contextOf(hndl)?.senv(query, set_val) ?? INVALID
}
/** LAPI_Msg_string: `buf.value` gets the text of `error_code`; LAPI_ERR_CODE_UNKNOWN for unknown codes. */
export function LAPI_Msg_string(error_code: number, buf: Ref<string>): number {
  if (buf === null || buf === undefined || typeof buf !== 'object') return S.ERR_RET_PTR_NULL
  const t = statusText(error_code)
  buf.value = t ?? `Unknown error code ${String(error_code)}.`
  return t === undefined ? S.ERR_CODE_UNKNOWN : S.SUCCESS
}
/** LAPI_Amsend: an active message; `hdr_hdl` names the header handler at the target (index or registered function). */
export function LAPI_Amsend(
  hndl: lapi_handle_t,
  tgt: number,
  hdr_hdl: number | hdr_hndlr_t,
  uhdr: LocalBuf,
  uhdr_len: number,
  udata: LocalBuf,
  udata_len: number,
  tgt_cntr: Addr,
  org_cntr: Addr,
  cmpl_cntr: Addr,
): number {
  return contextOf(hndl)?.amsend(tgt, hdr_hdl as HandlerFn, uhdr, uhdr_len, udata, udata_len, tgt_cntr, org_cntr, cmpl_cntr) ?? INVALID
}
/** LAPI_Amsendv: an active message gathered from `org_vec`; the target's vector header handler scatters it. */
export function LAPI_Amsendv(
  hndl: lapi_handle_t,
  tgt: number,
  hdr_hdl: number | vhdr_hndlr_t,
  uhdr: LocalBuf,
  uhdr_len: number,
  org_vec: lapi_vec_t | null,
  tgt_cntr: Addr,
  org_cntr: Addr,
  cmpl_cntr: Addr,
): number {
  return contextOf(hndl)?.amsendv(tgt, hdr_hdl as HandlerFn, uhdr, uhdr_len, org_vec, tgt_cntr, org_cntr, cmpl_cntr) ?? INVALID
}
/** LAPI_Put: `len` bytes of local `org_addr` to `tgt_addr` in task `tgt`. */
export function LAPI_Put(
  hndl: lapi_handle_t,
  tgt: number,
  len: number,
  tgt_addr: Addr,
  org_addr: LocalBuf,
  tgt_cntr: Addr,
  org_cntr: Addr,
  cmpl_cntr: Addr,
): number {
  const c = contextOf(hndl)
  return c === undefined ? INVALID : c.put(tgt, len, tgt_addr, org_addr, tgt_cntr, org_cntr, cmpl_cntr)
}
/** LAPI_Get: `len` bytes at `tgt_addr` of task `tgt` into local `org_addr`. */
export function LAPI_Get(hndl: lapi_handle_t, tgt: number, len: number, tgt_addr: Addr, org_addr: LocalBuf, tgt_cntr: Addr, org_cntr: Addr): number {
  return contextOf(hndl)?.get(tgt, len, tgt_addr, org_addr, tgt_cntr, org_cntr) ?? INVALID
}
/** LAPI_Putv: vector Put (IOVECTOR, STRIDED_XFER, GENERIC). */
export function LAPI_Putv(
  hndl: lapi_handle_t,
  tgt: number,
  tgt_vec: lapi_vec_t | null,
  org_vec: lapi_vec_t | null,
  tgt_cntr: Addr,
  org_cntr: Addr,
  cmpl_cntr: Addr,
): number {
  return contextOf(hndl)?.putv(tgt, tgt_vec, org_vec, tgt_cntr, org_cntr, cmpl_cntr) ?? INVALID
}
/** LAPI_Getv: vector Get. */
export function LAPI_Getv(hndl: lapi_handle_t, tgt: number, tgt_vec: lapi_vec_t | null, org_vec: lapi_vec_t | null, tgt_cntr: Addr, org_cntr: Addr): number {
  return contextOf(hndl)?.getv(tgt, tgt_vec, org_vec, tgt_cntr, org_cntr) ?? INVALID
}
/** LAPI_Rmw: atomic op on a 32-bit word of task `tgt`; `prev_tgt_val` gets the old value (CAS: TRUE/FALSE). */
export function LAPI_Rmw(
  hndl: lapi_handle_t,
  op: number,
  tgt: number,
  tgt_var: Addr,
  in_val: Int32Array | number[] | null,
  prev_tgt_val: Ref<number> | null,
  org_cntr: Addr,
): number {
  return contextOf(hndl)?.rmw(op, tgt, tgt_var, in_val, prev_tgt_val, org_cntr) ?? INVALID
}
/** LAPI_Rmw64: the same on a 64-bit word (8-byte aligned). */
export function LAPI_Rmw64(
  hndl: lapi_handle_t,
  op: number,
  tgt: number,
  tgt_var: Addr,
  in_val: BigInt64Array | bigint[] | null,
  prev_tgt_val: Ref<bigint> | null,
  org_cntr: Addr,
): number {
  return contextOf(hndl)?.rmw64(op, tgt, tgt_var, in_val, prev_tgt_val, org_cntr) ?? INVALID
}
/** LAPI_Xfer: one command object; `Xfer_type` selects the member. */
export function LAPI_Xfer(hndl: lapi_handle_t, xfer_cmd: lapi_xfer_t | null): number {
  return contextOf(hndl)?.xfer(xfer_cmd) ?? INVALID
}
/** LAPI_Setcntr. */
export function LAPI_Setcntr(hndl: lapi_handle_t, cntr: Addr, val: number): number {
  return contextOf(hndl)?.setcntr(cntr, val) ?? INVALID
}
/** LAPI_Getcntr. */
export function LAPI_Getcntr(hndl: lapi_handle_t, cntr: Addr, val: Ref<number>): number {
  return contextOf(hndl)?.getcntr(cntr, val) ?? INVALID
}
/** LAPI_Waitcntr: blocks until `cntr` ≥ `val`, then subtracts `val`; `cur_cntr_val` gets what is left. */
export function LAPI_Waitcntr(hndl: lapi_handle_t, cntr: Addr, val: number, cur_cntr_val: Ref<number> | null): number {
  const c = contextOf(hndl)
  return c === undefined ? INVALID : c.waitcntr(cntr, val, cur_cntr_val)
}
/** LAPI_Probe: one round of the dispatcher. */
export function LAPI_Probe(hndl: lapi_handle_t): number {
  return contextOf(hndl)?.probe() ?? INVALID
}
/** LAPI_Msgpoll: runs the dispatcher up to `cnt` times; `info.status` gets the MsgState bits. */
export function LAPI_Msgpoll(hndl: lapi_handle_t, cnt: number, info: lapi_msg_info_t | null): number {
  return contextOf(hndl)?.msgpoll(cnt, info) ?? INVALID
}
/** LAPI_Fence. */
export function LAPI_Fence(hndl: lapi_handle_t): number {
  return contextOf(hndl)?.fence() ?? INVALID
}
/** LAPI_Gfence: collective fence and barrier. */
export function LAPI_Gfence(hndl: lapi_handle_t): number {
  return contextOf(hndl)?.gfence() ?? INVALID
}
/** LAPI_Address_init: all-gather of one number (or a header handler, registered) per task into `add_tab`. */
export function LAPI_Address_init(hndl: lapi_handle_t, my_addr: number | HandlerFn | hdr_hndlr_t | vhdr_hndlr_t | null, add_tab: number[] | null): number {
  return contextOf(hndl)?.addressInit(my_addr as HandlerFn, add_tab) ?? INVALID
}
/** LAPI_Address_init64: all-gather of one 64-bit value per task. */
export function LAPI_Address_init64(hndl: lapi_handle_t, my_addr: bigint, add_tab: bigint[] | null): number {
  return contextOf(hndl)?.addressInit64(my_addr, add_tab) ?? INVALID
}
/** LAPI_Addr_set: registers a header handler at `addr_hndl` (1..LOC_ADDRTBL_SZ-1). */
export function LAPI_Addr_set(hndl: lapi_handle_t, addr: HandlerFn | hdr_hndlr_t | vhdr_hndlr_t | null, addr_hndl: number): number {
  return contextOf(hndl)?.addrSet(addr as HandlerFn, addr_hndl) ?? INVALID
}
/** LAPI_Addr_get: the handler registered at `addr_hndl`. */
export function LAPI_Addr_get(hndl: lapi_handle_t, addr: Ref<HandlerFn | null>, addr_hndl: number): number {
  return contextOf(hndl)?.addrGet(addr, addr_hndl) ?? INVALID
}
/** LAPI_Purge_totask: local; stops traffic to `dest` until LAPI_Resume_totask. */
export function LAPI_Purge_totask(hndl: lapi_handle_t, dest: number): number {
  return contextOf(hndl)?.purgeTotask(dest) ?? INVALID
}
/** LAPI_Resume_totask. */
export function LAPI_Resume_totask(hndl: lapi_handle_t, dest: number): number {
  return contextOf(hndl)?.resumeTotask(dest) ?? INVALID
}
/** LAPIX_Malloc: `nbytes` zero-filled 8-byte aligned bytes of the own segment; `ret.value` gets the Addr. */
export function LAPIX_Malloc(hndl: lapi_handle_t, nbytes: number, ret: Ref<Addr>): number {
  return contextOf(hndl)?.malloc(nbytes, ret) ?? INVALID
}
/** LAPIX_Free: frees what LAPIX_Malloc returned. */
export function LAPIX_Free(hndl: lapi_handle_t, addr: Addr): number {
  return contextOf(hndl)?.free(addr) ?? INVALID
}
/** LAPIX_View: a live view of the own segment; throws RangeError out of range or for a bad handle. */
export function LAPIX_View(hndl: lapi_handle_t, addr: Addr, nbytes: number): Uint8Array {
  const c = contextOf(hndl)
  if (c === undefined) throw new RangeError(`LAPIX_View: invalid handle ${String(hndl)}`)
  return c.view(addr, nbytes)
}

// ── constants with IBM's names ──
export const LAPI_SUCCESS = S.SUCCESS
export { LAPI_ERR_FIRSTCODE, LAPI_ERR_LASTCODE }
export const LAPI_ERR_UNKNOWN = S.ERR_UNKNOWN
export const LAPI_ERR_ALL_HNDL_IN_USE = S.ERR_ALL_HNDL_IN_USE
export const LAPI_ERR_INFO_NULL = S.ERR_INFO_NULL
export const LAPI_ERR_HDR_HNDLR_NULL = S.ERR_HDR_HNDLR_NULL
export const LAPI_ERR_TIMEOUT = S.ERR_TIMEOUT
export const LAPI_ERR_HNDL_INVALID = S.ERR_HNDL_INVALID
export const LAPI_ERR_RET_PTR_NULL = S.ERR_RET_PTR_NULL
export const LAPI_ERR_ADDR_HNDL_RANGE = S.ERR_ADDR_HNDL_RANGE
export const LAPI_ERR_ADDR_TBL_NULL = S.ERR_ADDR_TBL_NULL
export const LAPI_ERR_TGT_PURGED = S.ERR_TGT_PURGED
export const LAPI_ERR_MULTIPLE_WAITERS = S.ERR_MULTIPLE_WAITERS
export const LAPI_ERR_MEMORY_EXHAUSTED = S.ERR_MEMORY_EXHAUSTED
export const LAPI_ERR_INFO_NONZERO = S.ERR_INFO_NONZERO
export const LAPI_ERR_ORG_ADDR_NULL = S.ERR_ORG_ADDR_NULL
export const LAPI_ERR_TGT_ADDR_NULL = S.ERR_TGT_ADDR_NULL
export const LAPI_ERR_DATA_LEN = S.ERR_DATA_LEN
export const LAPI_ERR_TGT = S.ERR_TGT
export const LAPI_ERR_UHDR_NULL = S.ERR_UHDR_NULL
export const LAPI_ERR_UHDR_LEN = S.ERR_UHDR_LEN
export const LAPI_ERR_HDR_LEN = S.ERR_HDR_LEN
export const LAPI_ERR_ORG_EXTENT = S.ERR_ORG_EXTENT
export const LAPI_ERR_ORG_STRIDE = S.ERR_ORG_STRIDE
export const LAPI_ERR_ORG_VEC_ADDR = S.ERR_ORG_VEC_ADDR
export const LAPI_ERR_ORG_VEC_LEN = S.ERR_ORG_VEC_LEN
export const LAPI_ERR_ORG_VEC_NULL = S.ERR_ORG_VEC_NULL
export const LAPI_ERR_ORG_VEC_TYPE = S.ERR_ORG_VEC_TYPE
export const LAPI_ERR_STRIDE_ORG_VEC_ADDR_NULL = S.ERR_STRIDE_ORG_VEC_ADDR_NULL
export const LAPI_ERR_STRIDE_TGT_VEC_ADDR_NULL = S.ERR_STRIDE_TGT_VEC_ADDR_NULL
export const LAPI_ERR_TGT_EXTENT = S.ERR_TGT_EXTENT
export const LAPI_ERR_TGT_STRIDE = S.ERR_TGT_STRIDE
export const LAPI_ERR_TGT_VEC_ADDR = S.ERR_TGT_VEC_ADDR
export const LAPI_ERR_TGT_VEC_LEN = S.ERR_TGT_VEC_LEN
export const LAPI_ERR_TGT_VEC_NULL = S.ERR_TGT_VEC_NULL
export const LAPI_ERR_TGT_VEC_TYPE = S.ERR_TGT_VEC_TYPE
export const LAPI_ERR_VEC_NUM_DIFF = S.ERR_VEC_NUM_DIFF
export const LAPI_ERR_VEC_TYPE_DIFF = S.ERR_VEC_TYPE_DIFF
export const LAPI_ERR_VEC_LEN_DIFF = S.ERR_VEC_LEN_DIFF
export const LAPI_ERR_MSG_INFO_NULL = S.ERR_MSG_INFO_NULL
export const LAPI_ERR_POLLING_NET = S.ERR_POLLING_NET
export const LAPI_ERR_CNTR_NULL = S.ERR_CNTR_NULL
export const LAPI_ERR_CNTR_VAL = S.ERR_CNTR_VAL
export const LAPI_ERR_QUERY_TYPE = S.ERR_QUERY_TYPE
export const LAPI_ERR_IN_VAL_NULL = S.ERR_IN_VAL_NULL
export const LAPI_ERR_RMW_OP = S.ERR_RMW_OP
export const LAPI_ERR_TGT_VAR_NULL = S.ERR_TGT_VAR_NULL
export const LAPI_ERR_SET_VAL = S.ERR_SET_VAL
export const LAPI_ERR_OP_SZ = S.ERR_OP_SZ
export const LAPI_ERR_XFER_CMD = S.ERR_XFER_CMD
export const LAPI_ERR_CATALOG_FAIL = S.ERR_CATALOG_FAIL
export const LAPI_ERR_CODE_UNKNOWN = S.ERR_CODE_UNKNOWN

export const TASK_ID = Query.TASK_ID
export const NUM_TASKS = Query.NUM_TASKS
export const MAX_UHDR_SZ = Query.MAX_UHDR_SZ
export const MAX_DATA_SZ = Query.MAX_DATA_SZ
export const ERROR_CHK = Query.ERROR_CHK
export const TIMEOUT = Query.TIMEOUT
export const MIN_TIMEOUT = Query.MIN_TIMEOUT
export const MAX_TIMEOUT = Query.MAX_TIMEOUT
export const INTERRUPT_SET = Query.INTERRUPT_SET
export const MAX_PORTS = Query.MAX_PORTS
export const MAX_PKT_SZ = Query.MAX_PKT_SZ
export const NUM_REX_BUFS = Query.NUM_REX_BUFS
export const REX_BUF_SZ = Query.REX_BUF_SZ
export const LOC_ADDRTBL_SZ = Query.LOC_ADDRTBL_SZ
export const EPOCH_NUM = Query.EPOCH_NUM
export const USE_THRESH = Query.USE_THRESH
export const RCV_FIFO_SIZE = Query.RCV_FIFO_SIZE
export const MAX_ATOM_SIZE = Query.MAX_ATOM_SIZE
export const BUF_CP_SIZE = Query.BUF_CP_SIZE
export const MAX_PKTS_OUT = Query.MAX_PKTS_OUT
export const ACK_THRESHOLD = Query.ACK_THRESHOLD
export const QUERY_SHM_ENABLED = Query.QUERY_SHM_ENABLED
export const QUERY_SHM_NUM_TASKS = Query.QUERY_SHM_NUM_TASKS

export const FETCH_AND_ADD = RmwOp.FETCH_AND_ADD
export const FETCH_AND_OR = RmwOp.FETCH_AND_OR
export const SWAP = RmwOp.SWAP
export const COMPARE_AND_SWAP = RmwOp.COMPARE_AND_SWAP

export const LAPI_GEN_IOVECTOR = VecType.LAPI_GEN_IOVECTOR
export const LAPI_GEN_STRIDED_XFER = VecType.LAPI_GEN_STRIDED_XFER
export const LAPI_GEN_GENERIC = VecType.LAPI_GEN_GENERIC

export const LAPI_GET_XFER = XferType.LAPI_GET_XFER
export const LAPI_AM_XFER = XferType.LAPI_AM_XFER
export const LAPI_PUT_XFER = XferType.LAPI_PUT_XFER
export const LAPI_GETV_XFER = XferType.LAPI_GETV_XFER
export const LAPI_PUTV_XFER = XferType.LAPI_PUTV_XFER
export const LAPI_AMV_XFER = XferType.LAPI_AMV_XFER
export const LAPI_RMW_XFER = XferType.LAPI_RMW_XFER

export const LAPI_SHARE_PROTOCOL = InitFlag.LAPI_SHARE_PROTOCOL
export const LAPI_PSS_GPFS = InitFlag.LAPI_PSS_GPFS
export const LAPI_INTERRUPT_OFF = InitFlag.LAPI_INTERRUPT_OFF
export const LAPI_NORMAL = RetFlag.LAPI_NORMAL
export const LAPI_LOCAL_STATE = RetFlag.LAPI_LOCAL_STATE
export const LAPI_SEND_REPLY = RetFlag.LAPI_SEND_REPLY
export const LAPI_DELIVER_MSG = CtlFlag.LAPI_DELIVER_MSG
export const LAPI_BURY_MSG = CtlFlag.LAPI_BURY_MSG
export const LAPI_DROP_PKT = CtlFlag.LAPI_DROP_PKT
export const GET_ERR = ErrClass.GET_ERR
export const PUT_ERR = ErrClass.PUT_ERR
export const RMW_ERR = ErrClass.RMW_ERR
export const AM_ERR = ErrClass.AM_ERR
export const INT_ERR = ErrClass.INT_ERR
export const TMR_ERR = ErrClass.TMR_ERR
export const LAPI_SEND_COMPLETE = MsgState.LAPI_SEND_COMPLETE
export const LAPI_RECV_COMPLETE = MsgState.LAPI_RECV_COMPLETE
export const LAPI_BOTH_COMPLETE = MsgState.LAPI_BOTH_COMPLETE
export const LAPI_POLLING_NET = MsgState.LAPI_POLLING_NET
export const LAPI_DISP_CNTR = MsgState.LAPI_DISP_CNTR
export const USE_TGT_VEC_TYPE = XferFlag.USE_TGT_VEC_TYPE
export { LAPI_MAX_MSG_SZ, LAPI_ADDR_NULL, TRUE, FALSE } from './base/constants.js'
export { LAPI_MAX_ERR_STRING } from './base/status.js'

/** Every LAPI code by C name without the prefix (`LapiStatus.ERR_TGT` = 428). */
export { LapiStatus } from './base/status.js'
