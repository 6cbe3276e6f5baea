/**
 * The C-shaped types of the C-style face (docs/lapi.md): addresses are byte offsets into a task's segment, out-parameters
 * are `Ref<T>`, vectors and Xfer commands are plain objects with LAPI's field names.
 */

/** A byte offset into the owning task's segment; 0 is NULL. */
export type Addr = number
/** A counter: the Addr of an 8-byte aligned word in a segment; 0 means "no counter". */
export type lapi_cntr_t = Addr
export type lapi_handle_t = number
/** An out-parameter: the call writes `value`. */
export interface Ref<T> {
  value: T
}
/** Makes a Ref holding `init`. */
export function ref<T>(init: T): Ref<T> {
  return { value: init }
}
/** Local memory: an Addr in the caller's segment, or a Uint8Array (its first `len` bytes are used). */
export type LocalBuf = Addr | Uint8Array | null

/**
 * A task's segment as a shared WebAssembly.Memory (`Lapi.segmentMemory`): pass it to
 * `WebAssembly.Instance` as an imported memory. (Declared here by what this package reads of it,
 * `buffer`, as the library is built without the WebAssembly types.)
 */
export interface SegmentMemory {
  readonly buffer: SharedArrayBuffer
}

/** Asynchronous error handler given to LAPI_Init (err_type is an ErrClass value). */
export type LAPI_err_hndlr = (hndl: lapi_handle_t, error_code: number, err_type: number, task_id: number, src: number) => void

/** `lapi_info_t`: LAPI_Init's options. `protocol` takes InitFlag bits (LAPI_INTERRUPT_OFF). */
export interface lapi_info_t {
  err_hndlr?: LAPI_err_hndlr | null
  protocol?: number
  epoch_num?: number
}

/** `lapi_sh_info_t`: what a send-completion handler learns. */
export interface lapi_sh_info_t {
  src: number
  reason: number
}
/** Send-completion handler of LAPI_Xfer (runs when the origin buffers may be reused). */
export type scompl_hndlr_t = (hndl: lapi_handle_t, sinfo: unknown, info: lapi_sh_info_t) => void
/** Completion handler (LAPI_Get/Getv Xfer at the origin; Amsend at the target). */
export type compl_hndlr_t = (hndl: lapi_handle_t, user_info: unknown) => void

/**
 * `lapi_vec_t`. IOVECTOR and GENERIC: `info[i]` is piece i's address (an Addr, or on the origin
 * side of a transfer also a Uint8Array) and `len[i]` its length. STRIDED_XFER: `info` is
 * `[base, block_size, stride]` (numbers), `num_vecs` the number of blocks, `len` unused.
 */
export interface lapi_vec_t {
  vec_type: number
  num_vecs: number
  info: Array<Addr | Uint8Array>
  len: number[] | null
}

/** `lapi_msg_info_t` of LAPI_Msgpoll. */
export interface lapi_msg_info_t {
  status: number
}

export interface lapi_get_t {
  Xfer_type: 0
  flags?: number
  tgt: number
  tgt_addr: Addr
  org_addr: LocalBuf
  len: number
  tgt_cntr?: Addr
  org_cntr?: Addr
  chndlr?: compl_hndlr_t | null
  cinfo?: unknown
}
export interface lapi_put_t {
  Xfer_type: 2
  flags?: number
  tgt: number
  tgt_addr: Addr
  org_addr: LocalBuf
  len: number
  shdlr?: scompl_hndlr_t | null
  sinfo?: unknown
  tgt_cntr?: Addr
  org_cntr?: Addr
  cmpl_cntr?: Addr
}
export interface lapi_getv_t {
  Xfer_type: 3
  flags?: number
  tgt: number
  org_vec: lapi_vec_t | null
  tgt_vec: lapi_vec_t | null
  tgt_cntr?: Addr
  org_cntr?: Addr
  chndlr?: compl_hndlr_t | null
  cinfo?: unknown
}
export interface lapi_putv_t {
  Xfer_type: 4
  flags?: number
  tgt: number
  shdlr?: scompl_hndlr_t | null
  sinfo?: unknown
  org_vec: lapi_vec_t | null
  tgt_vec: lapi_vec_t | null
  tgt_cntr?: Addr
  org_cntr?: Addr
  cmpl_cntr?: Addr
}
export interface lapi_rmw_t {
  Xfer_type: 6
  op: number
  tgt: number
  size: number
  tgt_var: Addr
  in_val: Int32Array | number[] | BigInt64Array | bigint[] | null
  prev_tgt_val?: Ref<number> | Ref<bigint> | null
  org_cntr?: Addr
  shdlr?: scompl_hndlr_t | null
  sinfo?: unknown
}
/** Any LAPI_Xfer command this build knows; `Xfer_type` selects the member. */
export type lapi_xfer_t = lapi_get_t | lapi_put_t | lapi_getv_t | lapi_putv_t | lapi_rmw_t | { Xfer_type: number; [k: string]: unknown }
