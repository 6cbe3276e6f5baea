/**
 * The udp transport's reliability (transport/udp/reliability.ts) alone: two instances, one per
 * rank, over their own shared memory, wired through an in-memory network of this test, the time
 * given by the test. No socket and no clock: every loss, copy, overtaking and timer is the test's,
 * and the same on every run. What each side receives must be exactly the frames the other queued,
 * each once, in order; the timers must fire at the times the protocol gives them.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { FRAME_HEADER_BYTES, FRAME_PACKET, PEER_BYE, PEER_EOF } from '@amlapi/lapi/transport'
import {
  FrameBuffers,
  Reliability,
  createDatagramShared,
  datagramLayout as L,
  datagramLoss,
  datagramStats,
  setDatagramPeer,
  udpConstants as C,
  udpHeader as H,
  type DatagramLink,
  type DatagramShared,
} from '#lapi-internal'

/** Payload bytes of a full datagram (a frame of more is cut into several; several small ones share one). */
const PAYLOAD = 512
const BUF = 16 << 10
/** When the pair's handshake is done, ms (the test's clock starts there). */
const T0 = 1000
/** The most time a run may take, ms (of the test's clock). */
const RUN_MS = 600_000

/** A small PRNG (mulberry32). */
function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Body of frame `id` of `size` bytes: its id in its first 4 bytes (when it has them), then bytes that follow from the id. */
function frameBody(id: number, size: number): Uint8Array {
  const b = new Uint8Array(size)
  if (size >= 4) new DataView(b.buffer).setUint32(0, id, true)
  for (let i = 4; i < size; i++) b[i] = (id * 131 + i * 7) & 0xff
  return b
}

/** One direction's frames: their sizes, and whether what came is exactly those, each once, in order. */
class Flow {
  got = 0
  readonly violations: string[] = []
  readonly sizes: number[]
  constructor(sizes: number[]) {
    this.sizes = sizes
  }

  take(kind: number, dst: number, u8: Uint8Array, off: number, len: number): boolean {
    const want = this.got++
    const fail = (why: string): void => {
      if (this.violations.length < 10) this.violations.push(`frame #${want}: ${why}`)
    }
    if (kind !== FRAME_PACKET) fail(`kind ${kind}`)
    else if (want >= this.sizes.length) fail(`delivered, but only ${this.sizes.length} were queued (dst ${dst})`)
    else if (dst !== want) fail(`frame ${dst} (one delivered twice, skipped or made up)`)
    else if (len !== this.sizes[want]) fail(`${len} bytes, not ${this.sizes[want]!}`)
    else {
      const body = frameBody(want, len)
      for (let i = 0; i < len; i++)
        if (u8[off + i] !== body[i]) {
          fail(`byte ${i} differs`)
          break
        }
    }
    return true
  }
}

interface Datagram {
  from: number
  to: number
  due: number
  hdr: Float64Array
  payload: Uint8Array
}

interface NetOptions {
  /** Probabilities per datagram that it is lost, that it arrives twice. */
  drop: number
  dup: number
  /** Each copy arrives `latency` ms after it was sent, plus up to `jitter` ms more (later ones overtake it). */
  latency: number
  jitter: number
  seed: number
}

/** The test's network: what is on its way, and what happened to what was sent. */
class Network {
  readonly inflight: Datagram[] = []
  sent = 0
  dropped = 0
  duplicated = 0
  readonly o: NetOptions
  private readonly rng: () => number
  constructor(o: NetOptions) {
    this.o = o
    this.rng = prng(o.seed)
  }

  carry(from: number, to: number, hdr: Float64Array, payload: Uint8Array, now: number): void {
    this.sent++
    if (this.rng() < this.o.drop) {
      this.dropped++
      return
    }
    const copies = this.rng() < this.o.dup ? 2 : 1
    if (copies === 2) this.duplicated++
    for (let c = 0; c < copies; c++) this.inflight.push({ from, to, due: now + this.o.latency + this.rng() * this.o.jitter, hdr, payload })
  }

  /** Takes off the network what arrives by `now`, earliest first. */
  arrivals(now: number): Datagram[] {
    const out = this.inflight.filter((d) => d.due <= now).sort((x, y) => x.due - y.due)
    for (const d of out) this.inflight.splice(this.inflight.indexOf(d), 1)
    return out
  }

  /** When the next datagram arrives (Infinity: none on its way). */
  next(): number {
    return this.inflight.reduce((m, d) => Math.min(m, d.due), Infinity)
  }
}

/** One rank: its shared memory, buffers and reliability, its clock, and the frames it sends and receives. */
class Side {
  readonly shared: DatagramShared
  readonly fb: FrameBuffers
  readonly clock = new Float64Array(1)
  readonly proto: Reliability
  readonly peer: number
  readonly u: Int32Array
  readonly t: Float64Array
  readonly mu8: Uint8Array
  /** Frames queued so far (ids 0 …), of the `outbound` sizes. */
  queuedFrames = 0
  outbound: number[] = []
  inbound = new Flow([])
  /** Bytes of the send buffer not acknowledged, as the last `flush` found them. */
  left = 0

  readonly rank: number

  constructor(rank: number, net: Network, window: number, peerTimeoutMs: number) {
    this.rank = rank
    this.peer = 1 - rank
    this.shared = createDatagramShared(2, BUF, rank, { maxDatagram: H.DG_HEADER_BYTES + PAYLOAD, window, mac: false, faults: null, peerTimeoutMs })
    this.fb = new FrameBuffers(this.shared, rank)
    this.u = new Int32Array(this.shared.udp)
    this.t = new Float64Array(this.shared.times)
    this.mu8 = new Uint8Array(this.shared.mem.buffer)
    const link: DatagramLink = {
      transmit: (p, at, len) => {
        // (the fields the path adds: sender and length; the session value it would check is the test's to leave out)
        const hdr = Float64Array.from(this.proto.out)
        hdr[H.HF_SRC] = rank
        hdr[H.HF_LEN] = len
        net.carry(rank, p, hdr, this.mu8.slice(at, at + len), this.clock[0]!)
        return 1
      },
      release: () => Infinity,
    }
    this.proto = new Reliability(this.shared, this.fb, this.clock, link)
    // (the handshake's end: a descriptor the test never writes to, the peer's size and window)
    setDatagramPeer(this.shared, this.peer, 0, new Uint8Array(8), new Uint8Array(32), H.DG_HEADER_BYTES + PAYLOAD, window, T0)
  }

  uw(f: number): number {
    return L.G_WORDS + L.UW * this.peer + f
  }
  tw(f: number): number {
    return L.UT_GLOBAL + L.TW * this.peer + f
  }
  stats(): ReturnType<typeof datagramStats> {
    return datagramStats(this.shared)
  }

  /** Queues the next frame if the send buffer has room for it (always moving what waits to its start: the protocol must follow). */
  queueNext(): boolean {
    const id = this.queuedFrames
    if (id >= this.outbound.length) return false
    const size = this.outbound[id]!
    const end = this.proto.compactTx(this.peer)
    if (end + FRAME_HEADER_BYTES + size > this.fb.txCap) return false
    this.fb.put(this.peer, end, FRAME_PACKET, id, frameBody(id, size), 0, size, null)
    this.queuedFrames++
    return true
  }

  /** Queues what fits and sends what the window allows, at `now`. */
  flush(now: number): void {
    this.clock[0] = now
    while (this.queueNext());
    this.left = this.proto.writeOut(this.peer)
  }

  /** A datagram that arrived, at `now`: its payload put where the path reads one, and taken. */
  take(d: Datagram, now: number): void {
    this.clock[0] = now
    const at = this.shared.stagingAt + H.DG_HEADER_BYTES
    this.mu8.set(d.payload, at)
    this.proto.receive(d.hdr, at, d.payload.length)
  }

  /** What a poll does after reading, at `now`: delivery in order, the frames parsed, the acknowledgements that cannot wait, the timers when due. */
  poll(now: number): void {
    this.clock[0] = now
    this.proto.deliver(this.peer)
    this.fb.parse(this.peer, (_p, kind, dst, u8, off, len) => this.inbound.take(kind, dst, u8, off, len), PEER_BYE | PEER_EOF)
    this.proto.deliver(this.peer)
    this.proto.acksOut()
    if (this.proto.timersDue()) this.proto.runTimers()
  }
}

interface PairOptions {
  window?: number
  net?: Partial<NetOptions>
  /** The first sequence number of both directions (near 2^31 or 2^32: they wrap). */
  start?: number
  peerTimeoutMs?: number
}

class Pair {
  readonly net: Network
  readonly a: Side
  readonly b: Side
  now = T0
  constructor(o: PairOptions = {}) {
    this.net = new Network({ drop: 0, dup: 0, latency: 0.05, jitter: 0, seed: 1, ...o.net })
    const window = o.window ?? 8
    this.a = new Side(0, this.net, window, o.peerTimeoutMs ?? 1e9)
    this.b = new Side(1, this.net, window, o.peerTimeoutMs ?? 1e9)
    if (o.start !== undefined) {
      for (const [x, y] of [
        [this.a, this.b],
        [this.b, this.a],
      ] as const) {
        x.u[x.uw(L.U_SND_NXT)] = o.start
        x.u[x.uw(L.U_SND_UNA)] = o.start
        y.u[y.uw(L.U_RCV_NXT)] = o.start
      }
    }
  }

  side(rank: number): Side {
    return rank === 0 ? this.a : this.b
  }

  /** Frames of these sizes from a to b, and from b to a. */
  frames(ab: number[], ba: number[]): void {
    this.a.outbound = ab
    this.b.inbound = new Flow(ab)
    this.b.outbound = ba
    this.a.inbound = new Flow(ba)
  }

  done(): boolean {
    return [this.a, this.b].every((s) => s.inbound.got >= s.inbound.sizes.length && s.queuedFrames === s.outbound.length && s.left === 0)
  }

  /**
   * Runs the pair, event by event, until every frame arrived and was acknowledged; at most
   * `events` events and RUN_MS of the test's time (the runs here take fewer than 2,000 events and
   * 60 s: a stalled protocol fails fast). Returns the time it took, ms.
   */
  run(events = 20_000): number {
    const sides = [this.a, this.b]
    for (let k = 0; k < events && this.now - T0 < RUN_MS; k++) {
      const now = this.now
      for (const s of sides) s.flush(now)
      for (const d of this.net.arrivals(now)) this.side(d.to).take(d, now)
      for (const s of sides) {
        s.poll(now)
        s.flush(now)
      }
      if (this.done()) return now - T0
      for (const s of sides) if (s.inbound.violations.length > 0) throw new Error(`rank ${s.rank} received: ${s.inbound.violations.join('; ')}`)
      const next = Math.min(this.net.next(), this.a.proto.dueAt(), this.b.proto.dueAt())
      this.now = Math.max(next, now + 0.001)
    }
    throw new Error(
      `not done within ${events} events or ${RUN_MS / 1000} s: a got ${this.a.inbound.got}/${this.a.inbound.sizes.length}, b got ${this.b.inbound.got}/${this.b.inbound.sizes.length}`,
    )
  }

  /**
   * Both directions arrived whole, each frame once and in order; and no datagram came from outside
   * the receiver's window (a sender never sends past it: one that seems to is a number misjudged).
   */
  expectDelivered(): void {
    for (const s of [this.a, this.b]) {
      expect(s.inbound.violations).toEqual([])
      expect(s.inbound.got).toBe(s.inbound.sizes.length)
      expect(s.stats().outsideWindow).toBe(0)
    }
  }
}

/** `n` frame sizes that cross datagrams' edges: a few bytes, several small ones in a datagram, one and several datagrams' worth. */
function sizes(n: number, seed = 7): number[] {
  const r = prng(seed)
  const menu = [4, 60, PAYLOAD - FRAME_HEADER_BYTES, PAYLOAD + 1, 1500, 3 * PAYLOAD + 5]
  return Array.from({ length: n }, () => menu[Math.floor(r() * menu.length)]!)
}

describe('udp reliability, driven alone', () => {
  it('a clean network: every frame once, in order, both ways, and nothing resent', () => {
    const pr = new Pair()
    pr.frames(sizes(200, 1), sizes(150, 2))
    pr.run()
    pr.expectDelivered()
    expect(pr.a.stats().retransmits + pr.b.stats().retransmits).toBe(0)
    expect(pr.a.stats().duplicates + pr.b.stats().duplicates).toBe(0)
  })

  it('loss: what is lost is sent again until it arrives; every frame once, in order', () => {
    const pr = new Pair({ net: { drop: 0.2, seed: 11 } })
    pr.frames(sizes(200, 3), sizes(200, 4))
    pr.run()
    pr.expectDelivered()
    expect(pr.net.dropped).toBeGreaterThan(50)
    const s = [pr.a.stats(), pr.b.stats()]
    expect(s[0]!.retransmits + s[1]!.retransmits).toBeGreaterThan(0)
    expect(s[0]!.fastRetransmits + s[1]!.fastRetransmits).toBeGreaterThan(0)
  })

  it('duplication: every copy after the first is dropped and counted; every frame once, in order', () => {
    const pr = new Pair({ net: { dup: 0.3, seed: 12 } })
    pr.frames(sizes(200, 5), sizes(200, 6))
    pr.run()
    pr.expectDelivered()
    expect(pr.net.duplicated).toBeGreaterThan(50)
    expect(pr.a.stats().duplicates + pr.b.stats().duplicates).toBeGreaterThan(50)
  })

  it('reordering: datagrams that overtake others wait in the window; every frame once, in order', () => {
    const pr = new Pair({ window: 16, net: { jitter: 2, seed: 13 } })
    pr.frames(sizes(200, 8), sizes(200, 9))
    pr.run()
    pr.expectDelivered()
    expect(pr.a.stats().outOfOrder + pr.b.stats().outOfOrder).toBeGreaterThan(20)
  })

  for (const [name, start] of [
    ['2^31 (the signed wrap)', 0x7fffffff - 5],
    ['2^32 (the unsigned wrap)', -6],
  ] as const) {
    it(`sequence numbers that wrap at ${name}, with loss, copies and overtaking: every frame once, in order`, () => {
      const pr = new Pair({ start, net: { drop: 0.1, dup: 0.1, jitter: 1, seed: 14 } })
      pr.frames(sizes(100, 10), sizes(100, 11))
      pr.run()
      pr.expectDelivered()
      for (const [x, y] of [
        [pr.a, pr.b],
        [pr.b, pr.a],
      ] as const) {
        const nxt = x.u[x.uw(L.U_SND_NXT)]!
        // (more datagrams went than the 5 or 6 numbers before the wrap: the numbers wrapped)
        expect((nxt - start) | 0).toBeGreaterThan(20)
        expect(x.u[x.uw(L.U_SND_UNA)]).toBe(nxt)
        expect(y.u[y.uw(L.U_RCV_NXT)]).toBe(nxt)
      }
    })
  }

  it('the retransmission timer fires at the times it gives, doubling; a resent datagram gives no round-trip sample (Karn)', () => {
    const pr = new Pair()
    const { a, b, net } = pr
    a.outbound = [100]
    b.inbound = new Flow([100])
    a.flush(1000)
    expect(net.inflight).toHaveLength(1)
    const first = net.inflight[0]!
    expect([first.hdr[H.HF_TYPE], first.hdr[H.HF_SEQ], first.hdr[H.HF_PN]]).toEqual([H.DG_DATA, 0, 1])
    expect(a.proto.dueAt()).toBe(1000 + C.RTO_INITIAL_MS)
    let rto = C.RTO_INITIAL_MS
    let sentAt = 1000
    for (let k = 1; k <= 3; k++) {
      net.inflight.length = 0 // lost
      a.clock[0] = sentAt + rto - 0.001
      a.proto.runTimers()
      expect(net.inflight).toHaveLength(0)
      expect(a.proto.dueAt()).toBe(sentAt + rto)
      sentAt += rto
      a.clock[0] = sentAt
      a.proto.runTimers()
      expect(net.inflight).toHaveLength(1)
      const again = net.inflight[0]!
      // (the same datagram, with a packet number of its own)
      expect([again.hdr[H.HF_TYPE], again.hdr[H.HF_SEQ], again.hdr[H.HF_PN]]).toEqual([H.DG_DATA, 0, 1 + k])
      expect(again.payload).toEqual(first.payload)
      expect(a.stats().retransmits).toBe(k)
      rto *= 2
      expect(a.t[a.tw(L.UT_RTO)]).toBe(rto)
      expect(a.proto.dueAt()).toBe(sentAt + rto)
    }
    // the third resend arrives; the receiver's acknowledgement waits ACK_DELAY_MS for data going back, then goes alone
    const arrive = sentAt + 0.5
    b.take(net.arrivals(Infinity)[0]!, arrive)
    b.poll(arrive)
    expect(b.inbound.got).toBe(1)
    expect(net.inflight).toHaveLength(0)
    expect(b.proto.dueAt()).toBe(arrive + C.ACK_DELAY_MS)
    b.clock[0] = arrive + C.ACK_DELAY_MS - 0.001
    b.proto.runTimers()
    expect(net.inflight).toHaveLength(0)
    b.clock[0] = arrive + C.ACK_DELAY_MS
    b.proto.runTimers()
    expect(net.inflight).toHaveLength(1)
    const ack = net.arrivals(Infinity)[0]!
    expect([ack.hdr[H.HF_TYPE], ack.hdr[H.HF_ACK], ack.payload.length]).toEqual([H.DG_ACK, 1, 0])
    a.take(ack, arrive + 1)
    expect(a.u[a.uw(L.U_SND_UNA)]).toBe(1)
    // (sent four times: no sample, the backed-off timeout stays, and nothing is resent when it passes)
    expect(a.t[a.tw(L.UT_RTO)]).toBe(rto)
    a.clock[0] = sentAt + rto
    a.proto.runTimers()
    expect(net.inflight).toHaveLength(0)
    expect(a.stats().retransmits).toBe(3)
  })

  it('the timeout follows the measured round trip: RFC 6298 from the first sample', () => {
    const pr = new Pair()
    const { a, b, net } = pr
    a.outbound = [200]
    b.inbound = new Flow([200, 300])
    a.flush(1000)
    b.take(net.arrivals(Infinity)[0]!, 1000.5)
    b.poll(1000.5)
    b.clock[0] = 1000.75
    b.proto.runTimers()
    a.take(net.arrivals(Infinity)[0]!, 1001)
    // (a round trip of 1 ms, the first sample: 1 + 4 × 0.5 = 3 ms)
    expect(a.t[a.tw(L.UT_SRTT)]).toBe(1)
    expect(a.t[a.tw(L.UT_RTO)]).toBe(3)
    a.outbound.push(300)
    a.flush(1001)
    expect(net.arrivals(Infinity)).toHaveLength(1) // lost
    expect(a.proto.dueAt()).toBe(1004)
    a.clock[0] = 1003.999
    a.proto.runTimers()
    expect(net.inflight).toHaveLength(0)
    a.clock[0] = 1004
    a.proto.runTimers()
    expect(net.inflight).toHaveLength(1)
    expect(net.inflight[0]!.hdr[H.HF_SEQ]).toBe(1)
    b.take(net.arrivals(Infinity)[0]!, 1004.5)
    b.poll(1004.5)
    expect(b.inbound.violations).toEqual([])
    expect(b.inbound.got).toBe(2)
  })

  it('a gap is acknowledged at once, selectively; a duplicate at once; the rest after ACK_DELAY_MS or half a window', () => {
    const pr = new Pair({ window: 8 })
    const { a, b, net } = pr
    // seven one-datagram frames: numbers 0 … 6
    a.outbound = Array<number>(7).fill(PAYLOAD - FRAME_HEADER_BYTES)
    b.inbound = new Flow(a.outbound)
    a.flush(1000)
    const ds = net.arrivals(Infinity)
    expect(ds.map((d) => d.hdr[H.HF_SEQ])).toEqual([0, 1, 2, 3, 4, 5, 6])
    // 1 before 0: a gap, acknowledged at once (next expected 0, number 1 held: bit 0)
    b.take(ds[1]!, 1001)
    b.poll(1001)
    expect(net.arrivals(Infinity).map((d) => [d.hdr[H.HF_TYPE], d.hdr[H.HF_ACK], d.hdr[H.HF_SACK]])).toEqual([[H.DG_ACK, 0, 1]])
    expect(b.stats().outOfOrder).toBe(1)
    // 0 fills it: 0 and 1 delivered, and the window moved when 1 was passed on from it: that goes at once
    b.take(ds[0]!, 1002)
    b.poll(1002)
    expect(b.inbound.got).toBe(2)
    expect(net.arrivals(Infinity).map((d) => [d.hdr[H.HF_ACK], d.hdr[H.HF_SACK]])).toEqual([[2, 0]])
    // 2 in order: owed, it waits for data going back; its copy is acknowledged at once
    b.take(ds[2]!, 1003)
    b.poll(1003)
    expect(net.inflight).toHaveLength(0)
    expect(b.proto.dueAt()).toBe(1003 + C.ACK_DELAY_MS)
    b.take(ds[2]!, 1003.1)
    b.poll(1003.1)
    expect(b.stats().duplicates).toBe(1)
    expect(net.arrivals(Infinity).map((d) => d.hdr[H.HF_ACK])).toEqual([3])
    // 3, 4, 5, 6 in order: the fourth owed goes at once (half the window of 8)
    for (const k of [3, 4, 5]) {
      b.take(ds[k]!, 1004)
      b.poll(1004)
    }
    expect(net.inflight).toHaveLength(0)
    b.take(ds[6]!, 1004)
    b.poll(1004)
    expect(net.arrivals(Infinity).map((d) => d.hdr[H.HF_ACK])).toEqual([7])
    // a late copy: a duplicate, acknowledged at once
    b.take(ds[3]!, 1005)
    b.poll(1005)
    expect(net.arrivals(Infinity).map((d) => d.hdr[H.HF_ACK])).toEqual([7])
    expect(b.stats().duplicates).toBe(2)
    expect(b.inbound.violations).toEqual([])
    expect(b.inbound.got).toBe(7)
  })

  it('keepalives go KEEPALIVE_MS after the last datagram; a peer silent for the peer timeout is lost', () => {
    const pr = new Pair({ peerTimeoutMs: 2000 })
    const { a, net } = pr
    a.clock[0] = T0
    a.proto.runTimers()
    expect(a.proto.dueAt()).toBe(T0 + C.KEEPALIVE_MS)
    for (let k = 1; k <= 3; k++) {
      a.clock[0] = T0 + k * C.KEEPALIVE_MS - 0.001
      a.proto.runTimers()
      expect(net.inflight).toHaveLength(0)
      a.clock[0] = T0 + k * C.KEEPALIVE_MS
      a.proto.runTimers()
      const ka = net.arrivals(Infinity)
      expect(ka.map((d) => d.hdr[H.HF_TYPE])).toEqual([H.DG_ACK])
      expect(a.stats().keepalives).toBe(k)
    }
    // (b heard at T0, at the handshake, and never since)
    a.clock[0] = T0 + 2000
    a.proto.runTimers()
    expect(datagramLoss(a.shared, 1)).toBeNull()
    a.clock[0] = T0 + 2000.001
    a.proto.runTimers()
    expect(datagramLoss(a.shared, 1)).toMatch(/peer timeout/)
    expect(a.proto.live(1)).toBe(false)
  })

  it('any mix of loss, copies, overtaking, window and starting number: every frame once, in order (fast-check, fixed seed)', () => {
    fc.assert(
      fc.property(
        fc.record({
          drop: fc.double({ min: 0, max: 0.35, noNaN: true }),
          dup: fc.double({ min: 0, max: 0.3, noNaN: true }),
          jitter: fc.double({ min: 0, max: 3, noNaN: true }),
          window: fc.constantFrom(1, 2, 4, 8, 16, 32),
          start: fc.oneof(
            fc.integer({ min: -40, max: 40 }),
            fc.integer({ min: 0x7fffffff - 40, max: 0x7fffffff }),
            fc.integer({ min: -0x80000000, max: 0x7fffffff }),
          ),
          ab: fc.array(fc.integer({ min: 0, max: 1500 }), { maxLength: 120, size: 'max' }),
          ba: fc.array(fc.integer({ min: 0, max: 1500 }), { maxLength: 120, size: 'max' }),
          seed: fc.integer(),
        }),
        (o) => {
          const pr = new Pair({ window: o.window, start: o.start, net: { drop: o.drop, dup: o.dup, jitter: o.jitter, seed: o.seed } })
          pr.frames(o.ab, o.ba)
          pr.run()
          pr.expectDelivered()
        },
        // (a run takes milliseconds; the limit ends the shrinking of a failure, which can take minutes)
      ),
      { seed: 20240611, numRuns: 60, plugins: [fc.interruptAfterTimeLimit(20_000, { failOnInterrupt: true })] },
    )
  })
})

describe('udp datagram header codec', () => {
  it('round-trips every field: signed sequence numbers, the selective bitmap, packet numbers across 2^32', () => {
    const d = new DataView(new ArrayBuffer(64))
    for (const pn of [1, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 5, 2 ** 52 + 3]) {
      const f = new Float64Array(H.HF_COUNT)
      f[H.HF_TYPE] = H.DG_DATA
      f[H.HF_FLAGS] = H.DG_HELD | H.DG_MAC
      f[H.HF_SRC] = 65535
      f[H.HF_LEN] = 65535
      f[H.HF_SESSION_LO] = -0x80000000
      f[H.HF_SESSION_HI] = 0x7fffffff
      f[H.HF_SEQ] = -1
      f[H.HF_ACK] = 0x7fffffff
      f[H.HF_SACK] = -0x80000000 | 5
      f[H.HF_WIN] = 32
      f[H.HF_PN] = pn
      encodeAndBack(d, f)
    }
  })
})

function encodeAndBack(d: DataView, f: Float64Array): void {
  H.encodeHeader(d, 0, f)
  expect(d.getUint8(0)).toBe(H.UDP_VERSION)
  expect(d.getUint32(H.H_SUM, true)).toBe(0)
  const g = new Float64Array(H.HF_COUNT)
  H.decodeHeader(d, 0, g)
  const want = Float64Array.from(f)
  want[H.HF_VERSION] = H.UDP_VERSION
  want[H.HF_SUM] = 0
  expect(Array.from(g)).toEqual(Array.from(want))
}
