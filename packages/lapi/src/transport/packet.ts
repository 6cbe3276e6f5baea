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
import { SLOT_PACKET, SLOT_STAMP_BYTES } from '../layout/ring.js'

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

/**
 * Packet type: a whole one-packet Amsend behind a short header. It starts at the slot's body
 * (slot + 4), not at SLOT_PACKET, and has its own 28-byte header, in little-endian words: version |
 * type << 8 (flags 0), source task, length | uhdr length << 16, message id, handler index, target
 * counter, completion counter; the user header and the data follow at body + 28 (slot + 32,
 * 8-aligned). Used when uhdr + data fit a packet (shortRoomFor) and the data is not sent by
 * rendezvous; with uhdr + data ≤ LINE_ROOM the message costs the two tasks one line, the one whose
 * STAMP publishes it. A packet of the common format has 0 in the body's first word, so the two
 * never look alike.
 */
export const T_AM_SHORT = 6
/**
 * Packet type: a SHORT packet without counters, what prepareShort writes (a layered library's
 * one-packet message, which moves no counter): the SHORT header less its two counter words, 20 bytes
 * (version | type << 8, source task, length | uhdr length << 16, message id, handler index); the
 * user header follows at body + 20 (slot + 24, 8-aligned). It leaves LINE_ROOM + 8 bytes of the
 * slot's first line to the user header.
 */
export const T_AM_BARE = 7
// <layout short-packet> written by scripts/gen-layouts.mjs from its table: do not edit by hand
// the header of a SHORT packet (T_AM_SHORT) from its slot's body (Int32 index); a BARE packet (T_AM_BARE) has its first BARE_HEADER_WORDS:
//   0       SW_KIND
//   1       SW_SRC
//   2       SW_LENS
//   3       SW_MSG_ID
//   4       SW_HANDLER
//   5       BARE_HEADER_WORDS
//   5       SW_TGT_CNTR
//   6       SW_CMPL_CNTR
/** PACKET_VERSION | type << 8 (flags 0): never 0, which tells it from a packet of the common format. */
export const SW_KIND = 0
/** The source task. */
export const SW_SRC = 1
/** User header and data bytes | user header bytes << 16. */
export const SW_LENS = 2
/** The message id (per sender). */
export const SW_MSG_ID = 3
/** The header handler's index. */
export const SW_HANDLER = 4
/** Words of a BARE packet's header (it has no counters): its user header follows. */
export const BARE_HEADER_WORDS = 5
/** The target counter (a word index in the target's segment, 0 = none). */
export const SW_TGT_CNTR = 5
/** The completion counter (likewise). */
export const SW_CMPL_CNTR = 6
/** Words of a SHORT packet's header: its user header (then data) follows. */
export const SHORT_HEADER_WORDS = 7
// </layout short-packet>
/** Where a SHORT packet's user header (then data) starts, from the slot's body. */
export const SHORT_HEADER_BYTES = 4 * SHORT_HEADER_WORDS
/** Where a BARE packet's user header starts, from the slot's body. */
export const BARE_HEADER_BYTES = 4 * BARE_HEADER_WORDS
/** Where a packet of the common format starts, from its slot's body (after the word that tells it from a SHORT one). */
export const BODY_PACKET = SLOT_PACKET - SLOT_STAMP_BYTES

/**
 * Bytes of the slot body at `off` that carry its packet (either format), as its sender wrote them:
 * what travels when the packet crosses the network. More than the slot holds means a bad packet.
 */
export function packetBodyBytes(dv: DataView, off: number): number {
  const w0 = dv.getUint32(off, true)
  if (w0 === (PACKET_VERSION | (T_AM_SHORT << 8))) return SHORT_HEADER_BYTES + (dv.getUint32(off + 8, true) & 0xffff)
  if (w0 === (PACKET_VERSION | (T_AM_BARE << 8))) return BARE_HEADER_BYTES + (dv.getUint32(off + 8, true) & 0xffff)
  return BODY_PACKET + PACKET_HEADER_BYTES + dv.getUint32(off + BODY_PACKET + P_LEN, true)
}

/**
 * Writes a whole header of the common format at `off` (the 32 common bytes; the type-specific
 * fields zeroed, for the caller to fill): what the network paths write (the active-message paths
 * write their own, field by field, on their hot paths).
 */
export function writePacketHeader(
  dv: DataView,
  off: number,
  type: number,
  flags: number,
  src: number,
  len: number,
  id: number,
  offset: number,
  msgLen: number,
): void {
  dv.setUint8(off + P_VERSION, PACKET_VERSION)
  dv.setUint8(off + P_TYPE, type)
  dv.setUint16(off + P_FLAGS, flags, true)
  dv.setUint32(off + P_SRC, src, true)
  dv.setUint32(off + P_LEN, len, true)
  dv.setUint32(off + P_MSG_ID, id, true)
  dv.setUint32(off + P_OFFSET, offset, true)
  dv.setUint32(off + P_OFFSET + 4, 0, true)
  dv.setUint32(off + P_MSG_LEN, msgLen, true)
  dv.setUint32(off + P_MSG_LEN + 4, 0, true)
  for (let k = P_EXTRA; k < PACKET_HEADER_BYTES; k += 4) dv.setUint32(off + k, 0, true)
}

// ── packets between a task and the agents (docs/transports.md) ──
// A task of another process is reached through the agents: the task writes the packet into its
// ring toward the network, its agent sends it, and the target's agent either performs it on the
// target's memory (the one-sided types below, and acknowledgements) or puts it into the target
// task's network ring (active messages, and T_NET_DONE, which the task's dispatcher handles).
/** Put: the payload lands at TGT_ADDR + P_OFFSET in the target's segment; the last packet (F_LAST) bumps the counters. */
export const T_NET_PUT = 16
/** Get: the target's agent answers with T_NET_GETR packets carrying P_MSG_LEN bytes from TGT_ADDR. */
export const T_NET_GET = 17
/** Get reply: the payload lands at ORG_ADDR + P_OFFSET in the origin's segment. */
export const T_NET_GETR = 18
/** Rmw: the target's agent performs it and answers T_NET_RMWR. */
export const T_NET_RMW = 19
/** Rmw reply: the old value (VAL0); the origin's agent hands it to the origin task as T_NET_DONE. */
export const T_NET_RMWR = 20
/** A counter bump: COUNTER of the destination task moves by one (an origin's completion counter). */
export const T_NET_BUMP = 21
/** Acknowledgement: COUNT more messages of the destination task have landed at the source (its fence). */
export const T_NET_ACK = 22
/** To a task from its own agent: its remote operation P_MSG_ID is complete (VAL0: an Rmw's old value). */
export const T_NET_DONE = 23
/**
 * Most payload bytes of a T_NET_PUT that a sender writes straight from its source (a large Put,
 * `NetEngine.putDirect`): its target's agent copies the payload from the frame into the segment,
 * so such a packet need not fit a ring slot, only a receive buffer.
 */
export const NET_PUT_DIRECT_MAX = 64 << 10
/** Flag of T_NET_PUT / T_NET_GETR: the last packet of the operation. */
export const F_LAST = 1
/** Flag of T_NET_GET / T_NET_GETR: the origin task must be told (T_NET_DONE) when the data is in. */
export const F_NOTIFY = 2
/** Flag of T_NET_PUT: counts for the origin's fence (acknowledge it). */
export const F_ACK = 4
// fields of the network packets (after the common 32 bytes)
export const N_TGT_ADDR = P_EXTRA
export const N_TGT_CNTR = P_EXTRA + 4
export const N_ORG_ADDR = P_EXTRA + 8
export const N_ORG_CNTR = P_EXTRA + 12
/** Rmw: op | width << 8 (32 or 64), where other types have TGT_CNTR (an Rmw moves no target counter). */
export const N_OP = P_EXTRA + 4
/** Rmw operands and T_NET_RMWR / T_NET_DONE value, int64 each (a 32-bit Rmw's values sign-extended). */
export const N_VAL0 = P_EXTRA + 16
export const N_VAL1 = P_EXTRA + 24
/** T_NET_ACK: how many messages. */
export const N_COUNT = P_EXTRA
/** T_NET_BUMP: the counter's Addr. */
export const N_COUNTER = P_EXTRA
