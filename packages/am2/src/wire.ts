/**
 * The AM-2 message header (docs/am2.md, "Wire format"): the LAPI user header of every am2 message
 * (but those under the compact header, K_COMPACT below) starts with these 32 bytes, little-endian,
 * followed by the handler arguments (4 bytes each, padded to a multiple of 8) and, on the packed
 * path, the payload (padded to a multiple of 8).
 */

/** Bytes of the fixed header. */
export const HDR_BYTES = 32

// offsets
export const O_KIND = 0 // u8: category (bits 0-1) | K_* flags
export const O_HANDLER = 1 // u8: handler index at the receiver (a reply handler for GET)
export const O_NARGS = 2 // u8: 0..16
export const O_STATUS = 3 // u8: returned messages: the AM-2 status (EBADTAG ...)
export const O_DST = 4 // u16: receiving endpoint's local id in its task
export const O_SRC = 6 // u16: sending endpoint's local id in its task
export const O_TAG_LO = 8 // u32: the tag stamped by the sender (low half)
export const O_TAG_HI = 12 // u32: (high half)
export const O_NBYTES = 16 // u32: payload bytes
export const O_SLOT = 20 // i32: request instance (translation index * 1024 + instance), echoed by the reply; -1 none
export const O_OFF = 24 // u32: Long destination offset
export const O_OFF2 = 28 // u32: GetXfer source offset
export const O_ARGS = 32

// <layout am2-header> written by scripts/gen-layouts.mjs from its table: do not edit by hand
// the full header by words (Int32 index; the byte offsets O_* above name the same fields):
//   0       HW_KIND
//   1       HW_ENDPOINTS
//   2       HW_TAG_LO
//   3       HW_TAG_HI
//   4       HW_NBYTES
//   5       HW_SLOT
//   6       HW_OFF
//   7       HW_OFF2
/** O_KIND | O_HANDLER << 8 | O_NARGS << 16 | O_STATUS << 24. */
export const HW_KIND = 0
/** O_DST | O_SRC << 16. */
export const HW_ENDPOINTS = 1
/** O_TAG_LO. */
export const HW_TAG_LO = 2
/** O_TAG_HI. */
export const HW_TAG_HI = 3
/** O_NBYTES. */
export const HW_NBYTES = 4
/** O_SLOT. */
export const HW_SLOT = 5
/** O_OFF. */
export const HW_OFF = 6
/** O_OFF2. */
export const HW_OFF2 = 7
/** Words of the full header: the arguments follow. */
export const HDR_WORDS = 8
// </layout am2-header>

// <layout am2-compact> written by scripts/gen-layouts.mjs from its table: do not edit by hand
// the compact header by words (Int32 index): its arguments follow, then a Medium's count or a Long's count and offset:
//   0       CW_KIND
//   1       CW_ENDPOINTS
//   2       CW_TAG_LO
//   3       CW_TAG_HI
//   4       CW_SLOT
/** kind | K_COMPACT | handler << 8 | arguments << 16. */
export const CW_KIND = 0
/** Receiving endpoint | sending endpoint << 16. */
export const CW_ENDPOINTS = 1
/** The tag's low half. */
export const CW_TAG_LO = 2
/** Its high half. */
export const CW_TAG_HI = 3
/** The request instance (as O_SLOT). */
export const CW_SLOT = 4
/** Words of the compact header before its arguments. */
export const COMPACT_WORDS = 5
// </layout am2-compact>

// kind bits
export const CAT_SHORT = 0
export const CAT_MEDIUM = 1
export const CAT_LONG = 2
export const CAT_MASK = 3
/** A request (else a reply). */
export const K_REQUEST = 4
/** A message that came back undeliverable (O_STATUS says why). */
export const K_RETURNED = 8
/** The automatic empty reply of a request whose handler did not reply (no handler runs). */
export const K_AUTO = 16
/** AM_GetXferM: the receiver sends `nbytes` of its segment at O_OFF2 back as a Long reply. */
export const K_GET = 32
/** The packet carries the payload after the arguments (packed fast path). */
export const K_PACKED = 64
/**
 * The compact header, of a message that is not returned and not a GetXfer, sent as a one-packet
 * LAPI message and read in place (docs/am2.md, "Wire format"): kind word, endpoints, tag, request
 * instance, the arguments; then, for a Medium, its payload count and for a Long its count and
 * destination offset; then a Medium's or Long's payload. A Short has no count and no offsets.
 */
export const K_COMPACT = 128
/**
 * Arguments a compact header carries at most: all of a Short's (AM_MAX_SHORT), 20 + 4 × 16 = 84
 * bytes, 88 with the padding (a Short with up to 5 arguments, 40 bytes, lies in the first line of
 * LAPI's BARE packet).
 */
export const COMPACT_MAX_ARGS = 16
/** Bytes of a compact Short with `nargs` arguments (a multiple of 8). */
export function compactBytes(nargs: number): number {
  return (20 + 4 * nargs + 7) & ~7
}

/**
 * Where the payload of a compact Medium or Long (`cat`) with `nargs` arguments starts, in bytes from
 * the header: after the arguments, a Medium's count word or a Long's count and offset words, and 4
 * zero bytes where they end off a multiple of 8. (The header starts 8-aligned in the packet, so
 * the payload does too: Uint8Array.prototype.set between a SharedArrayBuffer and a buffer whose
 * offsets differ mod 8 copies byte by byte, 6 times slower, measured on Node 20: 294 ns for 992
 * bytes against 49.)
 */
export function compactPayloadAt(nargs: number, cat: number): number {
  return (20 + 4 * nargs + (cat === CAT_LONG ? 8 : 4) + 7) & ~7
}

/** Bytes of a compact message of category `cat` with `nargs` arguments and `nbytes` of payload (a multiple of 8). */
export function compactBytesFor(nargs: number, cat: number, nbytes: number): number {
  return (compactPayloadAt(nargs, cat) + nbytes + 7) & ~7
}

/**
 * Slot value of messages that hold no flow-control instance (loopback). -1, so that it stays a
 * small integer in V8 (0xFFFFFFFF would be a heap number, allocated when passed between calls).
 */
export const NO_SLOT = -1
/** Instances per peer are numbered below this (AMUDP's 10-bit instance field). */
export const DEPTH_BITS = 10
export const MAX_DEPTH = 1 << DEPTH_BITS

/** Bytes of a header with `nargs` arguments (a multiple of 8). */
export function headerBytes(nargs: number): number {
  return (HDR_BYTES + 4 * nargs + 7) & ~7
}

/** The AM-2 opcode (AM_REQUEST_M …) of a message kind. */
export function opcodeOf(kind: number): number {
  return ((kind & K_REQUEST) !== 0 ? 1 : 4) + (kind & CAT_MASK)
}
