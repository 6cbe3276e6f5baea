/**
 * Between two processes on this host over the `udp` transport, beside what a Node user gets from
 * `dgram` directly, measured in the same run (workers/dgram-peer.ts is the other process):
 *
 *   net.udp.evloop.rtt   datagram ping-pong on the event loop ('message' → send), both sides;
 *   net.udp.poll.rtt     the same, both sides polling the socket synchronously (fs.readSync on its
 *                        descriptor, EAGAIN meaning nothing yet; fs.writeSync on the connected socket);
 *   net.udp.flood.rate   one 16-byte message per datagram as fast as `socket.send` takes them, the
 *                        peer counting what arrives on its event loop (what is lost is not counted).
 *
 * amlapi: LAPI and AM-2 jobs of 2 tasks, one per process, over udp (the task programs of the
 * lapi.rma/lapi.am and am2 benchmarks); again with `--faults drop=0.05`, and with the per-datagram
 * MAC (its cost, and the loss's to the mean round trip, are ratio columns: median ÷ median). The
 * tcp transport's figures and the raw `net` stream are the `net` benchmark's (same run).
 * Goals: docs/benchmarks.md and docs/transports.md.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createSocket, type Socket } from 'node:dgram'
import { readSync, writeSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { AM2_DEPTH, Am2Op } from '../lib/am2-layout.js'
import { LapiOp } from '../lib/lapi-layout.js'
import { openJob, warmJob, warmTimes, warmUp, type Job } from '../lib/net-job.js'
import type { Benchmark, BenchContext, Session } from '../types.js'

const PEER = fileURLToPath(new URL('../workers/dgram-peer.js', import.meta.url))
const LAPI_TASK = fileURLToPath(new URL('../workers/lapi-task.js', import.meta.url))
const AM2_TASK = fileURLToPath(new URL('../workers/am2-task.js', import.meta.url))
const MiB = 1 << 20
/** Datagrams the flood lets the kernel queue before it gives the event loop a turn. */
const FLOOD_BURST = 256

interface Handle {
  fd: number
  recvStart(): number
  recvStop(): number
}
function handleOf(s: Socket): Handle {
  const sym = Object.getOwnPropertySymbols(s).find((x) => x.description === 'state symbol')!
  return (s as unknown as Record<symbol, { handle: Handle }>)[sym].handle
}

/** A raw baseline: our socket connected to the peer process's, in `mode`. */
interface RawUdp {
  sock: Socket
  child: ChildProcess
}

async function rawUdp(mode: string): Promise<RawUdp> {
  const sock = createSocket('udp4')
  await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', resolve))
  const child = spawn(process.execPath, [PEER, String(sock.address().port), mode], { stdio: 'ignore' })
  const from = await new Promise<{ port: number }>((resolve) => sock.once('message', (_m, r) => resolve(r)))
  await new Promise<void>((resolve) => sock.connect(from.port, '127.0.0.1', resolve))
  return { sock, child }
}

async function evloopRtt(r: RawUdp, size: number, n: number): Promise<number> {
  const msg = Buffer.alloc(size, 1)
  return await new Promise<number>((resolve) => {
    let left = n
    const t0 = performance.now()
    const onMsg = (): void => {
      if (--left === 0) {
        r.sock.off('message', onMsg)
        resolve((performance.now() - t0) / 1000)
        return
      }
      r.sock.send(msg)
    }
    r.sock.on('message', onMsg)
    r.sock.send(msg)
  })
}

function pollRtt(r: RawUdp, size: number, n: number, deadline: number): number {
  const h = handleOf(r.sock)
  h.recvStop()
  const msg = Buffer.alloc(size, 1)
  const buf = Buffer.alloc(1 << 16)
  const lim = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    const t0 = performance.now()
    for (let i = 0; i < n; i++) {
      writeSync(h.fd, msg)
      for (;;) {
        try {
          readSync(h.fd, buf, 0, buf.length, null)
          break
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e
          if (performance.now() > deadline) throw new Error('the polled dgram ping-pong timed out')
        }
      }
    }
    return (performance.now() - t0) / 1000
  } finally {
    Error.stackTraceLimit = lim
    h.recvStart()
  }
}

/** Sends `n` datagrams; returns seconds per datagram that arrived (the rate's inverse), as if all did. */
async function flood(r: RawUdp, n: number): Promise<number> {
  const msg = Buffer.alloc(16, 1)
  const end = Buffer.from([0xff])
  const t0 = performance.now()
  for (let i = 0; i < n; i++) {
    r.sock.send(msg)
    if (i % FLOOD_BURST === FLOOD_BURST - 1) await new Promise((resolve) => setImmediate(resolve))
  }
  const got = await new Promise<number>((resolve) => {
    const t = setInterval(() => r.sock.send(end), 20)
    r.sock.once('message', (m) => {
      clearInterval(t)
      resolve(m.readUInt32LE(0))
    })
    r.sock.send(end)
  })
  const s = (performance.now() - t0) / 1000
  // (the runner takes `iterations / seconds` as the rate: what was lost counts as time)
  return got === 0 ? s * n : (s * n) / got
}

const LAPI_OPS: Record<string, number> = {
  'net.udp.lapi.put-rtt': LapiOp.PUT_RTT,
  'net.udp.lapi.put-bw': LapiOp.PUT_BW,
}
const AM2_OPS: Record<string, number> = {
  'net.udp.am2.short-rtt': Am2Op.SHORT_RTT,
  'net.udp.am2.short-rtt-median': Am2Op.SHORT_RTT_MEDIAN,
  'net.udp.am2.rate': Am2Op.RATE,
  'net.udp.am2.long-bw': Am2Op.LONG_BW,
}
/** The same AM-2 patterns on a job with `--faults drop=0.05`, and on one with the MAC. */
const DROP_OPS: Record<string, number> = {
  'net.udp.am2.short-rtt-drop': Am2Op.SHORT_RTT,
  'net.udp.am2.short-rtt-median-drop': Am2Op.SHORT_RTT_MEDIAN,
  'net.udp.am2.rate-drop': Am2Op.RATE,
}
const MAC_OPS: Record<string, number> = {
  'net.udp.am2.short-rtt-mac': Am2Op.SHORT_RTT,
  'net.udp.am2.rate-mac': Am2Op.RATE,
  'net.udp.am2.long-bw-mac': Am2Op.LONG_BW,
}

const RTT = 'Round trip between two processes over UDP (µs)'
const bench: Benchmark = {
  name: 'net.udp',
  description: 'two processes over udp: LAPI and AM-2 (clean, 5% loss, MAC) beside Node dgram ping-pongs (event loop, polled) and a dgram flood',
  placements: ['all'],
  series: [
    { id: 'net.udp.evloop.rtt', title: 'dgram ping-pong, event loop', kind: 'latency', unit: 'us', group: 'udp-rtt', groupTitle: RTT, sizes: [16] },
    { id: 'net.udp.poll.rtt', title: 'dgram ping-pong, polled (readSync)', kind: 'latency', unit: 'us', group: 'udp-rtt', sizes: [16] },
    {
      id: 'net.udp.lapi.put-rtt',
      title: 'LAPI Put ping-pong over udp',
      kind: 'latency',
      unit: 'us',
      group: 'udp-rtt',
      sizes: [8],
      compareTo: [{ series: 'net.udp.poll.rtt', label: '÷ polled dgram', baselineSize: 16 }],
    },
    {
      id: 'net.udp.am2.short-rtt',
      title: 'AM-2 Short round trip over udp',
      kind: 'latency',
      unit: 'us',
      group: 'udp-rtt',
      sizes: [0],
      compareTo: [
        { series: 'net.udp.poll.rtt', label: '÷ polled dgram', baselineSize: 16 },
        { series: 'net.udp.evloop.rtt', label: '÷ event-loop dgram', baselineSize: 16 },
        { series: 'net.am2.short-rtt', label: '÷ tcp' },
      ],
    },
    {
      id: 'net.udp.am2.short-rtt-drop',
      title: 'AM-2 Short round trip over udp, 5% datagrams dropped',
      kind: 'latency',
      unit: 'us',
      group: 'udp-rtt',
      sizes: [0],
      compareTo: [{ series: 'net.udp.am2.short-rtt', label: '÷ clean' }],
    },
    {
      id: 'net.udp.am2.short-rtt-median',
      title: 'AM-2 Short round trip over udp, the median of single round trips',
      kind: 'latency',
      unit: 'us',
      group: 'udp-rtt',
      sizes: [0],
    },
    {
      id: 'net.udp.am2.short-rtt-median-drop',
      title: 'AM-2 Short round trip over udp, the median of single round trips, 5% datagrams dropped',
      kind: 'latency',
      unit: 'us',
      group: 'udp-rtt',
      sizes: [0],
      compareTo: [{ series: 'net.udp.am2.short-rtt-median', label: '÷ clean' }],
    },
    {
      id: 'net.udp.am2.short-rtt-mac',
      title: 'AM-2 Short round trip over udp with a MAC per datagram',
      kind: 'latency',
      unit: 'us',
      group: 'udp-rtt',
      sizes: [0],
      compareTo: [{ series: 'net.udp.am2.short-rtt', label: '÷ no MAC' }],
    },
    {
      id: 'net.udp.flood.rate',
      title: 'dgram flood (socket.send, one message a datagram)',
      kind: 'rate',
      unit: 'ops/s',
      group: 'udp-rate',
      groupTitle: 'Messages per second between two processes over UDP',
      sizes: [16],
    },
    {
      id: 'net.udp.am2.rate',
      title: 'AM-2 pipelined Short requests over udp',
      kind: 'rate',
      unit: 'ops/s',
      group: 'udp-rate',
      sizes: [0],
      compareTo: [
        { series: 'net.udp.flood.rate', label: '÷ dgram flood', baselineSize: 16 },
        { series: 'net.am2.rate', label: '÷ tcp' },
      ],
    },
    {
      id: 'net.udp.am2.rate-drop',
      title: 'AM-2 pipelined Short requests over udp, 5% datagrams dropped',
      kind: 'rate',
      unit: 'ops/s',
      group: 'udp-rate',
      sizes: [0],
      compareTo: [{ series: 'net.udp.am2.rate', label: '÷ clean' }],
    },
    {
      id: 'net.udp.am2.rate-mac',
      title: 'AM-2 pipelined Short requests over udp with a MAC per datagram',
      kind: 'rate',
      unit: 'ops/s',
      group: 'udp-rate',
      sizes: [0],
      compareTo: [{ series: 'net.udp.am2.rate', label: '÷ no MAC' }],
    },
    {
      id: 'net.udp.lapi.put-bw',
      title: 'LAPI Put over udp',
      kind: 'bandwidth',
      unit: 'MB/s',
      group: 'udp-bw',
      groupTitle: 'One-way bandwidth between two processes over UDP (MB/s)',
      sizes: [MiB],
      compareTo: [{ series: 'net.stream.bw', label: '÷ net stream' }],
    },
    {
      id: 'net.udp.am2.long-bw',
      title: 'AM-2 Long over udp',
      kind: 'bandwidth',
      unit: 'MB/s',
      group: 'udp-bw',
      sizes: [MiB],
      compareTo: [
        { series: 'net.stream.bw', label: '÷ net stream' },
        { series: 'net.am2.long-bw', label: '÷ tcp' },
      ],
    },
    {
      id: 'net.udp.am2.long-bw-mac',
      title: 'AM-2 Long over udp with a MAC per datagram',
      kind: 'bandwidth',
      unit: 'MB/s',
      group: 'udp-bw',
      sizes: [MiB],
      compareTo: [{ series: 'net.udp.am2.long-bw', label: '÷ no MAC' }],
    },
  ],
  goals: [
    {
      name: 'AM-2 Short round trip over udp ≤ 1.5 × the polled dgram ping-pong',
      series: 'net.udp.am2.short-rtt',
      size: 0,
      baseline: 'net.udp.poll.rtt',
      baselineSize: 16,
      op: '<=',
      target: 1.5,
    },
    {
      name: 'AM-2 Short round trip over udp below the event-loop dgram ping-pong',
      series: 'net.udp.am2.short-rtt',
      size: 0,
      baseline: 'net.udp.evloop.rtt',
      baselineSize: 16,
      op: '<=',
      target: 1,
    },
    {
      name: 'AM-2 pipelined requests over udp ≥ 3 × the dgram flood',
      series: 'net.udp.am2.rate',
      size: 0,
      baseline: 'net.udp.flood.rate',
      baselineSize: 16,
      op: '>=',
      target: 3,
    },
    { name: 'AM-2 pipelined requests over udp ≥ 600,000/s', series: 'net.udp.am2.rate', size: 0, op: '>=', target: 600_000 },
    { name: '1 MiB AM-2 Long over udp ≥ 0.6 × the net stream', series: 'net.udp.am2.long-bw', size: MiB, baseline: 'net.stream.bw', op: '>=', target: 0.6 },
    { name: '5% loss: AM-2 pipelined requests ≥ 0.3 × clean', series: 'net.udp.am2.rate-drop', size: 0, baseline: 'net.udp.am2.rate', op: '>=', target: 0.3 },
    {
      name: '5% loss: the median AM-2 Short round trip ≤ 1.5 × clean',
      series: 'net.udp.am2.short-rtt-median-drop',
      size: 0,
      baseline: 'net.udp.am2.short-rtt-median',
      op: '<=',
      target: 1.5,
    },
  ],
  async open(ctx: BenchContext): Promise<Session> {
    const rawOf = new Map<string, RawUdp>()
    const jobs = new Map<string, Job>()
    const maxSize = Math.max(64, ctx.maxSize)
    const warm = warmTimes(ctx)
    const job = async (
      kind: string,
      program: string,
      ops: Record<string, number>,
      extra: Record<string, unknown>,
      net: Parameters<typeof openJob>[4],
    ): Promise<Job> => {
      let j = jobs.get(kind)
      if (j === undefined) {
        j = await openJob(program, maxSize, ctx.timeoutMs, extra, net)
        jobs.set(kind, j)
        await warmJob(j, ops, warm)
      }
      return j
    }
    return {
      async run(series: string, size: number, iterations: number): Promise<number> {
        if (series === 'net.udp.evloop.rtt' || series === 'net.udp.poll.rtt' || series === 'net.udp.flood.rate') {
          const mode = series === 'net.udp.evloop.rtt' ? 'echo' : series === 'net.udp.poll.rtt' ? 'poll' : 'sink'
          const once = async (r: RawUdp, n: number): Promise<number> => {
            if (mode === 'echo') return await evloopRtt(r, size, n)
            if (mode === 'poll') return pollRtt(r, size, n, performance.now() + ctx.timeoutMs)
            return await flood(r, n)
          }
          let r = rawOf.get(mode)
          if (r === undefined) {
            r = await rawUdp(mode)
            rawOf.set(mode, r)
            const rr = r
            await warmUp({ n: 16 }, series.endsWith('.rate') ? warm.rateSeconds : warm.seconds, async (n) => await once(rr, n), warm.maxSeconds)
          }
          return await once(r, iterations)
        }
        if (series in LAPI_OPS) return await (await job('lapi', LAPI_TASK, LAPI_OPS, {}, { transport: 'udp' })).run(LAPI_OPS[series]!, size, iterations)
        if (series in AM2_OPS)
          return await (await job('am2', AM2_TASK, AM2_OPS, { depth: AM2_DEPTH }, { transport: 'udp' })).run(AM2_OPS[series]!, size, iterations)
        if (series in DROP_OPS)
          return await (await job('drop', AM2_TASK, DROP_OPS, { depth: AM2_DEPTH }, { transport: 'udp', faults: 'drop=0.05,seed=1' })).run(
            DROP_OPS[series]!,
            size,
            iterations,
          )
        if (series in MAC_OPS)
          return await (await job('mac', AM2_TASK, MAC_OPS, { depth: AM2_DEPTH }, { transport: 'udp', mac: true })).run(MAC_OPS[series]!, size, iterations)
        throw new Error(`unknown series ${series}`)
      },
      async close(): Promise<void> {
        for (const r of rawOf.values()) {
          r.sock.close()
          r.child.kill('SIGKILL')
        }
        await Promise.all([...jobs.values()].map(async (j) => await j.close()))
      },
    }
  },
}

export default bench
