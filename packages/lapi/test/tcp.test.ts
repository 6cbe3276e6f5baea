/**
 * The tcp transport on its own (here: transports of one process, on loopback): its agent face
 * (connections, the key's handshake, the event loop's reading) and its frame path (frames queued,
 * written, read and parsed through shared memory): frames in order, strangers refused, malformed
 * frames dropped and counted, a stream that cannot be followed marked, a goodbye seen.
 */
import { connect, type Socket } from 'node:net'
import { Worker } from 'node:worker_threads'
import { afterEach, describe, expect, it } from 'vitest'
import { logger } from '@amlapi/lapi'
import {
  FRAME_CONTROL,
  FRAME_PACKET,
  PEER_BYE,
  PEER_EOF,
  PEER_MALFORMED,
  SLEEP_FAILED,
  SLEEP_READY,
  SLEEP_TIMEOUT,
  StreamPath,
  TcpTransport,
  createStreamShared,
  encodeMessage,
  makeKey,
  peerFlags,
  proof,
  readMessages,
  setPeerFd,
  streamStats,
  type PeerAddress,
  type StreamShared,
} from '@amlapi/lapi/transport'

const log = logger('test')
const open: TcpTransport[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((t) => t.close()))
})

interface Node {
  t: TcpTransport
  s: StreamShared
  path: StreamPath
  frames: Array<{ peer: number; kind: number; dst: number; body: string }>
  lost: Array<{ peer: number; reason: string }>
}

/**
 * Process `rank` of `size`: its transport, frame path and what it received. The event loop reads
 * unless `polled`. `wasi` false: the buffers in a plain SharedArrayBuffer and Node's fs calls, as
 * where the engine refuses a shared WebAssembly memory.
 */
function node(rank: number, size: number, key: Uint8Array, polled: boolean, wasi = true): Node {
  let s = createStreamShared(size, 64 << 10)
  if (!wasi) s = { ...s, mem: { buffer: new SharedArrayBuffer(s.mem.buffer.byteLength) }, wasm: false }
  const t = new TcpTransport({ rank, size, key, log })
  t.useShared(s)
  t.agentReads(!polled)
  open.push(t)
  return { t, s, path: new StreamPath(s, rank), frames: [], lost: [] }
}

function events(n: Node): { onBytes: (peer: number, chunk: Uint8Array, len: number) => void; onPeerLost: (peer: number, reason: string) => void } {
  return {
    onBytes: (peer, chunk, len) => {
      n.path.ingest(peer, chunk, len)
    },
    onPeerLost: (peer, reason) => {
      n.lost.push({ peer, reason })
    },
  }
}

/** Takes every frame `n` has (reading the descriptors itself when `reading`). */
function take(n: Node, reading: boolean): void {
  n.path.poll(reading, (peer, kind, dst, u8, off, len) => {
    n.frames.push({ peer, kind, dst, body: Buffer.from(u8.subarray(off, off + len)).toString() })
    return true
  })
}

async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 2))
  }
}

/** Does the connector's side of the handshake by hand (with `key`), as process `rank` toward rank 0; resolves with the socket. */
function handshake(addr: PeerAddress, key: Uint8Array, rank: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: addr.host, port: addr.port })
    const nonce = Buffer.alloc(16, 7)
    s.once('error', reject)
    const r = readMessages(
      s,
      (m) => {
        const t = (m as { t: string }).t
        if (t === 'challenge') {
          const challenge = (m as { n: Uint8Array }).n
          s.write(encodeMessage({ t: 'hello', rank, n: nonce, p: proof(key, 'tcp-connect', challenge, nonce, rank, 0) }))
        } else if (t === 'welcome') {
          r.stop()
          resolve(s)
        }
      },
      (why) => reject(new Error(why)),
    )
    s.once('close', () => reject(new Error('closed')))
  })
}

function frame(kind: number, dst: number, body: string, version = 1): Buffer {
  const b = Buffer.from(body)
  const f = Buffer.alloc(12 + b.length)
  f.writeUInt32LE(b.length, 0)
  f[4] = version
  f[5] = kind
  f.writeUInt32LE(dst, 8)
  b.copy(f, 12)
  return f
}

/** A job of one real process 0 (reading as `polled` says) and a hand-made process 1 that proved `key`. */
async function withRawPeer(polled: boolean): Promise<{ n0: Node; s: Socket }> {
  const key = makeKey()
  const n0 = node(0, 2, key, polled)
  const a0 = await n0.t.listen()
  const joined = n0.t.connect([a0, a0], events(n0))
  const s = await handshake(a0, key, 1)
  s.on('error', () => {})
  await joined
  return { n0, s }
}

describe('tcp transport', () => {
  for (const wasi of [true, false]) {
    const io = wasi ? 'WASI' : 'fs calls'
    it(`carries frames between every pair, in order, read by the event loop or by polling threads (${io})`, async () => {
      const key = makeKey()
      const ns = [node(0, 3, key, true, wasi), node(1, 3, key, false, wasi), node(2, 3, key, false, wasi)]
      const table = await Promise.all(ns.map((n) => n.t.listen()))
      await Promise.all(ns.map((n) => n.t.connect(table, events(n))))
      for (let i = 0; i < 100; i++) {
        const b = Buffer.from(`m${i}`)
        ns[2]!.path.queue(0, FRAME_PACKET, 7, b, 0, b.length)
        ns[0]!.path.queue(1, FRAME_CONTROL, 0, b, 0, b.length)
      }
      ns[2]!.path.flush()
      ns[0]!.path.flush()
      await until(() => {
        take(ns[0]!, true)
        take(ns[1]!, false)
        return ns[0]!.frames.length === 100 && ns[1]!.frames.length === 100
      })
      expect(ns[0]!.frames.map((f) => f.body)).toEqual(Array.from({ length: 100 }, (_, i) => `m${i}`))
      expect(ns[0]!.frames.every((f) => f.peer === 2 && f.kind === FRAME_PACKET && f.dst === 7)).toBe(true)
      expect(ns[1]!.frames.map((f) => f.body)).toEqual(Array.from({ length: 100 }, (_, i) => `m${i}`))
      expect(ns[1]!.frames.every((f) => f.peer === 0 && f.kind === FRAME_CONTROL)).toBe(true)
      expect(streamStats(ns[2]!.s).framesSent).toBe(100)
      expect(streamStats(ns[0]!.s).framesReceived).toBe(100)
      // (one write carried the 100 frames)
      expect(streamStats(ns[2]!.s).writes).toBe(1)
      // (the calls went the way the case says: WASI where the memory is a shared wasm one)
      expect(ns.map((n) => n.path.wasi)).toEqual([wasi, wasi, wasi])
    })

    it(`writes a frame straight from its data only behind nothing queued, and keeps every byte in order (${io})`, async () => {
      const key = makeKey()
      const ns = [node(0, 2, key, true, wasi), node(1, 2, key, true, wasi)]
      const table = await Promise.all(ns.map((n) => n.t.listen()))
      await Promise.all(ns.map((n) => n.t.connect(table, events(n))))
      const p1 = ns[1]!.path
      const head = Buffer.from('H:')
      const data = Buffer.alloc(40_000)
      for (let i = 0; i < data.length; i++) data[i] = 97 + (i % 26)
      const sent: string[] = []
      // a queued frame first: the direct one must not pass it
      const q = Buffer.from('queued')
      p1.queue(0, FRAME_PACKET, 3, q, 0, q.length)
      sent.push('queued')
      expect(p1.sendDirect(0, FRAME_PACKET, 3, head, 2, data, 5, 1000)).toBe(false)
      p1.flush()
      // more than the socket takes at once: the rest waits in the queue, behind the frame's start
      for (let k = 0; k < 60; k++) {
        await until(() => {
          p1.flush()
          take(ns[0]!, true)
          return p1.sendDirect(0, FRAME_PACKET, 3, head, 2, data, k, 30_000)
        })
        sent.push('H:' + data.toString('latin1', k, k + 30_000))
      }
      // a frame larger than the queue never goes straight
      expect(p1.sendDirect(0, FRAME_PACKET, 3, head, 2, Buffer.alloc(70_000), 0, 70_000)).toBe(false)
      await until(() => {
        p1.flush()
        take(ns[0]!, true)
        return ns[0]!.frames.length === sent.length
      })
      expect(ns[0]!.frames.map((f) => f.body)).toEqual(sent)
      expect(ns[0]!.frames.every((f) => f.dst === 3 && f.kind === FRAME_PACKET)).toBe(true)
      // room: what a full queue has for another frame, before and after writing
      expect(p1.room(0, 100, false)).toBe(true)
      expect(p1.room(0, 64 << 10, false)).toBe(false)
      expect(p1.wasi).toBe(wasi)
    })
  }

  it('sleeps in the kernel on the connections until a peer sends, ends, or the time passes (WASI)', async () => {
    const key = makeKey()
    const ns = [node(0, 2, key, true), node(1, 2, key, true)]
    const table = await Promise.all(ns.map((n) => n.t.listen()))
    await Promise.all(ns.map((n) => n.t.connect(table, events(n))))
    // (a sleep blocks its thread: process 0's sleeps run in a worker, as a task's would, while
    // this thread's event loop lets process 1 send and close)
    const src = `
      const { workerData, parentPort } = require('node:worker_threads')
      import('@amlapi/lapi/transport').then(({ StreamPath }) => {
        const path = new StreamPath(workerData.s, 0)
        const sleep = (ms) => { const t = performance.now(); const r = path.sleep(ms); return { r, ms: performance.now() - t } }
        parentPort.postMessage(sleep(40))
        parentPort.postMessage(sleep(10000))
        path.poll(true, () => true)
        parentPort.postMessage(sleep(10000))
      })`
    const got: Array<{ r: number; ms: number }> = []
    const worker = new Worker(src, { eval: true, workerData: { s: ns[0]!.s } })
    const failed = new Promise<never>((_, reject) => worker.on('error', reject))
    const next = async (k: number): Promise<{ r: number; ms: number }> => {
      await Promise.race([failed, until(() => got.length > k, 15_000)])
      return got[k]!
    }
    worker.on('message', (m: { r: number; ms: number }) => got.push(m))
    try {
      // nothing comes: the time passes
      const idle = await next(0)
      expect(idle.r).toBe(SLEEP_TIMEOUT)
      expect(idle.ms).toBeGreaterThanOrEqual(35)
      // a frame 100 ms into the sleep ends it
      await new Promise((r) => setTimeout(r, 100))
      const b = Buffer.from('wake')
      ns[1]!.path.queue(0, FRAME_PACKET, 0, b, 0, b.length)
      ns[1]!.path.flush()
      const woken = await next(1)
      expect(woken.r).toBe(SLEEP_READY)
      // (it slept until the frame came, about 100 ms after it began, not less)
      expect(woken.ms).toBeGreaterThanOrEqual(50)
      expect(woken.ms).toBeLessThan(5000)
      // the peer's end ends it too
      await new Promise((r) => setTimeout(r, 50))
      // (not awaited: the close waits for process 0's end, which the worker does not read)
      const closed = ns[1]!.t.close()
      const ended = await next(2)
      expect(ended.r).toBe(SLEEP_READY)
      // (the frame was taken in before this sleep: the end, 50 ms later, woke it)
      expect(ended.ms).toBeGreaterThanOrEqual(25)
      void closed
    } finally {
      await worker.terminate()
    }
  })

  it('does not sleep on the connections where it cannot watch them all, nor without WASI', () => {
    const s = createStreamShared(5, 64 << 10)
    // (four open peers: one more than a WASI instance is given descriptors)
    for (let p = 1; p < 5; p++) setPeerFd(s, p, 0)
    expect(new StreamPath(s, 0).sleep(1000)).toBe(SLEEP_FAILED)
    const none = createStreamShared(2, 64 << 10)
    expect(new StreamPath(none, 0).sleep(1000)).toBe(SLEEP_FAILED)
    const fs = { ...none, mem: { buffer: new SharedArrayBuffer(none.mem.buffer.byteLength) }, wasm: false }
    setPeerFd(fs, 1, 0)
    expect(new StreamPath(fs, 0).sleep(1000)).toBe(SLEEP_FAILED)
  })

  it('refuses a process with a wrong key, and one that speaks garbage, and still lets the job in', async () => {
    const key = makeKey()
    const n0 = node(0, 2, key, true)
    const a0 = await n0.t.listen()
    const joined = n0.t.connect([a0, a0], events(n0))
    await expect(handshake(a0, makeKey(), 1)).rejects.toThrow()
    const g = connect({ host: a0.host, port: a0.port })
    g.on('error', () => {})
    g.write(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'))
    await until(() => n0.t.stats().connectionsRefused >= 2)
    const n1 = node(1, 2, key, true)
    const a1 = await n1.t.listen()
    await Promise.all([joined, n1.t.connect([a0, a1], events(n1))])
    const b = Buffer.from('hi')
    n1.path.queue(0, FRAME_PACKET, 0, b, 0, 2)
    n1.path.flush()
    await until(() => {
      take(n0, true)
      return n0.frames.length === 1
    })
    expect(n0.frames[0]!.body).toBe('hi')
    expect(n0.t.stats().connectionsRefused).toBe(2)
  })

  it('drops frames with a bad version or kind, counted, and goes on', async () => {
    const { n0, s } = await withRawPeer(true)
    s.write(Buffer.concat([frame(FRAME_PACKET, 0, 'bad version', 9), frame(77, 0, 'bad kind'), frame(FRAME_PACKET, 0, 'good')]))
    await until(() => {
      take(n0, true)
      return n0.frames.length === 1
    })
    expect(n0.frames[0]!.body).toBe('good')
    expect(streamStats(n0.s).framesDropped).toBe(2)
    expect(peerFlags(n0.s, 1)).toBe(0)
    s.destroy()
  })

  it('marks the stream of a peer that cannot be followed, and reads nothing more from it', async () => {
    const { n0, s } = await withRawPeer(true)
    const huge = Buffer.alloc(12)
    huge.writeUInt32LE(0xfffffff0, 0)
    huge[4] = 1
    huge[5] = FRAME_PACKET
    s.write(Buffer.concat([huge, frame(FRAME_PACKET, 0, 'after')]))
    await until(() => {
      take(n0, true)
      return (peerFlags(n0.s, 1) & PEER_MALFORMED) !== 0
    })
    expect(n0.frames).toEqual([])
  })

  it('sees a goodbye, then the end of the stream', async () => {
    const key = makeKey()
    const ns = [node(0, 2, key, true), node(1, 2, key, true)]
    const table = await Promise.all(ns.map((n) => n.t.listen()))
    await Promise.all(ns.map((n) => n.t.connect(table, events(n))))
    expect(ns[1]!.path.bye()).toBe(true)
    ns[1]!.path.flush()
    await ns[1]!.t.close()
    await until(() => {
      take(ns[0]!, true)
      return (peerFlags(ns[0]!.s, 1) & (PEER_BYE | PEER_EOF)) === (PEER_BYE | PEER_EOF)
    })
  })
})
