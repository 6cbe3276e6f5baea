/**
 * The floor of the PGAS broadcast and all-to-all between tasks of one process: 2 and 4 bare
 * worker threads doing only the copies and the counting each must do (workers/coll-floor.ts),
 * with buffers in page-aligned SharedArrayBuffers as the tasks' segments are. Bandwidth is the
 * bytes into each thread's destination per second, as the `pgas` series count it. Where the
 * threads outnumber the CPUs, their waits sleep at once (as the library's do): what the machine
 * gives four threads on two CPUs is this floor, not the library's.
 */
import { pageAlignedShared } from '@amlapi/lapi/transport'
import { CTL_BYTES, CTL_WORDS, C_ABORT, type FloorCommand, type FloorData } from '../lib/floor-layout.js'
import { Peer } from '../lib/peer.js'
import type { Benchmark, BenchContext, Session } from '../types.js'

const WORKER = new URL('../workers/coll-floor.js', import.meta.url)
const MiB = 1 << 20
const SIZES: readonly number[] = [64 << 10, MiB]
/** The spin of a wait before it sleeps where there are CPUs enough (the library's default, µs). */
const SPIN_US = 200

const SERIES: Record<string, { threads: 2 | 4; op: FloorCommand['op'] }> = {
  'baseline.threads.bcast-2': { threads: 2, op: 'bcast' },
  'baseline.threads.bcast-4': { threads: 4, op: 'bcast' },
  'baseline.threads.alltoall-2': { threads: 2, op: 'alltoall' },
  'baseline.threads.alltoall-4': { threads: 4, op: 'alltoall' },
}

/** P threads, their buffers and control block, started once per session. */
interface Team {
  peers: Peer[]
  ctl: Int32Array
}

async function openTeam(ctx: BenchContext, threads: number): Promise<Team> {
  const sab = new SharedArrayBuffer(CTL_BYTES)
  const maxSize = Math.max(...SIZES, ctx.maxSize)
  const bufs = Array.from({ length: threads }, () => pageAlignedShared(2 * maxSize))
  const peers = Array.from({ length: threads }, (_, rank) => new Peer(WORKER, { ctl: sab, bufs, rank, threads, maxSize } satisfies FloorData))
  try {
    await Promise.all(peers.map((p) => p.ready(ctx.timeoutMs)))
  } catch (e) {
    await Promise.all(peers.map((p) => p.terminate()))
    throw e
  }
  return { peers, ctl: new Int32Array(sab) }
}

const bench: Benchmark = {
  name: 'baseline.threads',
  description:
    'the floor of a broadcast and an all-to-all between 2 and 4 worker threads: only the copies (Uint8Array.set between SharedArrayBuffers) and the counting each must do',
  placements: ['all'],
  minCpus: 2,
  series: [
    {
      id: 'baseline.threads.bcast-2',
      title: 'bare threads: broadcast, 2 threads',
      kind: 'bandwidth',
      unit: 'MB/s',
      group: 'threads-floor',
      groupTitle: "Broadcast and all-to-all between bare worker threads: bytes into each thread's buffer per second (MB/s)",
      xLabel: 'buffer bytes per thread (all-to-all: size / P from each thread)',
      sizes: SIZES,
    },
    { id: 'baseline.threads.bcast-4', title: 'bare threads: broadcast, 4 threads', kind: 'bandwidth', unit: 'MB/s', group: 'threads-floor', sizes: SIZES },
    { id: 'baseline.threads.alltoall-2', title: 'bare threads: all-to-all, 2 threads', kind: 'bandwidth', unit: 'MB/s', group: 'threads-floor', sizes: SIZES },
    { id: 'baseline.threads.alltoall-4', title: 'bare threads: all-to-all, 4 threads', kind: 'bandwidth', unit: 'MB/s', group: 'threads-floor', sizes: SIZES },
  ],
  open(ctx): Session {
    const teams = new Map<number, Promise<Team>>()
    const team = (n: number): Promise<Team> => {
      let t = teams.get(n)
      if (t === undefined) {
        t = openTeam(ctx, n)
        teams.set(n, t)
      }
      return t
    }
    return {
      async run(series, size, iterations) {
        const s = SERIES[series]
        if (s === undefined) throw new Error(`unknown series ${series}`)
        if (size % s.threads !== 0) throw new Error(`${series}: size ${size} is not a multiple of ${s.threads} threads`)
        const t = await team(s.threads)
        for (let w = 0; w < CTL_WORDS; w++) Atomics.store(t.ctl, w, 0)
        const cmd: FloorCommand = { op: s.op, size, iterations, spinUs: s.threads <= ctx.cpus ? SPIN_US : 0, timeoutMs: ctx.timeoutMs }
        // (a worker's { error } reply rejects its request (Peer); the first failure stops the others' waits)
        const stop = (e: unknown): never => {
          Atomics.store(t.ctl, C_ABORT, 1)
          throw e
        }
        const replies = await Promise.allSettled(t.peers.map((p) => p.request<{ seconds: number }>(cmd, ctx.timeoutMs + 5000).catch(stop)))
        let seconds = 0
        for (const r of replies) {
          if (r.status === 'rejected') throw r.reason
          seconds = Math.max(seconds, r.value.seconds)
        }
        return seconds
      },
      async close() {
        for (const t of teams.values()) await Promise.all((await t).peers.map((p) => p.terminate()))
      },
    }
  },
}

export default bench
