/**
 * What the PGAS benchmark's main thread and the tasks of its jobs (workers/pgas-task.ts) share:
 * the command block of the LAPI benchmark (lib/lapi-layout.ts, `C`), these operation codes, the
 * block where every task leaves the time of its part of a run, and the job data.
 *
 * Every task times its own part of a run (from the barrier that starts it to its last operation);
 * the last task to finish writes the longest of those times as the run's result, and DONE.
 */
export const PgasOp = {
  /** `iterations` anonymous barriers (`pg.barrier()`). */
  BARRIER: 1,
  /** `iterations` all-reduces of `size` bytes of Float64 (`pg.allreduce(send, recv, ReduceOp.SUM)`). */
  ALLREDUCE: 2,
  /** `iterations` broadcasts of `size` bytes from task 0 (`pg.bcast(buf, 0)`, a Uint8Array in each task's segment). */
  BCAST: 3,
  /** `iterations` all-to-alls of `size` bytes per task (`pg.alltoall(send, recv)`: size / P bytes per pair; both in the segment). */
  ALLTOALL: 4,
  /** BCAST with a private buffer (a Uint8Array of the task's own heap). */
  BCAST_PRIVATE: 6,
  /** ALLTOALL with private buffers. */
  ALLTOALL_PRIVATE: 7,
  /**
   * `iterations` AM-2 round trips between tasks 1 and 0 of the same job (`@amlapi/am2/compat`):
   * AM_Request0, answered with AM_Reply0; task 1 polls until the reply handler ran (2-task job only).
   */
  AM2_SHORT_RTT: 5,
} as const

/** Requests in flight per peer of the AM-2 endpoints (AMX_SPMDStartup's depth). */
export const PGAS_AM2_DEPTH = 128

/**
 * The times block (one per job): Int32 word `T.FINISHED` counts the tasks that finished the run;
 * from byte `T.SECONDS_BYTE`, one float64 per task: its seconds. The last task to finish resets
 * the count before it reports.
 */
export const T = { FINISHED: 0, SECONDS_BYTE: 8 } as const

/** Bytes of the times block of a job of `tasks` tasks. */
export function timesBytes(tasks: number): number {
  return T.SECONDS_BYTE + 8 * tasks
}

export interface PgasBenchData {
  /** The command block (lib/lapi-layout.ts). */
  cmd: SharedArrayBuffer
  /** The times block (`T`). */
  times: SharedArrayBuffer
  /** Largest broadcast or all-to-all buffer, bytes (each task allocates three of them in its segment, three in its heap). */
  maxSize: number
  /** A run gives up (the task throws, which ends the job) after this many milliseconds. */
  timeoutMs: number
  /** Whether the tasks also start AM-2 (AMX_SPMDStartup) for the AM2_SHORT_RTT runs. */
  am2: boolean
}
