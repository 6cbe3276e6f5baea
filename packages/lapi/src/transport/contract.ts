/**
 * The transport contract: what a network transport gives the rest of LAPI, and nothing more. Above
 * this line no code knows which transport carries a frame; tasks of one process never use a
 * transport (they share memory: transport/ring.ts).
 *
 * A transport has two faces. `Transport`, in the agent (the process's main thread), makes and
 * watches the connections. `FramePath`, which every thread of the process can build from the
 * shared memory the transport describes (`Transport.shared`), moves frames: whichever thread holds
 * the process's network lock (engine/engine.ts) queues, writes, reads and parses them — a task
 * waiting in LAPI does it itself, without waking anyone; the agent does it for tasks that are busy.
 *
 * A transport connects the job's processes (ranks 0 … P-1) pairwise and carries **frames**:
 *
 *   - **Reliable, in order per pair of processes.** Every frame sent to a peer arrives once, intact,
 *     in the order it was sent, or the peer is declared lost (`onPeerLost`); tcp has it from the
 *     stream, udp makes it (transport/udp/reliability.ts). (The agent relies on
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
 *
 * A transport is one folder of transport/ (its `Transport`, its `FramePath`, its shared memory)
 * and a `TransportKind` that makes them, named by one line of transport/registry.ts.
 */
import type { Logger } from 'pino'
import type { FaultSpec } from './faults.js'
import type { StreamShared } from '../layout/stream.js'

export const FRAME_VERSION = 1
export const FRAME_HEADER_BYTES = 12
export const FRAME_PACKET = 1
export const FRAME_CONTROL = 2
/** Frame kind the transport keeps to itself: the peer is about to close normally. */
export const FRAME_BYE = 3
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
  /** Read calls that brought bytes, and those that found none (each an EAGAIN: a poll's cost). */
  reads: number
  emptyReads: number
}

/** What the agent hands a transport. */
export interface TransportEvents {
  /**
   * The first `len` bytes of `chunk`, which the agent's event loop read from `peer` while it reads
   * (`Transport.agentReads(true)`), for the frame path; `peer` -1: a datagram, which names its
   * sender itself. `chunk` may be the transport's own read buffer: valid during the call only
   * (what must wait is copied).
   */
  onBytes(peer: number, chunk: Uint8Array, len: number): void
  /** Peer `peer` is gone (once per peer): `reason` in words; `normal` after its goodbye. */
  onPeerLost(peer: number, reason: string, normal: boolean): void
}

/** The agent's face of a transport: connections. */
export interface Transport {
  readonly name: string
  /** Starts listening; resolves with the address the other processes connect to. */
  listen(): Promise<PeerAddress>
  /** Connects this process with every other (the address table, index = rank); resolves when all are up. */
  connect(table: PeerAddress[], events: TransportEvents): Promise<void>
  /** Whether the agent's event loop reads the connections (true) or the threads that poll do (false). */
  agentReads(on: boolean): void
  /** Stops reading from `peer` in the agent's event loop until `resumePeer` (its frames wait for room). */
  pausePeer(peer: number): void
  resumePeer(peer: number): void
  /** Closes every connection (after the goodbye the frame path queued); resolves when they are closed. */
  close(): Promise<void>
  /** Notes why peer `peer` is gone, as the frame path found it (end of stream, an error, a malformed stream); the transport reports it once. */
  lost(peer: number, reason: string, normal: boolean): void
  stats(): TransportStats
  /** Why peer `peer` was lost as the transport's data path saw it (silence, a closed port), or null. */
  lossReason?(peer: number): string | null
  /** What its kind's `createShared` needs of this transport once it listens (a datagram path's geometry), if anything. */
  geometry?(): unknown
  /** Takes the frame path's shared memory its kind made for this process (`createShared`), before `connect`. */
  useShared?(shared: StreamShared): void
}

/** `FramePath.sleep`: something came (bytes, or a peer's end); the time passed; this path cannot sleep so. */
export const SLEEP_READY = 1
export const SLEEP_TIMEOUT = 0
export const SLEEP_FAILED = -1

/** Any thread's face of a transport: frames, moved under the process's network lock. */
export interface FramePath {
  readonly peers: number
  /** How often this thread's writes and reads moved bytes: grows while the path makes progress. */
  readonly moved: number
  /** Grows whenever room came in a peer's send queue (bytes written, or acknowledged), by any thread. */
  readonly freed: number
  /** Whether `peer`'s queue has room now for a frame of `len` body bytes (after writing what it can, if `write`). */
  room(peer: number, len: number, write: boolean): boolean
  /**
   * Appends a frame for `peer` (copied); 0, or BACKPRESSURE when its queue is full (nothing
   * queued). `dv`, when given, views the same bytes as `u8` at the same offsets (a faster copy).
   */
  queue(peer: number, kind: number, dst: number, u8: Uint8Array, off: number, len: number, dv?: DataView | null): number
  /**
   * Sends a frame whose body is `headLen` bytes of `head` then `len` bytes of `data` from `off`,
   * writing `data` straight from where it is as far as the connection takes it (the rest is
   * queued, copied). Only when nothing is queued for `peer` and the frame fits the queue: false
   * otherwise, and nothing is sent.
   */
  sendDirect(peer: number, kind: number, dst: number, head: Uint8Array, headLen: number, data: Uint8Array, off: number, len: number): boolean
  /**
   * The payload bytes (1 … `max`) a frame sent with `sendDirect` to `peer` should carry when a
   * large transfer is cut into such frames, `overhead` bytes of frame before its payload: the size
   * that fills the path's units (a datagram path's datagrams) without a small one left over.
   */
  directChunk(peer: number, overhead: number, max: number): number
  /** Writes what is queued, as much as the network takes now; returns the bytes still queued (not yet written once). */
  flush(): number
  /** Bytes queued and not yet written. */
  queued(): number
  /**
   * Reads (when `reading`) and hands every whole frame received to `onFrame`, until it refuses one
   * (false: offered again at the next poll). Returns the frames handed over.
   */
  poll(reading: boolean, onFrame: (peer: number, kind: number, dst: number, u8: Uint8Array, off: number, len: number) => boolean): number
  /** Bytes (or a datagram) the agent's event loop read from `peer` while it reads: kept for `poll`; false when there is no room now. */
  ingest(peer: number, chunk: Uint8Array, len: number): boolean
  /** Bytes received from `peer` and not yet handed over as frames (a lost peer is judged once they are). */
  unparsed(peer: number): number
  /** Queues a goodbye for every peer (before a normal close); false while a queue has no room for one (call again). */
  bye(): boolean
  /** Counts a frame dropped above the path. */
  dropped(): void
  /**
   * Sleeps in the kernel until a peer has sent something (or `ms` pass): SLEEP_READY, SLEEP_TIMEOUT,
   * or SLEEP_FAILED where this path cannot (the caller sleeps on its doorbell instead). Called
   * outside the lock, by a process's only task, while it alone reads the connections.
   */
  sleep(ms: number): number
  /** Whether `sleep` could wait on the connections now (it watches one socket: one peer's, or the receiving one). */
  canSleep(): boolean
  /** Runs the path's timers (retransmissions, delayed acknowledgements, keepalives, the peer timeout). */
  tick(): void
  /** Milliseconds until `tick` is due (0: now), or -1 when nothing is timed. */
  due(): number
  /**
   * Before a normal close, after the goodbye was queued: sends what is owed to the peers now; true
   * once nothing sent waits to be acknowledged and every peer said goodbye or is gone.
   */
  settle(): boolean
}

/** What the agent's face of a transport is made with (`TransportKind.createTransport`). */
export interface TransportOptions {
  rank: number
  size: number
  key: Uint8Array
  /** Address to listen on. */
  bind: string
  log: Logger
  /** The process's network settings (AMLAPI_*: launch/net-settings.ts); each kind takes those it knows. */
  faults: FaultSpec | null
  mac: boolean
  /** Unset: the transport's default. */
  peerTimeoutMs?: number
  maxDatagram?: number
}

/** What the shared memory of a process's frame path is made with (`TransportKind.createShared`). */
export interface SharedOptions {
  faults: FaultSpec | null
  /** What this process's `Transport.geometry` gave, if its kind has one. */
  geometry?: unknown
}

/**
 * A kind of transport, as the registry (transport/registry.ts) names it: how the launcher sizes
 * and makes its shared memory, how the agent makes its connections, how any thread makes its
 * frame path from that memory, and how the agent reads a peer's state there.
 */
export interface TransportKind {
  /** Its name (`--transport`, AMLAPI_TRANSPORT, `JobSpec.net.transport`). */
  readonly name: string
  /** The agent's face, for one process of a job. */
  createTransport(o: TransportOptions): Transport
  /** The frame path's shared memory of process `rank` of `procs` (receive and send buffers of `bufBytes` each per peer). */
  createShared(procs: number, bufBytes: number, rank: number, o: SharedOptions): StreamShared
  /** Bytes a process's frame path may hold at most (what `createShared` makes and what it fills), for sizing a job. */
  memoryBytes(procs: number, bufBytes: number): number
  /** The frame path over `shared`, in any thread of process `rank`. */
  createPath(shared: StreamShared, rank: number): FramePath
  /** The state of peer `peer` in `shared`, as PEER_* flags (layout/stream.ts). */
  peerFlags(shared: StreamShared, peer: number): number
  /** Sentences saying which of the options given do nothing over this transport (lapirun warns of each). */
  unusedOptions?(o: { faults: FaultSpec | null; mac: boolean }): string[]
}
