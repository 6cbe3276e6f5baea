/**
 * What the benchmarks between two processes share (benchmarks/net.ts, benchmarks/net-udp.ts): the
 * raw Node `net` baselines against workers/net-peer.ts, and 2-process amlapi jobs of the
 * benchmark task programs (workers/lapi-task.ts, workers/am2-task.ts) driven over loopback sockets.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readSync, writeSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import { fileURLToPath } from 'node:url'
import { runJob, type JobResult, type RunJobOptions } from '@amlapi/lapi'
const PEER = fileURLToPath(new URL('../workers/net-peer.js', import.meta.url))
const MiB = 1 << 20
/**
 * Untimed operations at the start of each run of the amlapi jobs (OSU's "skip"): the barrier that
 * starts a run through the agents, and the connections' hand-over to the polling tasks, stay out
 * of the figures, which are the steady state's.
 */
const SKIP = 32

/** A server on loopback and the first connection to it. */
export async function listen(): Promise<{ server: Server; port: number; accepted: Promise<Socket> }> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  const accepted = new Promise<Socket>((resolve) =>
    server.once('connection', (s: Socket) => {
      s.setNoDelay(true)
      resolve(s)
    }),
  )
  return { server, port, accepted }
}

/** A raw baseline: the peer process in `mode`, connected to us. */
export interface Raw {
  sock: Socket
  child: ChildProcess
  server: Server
}

export async function raw(mode: string, size: number): Promise<Raw> {
  const { server, port, accepted } = await listen()
  const child = spawn(process.execPath, [PEER, String(port), mode, String(size)], { stdio: 'ignore' })
  const sock = await accepted
  return { sock, child, server }
}

export function closeRaw(r: Raw | undefined): void {
  if (r === undefined) return
  r.sock.destroy()
  r.server.close()
  r.child.kill('SIGKILL')
}

/** Ping-pong on the event loop: `n` round trips of `size` bytes. */
export async function evloopRtt(r: Raw, size: number, n: number): Promise<number> {
  const msg = Buffer.alloc(size, 1)
  return await new Promise<number>((resolve) => {
    let have = 0
    let left = n
    const t0 = performance.now()
    const onData = (c: Buffer): void => {
      have += c.length
      while (have >= size) {
        have -= size
        if (--left === 0) {
          r.sock.off('data', onData)
          resolve((performance.now() - t0) / 1000)
          return
        }
        r.sock.write(msg)
      }
    }
    r.sock.on('data', onData)
    r.sock.write(msg)
  })
}

/** Ping-pong polled synchronously on this thread (the socket's event-loop reading is off meanwhile). */
export function pollRtt(r: Raw, size: number, n: number, deadline: number): number {
  const h = (r.sock as unknown as { _handle: { fd: number; readStop(): number; readStart(): number } })._handle
  h.readStop()
  const msg = Buffer.alloc(size, 1)
  const buf = Buffer.alloc(1 << 16)
  const t0 = performance.now()
  for (let i = 0; i < n; i++) {
    writeSync(h.fd, msg)
    let have = 0
    while (have < size) {
      try {
        have += readSync(h.fd, buf, 0, buf.length, null)
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e
        if (performance.now() > deadline) throw new Error('the polled ping-pong timed out')
      }
    }
  }
  return (performance.now() - t0) / 1000
}

/** A stream of `n` writes of `size` bytes; the time runs until the peer's byte says it has them all. */
export async function streamBw(r: Raw, size: number, n: number): Promise<number> {
  const hdr = Buffer.alloc(8)
  hdr.writeBigUInt64LE(BigInt(size) * BigInt(n))
  const chunk = Buffer.alloc(size, 7)
  const done = new Promise<void>((resolve) => r.sock.once('data', () => resolve()))
  const t0 = performance.now()
  r.sock.write(hdr)
  for (let i = 0; i < n; i++) {
    if (!r.sock.write(chunk)) await new Promise<void>((resolve) => r.sock.once('drain', resolve))
  }
  await done
  return (performance.now() - t0) / 1000
}

/** A 2-process job of a benchmark task program, driven over a loopback socket. */
export interface Job {
  run(op: number, size: number, iters: number): Promise<number>
  close(): Promise<void>
}

export async function openJob(
  program: string,
  maxSize: number,
  timeoutMs: number,
  extra: Record<string, unknown> = {},
  net: Pick<RunJobOptions, 'transport' | 'faults' | 'mac'> = {},
): Promise<Job> {
  const server = createServer()
  const socks: Socket[] = []
  const ready = new Promise<void>((resolve) => {
    server.on('connection', (s: Socket) => {
      s.setNoDelay(true)
      socks.push(s)
      if (socks.length === 2) resolve()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const cmdPort = (server.address() as { port: number }).port
  const stop = new AbortController()
  const st: { ended: JobResult | undefined } = { ended: undefined }
  const job = runJob({
    program,
    numTasks: 2,
    procs: 2,
    ...net,
    config: { segmentSize: Math.max(16 * MiB, 2 * maxSize + MiB) },
    data: { cmd: null, cmdPort, maxSize, timeoutMs, skip: SKIP, ...extra },
    stdout: process.stderr,
    signal: stop.signal,
  }).then((r) => {
    st.ended = r
  })
  const limit = setTimeout(() => stop.abort(), 30_000)
  await Promise.race([
    ready,
    job.then(() => {
      throw new Error(`the benchmark job ended before it was ready (exit ${st.ended?.exitCode ?? '?'}: ${st.ended?.failure?.reason ?? ''})`)
    }),
  ])
  clearTimeout(limit)
  // which socket is task 0's: each says `ready <task>` first
  const lines = new Map<Socket, string[]>()
  const waiters = new Map<Socket, (l: string) => void>()
  for (const s of socks) {
    let text = ''
    lines.set(s, [])
    s.on('data', (c: Buffer) => {
      text += c.toString()
      for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n')) {
        const l = text.slice(0, nl)
        text = text.slice(nl + 1)
        const w = waiters.get(s)
        if (w !== undefined) {
          waiters.delete(s)
          w(l)
        } else lines.get(s)!.push(l)
      }
    })
  }
  const next = (s: Socket): Promise<string> => {
    const q = lines.get(s)!
    if (q.length > 0) return Promise.resolve(q.shift()!)
    return new Promise((resolve) => waiters.set(s, resolve))
  }
  const who = await Promise.all(socks.map(async (s) => Number((await next(s)).split(' ')[1])))
  let gen = 0
  return {
    async run(op, size, iters): Promise<number> {
      if (st.ended !== undefined) throw new Error(`the benchmark job has ended (${st.ended.failure?.reason ?? st.ended.exitCode})`)
      gen++
      for (const s of socks) s.write(`run ${gen} ${op} ${size} ${iters}\n`)
      const timer = new Promise<never>((_resolve, reject) =>
        setTimeout(() => reject(new Error(`run ${op} at ${size} B did not finish in ${timeoutMs} ms`)), timeoutMs).unref(),
      )
      // (the task that times the run answers; the AM-2 job's requester is task 1, the LAPI job's task 0)
      const timer2 = job.then(() => {
        throw new Error(`the benchmark job ended during a run (${st.ended?.failure?.reason ?? st.ended?.exitCode})`)
      })
      const answers = socks.map(async (s) => {
        for (;;) {
          const l = (await next(s)).split(' ')
          if (l[0] === 'done' && Number(l[1]) === gen) return Number(l[2])
        }
      })
      return await Promise.race([Promise.any(answers), timer, timer2])
    },
    async close(): Promise<void> {
      for (const s of socks) s.end('stop\n')
      const t = setTimeout(() => stop.abort(), 5000)
      await job
      clearTimeout(t)
      server.close()
      void who
    },
  }
}

/** How long `warmJob` runs each pattern: at least `seconds` (a rate pattern `rateSeconds`), on while its rate climbs up to `maxSeconds`. */
export interface WarmTimes {
  seconds: number
  rateSeconds: number
  maxSeconds: number
}

/** WarmTimes of the network benchmarks: short with --quick; on one CPU the compiler threads share it with the job's threads. */
export function warmTimes(ctx: { quick: boolean; cpus: number }): WarmTimes {
  if (ctx.quick) return { seconds: 0.02, rateSeconds: 0.02, maxSeconds: 0.02 }
  const seconds = ctx.cpus === 1 ? 2 : 0.2
  return { seconds, rateSeconds: Math.max(seconds, 1), maxSeconds: 3 }
}

/**
 * Runs every pattern of a fresh job before the runner calibrates (`WarmTimes`): the first second
 * or so of a job is slower (its code still being compiled, V8's compiler threads taking the CPUs
 * the tasks spin on; pipelined requests between two processes on 2 vCPUs start at a tenth of their
 * steady rate and take about a second of traffic to get there), and would otherwise set the
 * iteration counts and the samples.
 */
export async function warmJob(job: Job, ops: Record<string, number>, w: WarmTimes): Promise<void> {
  for (const [series, op] of Object.entries(ops)) {
    const size = series.endsWith('-bw') ? MiB : series.includes('.am2.') ? 0 : 8
    const min = /\.rate(-|$)/.test(series) ? w.rateSeconds : w.seconds
    await warmUp(size === MiB ? { n: 1 } : { n: 16 }, min, async (n) => await job.run(op, size, n), Math.max(min, w.maxSeconds))
  }
}

/** A warm-up run's rate counts as still climbing while it beats the one before by this factor. */
const CLIMBING = 1.1
/** Warm-up runs grow (doubling their count) until one takes this long, s. */
const WARM_RUN_S = 0.1

/**
 * Runs `run(n)` (seconds), n doubling from `start.n` until a run takes WARM_RUN_S, for at least
 * `seconds` in all, then on while a run's rate beats the one before it by CLIMBING, for at most
 * `maxSeconds`.
 */
export async function warmUp(start: { n: number }, seconds: number, run: (n: number) => Promise<number>, maxSeconds = seconds): Promise<void> {
  let n = start.n
  let last = 0
  for (let spent = 0; ; ) {
    const t = await run(n)
    spent += t
    const rate = t > 0 ? n / t : Infinity
    const climbing = rate > last * CLIMBING
    last = rate
    if (spent >= maxSeconds || (spent >= seconds && !climbing)) return
    if (t < WARM_RUN_S) n *= 2
  }
}
