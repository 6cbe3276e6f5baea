/**
 * The `udp` transport (transport/contract.ts), its agent face: the sockets and the handshake. Its
 * data path is path.ts, with the reliability (reliability.ts).
 *
 * Each process has three kinds of socket, all bound to the job's address (`--bind`, loopback by
 * default): a handshake socket, whose address the rendezvous publishes; one receiving socket for
 * every peer's data; and per peer a sending socket connected to that peer's receiving socket (so
 * any thread can write to it, and a closed port comes back as an error). The agent's event loop
 * reads the receiving socket while no task polls it (`agentReads`).
 *
 * Handshake (docs/transports.md, "UDP handshake"), msgpack bodies after the 4-byte magic "AMLH",
 * resent every HS_RETRY_MS until answered; the higher rank j starts it with the lower rank i:
 *
 *   j → i  hello     {from: j, to: i, nj}
 *   i → j  challenge {from: i, to: j, nj, ni, port, max, win, p: proof(key, "udp-accept", nj, ni, i, j, port, max, win)}
 *   j → i  response  {from: j, to: i, nj, ni, port, max, win, p: proof(key, "udp-connect", ni, nj, j, i, port, max, win)}
 *   i → j  welcome   {from: i, to: j, nj, ni, p: proof(key, "udp-welcome", ni, nj, i, j)}
 *
 * (`port`: the sender's receiving socket; `max`, `win`: the largest datagram it takes and its
 * window.) Each side checks the other's proof, so the key never travels and both know the other
 * holds it; the pair's session value and MAC key are HMACs of the key over both nonces. The
 * acceptor keeps no state per hello: its nonce ni is an HMAC of nj under a secret of its own, made
 * again to check the response. A datagram that fails any check (or is longer than
 * PRE_AUTH_MAX_BYTES) is dropped and counted (`connectionsRefused`), its reason logged.
 */
import { createSocket, type Socket } from 'node:dgram'
import { readFileSync } from 'node:fs'
import { isIPv6 } from 'node:net'
import { networkInterfaces } from 'node:os'
import type { Logger } from 'pino'
import { randomBytes } from 'node:crypto'
import { NONCE_BYTES, makeNonce, proof, sameProof } from '../auth.js'
import type { PeerAddress, Transport, TransportEvents, TransportStats } from '../contract.js'
import type { FaultSpec } from '../faults.js'
import { PRE_AUTH_MAX_BYTES, decodeFlat, encodeBody } from '../messages.js'
import { streamStats } from '../stream-path.js'
import { LOST_REFUSED, type DatagramStats } from '../../layout/datagram.js'
import { DG_HEADER_BYTES, DG_MAC_BYTES } from './header.js'
import { MAX_WINDOW } from './constants.js'
import { datagramLoss, markLost, datagramStats, setDatagramPeer, setReceiveFd, type DatagramOptions, type DatagramShared } from './shared.js'

/** How long the handshake with every peer may take, ms. */
const CONNECT_TIMEOUT_MS = 30_000
/** First interval of a handshake message's resends, ms (doubling up to HS_RETRY_MAX_MS). */
const HS_RETRY_MS = 20
const HS_RETRY_MAX_MS = 500
/** Receive buffer asked of the kernel (it grants at most net.core.rmem_max). */
const RECV_BUFFER = 16 << 20
const SEND_BUFFER = 4 << 20
/** The window a process aims at: its datagrams are made small enough that this many fit its share of the receive buffer. */
const TARGET_WINDOW = 16
/** Largest UDP payload of IPv4 and of IPv6. */
const MAX_UDP4 = 65507
const MAX_UDP6 = 65527
const MIN_DATAGRAM = 576
const MAGIC = 0x484c4d41 // "AMLH"
/** Refused handshake datagrams logged one by one (then every LOG_EVERY-th). */
const LOG_FIRST = 10
const LOG_EVERY = 1000

export interface UdpOptions {
  rank: number
  size: number
  key: Uint8Array
  /** Address to bind to (default 127.0.0.1). */
  bind?: string
  log: Logger
  /** Every datagram carries a MAC (AMLAPI_UDP_MAC). */
  mac: boolean
  faults: FaultSpec | null
  /** A peer silent this long is lost, ms. */
  peerTimeoutMs: number
  /** The largest datagram, bytes (default: from the interface's MTU: `defaultDatagram`). */
  maxDatagram?: number
}

interface UdpHandle {
  fd: number
  recvStart(): number
  recvStop(): number
}

/** The libuv handle under a dgram socket (no public API gives its descriptor or stops its reads). */
function handleOf(s: Socket): UdpHandle | null {
  const sym = Object.getOwnPropertySymbols(s).find((x) => x.description === 'state symbol')
  const h = sym === undefined ? undefined : (s as unknown as Record<symbol, { handle?: UdpHandle | null }>)[sym]?.handle
  return h !== undefined && h !== null && typeof h.fd === 'number' ? h : null
}

/**
 * The largest datagram that crosses the interface `bind` is on without IP fragmentation: its MTU
 * less the IP and UDP headers (loopback: 65536 → 65507), or 1472 (an Ethernet MTU) when it cannot
 * be told.
 */
export function defaultDatagram(bind: string): number {
  const v6 = isIPv6(bind)
  const headers = v6 ? 48 : 28
  let mtu = 1500
  for (const [name, addrs] of Object.entries(networkInterfaces())) {
    if (addrs === undefined || !addrs.some((a) => a.address === bind || (bind === '0.0.0.0' && !a.internal && a.family === 'IPv4'))) continue
    try {
      mtu = Number(readFileSync(`/sys/class/net/${name}/mtu`, 'utf8').trim()) || mtu
    } catch {
      /* not Linux: the default */
    }
    break
  }
  return Math.max(MIN_DATAGRAM, Math.min(mtu - headers, v6 ? MAX_UDP6 : MAX_UDP4))
}

/** A handshake in progress with one peer. */
class Shake {
  /** Ours (as the dialer) and the peer's nonce. */
  mine: Buffer = makeNonce()
  theirs: Uint8Array | null = null
  /** The peer's receiving port, largest datagram and window, once proven. */
  port = 0
  max = 0
  win = 0
  ready = false
  timer: NodeJS.Timeout | null = null
  retry = HS_RETRY_MS
  sock: Socket | null = null
}

export class UdpTransport implements Transport {
  readonly name = 'udp'
  private readonly o: UdpOptions
  private hs: Socket | null = null
  private rx: Socket | null = null
  private rxPort = 0
  private geom: DatagramOptions | null = null
  private shared: DatagramShared | null = null
  private events: TransportEvents | null = null
  private table: PeerAddress[] = []
  private readonly shakes: Shake[] = []
  private readonly lostPeers: boolean[]
  private refused = 0
  private reading = true
  private onReady: (() => void) | null = null
  private readyCount = 0
  private closed = false
  /** The deadline of `connect` (cleared by `close`). */
  private connectTimer: NodeJS.Timeout | undefined
  /** What this process makes its handshake answers' nonces with (never leaves the process). */
  private readonly secret = randomBytes(32)

  constructor(o: UdpOptions) {
    this.o = o
    for (let r = 0; r < o.size; r++) this.shakes.push(new Shake())
    this.lostPeers = new Array<boolean>(o.size).fill(false)
  }

  private get bind(): string {
    return this.o.bind ?? '127.0.0.1'
  }
  private get family(): 'udp4' | 'udp6' {
    return isIPv6(this.bind) ? 'udp6' : 'udp4'
  }

  private socket(recvBuffer: number): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const s = createSocket({ type: this.family })
      s.once('error', reject)
      s.bind(0, this.bind, () => {
        s.off('error', reject)
        s.on('error', (e) => this.o.log.debug({ err: e.message }, 'udp: socket error'))
        try {
          s.setSendBufferSize(SEND_BUFFER)
        } catch {
          /* the kernel's limit */
        }
        if (recvBuffer > 0)
          try {
            s.setRecvBufferSize(recvBuffer)
          } catch {
            /* the kernel's limit */
          }
        resolve(s)
      })
    })
  }

  /** Makes the handshake and receiving sockets; resolves with the handshake socket's address. */
  async listen(): Promise<PeerAddress> {
    this.hs = await this.socket(0)
    this.rx = await this.socket(RECV_BUFFER)
    this.rxPort = this.rx.address().port
    const { size } = this.o
    // the datagram size and window: the receive buffer shared by the peers, half of each share in flight
    const buf = this.rx.getRecvBufferSize()
    const share = Math.max(64 << 10, Math.floor(buf / (2 * Math.max(1, size - 1))))
    const hl = DG_HEADER_BYTES + (this.o.mac ? DG_MAC_BYTES : 0)
    let max = this.o.maxDatagram ?? Math.min(defaultDatagram(this.bind), Math.floor(share / TARGET_WINDOW))
    max = Math.max(Math.min(max, isIPv6(this.bind) ? MAX_UDP6 : MAX_UDP4), hl + 64)
    let win = 4
    while (win < MAX_WINDOW && win * 2 * max <= share) win *= 2
    this.geom = { maxDatagram: max, window: win, mac: this.o.mac, faults: this.o.faults, peerTimeoutMs: this.o.peerTimeoutMs }
    this.hs.on('message', (m, from) => this.onHandshake(m, `${from.address}:${from.port}`))
    this.rx.on('message', (m) => {
      if (!this.closed) this.events?.onBytes(-1, m, m.length)
    })
    const a = this.hs.address()
    this.o.log.debug(
      { address: this.hs.address().address, handshakePort: this.hs.address().port, dataPort: this.rxPort, max, win, recvBuffer: buf },
      'udp: sockets bound',
    )
    return { host: this.bind, port: a.port }
  }

  /** What the datagram path is made with (after `listen`). */
  geometry(): DatagramOptions {
    if (this.geom === null) throw new Error('udp: geometry before listen')
    return this.geom
  }

  /** Where the descriptors go: the datagram path's shared memory (before `connect`). */
  useShared(s: DatagramShared): void {
    this.shared = s
    setReceiveFd(s, handleOf(this.rx!)!.fd)
    if (!this.reading) handleOf(this.rx!)?.recvStop()
  }

  connect(table: PeerAddress[], events: TransportEvents): Promise<void> {
    this.events = events
    this.table = table
    const { rank, size } = this.o
    return new Promise<void>((resolve, reject) => {
      const timer = (this.connectTimer = setTimeout(() => {
        const missing = this.shakes.flatMap((s, r) => (r !== rank && !s.ready ? [r] : []))
        for (const s of this.shakes) if (s.timer !== null) clearTimeout(s.timer)
        reject(new Error(`udp: no handshake with process${missing.length === 1 ? '' : 'es'} ${missing.join(', ')} within ${CONNECT_TIMEOUT_MS / 1000} s`))
      }, CONNECT_TIMEOUT_MS))
      this.onReady = () => {
        if (this.readyCount === size - 1) {
          clearTimeout(timer)
          resolve()
        }
      }
      if (size === 1) {
        clearTimeout(timer)
        resolve()
        return
      }
      for (let r = 0; r < rank; r++) this.hello(r)
    })
  }

  private sendHs(r: number, m: Record<string, unknown>): void {
    const body = encodeBody(m)
    const b = Buffer.allocUnsafe(4 + body.length)
    b.writeUInt32LE(MAGIC, 0)
    body.copy(b, 4)
    const a = this.table[r]!
    this.hs?.send(b, a.port, a.host)
  }

  /** Resends `f` until the peer's shake is ready (or a later step replaces it). */
  private resend(r: number, f: () => void): void {
    const s = this.shakes[r]!
    if (s.timer !== null) clearTimeout(s.timer)
    f()
    const again = (): void => {
      if (s.ready || this.closed) {
        s.timer = null
        return
      }
      f()
      s.retry = Math.min(2 * s.retry, HS_RETRY_MAX_MS)
      s.timer = setTimeout(again, s.retry)
    }
    s.timer = setTimeout(again, s.retry)
  }

  private hello(r: number): void {
    const s = this.shakes[r]!
    this.resend(r, () => this.sendHs(r, { t: 'hello', from: this.o.rank, to: r, nj: s.mine }))
  }

  private refuse(from: string, why: string): void {
    this.refused++
    if (this.refused <= LOG_FIRST || this.refused % LOG_EVERY === 0) this.o.log.warn({ from, why, refused: this.refused }, 'udp: handshake datagram refused')
  }

  private onHandshake(b: Buffer, from: string): void {
    // (before the address table is known, a peer's hello goes unanswered: it is sent again)
    if (this.closed || this.events === null) return
    if (b.length < 5 || b.readUInt32LE(0) !== MAGIC) {
      this.refuse(from, 'not a handshake datagram')
      return
    }
    if (b.length > PRE_AUTH_MAX_BYTES) {
      this.refuse(from, `a handshake datagram of ${b.length} bytes`)
      return
    }
    let m: Record<string, unknown>
    try {
      const v = decodeFlat(b.subarray(4))
      if (v === null || typeof v !== 'object') throw new Error('not a map')
      m = v as Record<string, unknown>
    } catch {
      this.refuse(from, 'a body that does not decode')
      return
    }
    const { rank, size, key } = this.o
    const r = m['from']
    if (m['to'] !== rank || typeof r !== 'number' || !Number.isInteger(r) || r < 0 || r >= size || r === rank) {
      this.refuse(from, 'an unknown sender or receiver')
      return
    }
    const nj = m['nj']
    const ni = m['ni']
    const s = this.shakes[r]!
    const num = (k: string): number => {
      const x = m[k]
      return typeof x === 'number' && Number.isInteger(x) ? x : -1
    }
    // (a peer already met sends nothing here but a response again, when our welcome was lost: the
    // rest is a stranger's, dropped before any HMAC is spent on it)
    if (s.ready && m['t'] !== 'response') {
      if (m['t'] !== 'welcome') this.refuse(from, 'a handshake step from a peer already met')
      return
    }
    switch (m['t']) {
      case 'hello': {
        if (r < rank || !(nj instanceof Uint8Array) || nj.length !== NONCE_BYTES) {
          this.refuse(from, 'a malformed hello')
          return
        }
        // (stateless: the answer's nonce is made from the hello and this process's secret, so no
        // table holds it and no flood of hellos can push the real one's out)
        const mine = this.acceptorNonce(nj, r)
        const g = this.geom!
        this.sendHs(r, {
          t: 'challenge',
          from: rank,
          to: r,
          nj,
          ni: mine,
          port: this.rxPort,
          max: g.maxDatagram,
          win: g.window,
          p: proof(key, 'udp-accept', nj, mine, rank, r, this.rxPort, g.maxDatagram, g.window),
        })
        return
      }
      case 'challenge': {
        if (r > rank || !(ni instanceof Uint8Array) || !(nj instanceof Uint8Array) || !s.mine.equals(nj)) {
          this.refuse(from, 'a challenge to no hello of ours')
          return
        }
        const port = num('port')
        const max = num('max')
        const win = num('win')
        if (!sameProof(m['p'], proof(key, 'udp-accept', nj, ni, r, rank, port, max, win))) {
          this.refuse(from, `process ${r} did not prove the job key`)
          return
        }
        if (!this.validPeer(port, max, win)) {
          this.refuse(from, 'a challenge with impossible sizes')
          return
        }
        if (s.theirs !== null && Buffer.from(s.theirs).equals(ni)) return
        s.theirs = ni
        s.port = port
        s.max = max
        s.win = win
        const g = this.geom!
        this.connectSend(r, () => {
          this.resend(r, () =>
            this.sendHs(r, {
              t: 'response',
              from: rank,
              to: r,
              nj,
              ni,
              port: this.rxPort,
              max: g.maxDatagram,
              win: g.window,
              p: proof(key, 'udp-connect', ni, nj, rank, r, this.rxPort, g.maxDatagram, g.window),
            }),
          )
        })
        return
      }
      case 'response': {
        if (r < rank || !(ni instanceof Uint8Array) || !(nj instanceof Uint8Array)) {
          this.refuse(from, 'a malformed response')
          return
        }
        if (nj.length !== NONCE_BYTES || !sameProof(ni, this.acceptorNonce(nj, r))) {
          this.refuse(from, 'a response to no challenge of ours')
          return
        }
        const port = num('port')
        const max = num('max')
        const win = num('win')
        if (!sameProof(m['p'], proof(key, 'udp-connect', ni, nj, r, rank, port, max, win))) {
          this.refuse(from, `process ${r} did not prove the job key`)
          return
        }
        if (!this.validPeer(port, max, win)) {
          this.refuse(from, 'a response with impossible sizes')
          return
        }
        const welcome = (): void => this.sendHs(r, { t: 'welcome', from: rank, to: r, nj, ni, p: proof(key, 'udp-welcome', ni, nj, rank, r) })
        // (taken once: a copy that comes while the sending socket is being made — a resend, a
        // replay — must not make the peer ready twice)
        if (s.ready || s.theirs !== null) {
          if (s.ready) welcome()
          return
        }
        s.theirs = nj
        s.port = port
        s.max = max
        s.win = win
        this.connectSend(r, () => {
          this.ready(r, ni, nj)
          welcome()
        })
        return
      }
      case 'welcome': {
        if (
          r > rank ||
          s.theirs === null ||
          !(ni instanceof Uint8Array) ||
          !(nj instanceof Uint8Array) ||
          !s.mine.equals(nj) ||
          !Buffer.from(s.theirs).equals(ni)
        ) {
          this.refuse(from, 'a welcome to no response of ours')
          return
        }
        if (!sameProof(m['p'], proof(key, 'udp-welcome', ni, nj, r, rank))) {
          this.refuse(from, `process ${r} did not prove the job key`)
          return
        }
        if (!s.ready) this.ready(r, ni, nj)
        return
      }
      default:
        this.refuse(from, 'an unknown handshake step')
    }
  }

  /** The nonce this process answers a hello of nonce `nj` from peer `r` with (an HMAC under its secret). */
  private acceptorNonce(nj: Uint8Array, r: number): Buffer {
    return proof(this.secret, 'udp-acceptor-nonce', nj, r, this.o.rank).subarray(0, NONCE_BYTES)
  }

  private validPeer(port: number, max: number, win: number): boolean {
    return port > 0 && port < 65536 && max >= DG_HEADER_BYTES + DG_MAC_BYTES + 64 && max <= MAX_UDP6 && win >= 1 && win <= MAX_WINDOW
  }

  /** Makes (once) the socket that sends to peer `r`'s receiving socket, then `then`. */
  private connectSend(r: number, then: () => void): void {
    const s = this.shakes[r]!
    if (s.sock !== null) {
      then()
      return
    }
    void this.socket(0).then(
      (sock) => {
        if (this.closed) {
          sock.close()
          return
        }
        s.sock = sock
        // (the kernel reports a datagram refused by a closed port — ICMP — as an error of this
        // socket, which Node's event loop reads and emits: that peer's process is gone)
        sock.on('error', (e: NodeJS.ErrnoException) => {
          if (e.code === 'ECONNREFUSED' && s.ready && this.shared !== null && !this.closed) {
            markLost(this.shared, r, LOST_REFUSED)
            this.lost(r, datagramLoss(this.shared, r) ?? 'its port is closed', false)
          }
        })
        sock.connect(s.port, this.table[r]!.host, () => then())
      },
      (e: Error) => this.o.log.warn({ peer: r, err: e.message }, 'udp: no socket for a peer'),
    )
  }

  /** The handshake with `r` is done (`ni`: the acceptor's nonce, `nj`: the dialer's). */
  private ready(r: number, ni: Uint8Array, nj: Uint8Array): void {
    const s = this.shakes[r]!
    const { rank, key } = this.o
    const lo = Math.min(r, rank)
    const hi = Math.max(r, rank)
    const session = proof(key, 'udp-session', ni, nj, lo, hi)
    const macKey = proof(key, 'udp-mac', ni, nj, lo, hi)
    const h = handleOf(s.sock!)
    if (h === null) {
      this.o.log.warn({ peer: r }, 'udp: a peer socket without a descriptor')
      return
    }
    setDatagramPeer(this.shared!, r, h.fd, session, macKey, s.max, s.win)
    s.ready = true
    if (s.timer !== null) {
      clearTimeout(s.timer)
      s.timer = null
    }
    this.readyCount++
    this.o.log.debug({ peer: r, port: s.port, max: s.max, win: s.win }, 'udp: peer ready')
    this.onReady?.()
  }

  agentReads(on: boolean): void {
    this.reading = on
    if (this.rx === null || this.closed) return
    const h = handleOf(this.rx)
    if (h === null) return
    if (on) h.recvStart()
    else h.recvStop()
  }

  /** One socket receives from every peer: a peer's datagrams cannot be held back alone (the window does that). */
  pausePeer(_peer: number): void {}
  resumePeer(_peer: number): void {}

  lost(r: number, reason: string, normal: boolean): void {
    if (this.lostPeers[r] === true) return
    this.lostPeers[r] = true
    this.events?.onPeerLost(r, reason, normal)
  }

  /** Why the datagram path lost peer `r` (silence, a closed port), or null. */
  lossReason(r: number): string | null {
    return this.shared === null ? null : datagramLoss(this.shared, r)
  }

  stats(): TransportStats & { datagrams?: DatagramStats } {
    if (this.shared === null)
      return {
        framesSent: 0,
        framesReceived: 0,
        bytesSent: 0,
        bytesReceived: 0,
        framesDropped: 0,
        connectionsRefused: this.refused,
        writes: 0,
        reads: 0,
        emptyReads: 0,
      }
    const s = streamStats(this.shared)
    return { ...s, connectionsRefused: this.refused, datagrams: datagramStats(this.shared) }
  }

  close(): Promise<void> {
    this.closed = true
    // (a close before every peer was met: the connect's deadline must not keep the process alive)
    clearTimeout(this.connectTimer)
    const waits: Array<Promise<void>> = []
    const close = (s: Socket | null): void => {
      if (s !== null)
        waits.push(
          new Promise<void>((resolve) => {
            try {
              s.close(() => resolve())
            } catch {
              resolve()
            }
          }),
        )
    }
    for (const s of this.shakes) {
      if (s.timer !== null) clearTimeout(s.timer)
      close(s.sock)
      s.sock = null
    }
    close(this.hs)
    close(this.rx)
    this.hs = null
    this.rx = null
    return Promise.all(waits).then(() => undefined)
  }
}
