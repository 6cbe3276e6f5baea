/**
 * The frame buffers both frame paths hold (the stream path, transport/stream-path.ts, and the
 * datagram path, transport/udp/path.ts): per peer, a send buffer that frames are queued into and a
 * receive buffer whose bytes are parsed back into frames, with their start and end words, in the
 * shared memory laid out in layout/stream.ts. Frames are as transport/contract.ts lays them out.
 * What moves the bytes between these buffers and the network is each path's own. Every method
 * runs under the process's network lock.
 */
import { WORD_COPY, copyBuf, copySmall } from '../base/copy.js'
import { IO_SCRATCH_BYTES } from './fd-io.js'
import {
  SP_FLAGS,
  PEER_BASE,
  PEER_BYE,
  PEER_MALFORMED,
  PEER_WORDS,
  SP_RX_END,
  SP_RX_START,
  S_FRAMES_DROPPED,
  S_FRAMES_RECEIVED,
  S_FRAMES_SENT,
  SP_TX_END,
  SP_TX_START,
  type StreamShared,
} from '../layout/stream.js'
import { FRAME_BYE, FRAME_CONTROL, FRAME_HEADER_BYTES, FRAME_PACKET, FRAME_VERSION, type FramePath } from './contract.js'

/** The body of a goodbye, and what a writev array holds between writes (no view of a frame kept). */
export const NO_BYTES = new Uint8Array(0)

/** Where peer `p`'s receive buffer starts in the memory (its send buffer follows it). */
export function rxAt(s: StreamShared, p: number): number {
  return IO_SCRATCH_BYTES + p * (s.cap + s.txCap)
}

/** What a frame path hands a whole frame to (`FramePath.poll`). */
export type OnFrame = (peer: number, kind: number, dst: number, u8: Uint8Array, off: number, len: number) => boolean

/** One thread's views of a frame path's buffers and their words. */
export class FrameBuffers {
  readonly w: Int32Array
  readonly st: Float64Array
  readonly rx: Uint8Array[]
  readonly tx: Uint8Array[]
  readonly txv: DataView[]
  readonly rxv: DataView[]
  readonly cap: number
  readonly txCap: number
  readonly peers: number
  readonly self: number
  /** Where each peer's buffers start in the memory. */
  readonly rxAt: Int32Array
  readonly txAt: Int32Array
  /** Peers this thread queued a goodbye for. */
  private readonly byeQueued: Uint8Array

  constructor(s: StreamShared, self: number) {
    this.w = new Int32Array(s.words)
    this.st = new Float64Array(s.stats)
    const buf = s.mem.buffer
    this.cap = s.cap
    this.txCap = s.txCap
    this.peers = s.procs
    this.self = self
    this.rxAt = new Int32Array(s.procs)
    this.txAt = new Int32Array(s.procs)
    this.rx = []
    this.tx = []
    this.rxv = []
    this.txv = []
    for (let p = 0; p < s.procs; p++) {
      this.rxAt[p] = rxAt(s, p)
      this.txAt[p] = rxAt(s, p) + s.cap
      this.rx.push(new Uint8Array(buf, this.rxAt[p], s.cap))
      this.tx.push(new Uint8Array(buf, this.txAt[p], s.txCap))
      this.rxv.push(new DataView(buf, this.rxAt[p], s.cap))
      this.txv.push(new DataView(buf, this.txAt[p], s.txCap))
    }
    this.byeQueued = new Uint8Array(this.peers)
  }

  /** Word `f` (SP_FD, SP_FLAGS, …) of peer `p`. */
  word(p: number, f: number): number {
    return PEER_BASE + PEER_WORDS * p + f
  }

  // ─────────────────────────────── out ───────────────────────────────

  /** Moves peer `p`'s queued bytes to the front of its send buffer; returns where they end. */
  compactTx(p: number): number {
    const ws = this.word(p, SP_TX_START)
    const we = this.word(p, SP_TX_END)
    const start = this.w[ws]!
    let end = this.w[we]!
    if (start > 0) {
      this.tx[p]!.copyWithin(0, start, end)
      end -= start
      this.w[ws] = 0
      this.w[we] = end
    }
    return end
  }

  /**
   * Writes a frame (copied: `len` body bytes of `u8` from `off`; `dv`, when given, views them) at
   * `end` of `peer`'s send buffer, where its queue ends and it has room, and queues it.
   */
  put(peer: number, end: number, kind: number, dst: number, u8: Uint8Array, off: number, len: number, dv: DataView | null): void {
    const b = this.tx[peer]!
    b[end] = len & 0xff
    b[end + 1] = (len >>> 8) & 0xff
    b[end + 2] = (len >>> 16) & 0xff
    b[end + 3] = len >>> 24
    b[end + 4] = FRAME_VERSION
    b[end + 5] = kind
    b[end + 6] = 0
    b[end + 7] = 0
    b[end + 8] = dst & 0xff
    b[end + 9] = (dst >>> 8) & 0xff
    b[end + 10] = (dst >>> 16) & 0xff
    b[end + 11] = dst >>> 24
    const d = end + FRAME_HEADER_BYTES
    if (len <= WORD_COPY) copySmall(this.txv[peer]!, b, d, dv, u8, off, len)
    else copyBuf(b, d, u8, off, len, false)
    this.w[this.word(peer, SP_TX_END)] = d + len
    this.st[S_FRAMES_SENT]!++
  }

  /** Writes the header of a frame of `len` body bytes at `at` of `b` (`put` writes its own, the same). */
  frameHeader(b: Uint8Array, at: number, len: number, kind: number, dst: number): void {
    b[at] = len & 0xff
    b[at + 1] = (len >>> 8) & 0xff
    b[at + 2] = (len >>> 16) & 0xff
    b[at + 3] = len >>> 24
    b[at + 4] = FRAME_VERSION
    b[at + 5] = kind
    b[at + 6] = 0
    b[at + 7] = 0
    b[at + 8] = dst & 0xff
    b[at + 9] = (dst >>> 8) & 0xff
    b[at + 10] = (dst >>> 16) & 0xff
    b[at + 11] = dst >>> 24
  }

  /** Queues a goodbye with `path` for every open peer not sent one yet; false while a queue has no room for it. */
  bye(path: FramePath): boolean {
    let all = true
    for (let p = 0; p < this.peers; p++) {
      if (p === this.self || this.byeQueued[p] === 1) continue
      if (path.queue(p, FRAME_BYE, 0, NO_BYTES, 0, 0) === 0) this.byeQueued[p] = 1
      else all = false
    }
    return all
  }

  // ─────────────────────────────── in ───────────────────────────────

  /**
   * Where in peer `p`'s receive buffer `len` more bytes go (moving what waits to its start if that
   * makes the room), or -1 when it has no room for them.
   */
  rxRoom(p: number, len: number): number {
    const rs = this.word(p, SP_RX_START)
    const re = this.word(p, SP_RX_END)
    const start = this.w[rs]!
    let end = this.w[re]!
    if (end + len > this.cap && start > 0) {
      this.rx[p]!.copyWithin(0, start, end)
      end -= start
      this.w[rs] = 0
      this.w[re] = end
    }
    return end + len > this.cap ? -1 : end
  }

  /** Bytes received from peer `p` and not yet handed over as frames. */
  unparsed(p: number): number {
    return this.w[this.word(p, SP_RX_END)]! - this.w[this.word(p, SP_RX_START)]!
  }

  /**
   * Hands every whole frame in peer `p`'s receive buffer to `onFrame` until it refuses one (false:
   * it stays for the next call); a goodbye sets `byeFlags` in the peer's SP_FLAGS. Returns the frames
   * handed over.
   */
  parse(p: number, onFrame: OnFrame, byeFlags: number): number {
    const rs = this.word(p, SP_RX_START)
    const re = this.word(p, SP_RX_END)
    const b = this.rx[p]!
    const dv = this.rxv[p]!
    let at = this.w[rs]!
    const end = this.w[re]!
    let n = 0
    while (end - at >= FRAME_HEADER_BYTES) {
      const len = dv.getUint32(at, true)
      if (len > this.cap - FRAME_HEADER_BYTES) {
        // the stream cannot be followed any further: this connection ends, named
        this.st[S_FRAMES_DROPPED]!++
        Atomics.or(this.w, this.word(p, SP_FLAGS), PEER_MALFORMED)
        at = end
        break
      }
      if (end - at < FRAME_HEADER_BYTES + len) break
      const ver = b[at + 4]!
      const kind = b[at + 5]!
      if (ver !== FRAME_VERSION || (kind !== FRAME_PACKET && kind !== FRAME_CONTROL && kind !== FRAME_BYE)) {
        this.st[S_FRAMES_DROPPED]!++
      } else if (kind === FRAME_BYE) {
        Atomics.or(this.w, this.word(p, SP_FLAGS), byeFlags)
      } else if ((this.w[this.word(p, SP_FLAGS)]! & PEER_BYE) !== 0) {
        // (a goodbye is a peer's last frame: whatever follows it is nobody's, as a datagram sent in a
        // departed peer's name by whoever took its port would be)
        this.st[S_FRAMES_DROPPED]!++
      } else {
        if (!onFrame(p, kind, dv.getUint32(at + 8, true), b, at + FRAME_HEADER_BYTES, len)) break
        this.st[S_FRAMES_RECEIVED]!++
        n++
      }
      at += FRAME_HEADER_BYTES + len
    }
    this.w[rs] = at
    if (at === end) {
      this.w[rs] = 0
      this.w[re] = 0
    }
    return n
  }

  /** Counts a frame dropped above the path (a packet the engine refused as malformed). */
  dropped(): void {
    this.st[S_FRAMES_DROPPED]!++
  }
}
