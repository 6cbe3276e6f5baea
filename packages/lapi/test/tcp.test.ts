/**
 * The tcp transport on its own: frames in order between processes (here: transports in one
 * process, on loopback), strangers refused, malformed frames dropped and counted, a stream that
 * cannot be followed ending only its connection, named.
 */
import { connect, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { logger } from '@amlapi/lapi'
import {
  FRAME_CONTROL, FRAME_PACKET, TcpTransport, encodeMessage, makeKey, proof, readMessages, type PeerAddress, type TransportEvents,
} from '@amlapi/lapi/transport'

const log = logger('test')
const open: TcpTransport[] = []
afterEach(async () => { await Promise.all(open.splice(0).map((t) => t.close())) })

interface Got { frames: Array<{ peer: number, kind: number, dst: number, body: string }>, lost: Array<{ peer: number, reason: string, normal: boolean }> }

function events (): TransportEvents & Got {
  const g: Got = { frames: [], lost: [] }
  return {
    ...g,
    onFrame: (peer, kind, dst, u8, off, len) => { g.frames.push({ peer, kind, dst, body: Buffer.from(u8.subarray(off, off + len)).toString() }); return true },
    onPeerLost: (peer, reason, normal) => { g.lost.push({ peer, reason, normal }) },
    onWritable: () => {},
    get frames () { return g.frames },
    get lost () { return g.lost },
  }
}

async function until (cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 5))
  }
}

/** A job of `size` transports with `key`, all connected. */
async function job (size: number, key: Uint8Array): Promise<{ ts: TcpTransport[], ev: Array<ReturnType<typeof events>>, table: PeerAddress[] }> {
  const ts = Array.from({ length: size }, (_, rank) => new TcpTransport({ rank, size, key, log }))
  open.push(...ts)
  const table = await Promise.all(ts.map((t) => t.listen()))
  const ev = ts.map(() => events())
  await Promise.all(ts.map((t, r) => t.connect(table, ev[r]!)))
  return { ts, ev, table }
}

/** Does the connector's side of the handshake by hand (with `key`), as process `rank` toward rank 0; resolves with the socket. */
function handshake (addr: PeerAddress, key: Uint8Array, rank: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: addr.host, port: addr.port })
    const nonce = Buffer.alloc(16, 7)
    let challenge: Uint8Array | null = null
    s.once('error', reject)
    const r = readMessages(s, (m) => {
      const t = (m as { t: string }).t
      if (t === 'challenge') {
        challenge = (m as { n: Uint8Array }).n
        s.write(encodeMessage({ t: 'hello', rank, n: nonce, p: proof(key, 'tcp-connect', challenge, nonce, rank, 0) }))
      } else if (t === 'welcome') { r.stop(); resolve(s) }
    }, (why) => reject(new Error(why)))
    s.once('close', () => reject(new Error('closed')))
  })
}

function frame (kind: number, dst: number, body: string, version = 1): Buffer {
  const b = Buffer.from(body)
  const f = Buffer.alloc(12 + b.length)
  f.writeUInt32LE(b.length, 0); f[4] = version; f[5] = kind; f.writeUInt32LE(dst, 8); b.copy(f, 12)
  return f
}

describe('tcp transport', () => {
  it('carries frames between every pair, in order, and counts them', async () => {
    const { ts, ev } = await job(3, makeKey())
    for (let i = 0; i < 100; i++) {
      const b = Buffer.from(`m${i}`)
      ts[2]!.send(0, FRAME_PACKET, 7, b, 0, b.length)
      ts[0]!.send(1, FRAME_CONTROL, 0, b, 0, b.length)
    }
    ts[2]!.flush(); ts[0]!.flush()
    await until(() => ev[0]!.frames.length === 100 && ev[1]!.frames.length === 100)
    expect(ev[0]!.frames.map((f) => f.body)).toEqual(Array.from({ length: 100 }, (_, i) => `m${i}`))
    expect(ev[0]!.frames.every((f) => f.peer === 2 && f.kind === FRAME_PACKET && f.dst === 7)).toBe(true)
    expect(ev[1]!.frames.every((f) => f.peer === 0 && f.kind === FRAME_CONTROL)).toBe(true)
    expect(ts[2]!.stats().framesSent).toBe(100)
    expect(ts[0]!.stats().framesReceived).toBe(100)
    expect(ts[2]!.stats().writes).toBe(1)
  })

  it('refuses a process with a wrong key, and one that speaks garbage, and still lets the job in', async () => {
    const key = makeKey()
    const t0 = new TcpTransport({ rank: 0, size: 2, key, log })
    open.push(t0)
    const a0 = await t0.listen()
    const ev0 = events()
    const joined = t0.connect([a0, a0], ev0)
    // a stranger: the right protocol, a wrong key
    await expect(handshake(a0, makeKey(), 1)).rejects.toThrow()
    // garbage
    const g = connect({ host: a0.host, port: a0.port })
    g.on('error', () => {})
    g.write(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'))
    await until(() => t0.stats().connectionsRefused >= 2)
    // the real process 1 still gets in
    const t1 = new TcpTransport({ rank: 1, size: 2, key, log })
    open.push(t1)
    const a1 = await t1.listen()
    await Promise.all([joined, t1.connect([a0, a1], events())])
    const b = Buffer.from('hi')
    t1.send(0, FRAME_PACKET, 0, b, 0, 2); t1.flush()
    await until(() => ev0.frames.length === 1)
    expect(ev0.frames[0]!.body).toBe('hi')
    expect(t0.stats().connectionsRefused).toBe(2)
  })

  it('drops frames with a bad version or kind, counted, and goes on', async () => {
    const key = makeKey()
    const t0 = new TcpTransport({ rank: 0, size: 2, key, log })
    open.push(t0)
    const a0 = await t0.listen()
    const ev0 = events()
    const joined = t0.connect([a0, a0], ev0)
    const s = await handshake(a0, key, 1)
    await joined
    s.write(Buffer.concat([frame(FRAME_PACKET, 0, 'bad version', 9), frame(77, 0, 'bad kind'), frame(FRAME_PACKET, 0, 'good')]))
    await until(() => ev0.frames.length === 1)
    expect(ev0.frames[0]!.body).toBe('good')
    expect(t0.stats().framesDropped).toBe(2)
    expect(ev0.lost).toEqual([])
    s.destroy()
  })

  it('ends only the connection of a peer whose stream cannot be followed, naming it', async () => {
    const key = makeKey()
    const t0 = new TcpTransport({ rank: 0, size: 2, key, log })
    open.push(t0)
    const a0 = await t0.listen()
    const ev0 = events()
    const joined = t0.connect([a0, a0], ev0)
    const s = await handshake(a0, key, 1)
    s.on('error', () => {})
    await joined
    const huge = Buffer.alloc(12); huge.writeUInt32LE(0xfffffff0, 0); huge[4] = 1; huge[5] = FRAME_PACKET
    s.write(huge)
    await until(() => ev0.lost.length === 1)
    expect(ev0.lost[0]).toMatchObject({ peer: 1, normal: false })
    expect(ev0.lost[0]!.reason).toMatch(/malformed stream/)
  })

  it('a goodbye before the close is a normal end', async () => {
    const { ts, ev } = await job(2, makeKey())
    await ts[1]!.close()
    await until(() => ev[0]!.lost.length === 1)
    expect(ev[0]!.lost[0]).toEqual({ peer: 1, reason: 'closed', normal: true })
  })
})
