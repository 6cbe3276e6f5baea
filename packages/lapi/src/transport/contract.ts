/**
 * The transport contract: what a network transport gives the agent (agent/agent.ts), and nothing
 * more. Above this line no code knows which transport carries a frame; tasks of one process never
 * use a transport (they share memory: transport/ring.ts).
 *
 * A transport connects the job's processes (ranks 0 … P-1) pairwise and carries **frames**:
 *
 *   - **Reliable, in order per pair of processes.** Every frame sent to a peer arrives once, intact,
 *     in the order it was sent, or the peer is declared lost (`onPeerLost`). (The agent relies on
 *     the order: a Put's last packet comes after its others, a rendezvous FIN after its data.)
 *   - **Back-pressure is a return value.** `send` queues a copy and returns 0, or BACKPRESSURE when
 *     the peer's queue is over its limit (the frame is queued all the same): the agent stops taking
 *     packets from its tasks' rings until `onWritable`. On the receiving side `onFrame` returns
 *     false when the frame cannot be taken now (a full inbox ring); the transport then stops
 *     reading from that peer and offers the same frame again after `resume(peer)`.
 *   - **Liveness per peer.** A peer whose connection breaks, that says goodbye, or that is silent
 *     past the transport's timeout is reported once with `onPeerLost(peer, reason)`; `reason` names
 *     what happened (`closed` after a goodbye is a normal end).
 *   - **Closed to strangers.** A connection is accepted only from a process that proves it knows the
 *     job key (a challenge–response: the key never travels). Malformed frames are dropped and
 *     counted, never passed up; a stream that cannot be parsed any further ends that connection.
 *   - **Statistics** (`stats()`): what was sent, received, dropped and refused.
 *
 * Frames (little-endian; the header the transport puts before each body):
 *
 *   offset size field
 *   0      4    body bytes
 *   4      1    version (FRAME_VERSION)
 *   5      1    kind: FRAME_PACKET (a packet for task `dst`) or FRAME_CONTROL (a control message, msgpackr)
 *   6      2    reserved, 0
 *   8      4    dst: the task a packet is for (0 for control)
 *   12     …    body
 */

export const FRAME_VERSION = 1
export const FRAME_HEADER_BYTES = 12
export const FRAME_PACKET = 1
export const FRAME_CONTROL = 2
/** `send` result: queued, but the peer's queue is over its limit. */
export const BACKPRESSURE = 1

/** Where a process's transport listens (what the rendezvous publishes for it). */
export interface PeerAddress {
  host: string
  port: number
}

/** Counters of one transport (every field only grows). */
export interface TransportStats {
  framesSent: number
  framesReceived: number
  bytesSent: number
  bytesReceived: number
  /** Frames dropped as malformed (bad version, kind, or destination). */
  framesDropped: number
  /** Connections refused: a wrong key, an unknown rank, a malformed handshake. */
  connectionsRefused: number
  /** Write calls (each carries every frame queued for its peer since the last). */
  writes: number
}

/** What the agent hands a transport. */
export interface TransportEvents {
  /**
   * A frame from process `peer`; the body is `u8[off, off + len)`, valid during the call only.
   * Returns false when it cannot be taken now (see BACKPRESSURE above).
   */
  onFrame (peer: number, kind: number, dst: number, u8: Uint8Array, off: number, len: number): boolean
  /** Peer `peer` is gone (once per peer): `reason` in words; `normal` after its goodbye. */
  onPeerLost (peer: number, reason: string, normal: boolean): void
  /** The queues over their limit have drained: the agent may produce again. */
  onWritable (): void
}

export interface Transport {
  readonly name: string
  /** Starts listening; resolves with the address the other processes connect to. */
  listen (): Promise<PeerAddress>
  /** Connects this process with every other (the address table, index = rank); resolves when all are up. */
  connect (table: PeerAddress[], events: TransportEvents): Promise<void>
  /** Queues a frame for `peer` (the body is copied); 0, or BACKPRESSURE. */
  send (peer: number, kind: number, dst: number, u8: Uint8Array, off: number, len: number): number
  /** Hands what was queued to the network (one write per peer). */
  flush (): void
  /** Offers again the frame `onFrame` refused from `peer`, and reads on. */
  resume (peer: number): void
  /** Says goodbye to every peer after what was queued, and closes; resolves when it is written. */
  close (): Promise<void>
  stats (): TransportStats
}
