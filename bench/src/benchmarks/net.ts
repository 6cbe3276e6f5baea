/**
 * Between two processes on this host: amlapi over the `tcp` transport beside what a Node user gets
 * from `net` directly, measured in the same run and placement. Baselines (workers/net-peer.ts is
 * the other process):
 *
 *   net.evloop.rtt   ping-pong of `size` bytes on the event loop ('data' → write), both sides;
 *   net.poll.rtt     the same, both sides polling the socket synchronously (fs.readSync, EAGAIN
 *                    meaning nothing yet; fs.writeSync): what a progress engine that polls can do;
 *   net.stream.bw    a stream of `size`-byte writes (socket.write, waiting for 'drain'), one byte
 *                    back at the end.
 *
 * amlapi: a LAPI job and an AM-2 job of 2 tasks, one per process (`runJob({ procs: 2 })`), running
 * the task programs of the lapi.rma/lapi.am and am2 benchmarks, which take their runs over a
 * loopback socket from this thread. Goals: docs/benchmarks.md and docs/transports.md.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readSync, writeSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import { fileURLToPath } from 'node:url'
import { runJob, type JobResult } from '@amlapi/lapi'
import { AM2_DEPTH, Am2Op } from '../lib/am2-layout.js'
import { LapiOp } from '../lib/lapi-layout.js'
import type { Benchmark, BenchContext, Session } from '../types.js'

const PEER = fileURLToPath(new URL('../workers/net-peer.js', import.meta.url))
const LAPI_TASK = fileURLToPath(new URL('../workers/lapi-task.js', import.meta.url))
const AM2_TASK = fileURLToPath(new URL('../workers/am2-task.js', import.meta.url))
const MiB = 1 << 20
/**
 * Untimed operations at the start of each run of the amlapi jobs (OSU's "skip"): the barrier that
 * starts a run through the agents, and the connections' hand-over to the polling tasks, stay out
 * of the figures, which are the steady state's.
 */
const SKIP = 32

/** A server on loopback and the first connection to it. */
async function listen (): Promise<{ server: Server, port: number, accepted: Promise<Socket> }> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  const accepted = new Promise<Socket>((resolve) => server.once('connection', (s: Socket) => { s.setNoDelay(true); resolve(s) }))
  return { server, port, accepted }
}

/** A raw baseline: the peer process in `mode`, connected to us. */
interface Raw { sock: Socket, child: ChildProcess, server: Server }

async function raw (mode: string, size: number): Promise<Raw> {
  const { server, port, accepted } = await listen()
  const child = spawn(process.execPath, [PEER, String(port), mode, String(size)], { stdio: 'ignore' })
  const sock = await accepted
  return { sock, child, server }
}

function closeRaw (r: Raw | undefined): void {
  if (r === undefined) return
  r.sock.destroy()
  r.server.close()
  r.child.kill('SIGKILL')
}

/** Ping-pong on the event loop: `n` round trips of `size` bytes. */
async function evloopRtt (r: Raw, size: number, n: number): Promise<number> {
  const msg = Buffer.alloc(size, 1)
  return await new Promise<number>((resolve) => {
    let have = 0
    let left = n
    const t0 = performance.now()
    const onData = (c: Buffer): void => {
      have += c.length
      while (have >= size) {
        have -= size
        if (--left === 0) { r.sock.off('data', onData); resolve((performance.now() - t0) / 1000); return }
        r.sock.write(msg)
      }
    }
    r.sock.on('data', onData)
    r.sock.write(msg)
  })
}

/** Ping-pong polled synchronously on this thread (the socket's event-loop reading is off meanwhile). */
function pollRtt (r: Raw, size: number, n: number, deadline: number): number {
  const h = (r.sock as unknown as { _handle: { fd: number, readStop (): number, readStart (): number } })._handle
  h.readStop()
  const msg = Buffer.alloc(size, 1)
  const buf = Buffer.alloc(1 << 16)
  const t0 = performance.now()
  for (let i = 0; i < n; i++) {
    writeSync(h.fd, msg)
    let have = 0
    while (have < size) {
      try { have += readSync(h.fd, buf, 0, buf.length, null) } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e
        if (performance.now() > deadline) throw new Error('the polled ping-pong timed out')
      }
    }
  }
  return (performance.now() - t0) / 1000
}

/** A stream of `n` writes of `size` bytes; the time runs until the peer's byte says it has them all. */
async function streamBw (r: Raw, size: number, n: number): Promise<number> {
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
interface Job { run (op: number, size: number, iters: number): Promise<number>, close (): Promise<void> }

async function openJob (program: string, maxSize: number, timeoutMs: number, extra: Record<string, unknown> = {}): Promise<Job> {
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
    program, numTasks: 2, procs: 2,
    config: { segmentSize: Math.max(16 * MiB, 2 * maxSize + MiB) },
    data: { cmd: null, cmdPort, maxSize, timeoutMs, skip: SKIP, ...extra },
    stdout: process.stderr,
    signal: stop.signal,
  }).then((r) => { st.ended = r })
  const limit = setTimeout(() => stop.abort(), 30_000)
  await Promise.race([ready, job.then(() => { throw new Error(`the benchmark job ended before it was ready (exit ${st.ended?.exitCode ?? '?'}: ${st.ended?.failure?.reason ?? ''})`) })])
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
        const l = text.slice(0, nl); text = text.slice(nl + 1)
        const w = waiters.get(s)
        if (w !== undefined) { waiters.delete(s); w(l) } else lines.get(s)!.push(l)
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
    async run (op, size, iters): Promise<number> {
      if (st.ended !== undefined) throw new Error(`the benchmark job has ended (${st.ended.failure?.reason ?? st.ended.exitCode})`)
      gen++
      for (const s of socks) s.write(`run ${gen} ${op} ${size} ${iters}\n`)
      const timer = new Promise<never>((_resolve, reject) => setTimeout(() => reject(new Error(`run ${op} at ${size} B did not finish in ${timeoutMs} ms`)), timeoutMs).unref())
      // (the task that times the run answers; the AM-2 job's requester is task 1, the LAPI job's task 0)
      const timer2 = job.then(() => { throw new Error(`the benchmark job ended during a run (${st.ended?.failure?.reason ?? st.ended?.exitCode})`) })
      const answers = socks.map(async (s) => {
        for (;;) {
          const l = (await next(s)).split(' ')
          if (l[0] === 'done' && Number(l[1]) === gen) return Number(l[2])
        }
      })
      return await Promise.race([Promise.any(answers), timer, timer2])
    },
    async close (): Promise<void> {
      for (const s of socks) s.end('stop\n')
      const t = setTimeout(() => stop.abort(), 5000)
      await job
      clearTimeout(t)
      server.close()
      void who
    },
  }
}

/**
 * Runs every pattern of a fresh job for about `seconds` before the runner calibrates: the first
 * few hundred milliseconds of a job are slower (its code still being compiled, V8's compiler
 * threads taking the CPUs the tasks spin on; on one CPU, about a second), and would otherwise set
 * the iteration counts.
 */
async function warmJob (job: Job, ops: Record<string, number>, seconds: number): Promise<void> {
  for (const [series, op] of Object.entries(ops)) {
    const size = series.endsWith('-bw') ? MiB : series.startsWith('net.am2.') ? 0 : 8
    await warmUp(size === MiB ? { n: 1 } : { n: 16 }, seconds, async (n) => await job.run(op, size, n))
  }
}

/** Runs `run(n)` (seconds) with n doubling from `start.n` until about `seconds` were spent. */
async function warmUp (start: { n: number }, seconds: number, run: (n: number) => Promise<number>): Promise<void> {
  let n = start.n
  for (let spent = 0; spent < seconds; n *= 2) spent += await run(n)
}

const LAPI_OPS: Record<string, number> = {
  'net.lapi.put-rtt': LapiOp.PUT_RTT,
  'net.lapi.am-rtt': LapiOp.AM_RTT_HDR,
  'net.lapi.put-bw': LapiOp.PUT_BW,
}
const AM2_OPS: Record<string, number> = {
  'net.am2.short-rtt': Am2Op.SHORT_RTT,
  'net.am2.rate': Am2Op.RATE,
  'net.am2.long-bw': Am2Op.LONG_BW,
}

const bench: Benchmark = {
  name: 'net',
  description: 'two processes over tcp: LAPI and AM-2 beside Node net ping-pongs (event loop, polled) and a net stream',
  placements: ['all', '1core'],
  series: [
    {
      id: 'net.evloop.rtt', title: 'net ping-pong, event loop', kind: 'latency', unit: 'us', group: 'net-rtt',
      groupTitle: 'Round trip between two processes over TCP (µs)', sizes: [16],
    },
    { id: 'net.poll.rtt', title: 'net ping-pong, polled (readSync)', kind: 'latency', unit: 'us', group: 'net-rtt', sizes: [16] },
    {
      id: 'net.lapi.put-rtt', title: 'LAPI Put ping-pong over tcp', kind: 'latency', unit: 'us', group: 'net-rtt', sizes: [8],
      compareTo: [{ series: 'net.poll.rtt', label: '÷ polled net', baselineSize: 16 }, { series: 'net.evloop.rtt', label: '÷ event-loop net', baselineSize: 16 }],
    },
    {
      id: 'net.lapi.am-rtt', title: 'LAPI Amsend ping-pong (one packet) over tcp', kind: 'latency', unit: 'us', group: 'net-rtt', sizes: [8],
      compareTo: [{ series: 'net.poll.rtt', label: '÷ polled net', baselineSize: 16 }],
    },
    {
      id: 'net.am2.short-rtt', title: 'AM-2 Short round trip over tcp', kind: 'latency', unit: 'us', group: 'net-rtt', sizes: [0],
      compareTo: [{ series: 'net.poll.rtt', label: '÷ polled net', baselineSize: 16 }, { series: 'net.evloop.rtt', label: '÷ event-loop net', baselineSize: 16 }],
    },
    {
      id: 'net.am2.rate', title: 'AM-2 pipelined Short requests over tcp', kind: 'rate', unit: 'ops/s', group: 'net-rate',
      groupTitle: 'Requests per second between two processes over TCP', sizes: [0],
    },
    {
      id: 'net.stream.bw', title: 'net stream (socket.write)', kind: 'bandwidth', unit: 'MB/s', group: 'net-bw',
      groupTitle: 'One-way bandwidth between two processes over TCP (MB/s)', sizes: [MiB],
    },
    {
      id: 'net.lapi.put-bw', title: 'LAPI Put over tcp', kind: 'bandwidth', unit: 'MB/s', group: 'net-bw', sizes: [MiB],
      compareTo: [{ series: 'net.stream.bw', label: '÷ net stream' }],
    },
    {
      id: 'net.am2.long-bw', title: 'AM-2 Long over tcp', kind: 'bandwidth', unit: 'MB/s', group: 'net-bw', sizes: [MiB],
      compareTo: [{ series: 'net.stream.bw', label: '÷ net stream' }],
    },
  ],
  goals: [
    { name: 'AM-2 Short round trip over tcp ≤ 1.5 × the polled net ping-pong', series: 'net.am2.short-rtt', size: 0, baseline: 'net.poll.rtt', baselineSize: 16, op: '<=', target: 1.5 },
    { name: 'AM-2 Short round trip over tcp below the event-loop net ping-pong', series: 'net.am2.short-rtt', size: 0, baseline: 'net.evloop.rtt', baselineSize: 16, op: '<=', target: 1 },
    { name: 'LAPI 8 B Put ping-pong over tcp ≤ 1.0 × the AM-2 Short round trip over tcp', series: 'net.lapi.put-rtt', size: 8, baseline: 'net.am2.short-rtt', baselineSize: 0, op: '<=', target: 1 },
    { name: '1 MiB LAPI Put over tcp ≥ 0.8 × the net stream', series: 'net.lapi.put-bw', size: MiB, baseline: 'net.stream.bw', op: '>=', target: 0.8 },
    { name: '1 MiB AM-2 Long over tcp ≥ 0.8 × the net stream', series: 'net.am2.long-bw', size: MiB, baseline: 'net.stream.bw', op: '>=', target: 0.8 },
    { name: 'AM-2 pipelined requests over tcp ≥ 300,000/s', series: 'net.am2.rate', size: 0, op: '>=', target: 300_000 },
    { name: 'one core: AM-2 Short round trip over tcp ≤ 2 × the event-loop net ping-pong', series: 'net.am2.short-rtt@1core', size: 0, baseline: 'net.evloop.rtt@1core', baselineSize: 16, op: '<=', target: 2 },
  ],
  async open (ctx: BenchContext): Promise<Session> {
    const rawOf = new Map<string, Raw>()
    let lapi: Job | undefined
    let am2: Job | undefined
    const maxSize = Math.max(64, ctx.maxSize)
    // (on one CPU the compiler threads share it with the job's threads: its code takes longer to settle)
    const warmS = ctx.quick ? 0.02 : ctx.cpus === 1 ? 2 : 0.2
    return {
      async run (series: string, size: number, iterations: number): Promise<number> {
        if (series === 'net.evloop.rtt' || series === 'net.poll.rtt' || series === 'net.stream.bw') {
          const mode = series === 'net.evloop.rtt' ? 'echo' : series === 'net.poll.rtt' ? 'poll' : 'sink'
          const once = async (r: Raw, n: number): Promise<number> => {
            if (mode === 'echo') return await evloopRtt(r, size, n)
            if (mode === 'poll') return pollRtt(r, size, n, performance.now() + ctx.timeoutMs)
            return await streamBw(r, size, n)
          }
          let r = rawOf.get(mode)
          if (r === undefined) {
            r = await raw(mode, size)
            rawOf.set(mode, r)
            // (warmed up as the jobs are: the baselines' code settles too)
            const rr = r
            await warmUp(size === MiB ? { n: 1 } : { n: 16 }, warmS, async (n) => await once(rr, n))
          }
          return await once(r, iterations)
        }
        if (series in LAPI_OPS) {
          if (lapi === undefined) { lapi = await openJob(LAPI_TASK, maxSize, ctx.timeoutMs); await warmJob(lapi, LAPI_OPS, warmS) }
          return await lapi.run(LAPI_OPS[series]!, size, iterations)
        }
        if (series in AM2_OPS) {
          if (am2 === undefined) { am2 = await openJob(AM2_TASK, maxSize, ctx.timeoutMs, { depth: AM2_DEPTH }); await warmJob(am2, AM2_OPS, warmS) }
          return await am2.run(AM2_OPS[series]!, size, iterations)
        }
        throw new Error(`unknown series ${series}`)
      },
      async close (): Promise<void> {
        for (const r of rawOf.values()) closeRaw(r)
        await Promise.all([lapi?.close(), am2?.close()])
      },
    }
  },
}

export default bench
