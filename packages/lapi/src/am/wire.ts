/**
 * The active messages' packets (docs/wire-format.md): their types, flags and field offsets beyond
 * the common header of transport/packet.ts, the SHORT and BARE packets' first words and room, and
 * the protocol values they carry (CTS modes). Shared by the sending and the receiving side.
 */
import { SHORT_HEADER_BYTES, T_AM_BARE, T_AM_SHORT, PACKET_VERSION, P_EXTRA } from '../transport/packet.js'
import { SLOT_STAMP_BYTES } from '../layout/ring.js'

export const T_AM_HEAD = 1
export const T_AM_DATA = 2
export const T_AM_CTS = 3
export const T_AM_FIN = 4
/** HEAD flag: rendezvous (no data in this packet; wait for CTS). */
export const F_RNDV = 1
/** HEAD flag: Amsendv (a vector description follows the user header). */
export const F_AMV = 2
/** HEAD flag (with F_RNDV): the data waits in the origin's segment; the target copies it itself. */
export const F_PULL = 4
/** Packet type: a pulled rendezvous is done (origin: free the staging copy, send-completion handler). */
export const T_AM_PULLED = 5
// SHORT: source, lengths (data | uhdr << 16), message id, handler index, target counter, completion counter
export const S_SRC = 4
export const S_LENS = 8
export const S_MSG_ID = 12
export const S_HANDLER = 16
export const S_TGT_CNTR = 20
export const S_CMPL_CNTR = 24
/** A SHORT packet's first word read as a little-endian Int32: version, type, no flags. */
export const SHORT_WORD0 = PACKET_VERSION | (T_AM_SHORT << 8)
/** A BARE packet's first word. */
export const BARE_WORD0 = PACKET_VERSION | (T_AM_BARE << 8)
/** The SHORT fast paths read and write packets through Int32Arrays, which are little-endian only here. */
export const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1
/**
 * Most user-header + data bytes of a SHORT packet that stays, STAMP included, within its slot's
 * first 64-byte line (one line for the two tasks; what in-place receivers and prepareShort take).
 */
export const LINE_ROOM = 64 - SLOT_STAMP_BYTES - SHORT_HEADER_BYTES
/** Most user-header + data bytes of any SHORT packet: a packet's worth, within the 16-bit length field. */
export function shortRoomFor(maxPkt: number): number {
  return maxPkt < 0xfff8 ? maxPkt : 0xfff8
}
// HEAD: handler index, uhdr length, target counter, completion counter (origin), vector type, vector count, description bytes
export const H_HANDLER = P_EXTRA
export const H_UHDR_LEN = P_EXTRA + 4
export const H_TGT_CNTR = P_EXTRA + 8
export const H_CMPL_CNTR = P_EXTRA + 12
export const H_VEC_TYPE = P_EXTRA + 16
export const H_VEC_NUM = P_EXTRA + 20
export const H_DESC_LEN = P_EXTRA + 24
// HEAD with F_PULL: where the data is in the origin's segment, the origin counter to bump there
export const H_PULL_SRC = P_EXTRA + 16
export const H_PULL_ORG = P_EXTRA + 20
// DATA: packet index and packet count of the message
export const D_INDEX = P_EXTRA
export const D_COUNT = P_EXTRA + 4
// CTS: landing Addr and mode
export const C_LANDING = P_EXTRA
export const C_MODE = P_EXTRA + 4
export const CTS_DIRECT = 0
export const CTS_STREAM = 1
export const CTS_DISCARD = 2
