/**
 * The conformance suite: every LAPI and AM-2 test program, the AMX programs and the examples run
 * with all their tasks in one process (shared memory), and split over processes on each network
 * transport: over 2 processes, and a 4-task job also over 4. A transport joins the suite by adding
 * its name to TRANSPORTS. Each program checks itself (and exits non-zero otherwise); the suite
 * checks that every task said it was done.
 *
 * `npm test` runs every third program of the list, over processes: on its placements there in turn
 * (tcp and udp over 2 processes, and over 4 for a job of 4 tasks), so that every family of
 * programs runs over each transport (one process is the unit tests' placement: test/lapi,
 * test/am2). `npm run test:full` runs every program on every placement. (am2/noalloc.mjs, one
 * process only, is test:full's: its claim is test/am2/noalloc.perf.test.ts's, `npm run test:perf`.)
 */
import { describe, it } from 'vitest'
import { runFixture } from './helpers/job.js'
import { EX, PROGRAMS, checkOutput } from './helpers/programs.js'
import { matrix } from './helpers/tier.js'

/** The network transports between processes. */
const TRANSPORTS = ['tcp', 'udp'] as const

interface Placement {
  name: string
  procs: number
  transport?: (typeof TRANSPORTS)[number]
}

/** Where a program of `tasks` tasks runs: one process, then over 2 (and 4) processes on each transport. */
function placements(tasks: number): Placement[] {
  const p: Placement[] = [{ name: 'shm, 1 process', procs: 1 }]
  for (const t of TRANSPORTS) {
    p.push({ name: `${t}, 2 processes`, procs: 2, transport: t })
    if (tasks >= 4) p.push({ name: `${t}, 4 processes`, procs: 4, transport: t })
  }
  return p
}

/** Programs of the list so far; how many with as many placements over processes had theirs chosen. */
let listed = 0
const turns = new Map<number, number>()

/** The fast suite's placement of a program: for every third of the list, the next in turn of its placements over processes (none for a program of one process only). */
function fastPlacement(all: Placement[], shmOnly: boolean): Placement[] {
  if (listed++ % 3 !== 0 || shmOnly) return []
  const net = all.filter((p) => p.procs > 1)
  const k = turns.get(net.length) ?? 0
  turns.set(net.length, k + 1)
  return [net[k % net.length]!]
}

describe('conformance: the same programs in one process and over processes', () => {
  for (const prog of PROGRAMS) {
    const title = `${prog.file.replace(EX, 'examples/')} ${(prog.args ?? []).join(' ')} (${prog.tasks} tasks)`
    const all = placements(prog.tasks)
    const here = matrix(all, fastPlacement(all, prog.shmOnly !== undefined))
    if (here.length === 0) continue
    describe(title, () => {
      for (const pl of here) {
        const skip = pl.procs > 1 && prog.shmOnly !== undefined
        it.skipIf(skip)(
          pl.name + (skip ? ` (not yet: ${prog.shmOnly!})` : ''),
          async () => {
            // (a deadline with room for a loaded machine: am2/noalloc.mjs spins both tasks for seconds)
            const r = await runFixture(prog.file, prog.tasks, {
              args: prog.args ?? [],
              timeoutMs: 60_000,
              procs: pl.procs,
              ...(pl.transport !== undefined ? { transport: pl.transport } : {}),
              ...(prog.config !== undefined ? { config: prog.config } : {}),
              ...(prog.env !== undefined ? { env: { ...process.env, ...prog.env } } : {}),
            })
            if (r.exitCode !== 0) throw new Error(`job failed (${r.exitCode}): ${r.failure?.reason ?? ''}\n${r.stderr}\n${r.stdout}`)
            checkOutput(prog, r)
          },
          90_000,
        )
      }
    })
  }
})
