/**
 * The constants of the `udp` transport's reliability (reliability.ts; docs/transports.md, "UDP"):
 * the window's bound, the timers, and the packet numbers' news rule.
 */

/** Most datagrams a peer may have unacknowledged (the selective bitmap's width); a window is a power of 2 up to it. */
export const MAX_WINDOW = 32
/** Bounds of the retransmission timeout, ms, and its value before the first round trip is measured. */
export const RTO_MIN_MS = 0.1
export const RTO_MAX_MS = 500
export const RTO_INITIAL_MS = 20
/**
 * The least time before a datagram the receiver holds for room (DG_HELD) is sent again, ms: not a
 * loss, so only a probe in case the acknowledgement that the receiver took it in was lost.
 */
export const HELD_PROBE_MS = 20
/** How long an acknowledgement waits for data going back before it goes alone, ms. */
export const ACK_DELAY_MS = 0.25
/** A peer that has not been sent anything for this long is sent an acknowledgement (a keepalive), ms. */
export const KEEPALIVE_MS = 500
/** Default of the peer timeout: a peer silent this long is lost, ms (AMLAPI_PEER_TIMEOUT_MS). */
export const PEER_TIMEOUT_MS = 5000
/** How long a closing process that has everything acknowledged still answers peers that did not say goodbye, ms. */
export const LINGER_MS = 20
/**
 * How far above the highest heard a packet number may be and still be news: more datagrams than a
 * peer sends unheard within any peer timeout, far fewer than a corrupted high bit adds (a checksum
 * cannot tell every two-bit change: a MAC can).
 */
export const PN_JUMP = 2 ** 24
