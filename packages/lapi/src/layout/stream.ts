/**
 * The shared memory of a stream data path (transport/stream-path.ts), which travels to every
 * thread of a process in its job spec:
 *
 *   words (Int32): per peer p at PEER_BASE + PEER_WORDS·p:
 *     +0 FD (-1: none)   +1 FLAGS (EOF 1, BYE 2, ERROR 4, MALFORMED 8)   +2 ERRNO (of ERROR: Node's errno, or 1000 + WASI's)
 *     +3 RX_START  +4 RX_END   (unparsed bytes in rx[p])   +5 TX_START  +6 TX_END   (unwritten bytes in tx[p])
 *   stats (Float64, written under the network lock): S_* below
 *   mem: the I/O vector's page, then per peer p its receive buffer rx[p] (`cap` bytes) and its send
 *     buffer tx[p] (`txCap` bytes)
 */
import type { WasmMemory } from './memory.js'

/** Where the peers' words start in a data path's words (the network engine's words come first: layout/engine.ts). */
export const PEER_BASE = 32
// <layout stream-peer> written by scripts/gen-layouts.mjs from its table: do not edit by hand
// a peer's words in a stream data path: PEER_WORDS words per peer p at PEER_BASE + PEER_WORDS·p (Int32 index):
//   0       SP_FD
//   1       SP_FLAGS
//   2       SP_ERRNO
//   3       SP_RX_START
//   4       SP_RX_END
//   5       SP_TX_START
//   6       SP_TX_END
//   7       (reserved)
/** The connection's descriptor (-1: none). */
export const SP_FD = 0
/** PEER_EOF | PEER_BYE | PEER_ERROR | PEER_MALFORMED. */
export const SP_FLAGS = 1
/** Of PEER_ERROR: Node's errno, or 1000 + WASI's. */
export const SP_ERRNO = 2
/** The unparsed bytes in the peer's receive buffer: from … */
export const SP_RX_START = 3
/** … to. */
export const SP_RX_END = 4
/** The unwritten bytes in its send buffer: from … */
export const SP_TX_START = 5
/** … to. */
export const SP_TX_END = 6
/** Words per peer. */
export const PEER_WORDS = 8
// </layout stream-peer>
export const PEER_EOF = 1
export const PEER_BYE = 2
export const PEER_ERROR = 4
export const PEER_MALFORMED = 8

// <layout stream-stats> written by scripts/gen-layouts.mjs from its table: do not edit by hand
// a stream data path's statistics (Float64 index; written under the network lock):
//   0       S_FRAMES_SENT
//   1       S_FRAMES_RECEIVED
//   2       S_BYTES_SENT
//   3       S_BYTES_RECEIVED
//   4       S_FRAMES_DROPPED
//   5       S_WRITES
//   6       S_READS
//   7       S_EMPTY_READS
export const S_FRAMES_SENT = 0
export const S_FRAMES_RECEIVED = 1
export const S_BYTES_SENT = 2
export const S_BYTES_RECEIVED = 3
export const S_FRAMES_DROPPED = 4
export const S_WRITES = 5
export const S_READS = 6
export const S_EMPTY_READS = 7
/** Float64 words of the statistics. */
export const STREAM_STATS = 8
// </layout stream-stats>

/** The shared memory of a stream data path (structured-clonable: it travels to the task threads in their job spec). */
export interface StreamShared {
  words: SharedArrayBuffer
  stats: SharedArrayBuffer
  /**
   * The receive and send buffers (`cap` bytes each, per peer), after the I/O vector's page: a
   * shared WebAssembly memory, or (`wasm` false, where the engine refuses one) a plain buffer.
   */
  mem: WasmMemory
  wasm: boolean
  pages: number
  cap: number
  /** Bytes of each peer's send buffer (a stream path's: `cap`; a datagram path's holds its window in flight too). */
  txCap: number
  procs: number
  /** Fault injection (`--faults corrupt=P`): the probability that a frame goes out corrupt, and the generator's state (Int32). */
  corrupt: { p: number; rng: SharedArrayBuffer } | null
}
