/**
 * Two datagram paths (the `udp` transport's data path, transport/udp/path.ts) in this
 * process, one per rank of a two-process job, with real UDP sockets on loopback and the test as
 * the network between them:
 *
 *   A (rank 0): its sending socket ──────────────────────────────────▶ B's receiving socket
 *   B (rank 1): its sending socket ─▶ relay in ─(recorded)─ relay out ─▶ A's receiving socket
 *   attacker:                                                 ────────▶ A's receiving socket
 *
 * Everything moves in `step()`, synchronously: B's path is polled (unless stopped), the relay
 * forwards what B sent one datagram at a time, A's path reading each before the next goes, then A
 * is polled until it has read every datagram sent its way (A's reads count them). So whatever the
 * attacker sent before a step is taken or dropped by A within it, and A's counters can be compared
 * with what was sent exactly; `stepA()` polls A alone, so that what it counts is the attacker's
 * only. The relay keeps a model of A's news rule over what it forwarded, in the order A read it
 * (`pnHeard`, `realStale`): a datagram of B's is news to A only when its packet number is above
 * every one A heard, by less than PN_JUMP. As in the transport (transport/udp/transport.ts), the receiving
 * sockets are read by the paths only: Node's own reading of them is stopped.
 */
import { createSocket, type Socket } from 'node:dgram'
import { randomBytes } from 'node:crypto'
import { readSync, writeSync } from 'node:fs'
import { DatagramPath, createDatagramShared, datagramLoss, datagramStats, setDatagramPeer, setReceiveFd, type DatagramShared } from '#lapi-internal'
import { BACKPRESSURE, FRAME_PACKET, PEER_ERROR, peerFlags, streamStats } from '@amlapi/lapi/transport'

export type DgStats = ReturnType<typeof datagramStats>

/** The counters of datagrams dropped by a check before they were taken (each datagram counts in one of them at most). */
export const DROP_COUNTERS = ['badLength', 'badVersion', 'badType', 'unknownSender', 'badSession', 'badChecksum', 'badMac'] as const

/** Datagrams the relay keeps (a long fuzz run must not hold all it saw). */
const CAPTURE_MAX = 4096
/** How far above the highest heard a packet number may be and still be news (transport/udp/constants.ts's PN_JUMP). */
export const PN_JUMP = 2 ** 24
/** The longest A is polled for the datagrams sent its way to come (the kernel's loopback may hold one back a moment), ms. */
const DRAIN_MS = 200

/** The packet number of datagram `d` (64 bits: the low word at 36, the high at 40), or -1 when it is too short to have one. */
export function packetNumber(d: Uint8Array): number {
  if (d.length < 44) return -1
  const v = new DataView(d.buffer, d.byteOffset, d.length)
  return v.getUint32(36, true) + v.getUint32(40, true) * 2 ** 32
}

/** Whether packet number `pn` is news to a path whose highest heard is `heard` (transport/udp/reliability.ts `receive`). */
export function isNews(pn: number, heard: number): boolean {
  const jump = pn - heard
  return jump > 0 && jump < PN_JUMP
}

interface UdpHandle {
  fd: number
  recvStop(): number
}

/** The libuv handle under a dgram socket: its descriptor, and a way to stop Node reading it (as transport/udp/transport.ts does). */
function handleOf(s: Socket): UdpHandle {
  const sym = Object.getOwnPropertySymbols(s).find((x) => x.description === 'state symbol')
  const h = sym === undefined ? undefined : (s as unknown as Record<symbol, { handle?: UdpHandle | null }>)[sym]?.handle
  if (h === undefined || h === null || typeof h.fd !== 'number') throw new Error('no descriptor under a dgram socket')
  return h
}

async function bound(): Promise<Socket> {
  const s = createSocket('udp4')
  s.on('error', () => {})
  await new Promise<void>((resolve) => s.bind(0, '127.0.0.1', resolve))
  return s
}

async function connected(port: number): Promise<Socket> {
  const s = await bound()
  await new Promise<void>((resolve) => s.connect(port, '127.0.0.1', resolve))
  return s
}

/** A bound socket that only this test reads (Node's reading stopped). */
async function silent(): Promise<Socket> {
  const s = await bound()
  handleOf(s).recvStop()
  return s
}

/** One datagram from a non-blocking socket's descriptor into `buf`: its length, or -1 when none waits. */
function readOne(fd: number, buf: Buffer): number {
  try {
    return readSync(fd, buf, 0, buf.length, null)
  } catch (e) {
    const c = (e as NodeJS.ErrnoException).code
    if (c === 'EAGAIN' || c === 'EWOULDBLOCK') return -1
    throw e
  }
}

// ── frames: each names itself (id in `dst` and in its first 4 bytes) and its bytes follow from the id ──

/** Body bytes of frame `id`: sizes from one byte of payload to several datagrams' worth. */
export function frameSize(id: number): number {
  return [4, 60, 700, 4300, 9000, 17][id % 6]!
}

export function frameBody(id: number): Uint8Array {
  const b = new Uint8Array(frameSize(id))
  new DataView(b.buffer).setUint32(0, id, true)
  for (let i = 4; i < b.length; i++) b[i] = (id * 131 + i * 7) & 0xff
  return b
}

/** One direction's frames: what was sent, and whether what came is exactly that, once, in order. */
export class Flow {
  sent = 0
  got = 0
  readonly violations: string[] = []

  /** Checks a frame handed up by the receiving path. */
  take(kind: number, dst: number, u8: Uint8Array, off: number, len: number): void {
    const want = this.got
    const fail = (why: string): void => {
      if (this.violations.length < 20) this.violations.push(`frame #${want}: ${why}`)
    }
    if (kind !== FRAME_PACKET) fail(`kind ${kind}`)
    else if (want >= this.sent) fail(`delivered, but only ${this.sent} were sent (dst ${dst}, ${len} bytes)`)
    else if (dst !== want) fail(`dst ${dst} (a frame delivered twice, skipped or made up)`)
    else if (len !== frameSize(want)) fail(`${len} bytes, not ${frameSize(want)}`)
    else {
      const body = frameBody(want)
      for (let i = 0; i < len; i++)
        if (u8[off + i] !== body[i]) {
          fail(`byte ${i} differs`)
          break
        }
    }
    this.got++
  }
}

/** One side of the pair: its path and shared memory, its sockets, and the frames it received. */
export interface Side {
  rank: number
  shared: DatagramShared
  path: DatagramPath
  rx: Socket
  tx: Socket
  /** Frames coming to this side. */
  inbound: Flow
}

export interface PairOptions {
  mac: boolean
  peerTimeoutMs: number
  /** Largest datagram (default 4224: above 4096 bytes of payload, so A reads large ones straight into its receive buffer). */
  maxDatagram?: number
  window?: number
}

export class DatagramPair {
  /** The datagrams B sent to A, as the relay saw them (the attacker's material): the latest CAPTURE_MAX. */
  readonly captured: Buffer[] = []
  /** The highest packet number A has heard from B, by the model of its news rule over what the relay forwarded. */
  pnHeard = 0
  /** Datagrams of B's the relay forwarded that the model says A takes as stale (B's sent out of order on the way to the relay). */
  realStale = 0
  /** Datagrams the relay passed on to A. */
  forwarded = 0
  /** Datagrams the attacker sent to A. */
  attacks = 0
  /** Steps in which A did not read, within DRAIN_MS, every datagram sent its way (the kernel dropped or held one). */
  shortDrains = 0
  /** False once B is stopped: its path is no longer polled or ticked (its socket stays open). */
  bRuns = true
  readonly session: Uint8Array
  private readonly buf = Buffer.alloc(65536)

  readonly opts: Required<PairOptions>
  readonly a: Side
  readonly b: Side
  private readonly relayIn: Socket
  private readonly relayOut: Socket
  private readonly attacker: Socket

  private constructor(opts: Required<PairOptions>, a: Side, b: Side, relayIn: Socket, relayOut: Socket, attacker: Socket, session: Uint8Array) {
    this.opts = opts
    this.a = a
    this.b = b
    this.relayIn = relayIn
    this.relayOut = relayOut
    this.attacker = attacker
    this.session = session
  }

  static async open(o: PairOptions): Promise<DatagramPair> {
    const opts: Required<PairOptions> = { maxDatagram: 4224, window: 8, ...o }
    const geometry = { maxDatagram: opts.maxDatagram, window: opts.window, mac: opts.mac, faults: null, peerTimeoutMs: opts.peerTimeoutMs }
    // (what the handshake would have agreed: one session value and one MAC key for the pair)
    const session = randomBytes(8)
    const macKey = randomBytes(32)
    const aRx = await silent()
    const bRx = await silent()
    const relayIn = await silent()
    const relayOut = await connected(aRx.address().port)
    const attacker = await connected(aRx.address().port)
    const aTx = await connected(bRx.address().port)
    const bTx = await connected(relayIn.address().port)
    const side = (rank: number, rx: Socket, tx: Socket): Side => {
      const shared = createDatagramShared(2, 128 << 10, rank, geometry)
      setReceiveFd(shared, handleOf(rx).fd)
      setDatagramPeer(shared, 1 - rank, handleOf(tx).fd, session, macKey, opts.maxDatagram, opts.window)
      return { rank, shared, path: new DatagramPath(shared, rank), rx, tx, inbound: new Flow() }
    }
    return new DatagramPair(opts, side(0, aRx, aTx), side(1, bRx, bTx), relayIn, relayOut, attacker, session)
  }

  /** Queues frame `id` from `from` to the other side and sends what its window allows; false when its queue is full (not queued). */
  send(from: Side): boolean {
    const to = from === this.a ? this.b : this.a
    const id = to.inbound.sent
    const body = frameBody(id)
    if (from.path.queue(1 - from.rank, FRAME_PACKET, id, body, 0, body.length) === BACKPRESSURE) return false
    to.inbound.sent++
    from.path.flush()
    return true
  }

  private poll(s: Side): void {
    s.path.poll(true, (_peer, kind, dst, u8, off, len) => {
      s.inbound.take(kind, dst, u8, off, len)
      return true
    })
    s.path.flush()
  }

  /**
   * The relay: passes on (and records) every datagram B sent that waits at its socket, one at a
   * time, A reading each before the next goes (two datagrams written in a row may reach A's socket
   * in the other order — two CPUs' loopback queues — and the order is what A's packet numbers judge).
   */
  private relay(): void {
    const inFd = handleOf(this.relayIn).fd
    const outFd = handleOf(this.relayOut).fd
    for (let k = 0; k < 1024; k++) {
      const n = readOne(inFd, this.buf)
      if (n < 0) return
      const d = Buffer.from(this.buf.subarray(0, n))
      if (this.captured.length >= CAPTURE_MAX) this.captured.splice(0, CAPTURE_MAX / 4)
      this.captured.push(d)
      const pn = packetNumber(d)
      if (isNews(pn, this.pnHeard)) this.pnHeard = pn
      else this.realStale++
      writeSync(outFd, d, 0, n)
      this.forwarded++
      this.drainA()
    }
  }

  /**
   * Polls A until it has read every datagram sent its way (forwarded and the attacker's: A's reads
   * count them), at most DRAIN_MS, then until a read finds its socket empty (bounded).
   */
  private drainA(): void {
    const want = this.forwarded + this.attacks
    const reads = (): number => streamStats(this.a.shared).reads
    const end = performance.now() + DRAIN_MS
    while (reads() < want && performance.now() < end) this.poll(this.a)
    if (reads() < want) this.shortDrains++
    const empty = (): number => streamStats(this.a.shared).emptyReads
    const e0 = empty()
    for (let k = 0; k < 256 && empty() === e0; k++) this.poll(this.a)
  }

  /** One round of the network: B (while it runs), the relay, then A until it has read all sent to it. */
  step(): void {
    if (this.bRuns) this.poll(this.b)
    this.relay()
    this.drainA()
  }

  /** A alone (B not polled, nothing relayed) until it has read all sent to it: what it counts meanwhile is the attacker's. */
  stepA(): void {
    this.drainA()
  }

  /** Queues `from`'s goodbye to the other side (the stream path's `bye()`, as a closing transport does) and sends it; false when its queue had no room. */
  goodbye(from: Side): boolean {
    const queued = from.path.bye()
    from.path.flush()
    return queued
  }

  /**
   * The datagrams waiting at `s`'s receiving socket (at most 4096), read by the test instead of its
   * path: only for a side not polled (B once stopped), whose datagrams would otherwise be its path's.
   */
  takeAt(s: Side): Buffer[] {
    if (s === this.a || (s === this.b && this.bRuns)) throw new Error("takeAt: that side's path reads its socket")
    const fd = handleOf(s.rx).fd
    const out: Buffer[] = []
    for (let k = 0; k < 4096; k++) {
      const n = readOne(fd, this.buf)
      if (n < 0) break
      out.push(Buffer.from(this.buf.subarray(0, n)))
    }
    return out
  }

  /** Sends `bytes` to A's receiving socket as one datagram (taken or dropped at the next step). */
  attack(bytes: Uint8Array): void {
    writeSync(handleOf(this.attacker).fd, bytes, 0, bytes.length)
    this.attacks++
  }

  /**
   * Steps every millisecond or so until `done` holds or `ms` pass; `each` runs before every step.
   * Returns whether `done` held.
   */
  async run(ms: number, done: () => boolean = () => false, each: () => void = () => {}): Promise<boolean> {
    const end = performance.now() + ms
    while (performance.now() < end) {
      each()
      this.step()
      if (done()) return true
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
    return done()
  }

  stats(s: Side): DgStats {
    return datagramStats(s.shared)
  }

  /** Why `s` lost its peer (the path's reason), or null; and whether its peer is marked failed. */
  loss(s: Side): string | null {
    return datagramLoss(s.shared, 1 - s.rank)
  }
  peerFailed(s: Side): boolean {
    return (peerFlags(s.shared, 1 - s.rank) & PEER_ERROR) !== 0
  }

  async close(): Promise<void> {
    const all = [this.a.rx, this.a.tx, this.b.rx, this.b.tx, this.relayIn, this.relayOut, this.attacker]
    await Promise.all(
      all.map(
        (s) =>
          new Promise<void>((resolve) => {
            try {
              s.close(() => resolve())
            } catch {
              resolve()
            }
          }),
      ),
    )
  }
}
