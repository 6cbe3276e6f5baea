/**
 * Two workers exchange `Uint8Array` messages over a `MessageChannel` by structured clone (a copy).
 * Round trip: `size` bytes there, `size` bytes back. Bandwidth: windows of 64 messages, each
 * answered by a small ack. Also re-run with the whole process on one CPU (`@1core`).
 */
import { MessageChannel } from 'node:worker_threads'
import { Peer } from '../lib/peer.js'
import type { Benchmark } from '../types.js'
import type { MsgportCommand, MsgportWorkerData } from '../workers/msgport-peer.js'

const WORKER = new URL('../workers/msgport-peer.js', import.meta.url)
const WINDOW = 64

const benchmark: Benchmark = {
  name: 'baseline.msgport',
  description: 'MessagePort.postMessage between two workers, structured-clone copy of a Uint8Array',
  placements: ['all', '1core'],
  series: [
    {
      id: 'baseline.msgport.rtt',
      title: 'MessagePort',
      kind: 'latency',
      unit: 'us',
      group: 'rtt',
      sizes: 'message',
      compareTo: [{ series: 'baseline.sab-spin.rtt', label: '÷ SAB spin' }],
    },
    {
      id: 'baseline.msgport.bw',
      title: 'MessagePort',
      kind: 'bandwidth',
      unit: 'MB/s',
      group: 'bandwidth',
      sizes: 'message',
      compareTo: [{ series: 'baseline.sab-spin.bw', label: '÷ SAB spin' }],
    },
  ],
  async open(ctx) {
    const { port1, port2 } = new MessageChannel()
    const peers: Peer[] = []
    const close = async (): Promise<void> => {
      await Promise.all(peers.map((p) => p.terminate()))
      port1.close()
      port2.close()
    }
    try {
      peers.push(new Peer(WORKER, { role: 'a', port: port1 } satisfies MsgportWorkerData, [port1]))
      peers.push(new Peer(WORKER, { role: 'b', port: port2 } satisfies MsgportWorkerData, [port2]))
      await Promise.all(peers.map((p) => p.ready(10_000)))
    } catch (err) {
      await close()
      throw err
    }
    const a = peers[0]!
    return {
      async run(series, size, iterations) {
        const op = series.endsWith('.rtt') ? 'rtt' : 'bw'
        const cmd: MsgportCommand = { op, size, iterations, window: WINDOW }
        const reply = await a.request<{ seconds: number }>(cmd, ctx.timeoutMs)
        return reply.seconds
      },
      close,
    }
  },
}

export default benchmark
