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
import { fileURLToPath } from 'node:url'
import { AM2_DEPTH, Am2Op } from '../lib/am2-layout.js'
import { closeRaw, evloopRtt, openJob, pollRtt, raw, streamBw, warmJob, warmTimes, warmUp, type Job, type Raw } from '../lib/net-job.js'
import { LapiOp } from '../lib/lapi-layout.js'
import type { Benchmark, BenchContext, Session } from '../types.js'

const LAPI_TASK = fileURLToPath(new URL('../workers/lapi-task.js', import.meta.url))
const AM2_TASK = fileURLToPath(new URL('../workers/am2-task.js', import.meta.url))
const MiB = 1 << 20

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
      id: 'net.evloop.rtt',
      title: 'net ping-pong, event loop',
      kind: 'latency',
      unit: 'us',
      group: 'net-rtt',
      groupTitle: 'Round trip between two processes over TCP (µs)',
      sizes: [16],
    },
    { id: 'net.poll.rtt', title: 'net ping-pong, polled (readSync)', kind: 'latency', unit: 'us', group: 'net-rtt', sizes: [16] },
    {
      id: 'net.lapi.put-rtt',
      title: 'LAPI Put ping-pong over tcp',
      kind: 'latency',
      unit: 'us',
      group: 'net-rtt',
      sizes: [8],
      compareTo: [
        { series: 'net.poll.rtt', label: '÷ polled net', baselineSize: 16 },
        { series: 'net.evloop.rtt', label: '÷ event-loop net', baselineSize: 16 },
      ],
    },
    {
      id: 'net.lapi.am-rtt',
      title: 'LAPI Amsend ping-pong (one packet) over tcp',
      kind: 'latency',
      unit: 'us',
      group: 'net-rtt',
      sizes: [8],
      compareTo: [{ series: 'net.poll.rtt', label: '÷ polled net', baselineSize: 16 }],
    },
    {
      id: 'net.am2.short-rtt',
      title: 'AM-2 Short round trip over tcp',
      kind: 'latency',
      unit: 'us',
      group: 'net-rtt',
      sizes: [0],
      compareTo: [
        { series: 'net.poll.rtt', label: '÷ polled net', baselineSize: 16 },
        { series: 'net.evloop.rtt', label: '÷ event-loop net', baselineSize: 16 },
      ],
    },
    {
      id: 'net.am2.rate',
      title: 'AM-2 pipelined Short requests over tcp',
      kind: 'rate',
      unit: 'ops/s',
      group: 'net-rate',
      groupTitle: 'Requests per second between two processes over TCP',
      sizes: [0],
    },
    {
      id: 'net.stream.bw',
      title: 'net stream (socket.write)',
      kind: 'bandwidth',
      unit: 'MB/s',
      group: 'net-bw',
      groupTitle: 'One-way bandwidth between two processes over TCP (MB/s)',
      sizes: [MiB],
    },
    {
      id: 'net.lapi.put-bw',
      title: 'LAPI Put over tcp',
      kind: 'bandwidth',
      unit: 'MB/s',
      group: 'net-bw',
      sizes: [MiB],
      compareTo: [{ series: 'net.stream.bw', label: '÷ net stream' }],
    },
    {
      id: 'net.am2.long-bw',
      title: 'AM-2 Long over tcp',
      kind: 'bandwidth',
      unit: 'MB/s',
      group: 'net-bw',
      sizes: [MiB],
      compareTo: [{ series: 'net.stream.bw', label: '÷ net stream' }],
    },
  ],
  goals: [
    {
      name: 'AM-2 Short round trip over tcp ≤ 1.5 × the polled net ping-pong',
      series: 'net.am2.short-rtt',
      size: 0,
      baseline: 'net.poll.rtt',
      baselineSize: 16,
      op: '<=',
      target: 1.5,
    },
    {
      name: 'AM-2 Short round trip over tcp below the event-loop net ping-pong',
      series: 'net.am2.short-rtt',
      size: 0,
      baseline: 'net.evloop.rtt',
      baselineSize: 16,
      op: '<=',
      target: 1,
    },
    {
      name: 'LAPI 8 B Put ping-pong over tcp ≤ 1.0 × the AM-2 Short round trip over tcp',
      series: 'net.lapi.put-rtt',
      size: 8,
      baseline: 'net.am2.short-rtt',
      baselineSize: 0,
      op: '<=',
      target: 1,
    },
    { name: '1 MiB LAPI Put over tcp ≥ 0.8 × the net stream', series: 'net.lapi.put-bw', size: MiB, baseline: 'net.stream.bw', op: '>=', target: 0.8 },
    { name: '1 MiB AM-2 Long over tcp ≥ 0.8 × the net stream', series: 'net.am2.long-bw', size: MiB, baseline: 'net.stream.bw', op: '>=', target: 0.8 },
    { name: 'AM-2 pipelined requests over tcp ≥ 300,000/s', series: 'net.am2.rate', size: 0, op: '>=', target: 300_000 },
    {
      name: 'one core: AM-2 Short round trip over tcp ≤ 2 × the event-loop net ping-pong',
      series: 'net.am2.short-rtt@1core',
      size: 0,
      baseline: 'net.evloop.rtt@1core',
      baselineSize: 16,
      op: '<=',
      target: 2,
    },
  ],
  async open(ctx: BenchContext): Promise<Session> {
    const rawOf = new Map<string, Raw>()
    let lapi: Job | undefined
    let am2: Job | undefined
    const maxSize = Math.max(64, ctx.maxSize)
    const warm = warmTimes(ctx)
    return {
      async run(series: string, size: number, iterations: number): Promise<number> {
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
            await warmUp(size === MiB ? { n: 1 } : { n: 16 }, warm.seconds, async (n) => await once(rr, n), warm.maxSeconds)
          }
          return await once(r, iterations)
        }
        if (series in LAPI_OPS) {
          if (lapi === undefined) {
            lapi = await openJob(LAPI_TASK, maxSize, ctx.timeoutMs)
            await warmJob(lapi, LAPI_OPS, warm)
          }
          return await lapi.run(LAPI_OPS[series]!, size, iterations)
        }
        if (series in AM2_OPS) {
          if (am2 === undefined) {
            am2 = await openJob(AM2_TASK, maxSize, ctx.timeoutMs, { depth: AM2_DEPTH })
            await warmJob(am2, AM2_OPS, warm)
          }
          return await am2.run(AM2_OPS[series]!, size, iterations)
        }
        throw new Error(`unknown series ${series}`)
      },
      async close(): Promise<void> {
        for (const r of rawOf.values()) closeRaw(r)
        await Promise.all([lapi?.close(), am2?.close()])
      },
    }
  },
}

export default bench
