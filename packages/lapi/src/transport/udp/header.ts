/**
 * The header of a `udp` datagram (docs/transports.md, "Datagram"): its constants, and its codec
 * between the bytes and a header record (a Float64Array of HF_COUNT numbers, one per field), which
 * is what the reliability (reliability.ts) fills before a send and reads after a receive.
 *
 * Datagram (little-endian):
 *
 *   offset size field
 *   0      1    version (UDP_VERSION)
 *   1      1    type: DG_DATA, or DG_ACK (no payload)
 *   2      1    flags: DG_MAC (a MAC follows the header), DG_HELD (number `ack` arrived and waits for
 *                room in the sender's receive buffer)
 *   3      1    reserved, 0
 *   4      2    sender's rank
 *   6      2    payload bytes
 *   8      8    session value of the pair
 *   16     4    sequence number (DATA; 0 in an ACK)
 *   20     4    acknowledgement: the next sequence number expected from the receiver
 *   24     4    selective acknowledgements: bit i = number ack + 1 + i arrived
 *   28     2    the sender's window (slots)
 *   30     2    reserved, 0
 *   32     4    checksum (computed with this field and the MAC zero)
 *   36     8    packet number (low 32 bits, then high): one more than the last datagram the sender
 *                sent this peer, of any type (a resent datagram gets a new one); only a datagram
 *                whose number is above every one heard from the peer, by less than PN_JUMP, counts
 *                as news of it (liveness, acknowledgements)
 *   44     4    reserved, 0
 *   48     16   MAC (with DG_MAC): HMAC-SHA-256 of the datagram with this field zero, first 16 bytes
 *   48|64  …    payload
 *
 * The checksum (transport/checksum.ts) sums the header and the payload as two pieces.
 */

export const UDP_VERSION = 3
export const DG_DATA = 1
export const DG_ACK = 2
export const DG_MAC = 1
export const DG_HELD = 2
export const DG_HEADER_BYTES = 48
export const DG_MAC_BYTES = 16
export const H_SRC = 4
export const H_LEN = 6
export const H_SESSION = 8
export const H_SEQ = 16
export const H_ACK = 20
export const H_SACK = 24
export const H_WIN = 28
export const H_SUM = 32
export const H_PN = 36
export const H_PN_HI = 40
export const H_MAC = 48

// ── the header record (Float64Array of HF_COUNT) ──
export const HF_VERSION = 0
export const HF_TYPE = 1
export const HF_FLAGS = 2
export const HF_SRC = 3
export const HF_LEN = 4
/** The session value's two 32-bit halves, as signed words (as the path keeps them). */
export const HF_SESSION_LO = 5
export const HF_SESSION_HI = 6
/** Sequence number, acknowledgement and selective bitmap, as signed 32-bit words. */
export const HF_SEQ = 7
export const HF_ACK = 8
export const HF_SACK = 9
export const HF_WIN = 10
export const HF_SUM = 11
/** The packet number, whole (below 2^53). */
export const HF_PN = 12
export const HF_COUNT = 13

/** Bytes of the header, with the MAC when there is one. */
export function headerBytes(mac: boolean): number {
  return DG_HEADER_BYTES + (mac ? DG_MAC_BYTES : 0)
}

/**
 * Writes the header of record `f` at `h` of `d` (version UDP_VERSION, the reserved fields and the
 * checksum zero; the MAC, if any, is not touched).
 */
export function encodeHeader(d: DataView, h: number, f: Float64Array): void {
  d.setUint32(h, UDP_VERSION | (f[HF_TYPE]! << 8) | (f[HF_FLAGS]! << 16), true)
  d.setUint32(h + H_SRC, f[HF_SRC]! | (f[HF_LEN]! << 16), true)
  d.setInt32(h + H_SESSION, f[HF_SESSION_LO]!, true)
  d.setInt32(h + H_SESSION + 4, f[HF_SESSION_HI]!, true)
  d.setInt32(h + H_SEQ, f[HF_SEQ]!, true)
  d.setInt32(h + H_ACK, f[HF_ACK]!, true)
  d.setInt32(h + H_SACK, f[HF_SACK]!, true)
  d.setUint32(h + H_WIN, f[HF_WIN]!, true)
  d.setUint32(h + H_SUM, 0, true)
  const pn = f[HF_PN]!
  d.setUint32(h + H_PN, pn >>> 0, true)
  d.setUint32(h + H_PN_HI, (pn / 4294967296) >>> 0, true)
  d.setUint32(h + 44, 0, true)
}

/** Reads the header at `at` of `d` (at least DG_HEADER_BYTES there) into record `f`. */
export function decodeHeader(d: DataView, at: number, f: Float64Array): void {
  const w0 = d.getUint32(at, true)
  f[HF_VERSION] = w0 & 0xff
  f[HF_TYPE] = (w0 >>> 8) & 0xff
  f[HF_FLAGS] = (w0 >>> 16) & 0xff
  f[HF_SRC] = d.getUint16(at + H_SRC, true)
  f[HF_LEN] = d.getUint16(at + H_LEN, true)
  f[HF_SESSION_LO] = d.getInt32(at + H_SESSION, true)
  f[HF_SESSION_HI] = d.getInt32(at + H_SESSION + 4, true)
  f[HF_SEQ] = d.getInt32(at + H_SEQ, true)
  f[HF_ACK] = d.getInt32(at + H_ACK, true)
  f[HF_SACK] = d.getInt32(at + H_SACK, true)
  f[HF_WIN] = d.getUint16(at + H_WIN, true)
  f[HF_SUM] = d.getUint32(at + H_SUM, true)
  f[HF_PN] = d.getUint32(at + H_PN, true) + d.getUint32(at + H_PN_HI, true) * 4294967296
}
