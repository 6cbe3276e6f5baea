/**
 * Worker of `baseline.threads`: bare worker threads doing what a broadcast or an all-to-all
 * between the tasks of one process must at least do, with nothing of the library around it. Each
 * thread has one page-aligned SharedArrayBuffer (as a task's segment) with its source at 0 and its
 * destination at `maxSize`.
 *
 * - Broadcast: thread 0 raises the round number; every other thread waits for it, copies thread
 *   0's source into its destination (`Uint8Array.set`) and counts itself done; thread 0 waits for
 *   every count before the next round (its source may change once its call returned).
 * - All-to-all: every thread counts itself in and waits for all P (each source is ready once its
 *   thread is in), copies block `me` of each thread's source into block `s` of its destination,
 *   counts itself done and waits for all P counts of the round (a thread may change its source
 *   once its call returned).
 *
 * A wait spins for `spinUs` (0 where the threads outnumber the CPUs, as the library's waits), then
 * sleeps in `Atomics.wait`; every wait gives up at the command's deadline or on the abort word.
 * All threads start together (a start line); each answers its own time from there.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { CTL_BYTES, C_ABORT, C_DONE, C_ENTER, C_ROUND, C_START, type FloorCommand, type FloorData, type FloorReply } from '../lib/floor-layout.js'

const d = workerData as FloorData
const port = parentPort!
const ctl = new Int32Array(d.ctl, 0, CTL_BYTES / 4)
const P = d.threads,
  me = d.rank
// (its own buffer's pages touched before any timing)
new Uint8Array(d.bufs[me]!).fill(0xa5 ^ me)
port.on('message', (cmd: FloorCommand) => {
  try {
    port.postMessage({ seconds: run(cmd) } satisfies FloorReply)
  } catch (e) {
    Atomics.store(ctl, C_ABORT, 1)
    for (const w of [C_ROUND, C_DONE, C_START, C_ENTER]) Atomics.notify(ctl, w)
    port.postMessage({ error: (e as Error).message } satisfies FloorReply)
  }
})
port.postMessage({ ready: me })

/** Waits until ctl[i] ≥ v: spins `spinUs`, then sleeps; throws past `deadline` or on abort. */
function waitAtLeast(i: number, v: number, spinUs: number, deadline: number): void {
  if (Atomics.load(ctl, i) >= v) return
  if (spinUs > 0) {
    const until = performance.now() + spinUs / 1000
    for (let k = 1; ; k++) {
      if (Atomics.load(ctl, i) >= v) return
      if ((k & 63) === 0 && performance.now() > until) break
    }
  }
  for (;;) {
    const cur = Atomics.load(ctl, i)
    if (cur >= v) return
    if (Atomics.load(ctl, C_ABORT) !== 0) throw new Error('aborted: another thread failed')
    if (performance.now() > deadline) throw new Error(`wait for word ${i} to reach ${v} passed the deadline (at ${cur})`)
    Atomics.wait(ctl, i, cur, 20)
  }
}

function run(cmd: FloorCommand): number {
  const { size, iterations, spinUs } = cmd
  const deadline = performance.now() + cmd.timeoutMs
  const src = d.bufs.map((b) => new Uint8Array(b, 0, size))
  const dst = new Uint8Array(d.bufs[me]!, d.maxSize, size)
  const blk = size / P
  // (the views of the timed loop made before it)
  const from = src.map((s) => s.subarray(me * blk, (me + 1) * blk))
  const into = src.map((_, s) => dst.subarray(s * blk, (s + 1) * blk))
  Atomics.add(ctl, C_START, 1)
  Atomics.notify(ctl, C_START)
  waitAtLeast(C_START, P, 1000, deadline)
  const t0 = performance.now()
  if (cmd.op === 'bcast') {
    if (me === 0) {
      for (let k = 1; k <= iterations; k++) {
        Atomics.store(ctl, C_ROUND, k)
        Atomics.notify(ctl, C_ROUND)
        waitAtLeast(C_DONE, (P - 1) * k, spinUs, deadline)
      }
    } else {
      for (let k = 1; k <= iterations; k++) {
        waitAtLeast(C_ROUND, k, spinUs, deadline)
        dst.set(src[0]!)
        Atomics.add(ctl, C_DONE, 1)
        Atomics.notify(ctl, C_DONE)
      }
    }
  } else {
    for (let k = 1; k <= iterations; k++) {
      Atomics.add(ctl, C_ENTER, 1)
      Atomics.notify(ctl, C_ENTER)
      waitAtLeast(C_ENTER, P * k, spinUs, deadline)
      for (let s = 0; s < P; s++) into[s]!.set(from[s]!)
      Atomics.add(ctl, C_DONE, 1)
      Atomics.notify(ctl, C_DONE)
      waitAtLeast(C_DONE, P * k, spinUs, deadline)
    }
  }
  return (performance.now() - t0) / 1000
}
