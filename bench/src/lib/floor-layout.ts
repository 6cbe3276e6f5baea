/**
 * What `baseline.threads` (benchmarks/baseline-threads.ts) and its workers (workers/coll-floor.ts)
 * share: the worker data, the command and reply, and the words of the control block.
 */
export interface FloorData {
  ctl: SharedArrayBuffer
  bufs: SharedArrayBuffer[]
  rank: number
  threads: number
  maxSize: number
}
export interface FloorCommand {
  op: 'bcast' | 'alltoall'
  size: number
  iterations: number
  spinUs: number
  timeoutMs: number
}
export type FloorReply = { seconds: number } | { error: string }

/** Int32 words of the control block: the round thread 0 published, completions, abort, the start line, entries. */
export const C_ROUND = 0
export const C_DONE = 1
export const C_ABORT = 2
export const C_START = 3
export const C_ENTER = 4
/** Words the main thread clears before each command. */
export const CTL_WORDS = 5
export const CTL_BYTES = 64
