/**
 * The `udp` transport's fault injector (`--faults`, transport/faults.ts): between the datagram
 * path and its socket, it drops, duplicates, corrupts, and holds back datagrams (so that later ones
 * overtake them, or with an extra delay), from a seeded generator in the shared memory. Held
 * datagrams wait in a delay line of DELAY_SLOTS (layout/datagram.ts) until their time comes. Runs
 * under the process's network lock; the time (ms) is what the path put in `clock[0]`.
 */
import { nextRandom, type FaultSpec } from '../faults.js'
import { D_FAULT_CORRUPTS, D_FAULT_DELAYS, D_FAULT_DROPS, D_FAULT_DUPS, D_FAULT_REORDERS, DELAY_SLOTS, G_RNG, UT_DUE, up8 } from '../../layout/datagram.js'
import type { DatagramShared } from './shared.js'

/** How long a datagram the `reorder` fault holds back waits, ms (later ones overtake it). */
const REORDER_HOLD_MS = 0.3

/** Where the injector's datagrams go: the path's socket. */
export interface DatagramWriter {
  /**
   * Writes `hl` bytes of the memory from `h`, then `len` bytes from `at`, as one datagram to peer
   * `p`: 1 (written, or lost on the way), 0 (the socket is full: not written) or -1 (the peer is lost).
   */
  write(p: number, h: number, hl: number, at: number, len: number): number
  /** Whether peer `p` is still sent datagrams. */
  live(p: number): boolean
}

export class FaultInjector {
  private readonly f: FaultSpec
  private readonly u: Int32Array
  private readonly t: Float64Array
  private readonly ds: Float64Array
  private readonly dT: Float64Array
  private readonly dI: Int32Array
  private readonly mu8: Uint8Array
  private readonly clock: Float64Array
  private readonly out: DatagramWriter
  private readonly scratchAt: number
  private readonly delayAt: number
  /** Bytes of a slot of the delay line. */
  private readonly md: number

  constructor(s: DatagramShared, f: FaultSpec, clock: Float64Array, out: DatagramWriter) {
    this.f = f
    this.u = new Int32Array(s.udp)
    this.t = new Float64Array(s.times)
    this.ds = new Float64Array(s.udpStats)
    this.dT = new Float64Array(s.delayT)
    this.dI = new Int32Array(s.delayI)
    this.mu8 = new Uint8Array(s.mem.buffer)
    this.clock = clock
    this.out = out
    this.scratchAt = s.scratchAt
    this.delayAt = s.delayAt
    this.md = up8(s.opts.maxDatagram)
  }

  private random(): number {
    return nextRandom(this.u, G_RNG)
  }

  /** Sends a datagram (header `hl` bytes at `h`, payload `len` at `at`) to peer `p` through the faults; as DatagramWriter.write. */
  send(p: number, h: number, hl: number, at: number, len: number): number {
    const now = this.clock[0]!
    const f = this.f
    if (f.drop > 0 && this.random() < f.drop) {
      this.ds[D_FAULT_DROPS]!++
      return 1
    }
    const n = hl + len
    const x = this.scratchAt
    this.mu8.copyWithin(x, h, h + hl)
    if (len > 0) this.mu8.copyWithin(x + hl, at, at + len)
    if (f.corrupt > 0 && this.random() < f.corrupt) {
      const k = Math.floor(this.random() * n)
      this.mu8[x + k]! ^= 1 << Math.floor(this.random() * 8)
      this.ds[D_FAULT_CORRUPTS]!++
    }
    const copies = f.dup > 0 && this.random() < f.dup ? 2 : 1
    if (copies === 2) this.ds[D_FAULT_DUPS]!++
    let r = 1
    for (let c = 0; c < copies; c++) {
      let hold = 0
      if (f.reorder > 0 && this.random() < f.reorder) {
        hold = REORDER_HOLD_MS
        this.ds[D_FAULT_REORDERS]!++
      }
      if (f.delay > 0) {
        hold += (this.random() * f.delay) / 1000
        this.ds[D_FAULT_DELAYS]!++
      }
      if (hold > 0 && this.hold(p, x, n, now + hold)) continue
      r = this.out.write(p, x, n, 0, 0)
    }
    return r
  }

  /** Puts a datagram into the delay line until `until` (ms), and the timers due by then; false when the line is full. */
  private hold(p: number, x: number, n: number, until: number): boolean {
    for (let i = 0; i < DELAY_SLOTS; i++) {
      if (this.dI[2 * i + 1] !== 0) continue
      this.mu8.copyWithin(this.delayAt + i * this.md, x, x + n)
      this.dI[2 * i] = p
      this.dI[2 * i + 1] = n
      this.dT[i] = until
      if (until < this.t[UT_DUE]!) this.t[UT_DUE] = until
      return true
    }
    return false
  }

  /** Sends what the delay line holds that is due by now (a lost peer's is dropped); returns the earliest release still held (Infinity: none). */
  release(): number {
    const now = this.clock[0]!
    let next = Infinity
    for (let i = 0; i < DELAY_SLOTS; i++) {
      const n = this.dI[2 * i + 1]!
      if (n === 0) continue
      const p = this.dI[2 * i]!
      if (this.dT[i]! <= now || !this.out.live(p)) {
        this.dI[2 * i + 1] = 0
        if (this.out.live(p)) this.out.write(p, this.delayAt + i * this.md, n, 0, 0)
      } else if (this.dT[i]! < next) next = this.dT[i]!
    }
    return next
  }
}
