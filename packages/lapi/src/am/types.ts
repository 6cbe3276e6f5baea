/**
 * The handler types of LAPI's active messages, as programs and layered libraries write them: the
 * header handlers of LAPI_Amsend and LAPI_Amsendv, what a header handler learns about its message
 * (`lapi_return_info_t`), and the in-place receivers of a library's one-packet messages.
 */
import type { Addr, compl_hndlr_t, lapi_vec_t, Ref } from '../base/types.js'

/** `lapi_return_info_t`: what a header handler learns about the message and may set. */
export interface lapi_return_info_t {
  msg_len: number
  src: number
  ret_flags: number
  ctl_flags: number
  /**
   * The whole udata when it came in the first packet, else null: valid during the call only (a
   * view of the packet in the inbox, or a copy; what the handler writes into it is lost).
   */
  udata_one_pkt_ptr: Uint8Array | null
}

/** Header handler of LAPI_Amsend: returns where the data lands (an Addr of the own segment, a Uint8Array, or null). */
export type hdr_hndlr_t = (
  hndl: number,
  uhdr: Uint8Array,
  uhdr_len: number,
  msg_len: lapi_return_info_t,
  comp_h: Ref<compl_hndlr_t | null>,
  user_info: Ref<unknown>,
) => Addr | Uint8Array | null
/**
 * In-place receiver of a layered library's one-packet messages (`Lapi.setLibraryShortHandler`):
 * `words` views the receiving inbox, the user header starts at word `at` (8-aligned) and is
 * followed by the data (8-aligned too); `uhdrLen` and `dataLen` are in bytes (together at most a
 * packet). It runs as a header handler does (no sending, no waiting) and must copy out what it
 * keeps: the packet's slot is reused once it returns. The message is complete when it returns.
 */
export type short_hndlr_t = (words: Int32Array, at: number, uhdrLen: number, dataLen: number, src: number) => void
/** Header handler of LAPI_Amsendv: gets the origin's piece lengths, returns the target vector. */
export type vhdr_hndlr_t = (
  hndl: number,
  uhdr: Uint8Array,
  uhdr_len: number,
  len_vec: number[],
  comp_h: Ref<compl_hndlr_t | null>,
  user_info: Ref<unknown>,
) => lapi_vec_t | null
