/**
 * What the AM-2 benchmark's main thread and its two tasks (workers/am2-task.ts) share: the same
 * command block as the LAPI benchmark (lib/lapi-layout.ts, `C`), these operation codes, and the
 * job data.
 *
 * Task 1 is the requester and times every run (it writes the result and DONE); task 0 serves.
 */
export const Am2Op = {
  /** Short request with size/4 arguments (AM_RequestM), Short reply (AM_Reply0). */
  SHORT_RTT: 1,
  /** Medium request of `size` bytes (AM_RequestI0), Short reply. */
  MEDIUM_RTT: 2,
  /** Long request of `size` bytes into the server's segment (AM_RequestXfer0), Short reply. */
  LONG_RTT: 3,
  /** `iterations` Short requests (size/4 arguments) back to back, each answered with AM_Reply0; time until all replies are in. */
  RATE: 4,
  /** `iterations` Long messages of `size` bytes (AM_MaxLong chunks), each answered; time until all replies are in. */
  LONG_BW: 5,
  /** `iterations` Medium messages of `size` bytes (AM_MaxMedium chunks), each answered. */
  MEDIUM_BW: 6,
  /**
   * As SHORT_RTT, each round trip timed on its own; the run's figure is the median round trip
   * (times `iterations`): what a loss costs the round trips it hits does not move it, only how
   * many it hits.
   */
  SHORT_RTT_MEDIAN: 7,
} as const

/** Argument counts a Short round trip or the rate can use: their size is 4 bytes per argument. */
export const SHORT_ARGS: readonly number[] = [0, 1, 2, 4, 8, 16]

/** Requests in flight per peer (AMX_SPMDStartup's depth; AMUDP's default NETWORKDEPTH). */
export const AM2_DEPTH = 128

export interface Am2BenchData {
  /** The command block (lib/lapi-layout.ts), or null with `cmdPort` when the tasks are in processes of their own. */
  cmd: SharedArrayBuffer | null
  cmdPort?: number
  /** Largest message, bytes: each task's endpoint segment and Long source are this big. */
  maxSize: number
  /** A run gives up (the task throws, which ends the job) after this many milliseconds. */
  timeoutMs: number
  /** Untimed operations each run starts with, at most the run's own count (as LapiBenchData.skip). */
  skip?: number
}
