/**
 * The `tcp` transport (transport/contract.ts), its agent face: one connection per pair of processes
 * (the higher rank connects to the lower), Nagle off. TCP gives reliability and order; a broken
 * connection is a lost peer. Once a connection is up its descriptor goes into the frame path's
 * shared memory (transport/stream-path.ts), through which every thread of the process moves its
 * frames; this class reads it in the agent's event loop only while `agentReads(true)`.
 *
 * Joining (docs/transports.md, "TCP handshake"): the acceptor sends a challenge; the connector
 * answers with its rank, its own nonce and proof(key, "tcp-connect", challenge, nonce, its rank,
 * the acceptor's rank); the acceptor checks it and answers proof(key, "tcp-accept", …), which the
 * connector checks. Only then does either side read frames. A connection that fails any step is
 * closed and counted (`connectionsRefused`), with the reason logged; until it proves the key it
 * is a stranger's (transport/strangers.ts: a deadline, a cap, messages of PRE_AUTH_MAX_BYTES).
 */
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net'
import type { Logger } from 'pino'
import { makeNonce, proof, sameProof } from '../auth.js'
import type { PeerAddress, Transport, TransportEvents, TransportStats } from '../contract.js'
import { encodeMessage, field, readMessages } from '../messages.js'
import { setPeerFd, streamStats } from '../stream-path.js'
import type { StreamShared } from '../../layout/stream.js'
import { StrangerGate } from '../strangers.js'

/** How long the handshake with every peer may take. */
const CONNECT_TIMEOUT_MS = 30_000
/**
 * How long one connection to a lower rank may wait for its challenge before it is dropped and
 * dialled again, ms: on a lossy network an attempt can stall (a lost connection request left to
 * the kernel's backing-off retries), while a new one gets through in a round trip.
 */
const DIAL_TRY_MS = 2000

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
  paused = false
  lost = false
  error: string | null = null
}

/**
 * The libuv handle under a net.Socket: its descriptor, read switch, read callback, read buffer
 * and count of bytes read (no public API has them; `net.Socket`'s `onread` option uses the last
 * three). With a buffer of its own (`useUserBuffer`) the handle reads into it and calls `onread`
 * with the handle as `this` and no arguments that say how much came: `bytesRead` has grown by it
 * (an end of stream or an error leaves it as it was).
 */
interface StreamHandle {
  fd: number
  readStart(): number
  readStop(): number
  onread: (this: StreamHandle, ab?: ArrayBuffer) => unknown
  useUserBuffer(buf: Uint8Array): void
  readonly bytesRead: number
}

/** The event loop's read buffer of each connection, bytes. */
const READ_BUFFER = 64 << 10
function handleOf(s: Socket): StreamHandle | null {
  const h = (s as unknown as { _handle?: StreamHandle | null })._handle
  return h !== undefined && h !== null && typeof h.fd === 'number' ? h : null
}

export class TcpTransport implements Transport {
  readonly name = 'tcp'
  private readonly o: TcpOptions
  private readonly peers: Peer[] = []
  private server: Server | null = null
  private events: TransportEvents | null = null
  private refused = 0
  /** Whether the agent's event loop reads the connections. */
  private reading = true
  /** The frame path's shared memory, where each connection's descriptor goes (`useShared`, before `connect`). */
  private shared: StreamShared | null = null

  /** Where the descriptors go: the frame path's shared memory (before `connect`). */
  useShared(s: StreamShared): void {
    this.shared = s
  }

  /** Every accepted connection goes through it until it proves the key (transport/strangers.ts). */
  private readonly gate: StrangerGate

  constructor(o: TcpOptions) {
    this.o = o
    this.gate = new StrangerGate('tcp', o.log)
    for (let r = 0; r < o.size; r++) this.peers.push(new Peer())
  }

  stats(): TransportStats {
    if (this.shared === null)
      return {
        framesSent: 0,
        framesReceived: 0,
        bytesSent: 0,
        bytesReceived: 0,
        framesDropped: 0,
        connectionsRefused: this.refused + this.gate.refused,
        writes: 0,
        reads: 0,
        emptyReads: 0,
      }
    const s = streamStats(this.shared)
    return {
      framesSent: s.framesSent,
      framesReceived: s.framesReceived,
      bytesSent: s.bytesSent,
      bytesReceived: s.bytesReceived,
      framesDropped: s.framesDropped,
      connectionsRefused: this.refused + this.gate.refused,
      writes: s.writes,
      reads: s.reads,
      emptyReads: s.emptyReads,
    }
  }

  listen(): Promise<PeerAddress> {
    const host = this.o.bind ?? '127.0.0.1'
    return new Promise((resolve, reject) => {
      const server = createServer((sock) => {
        if (this.gate.admit(sock)) this.accept(sock)
      })
      this.server = server
      server.once('error', reject)
      server.listen(0, host, () => {
        const a = server.address()
        if (a === null || typeof a === 'string') {
          reject(new Error('tcp: no listening address'))
          return
        }
        this.o.log.debug({ address: a.address, port: a.port }, 'tcp: listening')
        resolve({ host, port: a.port })
      })
    })
  }

  private onConnected: (() => void) | null = null
  private connectedCount = 0
  /** The deadline of `connect` (cleared by `close`). */
  private connectTimer: NodeJS.Timeout | undefined
  /** Until when stalled dials are tried again (`connect`'s deadline; 0 once closed). */
  private dialUntil = 0

  connect(table: PeerAddress[], events: TransportEvents): Promise<void> {
    this.events = events
    const early = [...this.early]
    this.early.clear()
    for (const s of early) if (!s.destroyed) this.accept(s)
    const { rank, size } = this.o
    const want = size - 1
    this.dialUntil = performance.now() + CONNECT_TIMEOUT_MS
    return new Promise<void>((resolve, reject) => {
      const timer = (this.connectTimer = setTimeout(() => {
        const missing = this.peers.flatMap((p, r) => (r !== rank && p.sock === null ? [r] : []))
        reject(new Error(`tcp: could not connect to process${missing.length === 1 ? '' : 'es'} ${missing.join(', ')} within ${CONNECT_TIMEOUT_MS / 1000} s`))
      }, CONNECT_TIMEOUT_MS))
      this.onConnected = () => {
        if (this.connectedCount !== want) return
        clearTimeout(timer)
        // (every peer is in: nobody else may come, so the listener stops and strangers' connections close)
        this.server?.close()
        this.gate.closeStrangers()
        for (const s of this.early) s.destroy()
        resolve()
      }
      if (want === 0) {
        clearTimeout(timer)
        resolve()
        return
      }
      for (let r = 0; r < rank; r++)
        this.dial(r, table[r]!, (e) => {
          clearTimeout(timer)
          reject(e)
        })
    })
  }

  /** Connects to lower rank `r` and proves the key (dialling again while no challenge comes: DIAL_TRY_MS). */
  private dial(r: number, addr: PeerAddress, fail: (e: Error) => void): void {
    const { rank, key, log } = this.o
    const sock = netConnect({ host: addr.host, port: addr.port })
    sock.setNoDelay(true)
    const nonce = makeNonce()
    let challenge: Uint8Array | null = null
    // (no challenge yet, so no hello sent: the listener cannot have taken this connection for r's)
    const retry = setTimeout(() => {
      if (challenge !== null || performance.now() > this.dialUntil) return
      log.debug({ peer: r }, 'tcp: no challenge in time, dialling again')
      broken = true
      sock.destroy()
      this.dial(r, addr, fail)
    }, DIAL_TRY_MS)
    let connected = false
    let broken = false
    sock.once('connect', () => {
      connected = true
    })
    sock.once('close', () => {
      clearTimeout(retry)
      // (closed after it connected and before the welcome, without a word: the listener's gate let
      // it go — out of time, or pushed out by strangers' connections: dialled again)
      if (connected && !broken && this.peers[r]!.sock !== sock && performance.now() < this.dialUntil) {
        log.debug({ peer: r }, 'tcp: closed before the welcome, dialling again')
        setTimeout(() => {
          if (performance.now() < this.dialUntil) this.dial(r, addr, fail)
        }, 50)
      }
    })
    sock.on('error', (e) => {
      if (!connected && !broken) {
        broken = true
        fail(new Error(`tcp: cannot connect to process ${r} at ${addr.host}:${addr.port}: ${e.message}`))
      }
    })
    const reader = readMessages(
      sock,
      (m) => {
        const t = field(m, 't')
        if (t === 'challenge' && challenge === null) {
          const n = field(m, 'n')
          if (!(n instanceof Uint8Array)) {
            broken = true
            sock.destroy()
            fail(new Error(`tcp: process ${r} sent a malformed challenge`))
            return
          }
          challenge = n
          sock.write(encodeMessage({ t: 'hello', rank, n: nonce, p: proof(key, 'tcp-connect', challenge, nonce, rank, r) }))
        } else if (t === 'welcome' && challenge !== null) {
          if (field(m, 'rank') !== r || !sameProof(field(m, 'p'), proof(key, 'tcp-accept', challenge, nonce, r, rank))) {
            this.refused++
            log.warn({ peer: r }, 'tcp: the process listening there did not prove the job key')
            broken = true
            sock.destroy()
            fail(new Error(`tcp: process ${r} at ${addr.host}:${addr.port} did not prove the job key`))
            return
          }
          this.attach(r, sock, reader.stop())
        } else {
          broken = true
          sock.destroy()
          fail(new Error(`tcp: process ${r} broke the handshake`))
        }
      },
      (why) => {
        broken = true
        sock.destroy()
        fail(new Error(`tcp: process ${r} sent ${why}`))
      },
    )
  }

  /** Connections accepted before `connect` (their handshake waits for it). */
  private readonly early = new Set<Socket>()

  /** A connection (admitted by the gate: HANDSHAKE_MS to prove the key, MAX_STRANGERS at once). */
  private accept(sock: Socket): void {
    // (a peer that got the address table first may connect before this process knows the job and
    // has the frame path's memory: its handshake starts once `connect` is called; its dialer tries
    // again after DIAL_TRY_MS, well within the gate's deadline)
    if (this.events === null) {
      this.early.add(sock)
      sock.on('error', () => {})
      sock.once('close', () => this.early.delete(sock))
      return
    }
    const { rank, size, key } = this.o
    sock.setNoDelay(true)
    const challenge = makeNonce()
    sock.on('error', () => {
      /* reported through close */
    })
    sock.write(encodeMessage({ t: 'challenge', n: challenge }))
    const reader = readMessages(
      sock,
      (m) => {
        if (!this.gate.waiting(sock)) return
        // (the proof first, for every hello alike; then what it claims: one refusal for all)
        const r = field(m, 'rank')
        const n = field(m, 'n')
        const proved =
          field(m, 't') === 'hello' &&
          (typeof r === 'number' || typeof r === 'string') &&
          n instanceof Uint8Array &&
          sameProof(field(m, 'p'), proof(key, 'tcp-connect', challenge, n, r, rank))
        const why = !proved
          ? 'it did not prove the job key'
          : typeof r !== 'number' || !Number.isInteger(r) || r <= rank || r >= size
            ? `rank ${String(r)} does not connect to this process`
            : this.peers[r]!.sock !== null
              ? `process ${r} is connected already`
              : ''
        // (nothing more is read from a refused connection: what it sent after costs nothing)
        if (why !== '') {
          reader.stop()
          this.gate.refuse(sock, why)
          return
        }
        const peer = r as number
        this.gate.proven(sock)
        sock.write(encodeMessage({ t: 'welcome', rank, p: proof(key, 'tcp-accept', challenge, n as Uint8Array, rank, peer) }))
        this.attach(peer, sock, reader.stop())
      },
      (why) => {
        if (this.gate.waiting(sock)) this.gate.refuse(sock, why)
      },
    )
  }

  /** The handshake with `r` is done: frames from now on (`rest`: bytes that came after it). */
  private attach(r: number, sock: Socket, rest: Buffer): void {
    const p = this.peers[r]!
    const h = handleOf(sock)
    if (h === null) {
      sock.destroy()
      return
    }
    p.sock = sock
    // (the event loop reads into a buffer of the connection's own and hands the bytes to the agent
    // from the handle's read callback: Node's stream would allocate a buffer for each read, wrap
    // it, push it through the readable stream and emit it, about a third of what the agent spends
    // on a small message; the end of the stream and errors still go to the stream)
    const streamRead = h.onread
    const events = this.events
    const buf = Buffer.allocUnsafeSlow(READ_BUFFER)
    h.useUserBuffer(buf)
    let seen = h.bytesRead
    h.onread = function (this: StreamHandle) {
      const n = this.bytesRead - seen
      if (n <= 0) return streamRead.call(this)
      seen += n
      // (after the peer is lost, or the connection closed, what comes is dropped)
      if (!p.lost) events?.onBytes(r, buf, n)
      return undefined
    }
    // (no bytes reach the stream now; a listener keeps it flowing, so that it sees the end)
    sock.on('data', (chunk: Buffer) => this.events?.onBytes(r, chunk, chunk.length))
    sock.on('error', (e) => {
      p.error ??= e.message
    })
    sock.on('close', () => this.lost(r, p.error !== null ? `connection lost (${p.error})` : 'connection closed without goodbye', false))
    if (!this.reading) h.readStop()
    setPeerFd(this.shared!, r, h.fd)
    if (rest.length > 0) this.events?.onBytes(r, rest, rest.length)
    this.connectedCount++
    this.onConnected?.()
  }

  lost(r: number, reason: string, normal: boolean): void {
    const p = this.peers[r]!
    if (p.lost) return
    p.lost = true
    this.events?.onPeerLost(r, reason, normal)
    p.sock?.destroy()
  }

  agentReads(on: boolean): void {
    this.reading = on
    for (const p of this.peers) {
      const s = p.sock
      if (s === null || p.lost || s.destroyed) continue
      const h = handleOf(s)
      if (h === null) continue
      if (on && !p.paused) {
        h.readStart()
        continue
      }
      // (every read goes to the agent from the handle's callback, so the stream holds nothing to hand on first)
      h.readStop()
    }
  }

  pausePeer(peer: number): void {
    const p = this.peers[peer]!
    p.paused = true
    if (p.sock !== null) handleOf(p.sock)?.readStop()
  }

  resumePeer(peer: number): void {
    const p = this.peers[peer]!
    if (!p.paused) return
    p.paused = false
    if (this.reading && p.sock !== null && !p.lost) handleOf(p.sock)?.readStart()
  }

  close(): Promise<void> {
    this.dialUntil = 0
    // (a close before every peer was in: the connect's deadline must not keep the process alive)
    clearTimeout(this.connectTimer)
    const waits: Array<Promise<void>> = []
    // (the goodbye went out through the frame path; from here on the closes are normal)
    for (const p of this.peers) {
      const s = p.sock
      if (s === null || s.destroyed) continue
      p.lost = true
      waits.push(
        new Promise<void>((resolve) => {
          const t = setTimeout(() => {
            s.destroy()
            resolve()
          }, 2000)
          s.once('close', () => {
            clearTimeout(t)
            resolve()
          })
          // reading on (and what comes discarded), so that the peer's end of the connection is seen
          // and 'close' comes; a socket closed with unread data would reset the connection, and the
          // peer could lose what we sent last (the goodbye)
          s.removeAllListeners('data')
          s.on('data', () => {})
          handleOf(s)?.readStart()
          s.end()
        }),
      )
    }
    this.server?.close()
    // (strangers, and connections that never got to their handshake, hold nothing up)
    this.gate.closeStrangers()
    for (const s of this.early) s.destroy()
    return Promise.all(waits).then(() => undefined)
  }
}
