/**
 * A job of benchmark tasks driven through a command block (`C`, lib/lapi-layout.ts): the main
 * thread writes an op code, a size and an iteration count and bumps GEN; the tasks run it, and
 * the one that times the run writes the result (seconds) and DONE. Each task sets READY once
 * when it is up. Shared by the LAPI, AM-2 and PGAS benchmarks.
 */
import { runJob, type JobConfig, type JobResult } from '@amlapi/lapi'
import { C } from './lapi-layout.js'
import type { BenchContext } from '../types.js'

/** A running job: runs an op, ends. */
export interface CommandJob {
  /** Runs op `op` at `size` for `iterations`; resolves with the seconds the task measured. `what` names the run in errors. */
  run(op: number, size: number, iterations: number, what: string): Promise<number>
  close(): Promise<void>
}

export interface CommandJobOptions {
  /** Compiled task program. */
  program: string
  numTasks: number
  config: Partial<JobConfig>
  /** The job data beside the command block (`cmd`, added here). */
  data: Record<string, unknown>
  /** The job in error messages, e.g. "the LAPI job". */
  label: string
}

/** Starts the job and returns once every task said it is ready. */
export async function startCommandJob(ctx: BenchContext, o: CommandJobOptions): Promise<CommandJob> {
  const cmdSab = new SharedArrayBuffer(C.BYTES)
  const cmd = new Int32Array(cmdSab)
  const result = new Float64Array(cmdSab, C.RESULT_BYTE, 1)
  const stop = new AbortController()
  const st: { ended: JobResult | undefined } = { ended: undefined }
  const exitOf = (): string =>
    st.ended?.failure ? `exit ${st.ended.exitCode}: task ${st.ended.failure.task}: ${st.ended.failure.reason}` : `exit ${st.ended?.exitCode ?? '?'}`
  const job = runJob({
    program: o.program,
    numTasks: o.numTasks,
    config: o.config,
    data: { ...o.data, cmd: cmdSab },
    stdout: process.stderr,
    signal: stop.signal,
  }).then((r) => {
    st.ended = r
    Atomics.store(cmd, C.DONE, -1)
    Atomics.notify(cmd, C.DONE)
  })
  const deadline = Date.now() + 20_000
  while (Atomics.load(cmd, C.READY) < o.numTasks) {
    if (st.ended !== undefined) throw new Error(`${o.label} ended before it was ready (${exitOf()})`)
    if (Date.now() > deadline) {
      stop.abort()
      await job
      throw new Error(`${o.label} did not start within 20 s`)
    }
    await Atomics.waitAsync(cmd, C.READY, Atomics.load(cmd, C.READY), 100).value
  }
  let gen = 0
  return {
    async run(op, size, iterations, what) {
      if (st.ended !== undefined) throw new Error(`${o.label} has ended (${exitOf()})`)
      Atomics.store(cmd, C.OP, op)
      Atomics.store(cmd, C.SIZE, size)
      Atomics.store(cmd, C.ITERS, iterations)
      gen++
      Atomics.store(cmd, C.GEN, gen)
      Atomics.notify(cmd, C.GEN)
      const limit = Date.now() + ctx.timeoutMs
      for (;;) {
        const done = Atomics.load(cmd, C.DONE)
        if (done === gen) return result[0]!
        if (done === -1) throw new Error(`${o.label} ended during a run of ${what} (${exitOf()})`)
        if (Date.now() > limit) {
          stop.abort()
          throw new Error(`run of ${what} did not finish in ${ctx.timeoutMs} ms`)
        }
        await Atomics.waitAsync(cmd, C.DONE, done, 50).value
      }
    },
    async close() {
      Atomics.store(cmd, C.STOP, 1)
      Atomics.notify(cmd, C.GEN)
      const t = setTimeout(() => stop.abort(), 5000)
      await job
      clearTimeout(t)
    },
  }
}
