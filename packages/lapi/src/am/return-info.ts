/**
 * The `lapi_return_info_t` a header handler gets: one record per context, armed for each call.
 * Its `udata_one_pkt_ptr` answers a view of the one-packet data in the inbox itself where it can
 * (views kept per 64-byte line and shape), so that the steady state allocates and copies nothing.
 */
import { copyBuf } from '../base/copy.js'
import type { lapi_return_info_t } from './types.js'

/** Views of one-packet data kept per 64-byte line of the inbox (shapes: offset and length). */
const LINE_VIEWS = 8
/** A view kept for a line of the inbox, with its offset and length. */
interface LineView {
  off: number
  n: number
  v: Uint8Array
}

/**
 * The `lapi_return_info_t` handed to header handlers: one per context, reused. `udata_one_pkt_ptr`
 * is a getter, so a header handler that does not look at it costs nothing. For a packet in the
 * inbox it answers a view of the packet's data itself: views are made for up to LINE_VIEWS
 * shapes (offset and length) per 64-byte line of the inbox where data starts, and kept (the
 * steady state allocates nothing and copies nothing); a further shape in a line whose views are
 * all taken, or a packet elsewhere (the test transport's copies), is copied into scratch memory
 * and answered with a view of that (allocation-free as well, but a copy: ~0.1 us for 64 bytes).
 */
export class ReturnInfo implements lapi_return_info_t {
  msg_len = 0
  src = 0
  ret_flags = 0
  ctl_flags = 0
  /** Where the one-packet data is while a header handler runs (u8 = null: not a one-packet message). */
  pktU8: Uint8Array | null = null
  /** The same memory by words (SHORT packets), or null. */
  pktI32: Int32Array | null = null
  pktOff = 0
  private readonly scratch: Uint8Array
  private readonly scratch32: Int32Array
  private readonly views: Array<Uint8Array | undefined> = []
  private copied: Uint8Array | null = null
  /** This task's inbox (the array every ring end of it shares) and its kept views, by line. */
  private readonly inboxU8: Uint8Array
  private readonly lineViews: Array<LineView[] | null>
  private readonly lineWays = LINE_VIEWS

  constructor(maxPkt: number, inboxU8: Uint8Array) {
    this.scratch = new Uint8Array(maxPkt)
    this.scratch32 = new Int32Array(this.scratch.buffer)
    this.inboxU8 = inboxU8
    this.lineViews = new Array<LineView[] | null>((inboxU8.length >> 6) + 1).fill(null)
  }

  get udata_one_pkt_ptr(): Uint8Array | null {
    const u8 = this.pktU8
    if (u8 === null) return null
    if (this.copied !== null) return this.copied
    const off = this.pktOff
    const n = this.msg_len
    if (u8 === this.inboxU8) {
      const line = off >> 6
      let lv = this.lineViews[line]!
      if (lv !== null) {
        // (the shapes are compared from the entries, not from the views: a view's `byteOffset`
        // is a call in Node 20, ~11 ns)
        for (let k = 0; k < lv.length; k++) {
          const e = lv[k]!
          if (e.off === off && e.n === n) {
            this.copied = e.v
            return e.v
          }
        }
      } else {
        lv = []
        this.lineViews[line] = lv
      }
      if (lv.length < this.lineWays) {
        // (once per shape and line: the views of an inbox are bounded by its size)
        const nv = u8.subarray(off, off + n)
        lv.push({ off, n, v: nv })
        this.copied = nv
        return nv
      }
    }
    this.copied = this.copy(u8, off, n)
    return this.copied
  }

  /** Copies the one-packet data into scratch memory; returns a view of it. */
  private copy(u8: Uint8Array, off: number, n: number): Uint8Array {
    const w = this.pktI32
    if (w !== null && n <= 32 && ((off | n) & 3) === 0) {
      const d = this.scratch32
      const f = off >> 2
      for (let k = 0; k < n >> 2; k++) d[k] = w[f + k]!
    } else copyBuf(this.scratch, 0, u8, off, n, false)
    let v = this.views[n]
    if (v === undefined) {
      v = this.scratch.subarray(0, n)
      this.views[n] = v
    }
    return v
  }

  /** Sets up the record for one header-handler call (`u8` null when the data is not all here). */
  arm(msgLen: number, src: number, u8: Uint8Array | null, i32: Int32Array | null, off: number): void {
    this.msg_len = msgLen
    this.src = src
    this.ret_flags = 0
    this.ctl_flags = 0
    this.pktU8 = u8
    this.pktI32 = i32
    this.pktOff = off
    this.copied = null
  }

  disarm(): void {
    this.pktU8 = null
    this.pktI32 = null
    this.copied = null
  }
}
