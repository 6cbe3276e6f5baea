/**
 * The test transport (AMLAPI_CHAOS, config.ts `chaos`): the packets a task sends are held back in
 * its own buffers and sent later in a random order, some twice, so that the tests see what a real
 * network may do (reordering, duplicates) and the receiving side's reassembly and duplicate
 * suppression are exercised. Off (`on` 0) unless the job's settings ask to duplicate or hold back.
 */
import { ringDoorbell } from '../layout/control.js'
import { packetBodyBytes } from '../transport/packet.js'
import { SLOT_STAMP_BYTES } from '../layout/ring.js'
import type { OutRing } from '../transport/ring.js'
import type { ContextState } from '../core/state.js'

/** Rounds a held packet may wait in the test transport before it must go. */
const MAX_HOLD_ROUNDS = 8

/** A packet buffer of the test transport, and one held back. */
export interface ChaosBuf {
  bytes: Uint8Array
  dv: DataView
}
export interface HeldPacket {
  tgt: number
  buf: ChaosBuf
  rounds: number
}

export class ChaosTransport {
  /** 1 over the test transport (reordering, duplicating), else 0. */
  readonly on: number
  private readonly outbox: OutRing[]
  private readonly ctl: Int32Array
  /** The packets held back. */
  readonly held: HeldPacket[] = []
  private readonly spare: ChaosBuf[] = []
  private rng: number
  private readonly dupP: number
  private readonly holdP: number
  private readonly slotBytes: number

  constructor(s: ContextState, outbox: OutRing[]) {
    this.outbox = outbox
    this.ctl = s.ctl
    this.slotBytes = s.spec.ring.slotBytes
    const ch = s.config.chaos
    // (settings that neither hold back nor duplicate leave the plain rings: a test may set only firstId or firstPacket)
    this.on = ch !== null && (ch.dup > 0 || ch.hold > 0) ? 1 : 0
    // the test transport must not take packets it holds back with it when the task ends (a real
    // network would have them in flight): send them on the way out
    if (this.on)
      process.once('exit', () => {
        if (this.holding) this.flush(true)
      })
    this.rng = ((ch?.seed ?? 1) * 2654435761 + s.taskId * 40503 + 1) >>> 0 || 1
    this.dupP = ch?.dup ?? 0
    this.holdP = ch?.hold ?? 0
  }

  /** A buffer for the body of one packet (its size: a slot's body). */
  take(): ChaosBuf {
    let b = this.spare.pop()
    if (b === undefined) {
      const bytes = new Uint8Array(this.slotBytes - SLOT_STAMP_BYTES)
      b = { bytes, dv: new DataView(bytes.buffer) }
    }
    return b
  }

  /** Holds a written packet to `tgt` back until a later `flush`. */
  hold(tgt: number, buf: ChaosBuf): void {
    this.held.push({ tgt, buf, rounds: 0 })
  }

  /**
   * Sends held packets in a random order, some twice; each packet is held back with probability
   * `hold`, at most MAX_HOLD_ROUNDS rounds. `all` sends everything now (before the task sleeps).
   * Never blocks: a full ring keeps the packet for a later round.
   */
  flush(all: boolean): void {
    const held = this.held
    if (held.length === 0) return
    // Fisher-Yates on the held packets, then send those not held back
    for (let i = held.length - 1; i > 0; i--) {
      const j = this.rand() % (i + 1)
      const t = held[i]!
      held[i] = held[j]!
      held[j] = t
    }
    let keep = 0
    for (let i = 0; i < held.length; i++) {
      const h = held[i]!
      const go = all || h.rounds >= MAX_HOLD_ROUNDS || this.rand() / 4294967296 >= this.holdP
      if (go && this.emit(h.tgt, h.buf)) {
        if (this.rand() / 4294967296 < this.dupP) this.emit(h.tgt, h.buf)
        this.spare.push(h.buf)
      } else {
        h.rounds++
        held[keep++] = h
      }
    }
    held.length = keep
  }

  /** True when the test transport still holds packets. */
  get holding(): boolean {
    return this.held.length > 0
  }

  private emit(tgt: number, b: ChaosBuf): boolean {
    const w = this.outbox[tgt]!
    const off = w.reserve()
    if (off < 0) return false
    const len = packetBodyBytes(b.dv, 0)
    w.u8.set(len === b.bytes.length ? b.bytes : b.bytes.subarray(0, len), off)
    w.publish()
    ringDoorbell(this.ctl, tgt)
    return true
  }

  private rand(): number {
    let x = this.rng
    x ^= x << 13
    x >>>= 0
    x ^= x >>> 17
    x ^= x << 5
    x >>>= 0
    this.rng = x
    return x
  }
}
