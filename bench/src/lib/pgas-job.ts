/**
 * A job of `tasks` PGAS benchmark tasks (workers/pgas-task.ts, worker threads of one process)
 * driven through a command block, warmed up before it is measured. Shared by the `pgas`
 * collectives benchmark and the `pgas.scaling` one.
 */
import { fileURLToPath } from 'node:url'
import { startCommandJob, type CommandJob } from './command-job.js'
import { timesBytes, type PgasBenchData } from './pgas-layout.js'
import type { BenchContext } from '../types.js'

const TASK = fileURLToPath(new URL('../workers/pgas-task.js', import.meta.url))
const MiB = 1 << 20

/** One op code of a job and the sizes it is run at (the warm-up runs each). */
export interface PgasRunKind {
  op: number
  sizes: readonly number[]
}

/**
 * Starts the job (with AM-2 endpoints when `am2`; buffers up to `maxSize` bytes) and runs each
 * of `warm`'s kinds at each size for about `seconds`, before the runner measures: the first few
 * hundred milliseconds of a job are slower (code still being compiled).
 */
export async function openPgasJob(
  ctx: BenchContext,
  tasks: number,
  am2: boolean,
  maxSize: number,
  warm: readonly PgasRunKind[],
  seconds: number,
): Promise<CommandJob> {
  const data: Omit<PgasBenchData, 'cmd'> = { times: new SharedArrayBuffer(timesBytes(tasks)), maxSize, timeoutMs: ctx.timeoutMs, am2 }
  const job = await startCommandJob(ctx, {
    program: TASK,
    numTasks: tasks,
    // the segment holds the three buffers of the segment series, the runtime's rings and
    // counters, LAPI's staging copies of rendezvous messages, and AM-2's
    config: { segmentSize: Math.max(32 * MiB, 4 * maxSize + 8 * MiB) },
    data,
    label: `the ${tasks}-task PGAS job`,
  })
  try {
    for (const k of warm) {
      for (const size of k.sizes) {
        let n = 4
        for (let spent = 0; spent < seconds; n *= 2) spent += await job.run(k.op, size, n, `op ${k.op} at ${size} B, ${tasks} tasks (warm-up)`)
      }
    }
  } catch (err) {
    await job.close().catch(() => {})
    throw err
  }
  return job
}

/** Opens each job on first use and closes them all together (a session's job cache). */
export class PgasJobs {
  private readonly jobs = new Map<number, Promise<CommandJob>>()
  private readonly open: (tasks: number) => Promise<CommandJob>
  constructor(open: (tasks: number) => Promise<CommandJob>) {
    this.open = open
  }

  of(tasks: number): Promise<CommandJob> {
    let j = this.jobs.get(tasks)
    if (j === undefined) {
      j = this.open(tasks)
      this.jobs.set(tasks, j)
    }
    return j
  }

  async close(): Promise<void> {
    const errors: unknown[] = []
    for (const j of this.jobs.values()) {
      try {
        await (await j).close()
      } catch (err) {
        errors.push(err)
      }
    }
    this.jobs.clear()
    if (errors.length > 0) throw errors[0]
  }
}
