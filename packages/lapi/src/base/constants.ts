/** LAPI's enumerations and flag values, with IBM's names and numbers (lapi.h). */

/** `lapi_query_t`: what LAPI_Qenv reads and LAPI_Senv sets. */
export const Query = {
  TASK_ID: 0,
  NUM_TASKS: 1,
  MAX_UHDR_SZ: 2,
  MAX_DATA_SZ: 3,
  ERROR_CHK: 4,
  TIMEOUT: 5,
  MIN_TIMEOUT: 6,
  MAX_TIMEOUT: 7,
  INTERRUPT_SET: 8,
  MAX_PORTS: 9,
  MAX_PKT_SZ: 10,
  NUM_REX_BUFS: 11,
  REX_BUF_SZ: 12,
  LOC_ADDRTBL_SZ: 13,
  EPOCH_NUM: 14,
  USE_THRESH: 15,
  RCV_FIFO_SIZE: 16,
  MAX_ATOM_SIZE: 17,
  BUF_CP_SIZE: 18,
  MAX_PKTS_OUT: 19,
  ACK_THRESHOLD: 20,
  QUERY_SHM_ENABLED: 21,
  QUERY_SHM_NUM_TASKS: 22,
  QUERY_SHM_TASKS: 23,
  QUERY_STATISTICS: 24,
  PRINT_STATISTICS: 25,
  QUERY_SHM_STATISTICS: 26,
  QUERY_LOCAL_SEND_STATISTICS: 27,
  BULK_XFER: 28,
  BULK_MIN_MSG_SIZE: 29,
  LAST_QUERY: 37,
} as const
export type QueryType = (typeof Query)[keyof typeof Query]

/** `RMW_ops_t`. */
export const RmwOp = { FETCH_AND_ADD: 0, FETCH_AND_OR: 1, SWAP: 2, COMPARE_AND_SWAP: 3 } as const
export type RmwOpCode = (typeof RmwOp)[keyof typeof RmwOp]

/** `lapi_vectype_t`. */
export const VecType = { LAPI_GEN_IOVECTOR: 0, LAPI_GEN_STRIDED_XFER: 1, LAPI_GEN_GENERIC: 2 } as const
export type VecTypeCode = (typeof VecType)[keyof typeof VecType]

/** `lapi_xfer_type_t`: the `Xfer_type` member of a LAPI_Xfer command. */
export const XferType = {
  LAPI_GET_XFER: 0,
  LAPI_AM_XFER: 1,
  LAPI_PUT_XFER: 2,
  LAPI_GETV_XFER: 3,
  LAPI_PUTV_XFER: 4,
  LAPI_AMV_XFER: 5,
  LAPI_RMW_XFER: 6,
  LAPI_DGSP_XFER: 7,
  LAPI_RDMA_XFER: 8,
  LAPI_AM_LW_XFER: 9,
  LAPI_AMX_XFER: 10,
  LAPI_MC_XFER: 11,
  LAPI_LAST_XFER: 12,
} as const

/** Bits of `lapi_info_t.protocol` on input to LAPI_Init. */
export const InitFlag = {
  LAPI_SHARE_PROTOCOL: 0x80000000,
  LAPI_PSS_GPFS: 0x40000000,
  LAPI_INTERRUPT_OFF: 0x20000000,
} as const

/** `lapi_return_info_t.ret_flags`. */
export const RetFlag = { LAPI_NORMAL: 0, LAPI_LOCAL_STATE: 1, LAPI_SEND_REPLY: 2 } as const
/** `lapi_return_info_t.ctl_flags`. */
export const CtlFlag = { LAPI_DELIVER_MSG: 0, LAPI_BURY_MSG: 1, LAPI_DROP_PKT: 2 } as const

/** `lapi_err_t`: the class of an asynchronous error given to the error handler. */
export const ErrClass = { GET_ERR: 0, PUT_ERR: 1, RMW_ERR: 2, AM_ERR: 3, INT_ERR: 4, TMR_ERR: 5 } as const

/** `lapi_msg_state_t`: bits of `lapi_msg_info_t.status` after LAPI_Msgpoll. */
export const MsgState = {
  LAPI_SEND_COMPLETE: 1,
  LAPI_RECV_COMPLETE: 2,
  LAPI_BOTH_COMPLETE: 3,
  LAPI_POLLING_NET: 4,
  LAPI_DISP_CNTR: 8,
} as const

/** Flags of LAPI_Xfer commands. */
export const XferFlag = {
  USE_TGT_VEC_TYPE: 0x2,
  LAPI_USE_LAZY_ACKS: 0x4,
  BUFFER_BOTH_CONTIGUOUS: 0x10,
  LAPI_NOT_USE_BULK_XFER: 0x20,
  LAPI_USE_BULK_XFER: 0x40,
  LAPI_NOT_STRIPE: 0x80,
  LAPI_NO_LOCAL_COPY: 0x100,
  LAPI_RC_NO_LRU: 0x200,
} as const

/** LAPI_MAX_MSG_SZ of a 32-bit task: the largest length one call may move, in bytes. */
export const LAPI_MAX_MSG_SZ = 0x7fffffff
/** Fortran's NULL address. */
export const LAPI_ADDR_NULL = 0
/** An invalid handle value. */
export const LAPI_VOID_HANDLE = 0xffffffff
/** TRUE / FALSE as LAPI_Rmw's COMPARE_AND_SWAP writes them into prev_tgt_val. */
export const TRUE = 1
export const FALSE = 0
