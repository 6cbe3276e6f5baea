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

export const PEER_BASE = 32
export const PEER_WORDS = 8
export const FD = 0
export const FLAGS = 1
export const ERRNO = 2
export const RX_START = 3
export const RX_END = 4
export const TX_START = 5
export const TX_END = 6
export const PEER_EOF = 1
export const PEER_BYE = 2
export const PEER_ERROR = 4
export const PEER_MALFORMED = 8

export const S_FRAMES_SENT = 0
export const S_FRAMES_RECEIVED = 1
export const S_BYTES_SENT = 2
export const S_BYTES_RECEIVED = 3
export const S_FRAMES_DROPPED = 4
export const S_WRITES = 5
export const S_READS = 6
export const S_EMPTY_READS = 7

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
  corrupt: { p: number, rng: SharedArrayBuffer } | null
}
