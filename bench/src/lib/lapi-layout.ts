/**
 * The command block between the LAPI benchmark's main thread and its two tasks (Int32 words):
 *
 *   0 GEN    bumped by the main thread for each run (the tasks wait on it)
 *   1 OP     LapiOp
 *   2 SIZE   bytes per message
 *   3 ITERS  operations in this run
 *   4 DONE   set to GEN by task 0 when the run is over (the main thread waits on it)
 *   5 READY  tasks that have joined and exchanged their addresses
 *   6 STOP   1: the tasks leave their loop and terminate LAPI
 *   byte 32  float64: seconds of the last run, written by task 0 before DONE
 */
export const C = { GEN: 0, OP: 1, SIZE: 2, ITERS: 3, DONE: 4, READY: 5, STOP: 6, RESULT_BYTE: 32, BYTES: 40 } as const

export const LapiOp = { PUT_RTT: 1, GET_LAT: 2, PUT_BW: 3, GET_BW: 4, RMW_RATE: 5, AM_RTT_HDR: 6, AM_RTT_CMPL: 7, AM_BW: 8, AM_SELF: 9 } as const

/** Handler-table indices the benchmark tasks register. */
export const AM_HDR_INDEX = 30
export const AM_CMPL_INDEX = 31

export interface LapiBenchData {
  cmd: SharedArrayBuffer
  /** Largest message, bytes (each task allocates two buffers of it). */
  maxSize: number
}

/**
 * A task's side of the command block: counts itself READY, then runs `run` once per run the main
 * thread starts (each bump of GEN), with that run's OP, SIZE and ITERS, until STOP is set.
 */
export function serveCommands (cmd: Int32Array, run: (gen: number, op: number, size: number, iters: number) => void): void {
  Atomics.add(cmd, C.READY, 1)
  Atomics.notify(cmd, C.READY)
  let gen = 0
  for (;;) {
    while (Atomics.load(cmd, C.GEN) === gen) {
      if (Atomics.load(cmd, C.STOP) !== 0) break
      Atomics.wait(cmd, C.GEN, gen, 200)
    }
    if (Atomics.load(cmd, C.STOP) !== 0) return
    gen = Atomics.load(cmd, C.GEN)
    run(gen, Atomics.load(cmd, C.OP), Atomics.load(cmd, C.SIZE), Atomics.load(cmd, C.ITERS))
  }
}
