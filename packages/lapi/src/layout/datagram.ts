/**
 * The shared memory of a datagram path (the `udp` transport's: transport/udp/), beside what it
 * shares with the stream path (layout/stream.ts: the per-peer buffer words and the buffers), which
 * travels to every thread of a process in its job spec:
 *
 *   udp (Int32): G_RECV_FD, G_RNG, then per peer p at G_WORDS + UW·p its U_* words (the send and
 *     receive windows, the acknowledgements owed, the peer's size and window, the session value)
 *   times (Float64): UT_DUE (when the timers are next due), then per peer p at UT_GLOBAL + TW·p its
 *     T_* times (the round-trip estimate, when last heard and sent, the packet numbers)
 *   flight (Float64): per peer, WINDOW entries of FL_DOUBLES: stream position, length, when sent
 *   flightI (Int32): per peer, WINDOW entries of FI_WORDS: times sent, selectively acknowledged
 *   slotLens (Int32): per peer, WINDOW entries: bytes of the early datagram in that slot (-1 none)
 *   udpStats (Float64): the D_* counters
 *   delayT (Float64), delayI (Int32): the fault injector's delay line, DELAY_SLOTS entries of a
 *     release time, and (peer, length)
 *   mem: after the stream path's buffers, the receive staging buffer, the fault scratch, the
 *     alignment copy, the delay line (DELAY_SLOTS datagrams) and per peer WINDOW slots
 */

// ── global words (udp Int32) ──
/** The receiving socket's descriptor (-1: none). */
export const G_RECV_FD = 0
/** The fault injector's generator state. */
export const G_RNG = 1
export const G_WORDS = 8
// ── per peer words (udp Int32, from G_WORDS + UW·p) ──
export const UW = 16
/** 1 once the handshake with the peer is done. */
export const U_READY = 0
/** The next sequence number to send, the oldest not acknowledged, and the send buffer's bytes sent once. */
export const U_SND_NXT = 1
export const U_SND_UNA = 2
export const U_SENT = 3
/** The next sequence number expected, and the bitmap of those held after it (bit i: number + i). */
export const U_RCV_NXT = 4
export const U_RMASK = 5
/** Datagrams taken since the last acknowledgement went, and whether one must go at once. */
export const U_ACK_OWED = 6
export const U_ACK_NOW = 7
/** The peer's window (slots) and largest datagram (bytes). */
export const U_PEER_WIN = 8
export const U_PEER_MAX = 9
/** Why the peer was lost (LOST_*; 0: it was not). */
export const U_LOST = 10
export const U_SESSION_LO = 11
export const U_SESSION_HI = 12
/** 1 while the peer holds the oldest datagram not acknowledged for room (DG_HELD): it arrived. */
export const U_HELD = 13
// ── global times (Float64): the next time a tick is due ──
export const UT_DUE = 0
export const UT_GLOBAL = 4
// ── per peer times (Float64, from UT_GLOBAL + TW·p) ──
export const TW = 10
export const UT_SRTT = 0
export const UT_RTTVAR = 1
export const UT_RTO = 2
/** When news of the peer last came, and when it was last sent a datagram. */
export const UT_HEARD = 3
export const UT_SENT = 4
/** When the oldest acknowledgement owed to the peer became owed. */
export const UT_ACK_OWED = 5
/** The stream position of the start of the peer's send buffer. */
export const UT_TXBASE = 6
/** The packet number of the last datagram sent to the peer, and the highest heard from it (whole numbers below 2^53: no wrap). */
export const UT_PN_OUT = 7
export const UT_PN_IN = 8
// in-flight table (Float64, per peer WINDOW entries of FL_DOUBLES): stream position, length, when sent
export const FL_DOUBLES = 3
// and (Int32, per peer WINDOW entries of FI_WORDS): times sent, selectively acknowledged
export const FI_WORDS = 2

/** Slots of the fault injector's delay line. */
export const DELAY_SLOTS = 32

/** Why a peer was lost (word U_LOST; docs/transports.md). */
export const LOST_SILENT = 1
export const LOST_REFUSED = 2

// statistics (Float64, `udpStats`)
export const D_SENT = 0
export const D_RECEIVED = 1
export const D_RETRANSMITS = 2
export const D_FAST_RETRANSMITS = 3
export const D_DUPLICATES = 4
export const D_OUT_OF_ORDER = 5
export const D_ACKS = 6
export const D_KEEPALIVES = 7
export const D_BAD_LENGTH = 8
export const D_BAD_VERSION = 9
export const D_BAD_TYPE = 10
export const D_UNKNOWN_SENDER = 11
export const D_BAD_SESSION = 12
export const D_BAD_CHECKSUM = 13
export const D_BAD_MAC = 14
export const D_OUTSIDE_WINDOW = 15
export const D_SEND_ERRORS = 16
export const D_FAULT_DROPS = 17
export const D_FAULT_DUPS = 18
export const D_FAULT_REORDERS = 19
export const D_FAULT_CORRUPTS = 20
export const D_FAULT_DELAYS = 21
/** Datagrams whose packet number was not news (replays, duplicates, late copies). */
export const D_STALE = 22
/** Acknowledgements that freed room in a send buffer (not a statistic: `freed`). */
export const D_FREED = 23
export const D_COUNT = 24

/** The datagram counters of a `udp` transport (every field only grows). */
export interface DatagramStats {
  datagramsSent: number
  datagramsReceived: number
  retransmits: number
  fastRetransmits: number
  duplicates: number
  outOfOrder: number
  acksSent: number
  keepalives: number
  /** Datagrams dropped, by cause: none of them ran a handler or changed memory. */
  badLength: number
  badVersion: number
  badType: number
  unknownSender: number
  badSession: number
  badChecksum: number
  badMac: number
  outsideWindow: number
  sendErrors: number
  /** What the fault injector did (`--faults`). */
  faultDrops: number
  faultDups: number
  faultReorders: number
  faultCorrupts: number
  faultDelays: number
  /** Datagrams that passed every check but brought no news (a packet number not above all heard: replays, duplicates, late copies). */
  stale: number
}

/** The counters of `udpStats` in word order (D_SENT …). */
export const STAT_NAMES: ReadonlyArray<keyof DatagramStats> = [
  'datagramsSent',
  'datagramsReceived',
  'retransmits',
  'fastRetransmits',
  'duplicates',
  'outOfOrder',
  'acksSent',
  'keepalives',
  'badLength',
  'badVersion',
  'badType',
  'unknownSender',
  'badSession',
  'badChecksum',
  'badMac',
  'outsideWindow',
  'sendErrors',
  'faultDrops',
  'faultDups',
  'faultReorders',
  'faultCorrupts',
  'faultDelays',
  'stale',
]

/** Word `f` (U_*) of peer `p` in `udp`. */
export function uWord(p: number, f: number): number {
  return G_WORDS + UW * p + f
}
/** Time `f` (T_*) of peer `p` in `times`. */
export function tWord(p: number, f: number): number {
  return UT_GLOBAL + TW * p + f
}

/** `n` rounded up to a multiple of 8 (each datagram's place in the memory). */
export const up8 = (n: number): number => (n + 7) & ~7
