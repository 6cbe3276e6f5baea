/**
 * The packet header every inbox slot starts with: one fixed little-endian layout read and written
 * through DataView (docs/wire-format.md has the same table).
 *
 *   offset size field
 *   0      1    version (PACKET_VERSION)
 *   1      1    type (PacketType)
 *   2      2    flags
 *   4      4    src task
 *   8      4    payload bytes in this packet (≤ MAX_PKT_SZ)
 *   12     4    message id (per sender)
 *   16     8    message offset of this packet's payload
 *   24     8    message length
 *   32     32   type-specific fields
 *   64     …    payload
 *
 * A packet whose version, type or length is wrong is dropped and counted by the dispatcher; it
 * never throws.
 */
export const PACKET_VERSION = 1
export const PACKET_HEADER_BYTES = 64

export const P_VERSION = 0
export const P_TYPE = 1
export const P_FLAGS = 2
export const P_SRC = 4
export const P_LEN = 8
export const P_MSG_ID = 12
export const P_OFFSET = 16
export const P_MSG_LEN = 24
export const P_EXTRA = 32
