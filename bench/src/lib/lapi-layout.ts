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
import { readSync, writeSync } from 'node:fs'
import { connect } from 'node:net'

export const C = { GEN: 0, OP: 1, SIZE: 2, ITERS: 3, DONE: 4, READY: 5, STOP: 6, RESULT_BYTE: 32, BYTES: 40 } as const

export const LapiOp = { PUT_RTT: 1, GET_LAT: 2, PUT_BW: 3, GET_BW: 4, RMW_RATE: 5, AM_RTT_HDR: 6, AM_RTT_CMPL: 7, AM_BW: 8, AM_SELF: 9 } as const

/** Handler-table indices the benchmark tasks register. */
export const AM_HDR_INDEX = 30
export const AM_CMPL_INDEX = 31

export interface LapiBenchData {
  /** The command block, for a job of one process; null when the tasks are in several (`cmdPort`). */
  cmd: SharedArrayBuffer | null
  /** For a job of several processes: the loopback port where the main thread serves commands. */
  cmdPort?: number
  /** Largest message, bytes (each task allocates two buffers of it). */
  maxSize: number
  /**
   * Untimed operations each run starts with (at most the run's own count), as OSU's benchmarks
   * skip their first iterations: what starting a run costs (the barrier, a hand-over of the
   * connections) stays out of its time. 0 or absent: none.
   */
  skip?: number
}

/** How a task gets its runs and reports the one it timed: the command block, or a socket to the main thread. */
export interface Commands {
  /** Runs `run` once per run the main thread starts, until it says stop. */
  serve(run: (gen: number, op: number, size: number, iters: number) => void): void
  /** Reports the seconds of run `gen` (the task that times it). */
  finish(gen: number, seconds: number): void
}

/** The command block's side of `Commands`. */
function blockCommands(sab: SharedArrayBuffer): Commands {
  const cmd = new Int32Array(sab)
  const result = new Float64Array(sab, C.RESULT_BYTE, 1)
  return {
    serve: (run) => serveCommands(cmd, run),
    finish: (gen, seconds) => {
      result[0] = seconds
      Atomics.store(cmd, C.DONE, gen)
      Atomics.notify(cmd, C.DONE)
    },
  }
}

/** First and longest sleep between two looks at the command socket, ms. */
const NAP_FIRST_MS = 0.05
const NAP_MAX_MS = 20

/**
 * A socket's side of `Commands`, for tasks in processes of their own: lines `run GEN OP SIZE ITERS`
 * and `stop` from the main thread, `done GEN SECONDS` back. Between runs the task reads the socket
 * with readSync (its event loop is not running while it serves) and sleeps between looks, 0.05 ms
 * at first and twice as long each time up to 20 ms: the next run's command mostly follows the last
 * one's answer at once, and a job that waits while another is measured (the benchmark keeps its
 * jobs open) wakes 50 times a second, not the 1,000 that took 5–10% of a CPU from the measured one.
 */
async function socketCommands(port: number, task: number): Promise<Commands> {
  const sock = connect({ host: '127.0.0.1', port })
  await new Promise<void>((resolve, reject) => {
    sock.once('connect', resolve)
    sock.once('error', reject)
  })
  sock.setNoDelay(true)
  const handle = (sock as unknown as { _handle: { fd: number; readStop(): number } })._handle
  handle.readStop()
  const fd = handle.fd
  const nap = new Int32Array(new SharedArrayBuffer(4))
  const buf = Buffer.alloc(4096)
  let text = ''
  writeSync(fd, `ready ${task}\n`)
  const line = (): string => {
    for (let ms = NAP_FIRST_MS; ; ) {
      const nl = text.indexOf('\n')
      if (nl >= 0) {
        const l = text.slice(0, nl)
        text = text.slice(nl + 1)
        return l
      }
      let n = 0
      try {
        n = readSync(fd, buf, 0, buf.length, null)
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e
        Atomics.wait(nap, 0, 0, ms)
        ms = Math.min(2 * ms, NAP_MAX_MS)
        continue
      }
      if (n === 0) return 'stop'
      text += buf.toString('utf8', 0, n)
    }
  }
  return {
    serve: (run) => {
      for (;;) {
        const l = line().split(' ')
        if (l[0] !== 'run') return
        run(Number(l[1]), Number(l[2]), Number(l[3]), Number(l[4]))
      }
    },
    finish: (gen, seconds) => {
      writeSync(fd, `done ${gen} ${seconds}\n`)
    },
  }
}

/** The task's `Commands`: its job's command block, or the main thread's socket. */
export async function openCommands(data: { cmd: SharedArrayBuffer | null; cmdPort?: number }, task: number): Promise<Commands> {
  if (data.cmd !== null) return blockCommands(data.cmd)
  if (data.cmdPort === undefined) throw new Error('the benchmark job has neither a command block nor a port')
  return await socketCommands(data.cmdPort, task)
}

/**
 * A task's side of the command block: counts itself READY, then runs `run` once per run the main
 * thread starts (each bump of GEN), with that run's OP, SIZE and ITERS, until STOP is set.
 */
export function serveCommands(cmd: Int32Array, run: (gen: number, op: number, size: number, iters: number) => void): void {
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
