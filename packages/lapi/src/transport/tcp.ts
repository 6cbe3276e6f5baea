/**
 * The `tcp` transport (transport/contract.ts): one connection per pair of processes (the higher
 * rank connects to the lower), Nagle off, frames batched into one write per peer per `flush`.
 * TCP gives reliability and order; a broken connection is a lost peer.
 *
 * Joining (docs/transports.md, "TCP handshake"): the acceptor sends a challenge; the connector
 * answers with its rank, its own nonce and proof(key, "tcp-connect", challenge, nonce, its rank,
 * the acceptor's rank); the acceptor checks it and answers proof(key, "tcp-accept", …), which the
 * connector checks. Only then does either side read frames. A connection that fails any step is
 * closed and counted (`connectionsRefused`), with the reason logged.
 */
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net'
import type { Logger } from 'pino'
import { makeNonce, proof, sameProof } from './auth.js'
import {
  BACKPRESSURE, FRAME_CONTROL, FRAME_HEADER_BYTES, FRAME_PACKET, FRAME_VERSION,
  type PeerAddress, type Transport, type TransportEvents, type TransportStats,
} from './contract.js'
import { MAX_MESSAGE_BYTES, encodeMessage, field, readMessages } from './messages.js'

/** Frame kind only the transport uses: the peer is about to close normally. */
const FRAME_BYE = 3
/** Longest frame body accepted; a longer length is a stream that cannot be parsed any further. */
const MAX_FRAME_BYTES = MAX_MESSAGE_BYTES
/** Bytes queued toward a peer beyond which `send` answers BACKPRESSURE. */
const HIGH_WATER = 4 << 20
/** How long the handshake with every peer may take. */
const CONNECT_TIMEOUT_MS = 30_000

export interface TcpOptions {
  rank: number
  size: number
  key: Uint8Array
  /** Address to listen on (default 127.0.0.1). */
  bind?: string
  log: Logger
}

class Peer {
  sock: Socket | null = null
  /** Bytes received and not yet parsed into frames. */
  rx: Buffer = Buffer.alloc(0)
  /** Frames queued for the next flush. */
  out: Buffer = Buffer.allocUnsafe(64 << 10)
  used = 0
  paused = false
  bye = false
  lost = false
  error: string | null = null
}

export class TcpTransport implements Transport {
  readonly name = 'tcp'
  private readonly o: TcpOptions
  private readonly peers: Peer[] = []
  private server: Server | null = null
  private events: TransportEvents | null = null
  private blocked = 0
  private readonly st: TransportStats = {
    framesSent: 0, framesReceived: 0, bytesSent: 0, bytesReceived: 0, framesDropped: 0, connectionsRefused: 0, writes: 0,
  }

  constructor (o: TcpOptions) {
    this.o = o
    for (let r = 0; r < o.size; r++) this.peers.push(new Peer())
  }

  stats (): TransportStats { return { ...this.st } }

  listen (): Promise<PeerAddress> {
    const host = this.o.bind ?? '127.0.0.1'
    return new Promise((resolve, reject) => {
      const server = createServer((sock) => this.accept(sock))
      this.server = server
      server.once('error', reject)
      server.listen(0, host, () => {
        const a = server.address()
        if (a === null || typeof a === 'string') { reject(new Error('tcp: no listening address')); return }
        resolve({ host, port: a.port })
      })
    })
  }

  private pendingAccepts = 0
  private onConnected: (() => void) | null = null
  private connectedCount = 0

  connect (table: PeerAddress[], events: TransportEvents): Promise<void> {
    this.events = events
    const { rank, size } = this.o
    const want = size - 1
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        const missing = this.peers.flatMap((p, r) => r !== rank && p.sock === null ? [r] : [])
        reject(new Error(`tcp: could not connect to process${missing.length === 1 ? '' : 'es'} ${missing.join(', ')} within ${CONNECT_TIMEOUT_MS / 1000} s`))
      }, CONNECT_TIMEOUT_MS)
      this.onConnected = () => {
        if (this.connectedCount === want) { clearTimeout(timer); resolve() }
      }
      if (want === 0) { clearTimeout(timer); resolve(); return }
      for (let r = 0; r < rank; r++) this.dial(r, table[r]!, (e) => { clearTimeout(timer); reject(e) })
    })
  }

  /** Connects to lower rank `r` and proves the key. */
  private dial (r: number, addr: PeerAddress, fail: (e: Error) => void): void {
    const { rank, key, log } = this.o
    const sock = netConnect({ host: addr.host, port: addr.port })
    sock.setNoDelay(true)
    const nonce = makeNonce()
    let challenge: Uint8Array | null = null
    sock.once('error', (e) => { if (this.peers[r]!.sock !== sock) fail(new Error(`tcp: cannot connect to process ${r} at ${addr.host}:${addr.port}: ${e.message}`)) })
    const reader = readMessages(sock, (m) => {
      const t = field(m, 't')
      if (t === 'challenge' && challenge === null) {
        const n = field(m, 'n')
        if (!(n instanceof Uint8Array)) { sock.destroy(); fail(new Error(`tcp: process ${r} sent a malformed challenge`)); return }
        challenge = n
        sock.write(encodeMessage({ t: 'hello', rank, n: nonce, p: proof(key, 'tcp-connect', challenge, nonce, rank, r) }))
      } else if (t === 'welcome' && challenge !== null) {
        if (field(m, 'rank') !== r || !sameProof(field(m, 'p'), proof(key, 'tcp-accept', challenge, nonce, r, rank))) {
          this.st.connectionsRefused++
          log.warn({ peer: r }, 'tcp: the process listening there did not prove the job key')
          sock.destroy()
          fail(new Error(`tcp: process ${r} at ${addr.host}:${addr.port} did not prove the job key`))
          return
        }
        this.attach(r, sock, reader.stop())
      } else {
        sock.destroy()
        fail(new Error(`tcp: process ${r} broke the handshake`))
      }
    }, (why) => { sock.destroy(); fail(new Error(`tcp: process ${r} sent ${why}`)) })
  }

  /** A connection from a higher rank: challenge it. */
  private accept (sock: Socket): void {
    const { rank, size, key, log } = this.o
    sock.setNoDelay(true)
    this.pendingAccepts++
    const challenge = makeNonce()
    let done = false
    const refuse = (why: string): void => {
      if (done) return
      done = true
      this.pendingAccepts--
      this.st.connectionsRefused++
      log.warn({ from: `${sock.remoteAddress ?? '?'}:${sock.remotePort ?? '?'}`, why }, 'tcp: connection refused')
      sock.destroy()
    }
    const timer = setTimeout(() => refuse('no handshake in time'), CONNECT_TIMEOUT_MS)
    sock.on('error', () => { /* reported through close */ })
    sock.once('close', () => { clearTimeout(timer); if (!done) refuse('closed during the handshake') })
    sock.write(encodeMessage({ t: 'challenge', n: challenge }))
    const reader = readMessages(sock, (m) => {
      if (done) return
      const r = field(m, 'rank')
      const n = field(m, 'n')
      if (field(m, 't') !== 'hello' || typeof r !== 'number' || !Number.isInteger(r) || r <= rank || r >= size || !(n instanceof Uint8Array)) {
        refuse('a malformed hello'); return
      }
      if (!sameProof(field(m, 'p'), proof(key, 'tcp-connect', challenge, n, r, rank))) { refuse(`process ${r} did not prove the job key`); return }
      if (this.peers[r]!.sock !== null) { refuse(`process ${r} is connected already`); return }
      done = true
      clearTimeout(timer)
      this.pendingAccepts--
      sock.write(encodeMessage({ t: 'welcome', rank, p: proof(key, 'tcp-accept', challenge, n, rank, r) }))
      this.attach(r, sock, reader.stop())
    }, (why) => refuse(why))
  }

  /** The handshake with `r` is done: frames from now on (`rest`: bytes that came after it). */
  private attach (r: number, sock: Socket, rest: Buffer): void {
    const p = this.peers[r]!
    p.sock = sock
    p.rx = rest
    sock.on('data', (chunk: Buffer) => {
      this.st.bytesReceived += chunk.length
      p.rx = p.rx.length === 0 ? chunk : Buffer.concat([p.rx, chunk])
      this.parse(r)
    })
    sock.on('error', (e) => { p.error ??= e.message })
    sock.on('close', () => this.lose(r, p.bye ? 'closed' : p.error !== null ? `connection lost (${p.error})` : 'connection closed without goodbye', p.bye))
    sock.on('drain', () => {
      if (this.blocked > 0) { this.blocked = 0; this.events?.onWritable() }
    })
    this.connectedCount++
    this.onConnected?.()
    if (p.rx.length > 0) this.parse(r)
  }

  private lose (r: number, reason: string, normal: boolean): void {
    const p = this.peers[r]!
    if (p.lost) return
    p.lost = true
    this.events?.onPeerLost(r, reason, normal)
  }

  /** Hands every whole frame received from `r` to the agent, until one is refused. */
  private parse (r: number): void {
    const p = this.peers[r]!
    if (p.paused || p.lost) return
    let buf = p.rx
    let at = 0
    const ev = this.events!
    while (buf.length - at >= FRAME_HEADER_BYTES) {
      const len = buf.readUInt32LE(at)
      if (len > MAX_FRAME_BYTES) {
        // the stream cannot be followed any further: this connection ends, named
        this.st.framesDropped++
        p.error = `a frame of ${len} bytes (malformed stream)`
        p.sock?.destroy()
        p.rx = Buffer.alloc(0)
        return
      }
      if (buf.length - at < FRAME_HEADER_BYTES + len) break
      const ver = buf[at + 4]!
      const kind = buf[at + 5]!
      const dst = buf.readUInt32LE(at + 8)
      const body = at + FRAME_HEADER_BYTES
      if (ver !== FRAME_VERSION || (kind !== FRAME_PACKET && kind !== FRAME_CONTROL && kind !== FRAME_BYE)) {
        this.st.framesDropped++
      } else if (kind === FRAME_BYE) {
        p.bye = true
      } else {
        if (!ev.onFrame(r, kind, dst, buf, body, len)) {
          p.paused = true
          p.sock?.pause()
          break
        }
        this.st.framesReceived++
      }
      at = body + len
    }
    p.rx = at === buf.length ? Buffer.alloc(0) : buf.subarray(at)
  }

  resume (peer: number): void {
    const p = this.peers[peer]!
    if (!p.paused) return
    p.paused = false
    this.parse(peer)
    if (!p.paused) p.sock?.resume()
  }

  send (peer: number, kind: number, dst: number, u8: Uint8Array, off: number, len: number): number {
    const p = this.peers[peer]!
    const need = p.used + FRAME_HEADER_BYTES + len
    if (need > p.out.length) {
      const n = Buffer.allocUnsafe(Math.max(need, p.out.length * 2))
      p.out.copy(n, 0, 0, p.used)
      p.out = n
    }
    const o = p.out
    const at = p.used
    o.writeUInt32LE(len, at)
    o[at + 4] = FRAME_VERSION
    o[at + 5] = kind
    o[at + 6] = 0
    o[at + 7] = 0
    o.writeUInt32LE(dst, at + 8)
    o.set(len === u8.length && off === 0 ? u8 : u8.subarray(off, off + len), at + FRAME_HEADER_BYTES)
    p.used = need
    this.st.framesSent++
    const queued = (p.sock?.writableLength ?? 0) + p.used
    if (queued > HIGH_WATER) { this.blocked = 1; return BACKPRESSURE }
    return 0
  }

  flush (): void {
    for (let r = 0; r < this.peers.length; r++) {
      const p = this.peers[r]!
      if (p.used === 0 || p.sock === null || p.lost) continue
      // (the queue buffer goes with the write: the next frames start a fresh one)
      const chunk = p.out.subarray(0, p.used)
      p.out = Buffer.allocUnsafe(Math.max(64 << 10, p.used))
      this.st.bytesSent += p.used
      p.used = 0
      this.st.writes++
      if (!p.sock.write(chunk)) this.blocked = 1
    }
  }

  close (): Promise<void> {
    const waits: Array<Promise<void>> = []
    const bye = new Uint8Array(0)
    for (let r = 0; r < this.peers.length; r++) {
      const p = this.peers[r]!
      if (p.sock === null || p.lost) continue
      this.send(r, FRAME_BYE, 0, bye, 0, 0)
    }
    this.flush()
    for (const p of this.peers) {
      const s = p.sock
      if (s === null || s.destroyed) continue
      waits.push(new Promise<void>((resolve) => {
        const t = setTimeout(() => { s.destroy(); resolve() }, 2000)
        s.once('close', () => { clearTimeout(t); resolve() })
        s.end()
      }))
    }
    this.server?.close()
    return Promise.all(waits).then(() => undefined)
  }
}
