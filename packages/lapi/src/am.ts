/**
 * LAPI active messages (docs/lapi.md; IBM's LAPI_Amsend and LAPI_Amsendv pages): the sending
 * side, the packets, and the receiving side that the dispatcher drives.
 *
 * Sending. A message of `udata_len` ≤ `rndvThreshold` bytes (or any Amsendv) goes **eager**: a
 * HEAD packet with the user header and the first bytes of data, then DATA packets, written into
 * the target's inbox ring from this task; the origin counter moves once every byte has been
 * copied into the ring. A larger Amsend goes by **rendezvous**, and the target **pulls** it: the
 * HEAD says where the data lies in this task's segment (the caller's Addr, or a staging copy of a
 * Uint8Array); after the header handler the target copies it once, straight into the landing
 * buffer, bumps our origin counter and sends PULLED (we free the staging copy, run `shdlr`). So a
 * rendezvous needs nothing more from the origin. Only when there is no room for a staging copy
 * does the target answer CTS: we copy at our next dispatcher round, straight into its segment (or
 * as DATA packets when the landing buffer is a Uint8Array we cannot see), then send FIN.
 *
 * Receiving. HEAD runs the header handler (uhdr and, for a one-packet message, the data are copies
 * in per-context scratch memory, valid only during the call), which returns where the data lands.
 * DATA packets are reassembled by offset; packets that arrive before their HEAD are stashed;
 * duplicates are recognised by packet index (per message) and message id (per source) and
 * dropped. When every byte is in place the completion handler runs (inline when the header
 * handler set LAPI_SEND_REPLY and the dispatcher is not nested in a blocked send, else queued and
 * run at the next top-level dispatcher round), then the target counter moves, then the origin's
 * completion counter (directly in the origin's segment, with a ring of its doorbell).
 *
 * Counters when things go wrong (docs/lapi.md, "Active messages"): a header index not registered at
 * the target, a header handler that throws, or a landing buffer that cannot hold the message — the
 * message is discarded, the error goes to the target's err_hndlr (AM_ERR), the target counter does
 * not move, the origin's completion counter does (so no origin waits forever).
 */
import { DoneIds, IdTable } from './id-table.js'
import { ErrClass, CtlFlag, RetFlag, VecType } from './constants.js'
import type { Context, HandlerFn } from './context.js'
import { WORD_COPY, copyBuf, copySeg, copyWords } from './copy.js'
import { T_STATE, TaskState, WAIT_RING, WaitCall, ringDoorbell, taskWord } from './job/control.js'
import { LapiStatus as S } from './status.js'
import {
  BARE_HEADER_BYTES, BODY_PACKET, SHORT_HEADER_BYTES, T_AM_BARE, T_AM_SHORT, T_NET_DONE,
  PACKET_HEADER_BYTES, PACKET_VERSION, P_EXTRA, P_FLAGS, P_LEN, P_MSG_ID, P_MSG_LEN, P_OFFSET, P_SRC, P_TYPE, P_VERSION,
} from './transport/packet.js'
import type { Addr, compl_hndlr_t, lapi_vec_t, LocalBuf, Ref, scompl_hndlr_t } from './types.js'
import { SLOT_STAMP_BYTES, type OutRing } from './transport/ring.js'

/** `lapi_return_info_t`: what a header handler learns about the message and may set. */
export interface lapi_return_info_t {
  msg_len: number
  src: number
  ret_flags: number
  ctl_flags: number
  /**
   * The whole udata when it came in the first packet, else null: valid during the call only (a
   * view of the packet in the inbox, or a copy; what the handler writes into it is lost).
   */
  udata_one_pkt_ptr: Uint8Array | null
}
/** Views of one-packet data kept per 64-byte line of the inbox (shapes: offset and length). */
const LINE_VIEWS = 8
/** A view kept for a line of the inbox, with its offset and length. */
interface LineView { off: number, n: number, v: Uint8Array }

/**
 * The `lapi_return_info_t` handed to header handlers: one per context, reused. `udata_one_pkt_ptr`
 * is a getter, so a header handler that does not look at it costs nothing. For a packet in the
 * inbox it answers a view of the packet's data itself: views are made for up to LINE_VIEWS
 * shapes (offset and length) per 64-byte line of the inbox where data starts, and kept (the
 * steady state allocates nothing and copies nothing); a further shape in a line whose views are
 * all taken, or a packet elsewhere (the test transport's copies), is copied into scratch memory
 * and answered with a view of that (allocation-free as well, but a copy: ~0.1 us for 64 bytes).
 */
class ReturnInfo implements lapi_return_info_t {
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

  constructor (maxPkt: number, inboxU8: Uint8Array) {
    this.scratch = new Uint8Array(maxPkt)
    this.scratch32 = new Int32Array(this.scratch.buffer)
    this.inboxU8 = inboxU8
    this.lineViews = new Array<LineView[] | null>((inboxU8.length >> 6) + 1).fill(null)
  }

  get udata_one_pkt_ptr (): Uint8Array | null {
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
          if (e.off === off && e.n === n) { this.copied = e.v; return e.v }
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
  private copy (u8: Uint8Array, off: number, n: number): Uint8Array {
    const w = this.pktI32
    if (w !== null && n <= 32 && ((off | n) & 3) === 0) {
      const d = this.scratch32
      const f = off >> 2
      for (let k = 0; k < n >> 2; k++) d[k] = w[f + k]!
    } else copyBuf(this.scratch, 0, u8, off, n, false)
    let v = this.views[n]
    if (v === undefined) { v = this.scratch.subarray(0, n); this.views[n] = v }
    return v
  }

  /** Sets up the record for one header-handler call (`u8` null when the data is not all here). */
  arm (msgLen: number, src: number, u8: Uint8Array | null, i32: Int32Array | null, off: number): void {
    this.msg_len = msgLen; this.src = src; this.ret_flags = 0; this.ctl_flags = 0
    this.pktU8 = u8; this.pktI32 = i32; this.pktOff = off; this.copied = null
  }

  disarm (): void { this.pktU8 = null; this.pktI32 = null; this.copied = null }
}

/** Header handler of LAPI_Amsend: returns where the data lands (an Addr of the own segment, a Uint8Array, or null). */
export type hdr_hndlr_t = (hndl: number, uhdr: Uint8Array, uhdr_len: number, msg_len: lapi_return_info_t,
  comp_h: Ref<compl_hndlr_t | null>, user_info: Ref<unknown>) => Addr | Uint8Array | null
/**
 * In-place receiver of a layered library's one-packet messages (`Lapi.setLibraryShortHandler`):
 * `words` views the receiving inbox, the user header starts at word `at` (8-aligned) and is
 * followed by the data (8-aligned too); `uhdrLen` and `dataLen` are in bytes (together at most a
 * packet). It runs as a header handler does (no sending, no waiting) and must copy out what it
 * keeps: the packet's slot is reused once it returns. The message is complete when it returns.
 */
export type short_hndlr_t = (words: Int32Array, at: number, uhdrLen: number, dataLen: number, src: number) => void
/** Header handler of LAPI_Amsendv: gets the origin's piece lengths, returns the target vector. */
export type vhdr_hndlr_t = (hndl: number, uhdr: Uint8Array, uhdr_len: number, len_vec: number[],
  comp_h: Ref<compl_hndlr_t | null>, user_info: Ref<unknown>) => lapi_vec_t | null

// ── packet types and fields (docs/wire-format.md) ──
export const T_AM_HEAD = 1
export const T_AM_DATA = 2
export const T_AM_CTS = 3
export const T_AM_FIN = 4
/** HEAD flag: rendezvous (no data in this packet; wait for CTS). */
export const F_RNDV = 1
/** HEAD flag: Amsendv (a vector description follows the user header). */
export const F_AMV = 2
/** HEAD flag (with F_RNDV): the data waits in the origin's segment; the target copies it itself. */
export const F_PULL = 4
/** Packet type: a pulled rendezvous is done (origin: free the staging copy, send-completion handler). */
export const T_AM_PULLED = 5
const S_SRC = 4
const S_LENS = 8
const S_MSG_ID = 12
const S_HANDLER = 16
const S_TGT_CNTR = 20
const S_CMPL_CNTR = 24
/** A SHORT packet's first word read as a little-endian Int32: version, type, no flags. */
const SHORT_WORD0 = PACKET_VERSION | (T_AM_SHORT << 8)
/** A BARE packet's first word. */
const BARE_WORD0 = PACKET_VERSION | (T_AM_BARE << 8)
/** The SHORT fast paths read and write packets through Int32Arrays, which are little-endian only here. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1
/**
 * Most user-header + data bytes of a SHORT packet that stays, STAMP included, within its slot's
 * first 64-byte line (one line for the two tasks; what in-place receivers and prepareShort take).
 */
export const LINE_ROOM = 64 - SLOT_STAMP_BYTES - SHORT_HEADER_BYTES
/** Most user-header + data bytes of any SHORT packet: a packet's worth, within the 16-bit length field. */
export function shortRoomFor (maxPkt: number): number { return maxPkt < 0xfff8 ? maxPkt : 0xfff8 }
// HEAD: handler index, uhdr length, target counter, completion counter (origin), vector type, vector count, description bytes
const H_HANDLER = P_EXTRA
const H_UHDR_LEN = P_EXTRA + 4
const H_TGT_CNTR = P_EXTRA + 8
const H_CMPL_CNTR = P_EXTRA + 12
const H_VEC_TYPE = P_EXTRA + 16
const H_VEC_NUM = P_EXTRA + 20
const H_DESC_LEN = P_EXTRA + 24
// HEAD with F_PULL: where the data is in the origin's segment, the origin counter to bump there
const H_PULL_SRC = P_EXTRA + 16
const H_PULL_ORG = P_EXTRA + 20
// DATA: packet index and packet count of the message
const D_INDEX = P_EXTRA
const D_COUNT = P_EXTRA + 4
// CTS: landing Addr and mode
const C_LANDING = P_EXTRA
const C_MODE = P_EXTRA + 4
const CTS_DIRECT = 0
const CTS_STREAM = 1
const CTS_DISCARD = 2

/** What a header handler's answer is (landingKind); LAPI codes are above these. */
const LAND_NONE = 0
const LAND_SEG = 1
const LAND_BUF = 2

/** Nesting depth of dispatcher rounds that may still run queued completion handlers. */
const MAX_NESTED_COMPLETIONS = 8
/** Rounds a held packet may wait in the test transport before it must go. */
const MAX_HOLD_ROUNDS = 8

/** One message being received. Pooled. */
class RecvMsg {
  src = 0
  id = 0
  msgLen = 0
  got = 0
  headSeen = false
  rndv = false
  /** Landing: an Addr in the own segment (≥ 0), or -1 with `buf` (a Uint8Array), or -2 to discard. */
  landing = -2
  buf: Uint8Array | null = null
  vec: lapi_vec_t | null = null
  vecOffsets: number[] | null = null
  vecCap = 0
  compl: compl_hndlr_t | null = null
  uinfo: unknown = null
  tgtCntr = 0
  cmplCntr = 0
  inline = false
  /** Rendezvous by pull: the data's Addr in the source's segment (-1: not a pull) and its origin counter. */
  pullSrc = -1
  pullOrg = 0
  /** Data that arrived before the HEAD: stream bytes at their offsets, and the [pos, len] pairs held. */
  stash: Uint8Array | null = null
  stashed: number[] | null = null
  /** Seen DATA packets (bitmap by packet index), for duplicate suppression. */
  seen: Uint8Array | null = null
  packets = 0

  reset (): void {
    this.got = 0; this.headSeen = false; this.rndv = false; this.landing = -2; this.buf = null; this.vec = null
    this.vecOffsets = null; this.vecCap = 0; this.compl = null; this.uinfo = null; this.tgtCntr = 0; this.cmplCntr = 0
    this.inline = false; this.pullSrc = -1; this.pullOrg = 0; this.stash = null; this.stashed = null; this.seen = null; this.packets = 0
  }
}

/** A rendezvous send waiting for its CTS. */
/** A rendezvous send waiting for its target (pooled). */
class PendingSend {
  tgt = 0
  id = 0
  data: LocalBuf = null
  len = 0
  orgCntr: Addr = 0
  shdlr: scompl_hndlr_t | null = null
  sinfo: unknown = null
  /** Staging copy in the own segment (a Uint8Array's data, for the target to pull), or 0. */
  staged: Addr = 0
}

/** Per-source bookkeeping of finished message ids (duplicates of them are dropped). */
class SourceState {
  done = new DoneIds()
  inProgress = new IdTable<RecvMsg>()
}

/** A packet buffer of the test transport, and one held back. */
interface ChaosBuf { bytes: Uint8Array; dv: DataView }
interface HeldPacket { tgt: number; buf: ChaosBuf; rounds: number }

export class ActiveMessages {
  private readonly c: Context
  private readonly maxPkt: number
  private readonly maxUhdr: number
  /** Size of the handler table (valid indices are 1 … handlerSlots - 1). */
  private readonly handlerSlots: number
  private readonly sources: SourceState[] = []
  private readonly pool: RecvMsg[] = []
  private readonly nextId: Uint32Array
  /** Rendezvous sends waiting for their target, by target task, then message id. */
  private readonly pending: Array<IdTable<PendingSend>> = []
  private readonly pendingPool: PendingSend[] = []
  /** CTS packets received, to act on at the next top-level round: [src, id, landing, mode] × n. */
  private readonly ctsQueue: number[] = []
  // completion queue: a growable ring of parallel arrays (no allocation in steady state)
  private cq: Array<compl_hndlr_t | null> = new Array<compl_hndlr_t | null>(64).fill(null)
  private cqInfo: unknown[] = new Array<unknown>(64).fill(null)
  private cqNum: Int32Array = new Int32Array(64 * 3)
  private cqHead = 0
  private cqTail = 0
  // scratch for handler arguments (no allocation per message)
  private readonly uhdrScratch: Uint8Array
  /** The same memory as uhdrScratch, by words (SHORT user headers are copied word by word). */
  private readonly uhdrScratch32: Int32Array
  /** Int32 views of the ArrayBuffers that Uint8Array user headers and data came from (one each; null: copied by bytes). */
  private readonly srcWords = new WeakMap<ArrayBufferLike, Int32Array | null>()
  /** The Uint8Array source `shortCopy` saw last, its byte offset and its buffer's words (null: by bytes). */
  private lastSrcU8: Uint8Array | null = null
  private lastSrcOff = 0
  private lastSrcWords: Int32Array | null = null
  private readonly uhdrViews: Array<Uint8Array | undefined> = []
  private readonly retInfo: ReturnInfo
  private readonly compRef: Ref<compl_hndlr_t | null> = { value: null }
  private readonly infoRef: Ref<unknown> = { value: null }
  /**
   * 1 while a header handler runs (communication calls are refused), else 0. The hot flags of the
   * dispatcher are small integers, not booleans: V8 types a boolean field only as an oddball, so
   * every test of one compiles to a full truthiness check (about ten instructions); a Smi's is one.
   */
  inHeaderHandler = 0
  /** Depth of nested dispatcher rounds (a completion handler that waits runs one). */
  depth = 0
  /** >0 while a send waits for ring space: the dispatcher only takes packets in. */
  sendBlocked = 0
  /** 1 while poll() walks the rings. */
  private polling = 0
  // statistics
  dropped = 0
  duplicates = 0
  recvCompleted = 0
  sendCompleted = 0
  /** Messages an in-place receiver took (Lapi.setLibraryShortHandler). */
  inPlaceCompleted = 0
  // test transport
  /** 1 over the test transport (reordering, duplicating), else 0. */
  private readonly chaos: number
  // Constants of the per-message paths, read as fields: V8 does not fold this module's constants
  // into the code of these methods (callgrind: each use was a context-slot load with a hole and a
  // type check, against one load from `this`, whose map the code has checked already).
  /** 1 where the SHORT send paths may run (a little-endian host, not the test transport), else 0. */
  private readonly shortSend: number
  /** 1 on a little-endian host: SHORT packets are read by words in host order. */
  private readonly shortRead: number
  private readonly shortWord0 = SHORT_WORD0
  private readonly bareWord0 = BARE_WORD0
  /**
   * Most user-header + data bytes a SHORT packet carries (shortRoomFor), and of them the most data
   * (the rendezvous threshold: more goes by rendezvous).
   */
  private readonly shortRoom: number
  private readonly shortData: number
  private readonly lineRoom = LINE_ROOM
  private readonly wordCopy = WORD_COPY
  private readonly shortHeaderBytes = SHORT_HEADER_BYTES
  private readonly bareHeaderBytes = BARE_HEADER_BYTES
  private readonly success = S.SUCCESS
  private readonly held: HeldPacket[] = []
  private readonly spare: ChaosBuf[] = []
  private rng: number
  private readonly dupP: number
  private readonly holdP: number
  private readonly slotBytes: number
  private wu8: Uint8Array
  private wdv: DataView
  private wtgt = 0
  private chaosBuf: ChaosBuf | null = null

  constructor (c: Context) {
    this.c = c
    this.maxPkt = c.config.maxPktSz
    this.maxUhdr = c.config.maxUhdrSz
    this.shortRoom = shortRoomFor(this.maxPkt)
    this.shortData = c.config.rndvThreshold
    this.handlerSlots = c.ranges.size
    for (let t = 0; t < c.numTasks; t++) this.sources.push(new SourceState())
    this.nextId = new Uint32Array(c.numTasks)
    this.uhdrScratch = new Uint8Array(c.config.maxUhdrSz)
    this.uhdrScratch32 = new Int32Array(this.uhdrScratch.buffer)
    this.retInfo = new ReturnInfo(c.config.maxPktSz, c.polled[0]!.u8)
    this.slotBytes = c.spec.ring.slotBytes
    const ch = c.config.chaos
    // (settings that neither hold back nor duplicate leave the plain rings: a test may set only firstId or firstPacket)
    this.chaos = ch !== null && (ch.dup > 0 || ch.hold > 0) ? 1 : 0
    this.shortSend = this.chaos === 0 && LITTLE_ENDIAN ? 1 : 0
    this.shortRead = LITTLE_ENDIAN ? 1 : 0
    // the test transport must not take packets it holds back with it when the task ends (a real
    // network would have them in flight): send them on the way out
    if (this.chaos) process.once('exit', () => { if (this.holding) this.flushChaos(true) })
    this.rng = ((ch?.seed ?? 1) * 2654435761 + c.taskId * 40503 + 1) >>> 0 || 1
    this.dupP = ch?.dup ?? 0
    this.holdP = ch?.hold ?? 0
    // (a test of the ids' wrap starts every pair of tasks just before it)
    const first = ch?.firstId ?? 0
    if (first !== 0) {
      this.nextId.fill(first)
      for (const s of this.sources) s.done.below = first
    }
    // the writer views point at the current packet's memory (beginPacket sets them)
    this.wu8 = c.outbox[c.taskId]!.u8
    this.wdv = c.outbox[c.taskId]!.dv
  }

  // ─────────────────────────────── sending ───────────────────────────────

  /**
   * LAPI_Amsend / the AM member of LAPI_Xfer. `hdr` is a handler-table index valid at the target
   * (or a function registered here, SPMD style). The common one-packet message (a handler index,
   * uhdr + data within a packet, no rendezvous, no send-completion handler, a free slot) is
   * checked and written by `sendShort`; everything else, and every call it has a doubt about, by
   * `amsendAny`.
   */
  amsend (tgt: number, hdr: number | HandlerFn | null, uhdr: LocalBuf, uhdrLen: number, udata: LocalBuf, udataLen: number,
    tgtCntr: Addr, orgCntr: Addr, cmplCntr: Addr, shdlr: scompl_hndlr_t | null, sinfo: unknown): number {
    if (shdlr === null && typeof hdr === 'number' && this.sendShort(tgt, hdr, uhdr, uhdrLen, udata, udataLen, tgtCntr, orgCntr, cmplCntr) !== 0) {
      return this.success
    }
    return this.amsendAny(tgt, hdr, uhdr, uhdrLen, udata, udataLen, tgtCntr, orgCntr, cmplCntr, shdlr, sinfo)
  }

  /**
   * The SHORT fast path: every check of `checkSend` and the length checks, in their cheapest form,
   * then the packet written (the header fields by words, then uhdr and data: see `shortCopy`)
   * and published.
   * Returns 1 when it sent the message, 0 with nothing sent when anything is unusual (bad
   * arguments included: `amsendAny` finds them and returns their codes), or when the target's
   * ring is full (it waits there). (A call declined after the target's check may have written the
   * first word of the free slot it reserved: unpublished, so nothing anyone reads.) (A number, not
   * a boolean: the caller tests the result of a call it does not inline, and a boolean's test would
   * be a full truthiness check.)
   */
  private sendShort (tgt: number, hdr: number, uhdr: LocalBuf, uhdrLen: number, udata: LocalBuf, udataLen: number,
    tgtCntr: Addr, orgCntr: Addr, cmplCntr: Addr): number {
    const c = this.c
    if (this.shortSend === 0 || this.inHeaderHandler !== 0) return 0
    // Every number is taken as an int32 once and compared with what was passed (strictly: a
    // fraction, a string or anything else fails), so that what follows is int32 arithmetic and
    // the stores into the slot need no conversion. (Counters as counterOk has them, written out:
    // a call of it here is not inlined, and its boolean result costs a full truthiness test.)
    const t = tgt | 0
    const h = hdr | 0
    const ul = uhdrLen | 0
    const dl = udataLen | 0
    const tc = tgtCntr | 0
    const oc = orgCntr | 0
    const cc = cmplCntr | 0
    if (t !== tgt || (t >>> 0) >= c.numTasks) return 0
    const w = c.outbox[t]!
    const off = w.reserve()
    if (off < 0) return 0
    const i32 = w.i32
    const p = off >> 2
    // The slot's first store comes before the other checks: its line is in the target's cache (a
    // waiting target reads the next slot's STAMP there), and getting it back is a round trip
    // between the cores that the publishing store would wait for; started here, it overlaps the
    // checks. (Nothing is published until STAMP is: a message refused below leaves the slot free.)
    i32[p] = this.shortWord0
    if (h !== hdr || ul !== uhdrLen || dl !== udataLen || tc !== tgtCntr || oc !== orgCntr || cc !== cmplCntr) return 0
    const size = c.segmentSize
    if ((ul | dl | tc | oc | cc) < 0 || h <= 0 || h >= this.handlerSlots ||
      ((ul & 7) | ((tc | oc | cc) & 3)) !== 0 || ul + dl > this.shortRoom || dl > this.shortData || ul > this.maxUhdr ||
      tc + 4 > size || oc + 4 > size || cc + 4 > size || c.purged[t] !== 0) return 0
    if ((ul > 0 && c.checkLocal(uhdr, ul) !== 0) || c.checkLocal(udata, dl) !== 0) return 0
    i32[p + 1] = c.taskId
    i32[p + 2] = (ul + dl) | (ul << 16)
    i32[p + 4] = h
    i32[p + 5] = tc
    i32[p + 6] = cc
    const at = off + this.shortHeaderBytes
    if (ul > 0) this.shortCopy(w.u8, i32, at, uhdr, ul)
    if (dl > 0) this.shortCopy(w.u8, i32, at + ul, udata, dl)
    // the id last: a message counts as sent (for the fence and the target's duplicate window)
    // only once nothing can fail any more
    i32[p + 3] = this.nextMessage(t)
    w.publish()
    // this thread cannot be asleep in Atomics.wait; its promise waits count themselves
    if (t !== c.taskId || c.hasAsyncSleepers) ringDoorbell(c.ctl, t)
    this.sendCompleted++
    if (oc !== 0) c.bumpLocal(oc)
    if (this.tailsHeld !== 0) this.publishTails()
    return 1
  }

  /** The ring of a SHORT packet that prepareShort reserved and commitShort has not sent yet, or null. */
  private prepRing: OutRing | null = null
  private prepTgt = 0
  /** Word index of the prepared packet, and the ring's packet count when it was reserved. */
  private prepWord = 0
  private prepSeq = 0

  /**
   * Negotiated-payload send, first half (`Lapi.prepareShort`): reserves a packet to `tgt` for
   * handler index `hdr` with `uhdrLen` bytes of user header, no data and no counters (a BARE
   * packet: a SHORT one without its counter words), writes its LAPI header and returns the index
   * in `preparedWords` of the first user-header word, which the caller writes. Returns -1 when the
   * fast path cannot take the message now (see `sendShort`; a full ring included): the caller then
   * sends it with `amsend`. Its checks and header words
   * mirror `sendShort`'s on purpose: with both on one shared helper, TurboFan's inlining budget no
   * longer covered LAPI_Amsend's fast path (callgrind: about 240 more instructions per Amsend).
   */
  prepareShort (tgt: number, hdr: number, uhdrLen: number): number {
    const c = this.c
    this.prepRing = null   // (an earlier preparation not committed is abandoned, also by a refusal)
    if (this.shortSend === 0 || this.inHeaderHandler !== 0) return -1
    // (int32s taken once and compared strictly, as in sendShort)
    const t = tgt | 0
    if (t !== tgt || (t >>> 0) >= c.numTasks) return -1
    const w = c.outbox[t]!
    const off = w.reserve()
    if (off < 0) return -1
    const i32 = w.i32
    const p = off >> 2
    // (the slot's first store before the other checks, as in sendShort)
    i32[p] = this.bareWord0
    const h = hdr | 0
    const ul = uhdrLen | 0
    if (h !== hdr || ul !== uhdrLen) return -1
    if (ul < 0 || h <= 0 || h >= this.handlerSlots || (ul & 7) !== 0 || ul > this.shortRoom ||
      ul > this.maxUhdr || c.purged[t] !== 0) return -1
    i32[p + 1] = c.taskId
    i32[p + 2] = ul | (ul << 16)
    i32[p + 4] = h
    this.prepRing = w
    this.prepTgt = t
    this.prepWord = p
    this.prepSeq = w.published
    return p + (this.bareHeaderBytes >> 2)
  }

  /**
   * Negotiated-payload send with data (`Lapi.prepareShortData`): prepareShort for a message of
   * `uhdrLen` bytes of user header followed by `dataLen` bytes of data in the same BARE packet
   * (together at most a packet; the data at most the rendezvous threshold). Returns the index in
   * `preparedWords` of the first user-header word (the data starts `uhdrLen` bytes after it), or
   * -1 as prepareShort. (Its own function, not a parameter of prepareShort: that one stays as small
   * as it was, for the callers it is compiled into. With prepareShort written as a call of this
   * one, AM-2's Short round trip measured 13 % longer: medians 0.525 against 0.462 µs, 12 runs each.)
   */
  prepareShortData (tgt: number, hdr: number, uhdrLen: number, dataLen: number): number {
    const c = this.c
    this.prepRing = null
    if (this.shortSend === 0 || this.inHeaderHandler !== 0) return -1
    const t = tgt | 0
    if (t !== tgt || (t >>> 0) >= c.numTasks) return -1
    const w = c.outbox[t]!
    const off = w.reserve()
    if (off < 0) return -1
    const i32 = w.i32
    const p = off >> 2
    i32[p] = this.bareWord0
    const h = hdr | 0
    const ul = uhdrLen | 0
    const dl = dataLen | 0
    if (h !== hdr || ul !== uhdrLen || dl !== dataLen) return -1
    if ((ul | dl) < 0 || h <= 0 || h >= this.handlerSlots || (ul & 7) !== 0 || ul + dl > this.shortRoom ||
      dl > this.shortData || ul > this.maxUhdr || c.purged[t] !== 0) return -1
    i32[p + 1] = c.taskId
    i32[p + 2] = (ul + dl) | (ul << 16)
    i32[p + 4] = h
    this.prepRing = w
    this.prepTgt = t
    this.prepWord = p
    this.prepSeq = w.published
    return p + (this.bareHeaderBytes >> 2)
  }

  /** The words of the packet prepareShort reserved (the target's inbox; valid until commitShort). */
  get preparedWords (): Int32Array {
    const w = this.prepRing
    if (w === null) throw new Error('preparedWords: no packet is prepared (prepareShort returned -1, or it was committed)')
    return w.i32
  }

  /** The bytes of the inbox preparedWords views (valid until commitShort). */
  get preparedBytes (): Uint8Array {
    const w = this.prepRing
    if (w === null) throw new Error('preparedBytes: no packet is prepared (prepareShort returned -1, or it was committed)')
    return w.u8
  }

  /**
   * Negotiated-payload send, second half: gives the prepared packet its message id and sends it.
   * Returns false (nothing sent) when there is none, or when a packet went out on the same ring
   * since it was prepared (that send may have reused the slot): the caller sends it with `amsend`.
   */
  commitShort (): boolean {
    const w = this.prepRing
    if (w === null) return false
    this.prepRing = null
    if (w.published !== this.prepSeq) return false
    const c = this.c
    const tgt = this.prepTgt
    w.i32[this.prepWord + 3] = this.nextMessage(tgt)
    w.publish()
    // this thread cannot be asleep in Atomics.wait; its promise waits count themselves
    if (tgt !== c.taskId || c.hasAsyncSleepers) ringDoorbell(c.ctl, tgt)
    this.sendCompleted++
    if (this.tailsHeld) this.publishTails()
    return true
  }

  /**
   * Copies n bytes (at most a packet) of a checked local buffer into a ring slot: by words when
   * the source is aligned and n at most WORD_COPY (a run of byte stores into a line another core
   * holds fills the store buffer and stalls the sender), by bytes when it is not and n is at most
   * LINE_ROOM, else with one Uint8Array.set (copyIn: ~30 ns, then memcpy speed).
   */
  private shortCopy (d8: Uint8Array, d32: Int32Array, d: number, src: LocalBuf, n: number): void {
    if (n > this.wordCopy) { this.copyIn(d8, d, src, 0, n); return }
    if (typeof src === 'number') {
      // (the word loop written here, not a call of copyWords: this is inlined into sendShort,
      // whose inlining budget does not cover copyWords, and a call costs ~90 instructions)
      if (((src | n) & 3) === 0) {
        const s32 = this.c.mySeg32
        const dw = d >> 2
        const sw = src >> 2
        for (let i = 0; i < n >> 2; i++) d32[dw + i] = s32[sw + i]!
      } else if (n <= this.lineRoom) {
        const s8 = this.c.seg.u8[this.c.taskId]!
        for (let i = 0; i < n; i++) d8[d + i] = s8[src + i]!
      } else this.copyIn(d8, d, src, 0, n)
      return
    }
    const s8 = src!
    // the last source array's words and offset are remembered: `.buffer` is a call into the
    // runtime in Node 20 (a typed array always views the same buffer at the same offset)
    let w: Int32Array | null
    let so: number
    if (s8 === this.lastSrcU8) {
      w = this.lastSrcWords
      so = this.lastSrcOff
    } else {
      so = s8.byteOffset
      w = (so & 3) === 0 ? this.wordsOf(s8.buffer) : null
      this.lastSrcU8 = s8
      this.lastSrcOff = so
      this.lastSrcWords = w
    }
    if (w !== null && (n & 3) === 0) {
      const dw = d >> 2
      const sw = so >> 2
      for (let i = 0; i < n >> 2; i++) d32[dw + i] = w[sw + i]!
      return
    }
    if (n <= this.lineRoom) for (let i = 0; i < n; i++) d8[d + i] = s8[i]!
    else this.copyIn(d8, d, s8, 0, n)
  }

  /**
   * An Int32Array over the whole of `buf` (made once per buffer), or null for a resizable or
   * growable buffer: its length may change (and need not be a multiple of 4), so its bytes are
   * copied one by one.
   */
  private wordsOf (buf: ArrayBufferLike): Int32Array | null {
    let w = this.srcWords.get(buf)
    if (w === undefined) {
      const b = buf as ArrayBufferLike & { resizable?: boolean, growable?: boolean }
      w = b.resizable === true || b.growable === true ? null : new Int32Array(buf, 0, buf.byteLength >> 2)
      this.srcWords.set(buf, w)
    }
    return w
  }

  /** LAPI_Amsend in general (see `amsend`). */
  private amsendAny (tgt: number, hdr: number | HandlerFn | null, uhdr: LocalBuf, uhdrLen: number, udata: LocalBuf, udataLen: number,
    tgtCntr: Addr, orgCntr: Addr, cmplCntr: Addr, shdlr: scompl_hndlr_t | null, sinfo: unknown): number {
    const c = this.c
    let rc = this.checkSend(tgt, hdr, uhdr, uhdrLen, tgtCntr, orgCntr, cmplCntr)
    if (rc !== 0) return rc
    if (typeof udataLen !== 'number' || !Number.isInteger(udataLen) || udataLen < 0 || udataLen > 0x7fffffff) return S.ERR_DATA_LEN
    rc = c.checkLocal(udata, udataLen)
    if (rc !== 0) return rc
    const hidx = this.sendHandler
    const id = this.nextMessage(tgt)
    if (uhdrLen + udataLen <= this.shortRoom && udataLen <= this.shortData && LITTLE_ENDIAN) {
      // the whole message in one SHORT packet (sendShort declined it: a send-completion handler, a
      // function for a handler, a full ring; or the test transport)
      const off = this.beginBody(tgt)
      const dv = this.wdv
      dv.setUint32(off, SHORT_WORD0, true)
      dv.setUint32(off + S_SRC, c.taskId, true)
      dv.setUint32(off + S_LENS, (uhdrLen + udataLen) | (uhdrLen << 16), true)
      dv.setUint32(off + S_MSG_ID, id, true)
      dv.setUint32(off + S_HANDLER, hidx, true)
      dv.setUint32(off + S_TGT_CNTR, tgtCntr ?? 0, true)
      dv.setUint32(off + S_CMPL_CNTR, cmplCntr ?? 0, true)
      if (uhdrLen > 0) this.copyIn(this.wu8, off + SHORT_HEADER_BYTES, uhdr, 0, uhdrLen)
      if (udataLen > 0) this.copyIn(this.wu8, off + SHORT_HEADER_BYTES + uhdrLen, udata, 0, udataLen)
      this.endPacket()
      this.sendDone(tgt, orgCntr ?? 0, shdlr, sinfo)
      return S.SUCCESS
    }
    const rndv = udataLen > c.config.rndvThreshold
    // A rendezvous is pulled by the target straight from this task's segment: from the caller's
    // Addr, or from a staging copy of a Uint8Array (then the caller's buffer is free at once). When
    // no staging room is left, the target asks for the data with CTS instead.
    let pullSrc = -1
    let staged = 0
    // (a task of another process cannot pull from here: it asks with CTS, the data goes on the wire once)
    if (rndv && c.local[tgt] === 1) {
      if (typeof udata === 'number') pullSrc = udata
      else {
        staged = c.mem.alloc(udataLen)
        if (staged !== 0) { copyBuf(c.seg.u8[c.taskId]!, staged, udata!, 0, udataLen, false); pullSrc = staged }
      }
    }
    const pull = pullSrc >= 0
    const room = this.maxPkt - uhdrLen
    const first = rndv ? 0 : (udataLen < room ? udataLen : room)
    const off = this.beginPacket(tgt)
    this.writeHead(off, rndv ? (pull ? F_RNDV | F_PULL : F_RNDV) : 0, uhdrLen + first, id, udataLen, hidx, uhdrLen,
      tgtCntr ?? 0, cmplCntr ?? 0, pull ? pullSrc : 0, pull && staged === 0 ? orgCntr ?? 0 : 0, 0)
    if (uhdrLen > 0) this.copyIn(this.wu8, off + PACKET_HEADER_BYTES, uhdr, 0, uhdrLen)
    if (first > 0) this.copyIn(this.wu8, off + PACKET_HEADER_BYTES + uhdrLen, udata, 0, first)
    this.endPacket()
    if (rndv) {
      if (staged !== 0) {
        // the caller's buffer is free now; the staging copy goes when the target has pulled it
        this.sendDone(tgt, orgCntr ?? 0, shdlr, sinfo)
        this.addPending(tgt, id, null, udataLen, 0, null, null, staged)
      } else {
        // pulled from the caller's Addr (the target bumps the origin counter), or sent on CTS
        this.addPending(tgt, id, udata, udataLen, orgCntr ?? 0, shdlr, sinfo, 0)
      }
      return S.SUCCESS
    }
    this.sendData(tgt, id, first, udataLen, 1, udata, null, null)
    this.sendDone(tgt, orgCntr ?? 0, shdlr, sinfo)
    return S.SUCCESS
  }

  /** LAPI_Amsendv / the AMV member of LAPI_Xfer: gathers `orgVec` into packets (always eager). */
  amsendv (tgt: number, hdr: number | HandlerFn | null, uhdr: LocalBuf, uhdrLen: number, orgVec: lapi_vec_t | null,
    tgtCntr: Addr, orgCntr: Addr, cmplCntr: Addr, shdlr: scompl_hndlr_t | null, sinfo: unknown): number {
    let rc = this.checkSend(tgt, hdr, uhdr, uhdrLen, tgtCntr, orgCntr, cmplCntr)
    if (rc !== 0) return rc
    rc = this.c.checkOneVec(orgVec, true)
    if (rc !== 0) return rc
    const v = orgVec!
    const strided = v.vec_type === VecType.LAPI_GEN_STRIDED_XFER
    const descLen = strided ? 8 : 4 * v.num_vecs
    if (uhdrLen + descLen > this.maxPkt) return S.ERR_ORG_VEC_LEN
    const total = vecBytes(v)
    if (total > 0x7fffffff) return S.ERR_DATA_LEN
    const hidx = this.sendHandler
    const id = this.nextMessage(tgt)
    const offsets = pieceOffsets(v)
    const room = this.maxPkt - uhdrLen - descLen
    const first = total < room ? total : room
    const off = this.beginPacket(tgt)
    this.writeHead(off, F_AMV, uhdrLen + descLen + first, id, total, hidx, uhdrLen, tgtCntr ?? 0, cmplCntr ?? 0, v.vec_type, v.num_vecs, descLen)
    const dv = this.wdv
    let p = off + PACKET_HEADER_BYTES
    if (uhdrLen > 0) this.copyIn(this.wu8, p, uhdr, 0, uhdrLen)
    p += uhdrLen
    if (strided) {
      dv.setUint32(p, v.num_vecs, true); dv.setUint32(p + 4, v.info[1] as number, true)
    } else {
      for (let i = 0; i < v.num_vecs; i++) dv.setUint32(p + 4 * i, v.len![i]!, true)
    }
    p += descLen
    if (first > 0) this.gather(v, offsets, 0, this.wu8, p, first)
    this.endPacket()
    this.sendData(tgt, id, first, total, 1, null, v, offsets)
    this.sendDone(tgt, orgCntr ?? 0, shdlr, sinfo)
    return S.SUCCESS
  }

  /** The handler index the last successful checkSend resolved. */
  private sendHandler = 0

  /** The checks every active-message send makes; 0 or the LAPI code. Sets `sendHandler`. */
  private checkSend (tgt: number, hdr: number | HandlerFn | null, uhdr: LocalBuf, uhdrLen: number,
    tgtCntr: Addr, orgCntr: Addr, cmplCntr: Addr): number {
    const c = this.c
    if (this.inHeaderHandler) return S.ERR_POLLING_NET
    let rc = c.checkTarget(tgt)
    if (rc !== 0) return rc
    const hidx = this.handlerIndex(hdr)
    if (hidx <= 0) return S.ERR_HDR_HNDLR_NULL
    rc = this.checkUhdr(uhdr, uhdrLen)
    if (rc !== 0) return rc
    if (!c.isCounterOpt(tgtCntr) || !c.isCounterOpt(orgCntr) || !c.isCounterOpt(cmplCntr)) return S.ERR_CNTR_NULL
    this.sendHandler = hidx
    return 0
  }

  /** A new message id to `tgt`, counted as outstanding until its data has landed there. */
  private nextMessage (tgt: number): number {
    const id = this.nextId[tgt]!
    this.nextId[tgt] = id + 1
    this.c.outbox[tgt]!.markSent()
    return id
  }

  /** Writes a HEAD packet's header at `off` of the current packet (fields 48/52: vector or pull data). */
  private writeHead (off: number, flags: number, len: number, id: number, msgLen: number, hidx: number, uhdrLen: number,
    tgtCntr: number, cmplCntr: number, w48: number, w52: number, descLen: number): void {
    const dv = this.wdv
    this.writeHeader(dv, off, T_AM_HEAD, flags, len, id, 0, msgLen)
    dv.setUint32(off + H_HANDLER, hidx, true)
    dv.setUint32(off + H_UHDR_LEN, uhdrLen, true)
    dv.setUint32(off + H_TGT_CNTR, tgtCntr, true)
    dv.setUint32(off + H_CMPL_CNTR, cmplCntr, true)
    dv.setUint32(off + H_VEC_TYPE, w48, true)
    dv.setUint32(off + H_VEC_NUM, w52, true)
    dv.setUint32(off + H_DESC_LEN, descLen, true)
  }

  /**
   * Sends bytes [pos, total) of a message as DATA packets, numbered from `index`, read from `data`
   * (a local buffer) or gathered from the vector `vec`.
   */
  private sendData (tgt: number, id: number, pos: number, total: number, index: number, data: LocalBuf,
    vec: lapi_vec_t | null, offsets: number[] | null): void {
    if (pos >= total) return
    const count = index + Math.ceil((total - pos) / this.maxPkt)
    for (; pos < total; index++) {
      const n = total - pos < this.maxPkt ? total - pos : this.maxPkt
      const off = this.beginPacket(tgt)
      this.writeHeader(this.wdv, off, T_AM_DATA, 0, n, id, pos, total)
      this.wdv.setUint32(off + D_INDEX, index, true)
      this.wdv.setUint32(off + D_COUNT, count, true)
      if (vec !== null) this.gather(vec, offsets!, pos, this.wu8, off + PACKET_HEADER_BYTES, n)
      else this.copyIn(this.wu8, off + PACKET_HEADER_BYTES, data, pos, n)
      this.endPacket()
      pos += n
    }
  }

  private handlerIndex (hdr: number | HandlerFn | null): number {
    if (typeof hdr === 'function') return this.c.indexOfHandler(hdr)
    if (typeof hdr === 'number' && Number.isInteger(hdr) && hdr > 0 && hdr < this.c.ranges.size) return hdr
    return -1
  }

  private checkUhdr (uhdr: LocalBuf, uhdrLen: number): number {
    const c = this.c
    if (typeof uhdrLen !== 'number' || !Number.isInteger(uhdrLen) || uhdrLen < 0 || uhdrLen > c.config.maxUhdrSz) return S.ERR_UHDR_LEN
    if ((uhdrLen & 7) !== 0) return S.ERR_UHDR_LEN
    if (uhdrLen > 0 && (uhdr === null || uhdr === undefined || uhdr === 0)) return S.ERR_UHDR_NULL
    if (uhdrLen === 0) return 0
    const rc = c.checkLocal(uhdr, uhdrLen)
    return rc === S.ERR_ORG_ADDR_NULL ? S.ERR_UHDR_NULL : rc
  }

  /** The origin buffers may be reused: origin counter, send-completion handler. */
  private sendDone (tgt: number, orgCntr: Addr, shdlr: scompl_hndlr_t | null, sinfo: unknown): void {
    this.sendCompleted++
    if (orgCntr !== 0) this.c.bumpLocal(orgCntr)
    if (shdlr !== null) this.c.runSendHandler(shdlr, sinfo, tgt, ErrClass.AM_ERR)
  }

  private copyIn (dst: Uint8Array, d: number, src: LocalBuf, so: number, n: number): void {
    if (typeof src === 'number') copySeg(dst, d, this.c.seg.u8[this.c.taskId]!, src + so, n)
    else copyBuf(dst, d, src!, so, n, false)
  }

  /** Copies stream bytes [pos, pos+n) of an origin vector into dst. */
  private gather (v: lapi_vec_t, offsets: number[], pos: number, dst: Uint8Array, d: number, n: number): void {
    const own = this.c.seg.u8[this.c.taskId]!
    let i = findPiece(offsets, pos)
    while (n > 0) {
      const pieceStart = offsets[i]!
      const pieceLen = offsets[i + 1]! - pieceStart
      const inPiece = pos - pieceStart
      const take = pieceLen - inPiece < n ? pieceLen - inPiece : n
      if (take > 0) {
        if (v.vec_type === VecType.LAPI_GEN_STRIDED_XFER) {
          const base = (v.info[0] as number) + i * (v.info[2] as number)
          copySeg(dst, d, own, base + inPiece, take)
        } else {
          const a = v.info[i]!
          if (typeof a === 'number') copySeg(dst, d, own, a + inPiece, take)
          else copyBuf(dst, d, a, inPiece, take, false)
        }
        d += take; pos += take; n -= take
      }
      i++
    }
  }

  // ─────────────────────────────── packets out ───────────────────────────────

  private writeHeader (dv: DataView, off: number, type: number, flags: number, len: number, id: number, offset: number, msgLen: number): void {
    this.writeCommon(dv, off, type, flags, len, id)
    dv.setUint32(off + P_OFFSET, offset, true)
    dv.setUint32(off + P_OFFSET + 4, 0, true)
    dv.setUint32(off + P_MSG_LEN, msgLen, true)
    dv.setUint32(off + P_MSG_LEN + 4, 0, true)
  }

  /** The first 16 bytes of the common header. */
  private writeCommon (dv: DataView, off: number, type: number, flags: number, len: number, id: number): void {
    dv.setUint8(off + P_VERSION, PACKET_VERSION)
    dv.setUint8(off + P_TYPE, type)
    dv.setUint16(off + P_FLAGS, flags, true)
    dv.setUint32(off + P_SRC, this.c.taskId, true)
    dv.setUint32(off + P_LEN, len, true)
    dv.setUint32(off + P_MSG_ID, id, true)
  }

  /**
   * Reserves a slot for one packet of the common format to `tgt` and returns the packet's offset
   * in `this.wu8`/`this.wdv` (the body's first word is set to 0: not a SHORT packet).
   */
  private beginPacket (tgt: number): number {
    const b = this.beginBody(tgt)
    this.wdv.setUint32(b, 0, true)
    return b + BODY_PACKET
  }

  /**
   * Reserves a slot for one packet to `tgt` and returns its body's offset in `this.wu8`/`this.wdv`
   * (the test transport: 0 in a buffer of the body's size). A full ring is back-pressure: take
   * packets in from the own inbox (so two tasks sending to each other both drain) and wait for the
   * target to free a slot.
   */
  private beginBody (tgt: number): number {
    if (this.chaos) {
      this.wtgt = tgt
      let b = this.spare.pop()
      if (b === undefined) { const bytes = new Uint8Array(this.slotBytes - SLOT_STAMP_BYTES); b = { bytes, dv: new DataView(bytes.buffer) } }
      this.chaosBuf = b
      this.wu8 = b.bytes
      this.wdv = b.dv
      return 0
    }
    const w = this.c.outbox[tgt]!
    let off = w.reserve()
    // waiting for a slot takes packets in, which may send (CTS): set the writer state after it
    if (off < 0) off = this.waitForSlot(tgt)
    this.wtgt = tgt
    this.wu8 = w.u8
    this.wdv = w.dv
    return off
  }

  private endPacket (): void {
    const tgt = this.wtgt
    if (this.chaos) {
      this.held.push({ tgt, buf: this.chaosBuf!, rounds: 0 })
      this.chaosBuf = null
    } else {
      this.c.outbox[tgt]!.publish()
      this.announce(tgt)
    }
    if (this.tailsHeld) this.publishTails()
  }

  /** Tells `tgt` a packet is in its inbox. */
  private announce (tgt: number): void {
    ringDoorbell(this.c.ctl, tgt)
  }

  /** @internal Waits (taking packets in) until the way to `tgt` has a free slot; returns its body offset. */
  waitForSlot (tgt: number): number {
    const w = this.c.outbox[tgt]!
    const c = this.c
    let spinStart = 0
    this.sendBlocked++
    try {
      for (;;) {
        this.poll()
        const off = w.reserve()
        if (off >= 0) return off
        const st = Atomics.load(c.ctl, taskWord(tgt, T_STATE))
        if (st === TaskState.EXITED || st === TaskState.FAILED) {
          throw new Error(`task ${tgt} has left the job; task ${c.taskId} cannot send to it (its inbox is full)`)
        }
        spinStart = c.idle(spinStart, WAIT_RING, WaitCall.SEND, null, 0, tgt)
      }
    } finally {
      this.sendBlocked--
    }
  }

  /**
   * Test transport: sends held packets in a random order, some twice; each packet is held back
   * with probability `hold`, at most MAX_HOLD_ROUNDS rounds. `all` sends everything now (before
   * the task sleeps). Never blocks: a full ring keeps the packet for a later round.
   */
  flushChaos (all: boolean): void {
    const held = this.held
    if (held.length === 0) return
    // Fisher-Yates on the held packets, then send those not held back
    for (let i = held.length - 1; i > 0; i--) {
      const j = this.rand() % (i + 1)
      const t = held[i]!; held[i] = held[j]!; held[j] = t
    }
    let keep = 0
    for (let i = 0; i < held.length; i++) {
      const h = held[i]!
      const go = all || h.rounds >= MAX_HOLD_ROUNDS || (this.rand() / 4294967296) >= this.holdP
      if (go && this.emit(h.tgt, h.buf)) {
        if ((this.rand() / 4294967296) < this.dupP) this.emit(h.tgt, h.buf)
        this.spare.push(h.buf)
      } else {
        h.rounds++
        held[keep++] = h
      }
    }
    held.length = keep
  }

  /** True when the test transport still holds packets. */
  get holding (): boolean { return this.held.length > 0 }

  private emit (tgt: number, b: ChaosBuf): boolean {
    const w = this.c.outbox[tgt]!
    const off = w.reserve()
    if (off < 0) return false
    const d = b.dv
    const w0 = d.getUint32(0, true)
    const len = w0 === SHORT_WORD0 || w0 === BARE_WORD0
      ? (w0 === SHORT_WORD0 ? SHORT_HEADER_BYTES : BARE_HEADER_BYTES) + (d.getUint32(S_LENS, true) & 0xffff)
      : BODY_PACKET + PACKET_HEADER_BYTES + d.getUint32(BODY_PACKET + P_LEN, true)
    w.u8.set(len === b.bytes.length ? b.bytes : b.bytes.subarray(0, len), off)
    w.publish()
    this.announce(tgt)
    return true
  }

  private rand (): number {
    let x = this.rng
    x ^= x << 13; x >>>= 0
    x ^= x >>> 17
    x ^= x << 5; x >>>= 0
    this.rng = x
    return x
  }

  // ─────────────────────────────── dispatcher ───────────────────────────────

  /**
   * Takes in every packet waiting in the inbox: header handlers, data landing, queueing of
   * completions; it may itself send (CTS, PULLED) and bump counters. Returns the packets handled.
   */
  poll (): number {
    // A completion handler run inline from here may call LAPI, which polls again: the packet being
    // handled is still in its slot, so a nested round must not touch the rings.
    if (this.polling) return 0
    if (this.chaos) this.flushChaos(false)
    const net = this.c.net
    if (net !== null) {
      if (this.c.netFresh === 0) net.poll()
      this.c.netFresh = 0
    }
    this.polling = 1
    try {
      return this.drain()
    } finally {
      this.polling = 0
      this.draining = -1
    }
  }

  /** The ring drain is taking packets from (its sender's doorbell is rung after it, or when its held TAIL goes out), or -1. */
  private draining = -1

  /**
   * Takes the packets of each ring: those stamped in a row when the ring's turn came (at most a
   * ring's worth; `RingReader.available` says what that reads), so one sender cannot starve the
   * others.
   */
  private drain (): number {
    const c = this.c
    if (this.tailsHeld) this.publishTails()
    let done = 0
    const rings = c.polled
    for (let i = 0; i < rings.length; i++) {
      const r = rings[i]!
      const n = r.available()
      if (n === 0) continue
      this.draining = c.polledTask[i]!
      const same = r.sameThread
      let held = 0
      const u8 = r.u8
      const i32 = r.i32
      try {
        for (let k = 0; k < n; k++) {
          this.landedHere = 0
          const off = r.front()
          const w0 = i32[off >> 2]!
          if ((w0 === this.shortWord0 || w0 === this.bareWord0) && this.shortRead !== 0) this.onShort(u8, i32, off, w0)
          else this.handle(u8, r.dv, off + BODY_PACKET)
          // Each slot goes back as soon as its packet is handled (a handler further on may send
          // and need the room), and a message consumed in its header handler counts as landed in
          // the same store; in polling mode that store waits for the task's next step in LAPI
          // (`tailsHeld`). (Messages with a completion handler count as landed before it runs.)
          // `holdTails` is looked at for each packet: a handler may have ended the context.
          held = same ? 0 : c.holdTails
          r.release(this.landedHere, held)
          // (marked at each release: a handler further on may send or wait, which publishes)
          if (held !== 0) this.tailsHeld = 1
        }
      } finally {
        this.landedHere = 0
        this.draining = -1
      }
      done += n
      // a sender blocked on this ring, or fencing, may go on: now, or when the held TAIL goes out
      if (!held) this.bell(i)
    }
    if (this.tailsHeld && !c.holdTails) this.publishTails()
    return done
  }

  /**
   * Rings whose slots were given back in polling mode without TAIL published (`holdTails`): the
   * store of TAIL (with LANDED) and the sender's doorbell wait until this task's next step in
   * LAPI — its next send (after the packet is out), dispatcher round, one-sided call, counter
   * wait or sleep — so that they are not on the path from the message to its answer. LAPI's
   * acknowledgements are batched likewise (ACK_THRESHOLD); in polling mode nothing of a task
   * moves while it is outside LAPI anyway.
   */
  tailsHeld = 0

  /** Publishes every held TAIL and rings the senders' doorbells (see `tailsHeld`). */
  publishTails (): void {
    this.tailsHeld = 0
    const c = this.c
    const rings = c.polled
    for (let i = 0; i < rings.length; i++) if (rings[i]!.publishTail() !== 0) this.bell(i)
  }

  /** Rings the doorbell of the producer of `polled[i]`: its task, or the agent for the network ring. */
  private bell (i: number): void {
    const c = this.c
    const t = c.polledTask[i]!
    if (t >= 0) ringDoorbell(c.ctl, t)
    else if (c.net !== null) c.net.roomFreed()
  }

  /** 1 when the packet being drained completed its message inline (LANDED moves with the slot's release). */
  private landedHere = 0

  /**
   * A full dispatcher round: packets in, then (unless a send is blocked) the queued CTS actions and
   * completion handlers. Returns the number of things done.
   */
  progress (): number {
    let n = this.poll()
    if (this.sendBlocked > 0 || this.inHeaderHandler) return n
    if (this.ctsQueue.length > 0) n += this.runCts()
    if (this.cqHead !== this.cqTail && this.depth < MAX_NESTED_COMPLETIONS) n += this.runCompletions()
    return n
  }

  /** Work queued or held that needs more dispatcher rounds (a waiting task must not sleep). */
  get busy (): boolean {
    return this.ctsQueue.length > 0 || this.cqHead !== this.cqTail || this.held.length > 0
  }

  private handle (u8: Uint8Array, dv: DataView, off: number): void {
    if (u8[off + P_VERSION] !== PACKET_VERSION) { this.dropped++; return }
    const len = dv.getUint32(off + P_LEN, true)
    const src = dv.getUint32(off + P_SRC, true)
    if (len > this.maxPkt || src >= this.c.numTasks) { this.dropped++; return }
    switch (u8[off + P_TYPE]) {
      case T_AM_HEAD: this.onHead(u8, dv, off, src, len); break
      case T_AM_DATA: this.onData(u8, dv, off, src, len); break
      case T_AM_CTS: this.onCts(dv, off, src); break
      case T_AM_FIN: this.onFin(dv, off, src); break
      case T_AM_PULLED: this.onPulled(dv, off, src); break
      case T_NET_DONE: if (src !== this.c.taskId || this.draining !== -1 || this.c.remote.onDone(dv, off) !== 0) this.dropped++; break
      case T_AM_SHORT: case T_AM_BARE: this.dropped++; break // flags set, or a big-endian host: not a packet this build writes
      default: this.dropped++
    }
  }

  private getMsg (s: SourceState, src: number, id: number, msgLen: number): RecvMsg {
    let m = s.inProgress.get(id)
    if (m === undefined) {
      m = this.pool.pop() ?? new RecvMsg()
      m.src = src; m.id = id; m.msgLen = msgLen
      s.inProgress.set(id, m)
    }
    return m
  }

  private onHead (u8: Uint8Array, dv: DataView, off: number, src: number, len: number): void {
    const c = this.c
    const s = this.sources[src]!
    const id = dv.getUint32(off + P_MSG_ID, true)
    if (s.done.has(id)) { this.duplicates++; return }
    const msgLen = dv.getUint32(off + P_MSG_LEN, true)
    const flags = dv.getUint16(off + P_FLAGS, true)
    const uhdrLen = dv.getUint32(off + H_UHDR_LEN, true)
    const descLen = dv.getUint32(off + H_DESC_LEN, true)
    if (uhdrLen > c.config.maxUhdrSz || uhdrLen + descLen > len) { this.dropped++; return }
    const existing = s.inProgress.size === 0 ? undefined : s.inProgress.get(id)
    if (existing !== undefined && existing.headSeen) { this.duplicates++; return }
    const hidx = dv.getUint32(off + H_HANDLER, true)
    const tgtCntr = dv.getUint32(off + H_TGT_CNTR, true)
    const cmplCntr = dv.getUint32(off + H_CMPL_CNTR, true)
    const dataOff = off + PACKET_HEADER_BYTES + uhdrLen + descLen
    const first = len - uhdrLen - descLen
    const rndv = (flags & F_RNDV) !== 0
    // (a pull reads the origin's segment: only a task of this process can ask for one)
    if (rndv && (flags & F_PULL) !== 0 && c.local[src] === 0) { this.dropped++; return }
    // uhdr → scratch (valid during the call only)
    const uh = this.uhdrScratch
    copyBuf(uh, 0, u8, off + PACKET_HEADER_BYTES, uhdrLen, false)
    const uhView = this.view(this.uhdrViews, uh, uhdrLen)
    const fn = c.handlerAt(hidx)
    if (existing === undefined && !rndv && first === msgLen && (flags & F_AMV) === 0 && fn !== null) {
      this.onePacket(s, src, id, fn as unknown as hdr_hndlr_t, uhView, uhdrLen, u8, null, dataOff, msgLen, tgtCntr, cmplCntr)
      return
    }
    const m = existing ?? this.getMsg(s, src, id, msgLen)
    m.headSeen = true
    m.rndv = rndv
    m.tgtCntr = tgtCntr
    m.cmplCntr = cmplCntr
    if (rndv && (flags & F_PULL) !== 0) { m.pullSrc = dv.getUint32(off + H_PULL_SRC, true); m.pullOrg = dv.getUint32(off + H_PULL_ORG, true) }
    if (fn === null) {
      c.reportError(S.ERR_HDR_HNDLR_NULL, ErrClass.AM_ERR, src, undefined, `an active message for header handler ${hidx}`)
      this.failMessage(m, s, rndv ? 0 : first)
      return
    }
    const comp = this.compRef; comp.value = null
    const inf = this.infoRef; inf.value = null
    let landing: unknown
    this.inHeaderHandler = 1
    try {
      if ((flags & F_AMV) !== 0) {
        const lens = this.readLenVec(dv, off + PACKET_HEADER_BYTES + uhdrLen, dv.getUint32(off + H_VEC_TYPE, true), dv.getUint32(off + H_VEC_NUM, true))
        c.flushAbsorbed()
        landing = (fn as unknown as (...a: unknown[]) => unknown)(c.handle, uhView, uhdrLen, lens, comp, inf)
        m.landing = -3
        if (landing !== null && landing !== undefined) {
          const rc = this.acceptTargetVec(m, landing, dv.getUint32(off + H_VEC_TYPE, true), lens)
          if (rc !== 0) { this.inHeaderHandler = 0; c.reportError(rc, ErrClass.AM_ERR, src, undefined, 'the landing a header handler gave'); this.failMessage(m, s, rndv ? 0 : first); return }
        }
      } else {
        const ri = this.retInfo
        ri.arm(msgLen, src, !rndv && first === msgLen ? u8 : null, null, dataOff)
        c.flushAbsorbed()
        landing = (fn as unknown as hdr_hndlr_t)(c.handle, uhView, uhdrLen, ri, comp, inf)
        ri.disarm()
        m.inline = (ri.ret_flags & RetFlag.LAPI_SEND_REPLY) !== 0
        if (ri.ctl_flags === CtlFlag.LAPI_BURY_MSG) landing = null
        const rc = this.acceptLanding(m, landing)
        if (rc !== 0) { this.inHeaderHandler = 0; c.reportError(rc, ErrClass.AM_ERR, src, undefined, 'the landing a header handler gave'); this.failMessage(m, s, rndv ? 0 : first); return }
      }
    } catch (e) {
      this.inHeaderHandler = 0
      this.retInfo.disarm()
      c.reportError(S.ERR_UNKNOWN, ErrClass.AM_ERR, src, e, 'a header handler')
      this.failMessage(m, s, rndv ? 0 : first)
      return
    }
    this.inHeaderHandler = 0
    m.compl = typeof comp.value === 'function' ? comp.value : null
    m.uinfo = inf.value
    if (rndv && (flags & F_PULL) !== 0) {
      // copy the data ourselves, straight out of the origin's segment (one copy), then tell it
      const from = m.pullSrc
      if (m.landing !== -2 && from + msgLen <= c.segmentSize) {
        if (m.landing >= 0) copySeg(c.seg.u8[c.taskId]!, m.landing, c.seg.u8[src]!, from, msgLen)
        else copyBuf(m.buf!, 0, c.seg.u8[src]!, from, msgLen, false)
      }
      if (m.pullOrg !== 0) c.bump(src, m.pullOrg)
      this.sendPulled(src, id)
      m.got = msgLen
      this.landed(m, s)
      return
    }
    if (rndv) {
      // ask the origin for the data: straight into the segment, as packets, or not at all
      const mode = m.landing >= 0 ? CTS_DIRECT : m.landing === -2 ? CTS_DISCARD : CTS_STREAM
      this.sendCts(src, id, m.landing >= 0 ? m.landing : 0, mode)
      if (mode === CTS_DISCARD) { m.got = msgLen; this.landed(m, s) }
      return
    }
    if (first > 0) this.place(m, 0, u8, dataOff, first)
    this.unstash(m)
    if (m.got >= m.msgLen) this.landed(m, s)
  }

  /**
   * A SHORT packet, a whole small Amsend (its first word checked by drain): read word by word; the
   * header handler runs and the message completes in this call. Malformed ones are dropped and counted.
   */
  private onShort (u8: Uint8Array, i32: Int32Array, off: number, w0: number): void {
    const c = this.c
    // a BARE packet (w0 is BARE_WORD0) has no counter words: its user header starts 8 bytes sooner
    const bare = w0 !== this.shortWord0
    const p = off >> 2
    const src = i32[p + 1]!
    if ((src >>> 0) >= c.numTasks) { this.dropped++; return }
    const s = this.sources[src]!
    const id = i32[p + 3]! >>> 0
    if (s.done.has(id)) { this.duplicates++; return }
    const lens = i32[p + 2]!
    const len = lens & 0xffff
    const uhdrLen = lens >>> 16
    const tgtCntr = bare ? 0 : i32[p + 5]!
    const cmplCntr = bare ? 0 : i32[p + 6]!
    const size = c.segmentSize
    if ((len >>> 0) > this.shortRoom || (uhdrLen >>> 0) > len || uhdrLen > this.maxUhdr || (tgtCntr & 3) !== 0 || (tgtCntr >>> 0) + 4 > size ||
      (cmplCntr & 3) !== 0 || (cmplCntr >>> 0) + 4 > size) { this.dropped++; return }
    const at = off + (bare ? this.bareHeaderBytes : this.shortHeaderBytes)
    const hidx = i32[p + 4]!
    const raw = c.shortHandlerAt(hidx)
    if (raw !== null) {
      this.inPlace(s, src, id, raw, i32, at >> 2, uhdrLen, len - uhdrLen, tgtCntr, cmplCntr)
      return
    }
    const uh = this.uhdrScratch
    // uhdr_len is a multiple of 8 (the sender checks; a packet that says otherwise goes by bytes);
    // a long one goes through Uint8Array.set (a word loop costs ~0.5 ns a byte, set ~30 ns and a memcpy)
    if ((uhdrLen & 3) === 0 && uhdrLen <= this.wordCopy) copyWords(this.uhdrScratch32, 0, i32, at, uhdrLen)
    else copyBuf(uh, 0, u8, at, uhdrLen, false)
    const uhView = this.view(this.uhdrViews, uh, uhdrLen)
    const fn = c.handlerAt(hidx)
    if (fn === null) {
      // not registered here: discarded, reported; the origin's completion counter still moves
      c.reportError(S.ERR_HDR_HNDLR_NULL, ErrClass.AM_ERR, src, undefined, `an active message for header handler ${hidx}`)
      this.completeOne(s, src, id, null, null, false, 0, cmplCntr)
      return
    }
    this.onePacket(s, src, id, fn as unknown as hdr_hndlr_t, uhView, uhdrLen, u8, i32, at + uhdrLen, len - uhdrLen, tgtCntr, cmplCntr)
  }

  /**
   * A SHORT packet for a library's in-place receiver (`short_hndlr_t`): no user-header copy, no
   * return info; it runs as a header handler and the message completes when it returns.
   */
  private inPlace (s: SourceState, src: number, id: number, fn: short_hndlr_t, i32: Int32Array, at: number, uhdrLen: number,
    dataLen: number, tgtCntr: number, cmplCntr: number): void {
    const c = this.c
    // (the library may run its users' code from here, as a header handler may: see onePacket)
    c.flushAbsorbed()
    this.inHeaderHandler = 1
    try {
      fn(i32, at, uhdrLen, dataLen, src)
    } catch (e) {
      this.inHeaderHandler = 0
      c.reportError(S.ERR_UNKNOWN, ErrClass.AM_ERR, src, e, 'an in-place receiver')
      this.completeOne(s, src, id, null, null, false, 0, cmplCntr)
      return
    }
    this.inHeaderHandler = 0
    this.inPlaceCompleted++
    this.completeOne(s, src, id, null, null, false, tgtCntr, cmplCntr)
  }

  /**
   * The fast path: a whole Amsend in one packet, nothing of it seen before. No per-message record:
   * the header handler runs, the data lands, and the message completes in this call.
   */
  private onePacket (s: SourceState, src: number, id: number, fn: hdr_hndlr_t, uhView: Uint8Array, uhdrLen: number,
    u8: Uint8Array, i32: Int32Array | null, dataOff: number, msgLen: number, tgtCntr: number, cmplCntr: number): void {
    const c = this.c
    const comp = this.compRef; comp.value = null
    const inf = this.infoRef; inf.value = null
    const ri = this.retInfo
    ri.arm(msgLen, src, u8, i32, dataOff)
    let landing: unknown
    // user code is about to run while a counter wait may hold bumps back: put them in memory
    c.flushAbsorbed()
    this.inHeaderHandler = 1
    try {
      landing = fn(c.handle, uhView, uhdrLen, ri, comp, inf)
    } catch (e) {
      this.inHeaderHandler = 0
      ri.disarm()
      c.reportError(S.ERR_UNKNOWN, ErrClass.AM_ERR, src, e, 'a header handler')
      this.completeOne(s, src, id, null, null, false, 0, cmplCntr)
      return
    }
    this.inHeaderHandler = 0
    ri.disarm()
    // the most common answer first: nothing lands and nothing runs later (what follows would come
    // to the same, through the flags and landingKind)
    if (landing === null && comp.value === null) {
      this.completeOne(s, src, id, null, null, false, tgtCntr, cmplCntr)
      return
    }
    if (ri.ctl_flags === CtlFlag.LAPI_BURY_MSG) landing = null
    const where = this.landingKind(landing, msgLen)
    if (where > LAND_BUF) {
      c.reportError(where, ErrClass.AM_ERR, src, undefined, 'the landing a header handler gave')
      this.completeOne(s, src, id, null, null, false, 0, cmplCntr)
      return
    }
    if (msgLen > 0) {
      if (where === LAND_SEG) copySeg(c.seg.u8[c.taskId]!, landing as number, u8, dataOff, msgLen)
      else if (where === LAND_BUF) copyBuf(landing as Uint8Array, 0, u8, dataOff, msgLen, false)
    }
    const compl = typeof comp.value === 'function' ? comp.value : null
    this.completeOne(s, src, id, compl, inf.value, (ri.ret_flags & RetFlag.LAPI_SEND_REPLY) !== 0, tgtCntr, cmplCntr)
  }

  /**
   * A message is complete: mark its id done, tell the origin its data landed (for its fence), then
   * run the completion handler inline (LAPI_SEND_REPLY, when the dispatcher is not nested in a
   * blocked send) or queue it; the counters follow the handler.
   */
  private completeOne (s: SourceState, src: number, id: number, compl: compl_hndlr_t | null, uinfo: unknown, inline: boolean,
    tgtCntr: number, cmplCntr: number): void {
    const c = this.c
    s.done.add(id)
    this.recvCompleted++
    // The origin's fence may wait for this. A message completing in its own packet's drain counts
    // as landed with that slot's release; otherwise (and before a completion handler, which may
    // fence) LANDED moves now. Drain rings the doorbell after the ring it is on (or publishTails,
    // when it held that ring's TAIL back).
    if (compl === null && src === this.draining) {
      this.landedHere++
      this.finish(src, tgtCntr, cmplCntr)
      return
    }
    c.inbox[src]!.markLanded(1)
    if (src !== this.draining) ringDoorbell(c.ctl, src)
    if (compl === null) { this.finish(src, tgtCntr, cmplCntr); return }
    if (inline && this.sendBlocked === 0 && this.depth < MAX_NESTED_COMPLETIONS) {
      this.depth++
      try { c.runComplHandler(compl, uinfo, src, ErrClass.AM_ERR) } finally { this.depth-- }
      this.finish(src, tgtCntr, cmplCntr)
    } else {
      this.enqueue(compl, uinfo, src, tgtCntr, cmplCntr)
    }
  }

  private onData (u8: Uint8Array, dv: DataView, off: number, src: number, len: number): void {
    const s = this.sources[src]!
    const id = dv.getUint32(off + P_MSG_ID, true)
    if (s.done.has(id)) { this.duplicates++; return }
    const msgLen = dv.getUint32(off + P_MSG_LEN, true)
    const pos = dv.getUint32(off + P_OFFSET, true)
    const index = dv.getUint32(off + D_INDEX, true)
    const count = dv.getUint32(off + D_COUNT, true)
    if (pos + len > msgLen || index >= count || count > 1 + Math.ceil(msgLen / 8)) { this.dropped++; return }
    const m = this.getMsg(s, src, id, msgLen)
    if (m.seen === null || m.packets !== count) {
      if (m.seen !== null) this.releaseBitmap(m.seen)
      m.seen = this.takeBitmap(count)
      m.packets = count
    }
    const bit = 1 << (index & 7)
    if ((m.seen[index >> 3]! & bit) !== 0) { this.duplicates++; return }
    m.seen[index >> 3]! |= bit
    if (!m.headSeen) {
      // before its HEAD: keep the bytes until the landing buffer is known
      if (m.stash === null) { m.stash = new Uint8Array(msgLen); m.stashed = [] }
      m.stash.set(u8.subarray(off + PACKET_HEADER_BYTES, off + PACKET_HEADER_BYTES + len), pos)
      m.stashed!.push(pos, len)
      return
    }
    this.place(m, pos, u8, off + PACKET_HEADER_BYTES, len)
    if (m.got >= m.msgLen) this.landed(m, s)
  }

  /** Pooled duplicate bitmaps by log2 of their byte length, so steady traffic allocates none. */
  private readonly bitmaps: Uint8Array[][] = []

  private takeBitmap (bits: number): Uint8Array {
    const bytes = (bits + 7) >> 3
    const k = 32 - Math.clz32(bytes - 1)
    const b = (this.bitmaps[k] ??= []).pop()
    if (b === undefined) return new Uint8Array(1 << k)
    b.fill(0)
    return b
  }

  private releaseBitmap (b: Uint8Array): void {
    const k = 31 - Math.clz32(b.length)
    const list = (this.bitmaps[k] ??= [])
    if (list.length < 64) list.push(b)
  }

  /** Places the data that came before the HEAD, now that the landing buffer is known. */
  private unstash (m: RecvMsg): void {
    const r = m.stashed
    if (r === null) return
    const st = m.stash!
    m.stash = null; m.stashed = null
    for (let i = 0; i < r.length; i += 2) this.place(m, r[i]!, st, r[i]!, r[i + 1]!)
  }

  /** Writes stream bytes [pos, pos+n) of message m (from src[so..]) into its landing place. */
  private place (m: RecvMsg, pos: number, src: Uint8Array, so: number, n: number): void {
    m.got += n
    if (m.landing >= 0) copySeg(this.c.seg.u8[this.c.taskId]!, m.landing + pos, src, so, n)
    else if (m.landing === -1) copyBuf(m.buf!, pos, src, so, n, false)
    else if (m.landing === -3 && m.vec !== null) this.scatter(m, pos, src, so, n)
  }

  private scatter (m: RecvMsg, pos: number, src: Uint8Array, so: number, n: number): void {
    const v = m.vec!
    const offsets = m.vecOffsets!
    if (pos >= m.vecCap) return
    if (pos + n > m.vecCap) n = m.vecCap - pos
    const own = this.c.seg.u8[this.c.taskId]!
    let i = findPiece(offsets, pos)
    while (n > 0 && i < offsets.length - 1) {
      const start = offsets[i]!
      const inPiece = pos - start
      const room = offsets[i + 1]! - start - inPiece
      const take = room < n ? room : n
      if (take > 0) {
        if (v.vec_type === VecType.LAPI_GEN_STRIDED_XFER) {
          copySeg(own, (v.info[0] as number) + i * (v.info[2] as number) + inPiece, src, so, take)
        } else {
          const a = v.info[i]!
          if (typeof a === 'number') copySeg(own, a + inPiece, src, so, take)
          else copyBuf(a, inPiece, src, so, take, false)
        }
        pos += take; so += take; n -= take
      }
      i++
    }
  }

  /**
   * What a header handler's answer means for a message of `msgLen` bytes: LAND_NONE (null, 0,
   * undefined: drop the data), LAND_SEG (an Addr of the own segment that can hold it), LAND_BUF (a
   * Uint8Array that can), or the LAPI code to report (> LAND_BUF).
   */
  private landingKind (landing: unknown, msgLen: number): number {
    if (landing === null || landing === undefined || landing === 0) return LAND_NONE
    if (typeof landing === 'number') {
      return Number.isInteger(landing) && landing > 0 && landing + msgLen <= this.c.segmentSize ? LAND_SEG : S.ERR_TGT_EXTENT
    }
    if (landing instanceof Uint8Array) return landing.length >= msgLen ? LAND_BUF : S.ERR_TGT_EXTENT
    return S.ERR_TGT_ADDR_NULL
  }

  private acceptLanding (m: RecvMsg, landing: unknown): number {
    const where = this.landingKind(landing, m.msgLen)
    if (where === LAND_SEG) m.landing = landing as number
    else if (where === LAND_BUF) { m.landing = -1; m.buf = landing as Uint8Array }
    else if (where === LAND_NONE) m.landing = -2
    else return where
    return 0
  }

  private acceptTargetVec (m: RecvMsg, landing: unknown, orgType: number, lens: number[]): number {
    const c = this.c
    if (typeof landing !== 'object' || landing === null) return S.ERR_TGT_VEC_NULL
    const v = landing as lapi_vec_t
    const rc = c.checkOneVec(v, false)
    if (rc !== 0) return rc
    if (v.vec_type !== orgType) return S.ERR_VEC_TYPE_DIFF
    if (orgType !== VecType.LAPI_GEN_GENERIC) {
      if (v.num_vecs !== lens.length) return S.ERR_VEC_NUM_DIFF
      if (orgType === VecType.LAPI_GEN_STRIDED_XFER) {
        if (lens.length > 0 && v.info[1] !== lens[0]) return S.ERR_VEC_LEN_DIFF
      } else {
        for (let i = 0; i < lens.length; i++) if (v.len![i] !== lens[i]) return S.ERR_VEC_LEN_DIFF
      }
    }
    m.vec = v
    m.vecOffsets = pieceOffsets(v)
    m.vecCap = m.vecOffsets[m.vecOffsets.length - 1]!
    return 0
  }

  private readLenVec (dv: DataView, p: number, type: number, num: number): number[] {
    const lens: number[] = new Array<number>(num)
    if (type === VecType.LAPI_GEN_STRIDED_XFER) {
      const block = dv.getUint32(p + 4, true)
      for (let i = 0; i < num; i++) lens[i] = block
    } else for (let i = 0; i < num; i++) lens[i] = dv.getUint32(p + 4 * i, true)
    return lens
  }

  private view (cache: Array<Uint8Array | undefined>, buf: Uint8Array, len: number): Uint8Array {
    let v = cache[len]
    if (v === undefined) { v = buf.subarray(0, len); cache[len] = v }
    return v
  }

  /**
   * The message is discarded: no landing, no completion handler, no target counter. `inHead` is
   * the data its HEAD carried; data that came earlier (stashed) or comes later is counted, not kept.
   */
  private failMessage (m: RecvMsg, s: SourceState, inHead: number): void {
    m.landing = -2
    m.compl = null
    m.tgtCntr = 0
    m.got += inHead
    if (m.rndv && m.pullSrc >= 0) {
      if (m.pullOrg !== 0) this.c.bump(m.src, m.pullOrg)
      this.sendPulled(m.src, m.id)
      m.got = m.msgLen
    } else if (m.rndv) {
      this.sendCts(m.src, m.id, 0, CTS_DISCARD)
      m.got = m.msgLen
    } else if (m.stashed !== null) {
      for (let i = 1; i < m.stashed.length; i += 2) m.got += m.stashed[i]!
      m.stash = null; m.stashed = null
    }
    if (m.got >= m.msgLen) this.landed(m, s)
  }

  /** Every byte of m is in place (or discarded): the message completes, and its record is reused. */
  private landed (m: RecvMsg, s: SourceState): void {
    if (!m.headSeen) return
    s.inProgress.delete(m.id)
    this.completeOne(s, m.src, m.id, m.compl, m.uinfo, m.inline, m.tgtCntr, m.cmplCntr)
    if (m.seen !== null) this.releaseBitmap(m.seen)
    m.reset()
    this.pool.push(m)
  }

  /** After the completion handler: the target counter, then the origin's completion counter. */
  private finish (src: number, tgtCntr: number, cmplCntr: number): void {
    const c = this.c
    if (tgtCntr !== 0) c.bumpLocal(tgtCntr)
    if (cmplCntr !== 0) c.bump(src, cmplCntr)
  }

  /** Queues a completion handler and the counters to bump after it. */
  private enqueue (fn: compl_hndlr_t, info: unknown, src: number, tgtCntr: number, cmplCntr: number): void {
    let cap = this.cq.length
    if (this.cqTail - this.cqHead === cap) {
      // full: grow to twice the size, keeping the order
      const n = cap * 2
      const cq = new Array<compl_hndlr_t | null>(n).fill(null)
      const ci = new Array<unknown>(n).fill(null)
      const cn = new Int32Array(n * 3)
      for (let i = 0; i < cap; i++) {
        const from = (this.cqHead + i) & (cap - 1)
        cq[i] = this.cq[from]!; ci[i] = this.cqInfo[from]
        cn[3 * i] = this.cqNum[3 * from]!; cn[3 * i + 1] = this.cqNum[3 * from + 1]!; cn[3 * i + 2] = this.cqNum[3 * from + 2]!
      }
      this.cq = cq; this.cqInfo = ci; this.cqNum = cn
      this.cqTail = cap; this.cqHead = 0
      cap = n
    }
    const at = this.cqTail & (cap - 1)
    this.cq[at] = fn
    this.cqInfo[at] = info
    this.cqNum[3 * at] = src; this.cqNum[3 * at + 1] = tgtCntr; this.cqNum[3 * at + 2] = cmplCntr
    this.cqTail++
  }

  private runCompletions (): number {
    let n = 0
    this.depth++
    try {
      while (this.cqHead !== this.cqTail) {
        const at = this.cqHead & (this.cq.length - 1)
        this.cqHead++
        const fn = this.cq[at]!
        const info = this.cqInfo[at]
        const src = this.cqNum[3 * at]!
        const tgt = this.cqNum[3 * at + 1]!
        const cmpl = this.cqNum[3 * at + 2]!
        this.cq[at] = null; this.cqInfo[at] = null
        this.c.runComplHandler(fn, info, src, ErrClass.AM_ERR)
        this.finish(src, tgt, cmpl)
        n++
      }
    } finally {
      this.depth--
    }
    return n
  }

  // ─────────────────────────────── rendezvous ───────────────────────────────

  private sendCts (src: number, id: number, landing: number, mode: number): void {
    const off = this.beginPacket(src)
    this.writeHeader(this.wdv, off, T_AM_CTS, 0, 0, id, 0, 0)
    this.wdv.setUint32(off + C_LANDING, landing, true)
    this.wdv.setUint32(off + C_MODE, mode, true)
    this.endPacket()
  }

  /** Records a rendezvous send to `tgt` that waits for its target (a pooled record). */
  private addPending (tgt: number, id: number, data: LocalBuf, len: number, orgCntr: Addr, shdlr: scompl_hndlr_t | null,
    sinfo: unknown, staged: Addr): void {
    const p = this.pendingPool.pop() ?? new PendingSend()
    p.tgt = tgt; p.id = id; p.data = data; p.len = len; p.orgCntr = orgCntr; p.shdlr = shdlr; p.sinfo = sinfo; p.staged = staged
    ;(this.pending[tgt] ??= new IdTable<PendingSend>()).set(id, p)
  }

  /** The rendezvous send `id` to `tgt` still waiting, or undefined. */
  private pendingSend (tgt: number, id: number): PendingSend | undefined {
    const t = this.pending[tgt]
    return t === undefined ? undefined : t.get(id)
  }

  /** Removes a rendezvous send's record and gives it back to the pool (its fields are read before). */
  private dropPending (p: PendingSend): void {
    this.pending[p.tgt]!.delete(p.id)
    p.data = null; p.shdlr = null; p.sinfo = null
    this.pendingPool.push(p)
  }

  private onCts (dv: DataView, off: number, src: number): void {
    const id = dv.getUint32(off + P_MSG_ID, true)
    if (this.pendingSend(src, id) === undefined) { this.duplicates++; return }
    this.ctsQueue.push(src, id, dv.getUint32(off + C_LANDING, true), dv.getUint32(off + C_MODE, true))
  }

  /** Acts on received CTS packets: copy straight into the target, stream, or drop. */
  private runCts (): number {
    const q = this.ctsQueue
    let n = 0
    // (sending below may take packets in and queue more CTS: the loop sees them too)
    for (let i = 0; i < q.length; i += 4) {
      const src = q[i]!; const id = q[i + 1]!; const landing = q[i + 2]!; const mode = q[i + 3]!
      const p = this.pendingSend(src, id)
      if (p === undefined) continue
      // (the record goes back to the pool first: sending below may start rendezvous that take it)
      const tgt = p.tgt; const data = p.data; const len = p.len
      const orgCntr = p.orgCntr; const shdlr = p.shdlr; const sinfo = p.sinfo
      this.dropPending(p)
      n++
      const c = this.c
      if (mode === CTS_DIRECT) {
        if (landing + len <= c.segmentSize) {
          // straight into the target's segment: ours to copy for a task of this process; for one
          // of another process its process's engine writes it there, and FIN follows on the same path
          if (c.local[tgt] === 0) c.remote.putData(tgt, landing, data, len)
          else if (typeof data === 'number') copySeg(c.seg.u8[tgt]!, landing, c.seg.u8[c.taskId]!, data, len)
          else copyBuf(c.seg.u8[tgt]!, landing, data!, 0, len, tgt === c.taskId)
        }
        this.sendDone(tgt, orgCntr, shdlr, sinfo)
        const o = this.beginPacket(tgt)
        this.writeHeader(this.wdv, o, T_AM_FIN, 0, 0, id, 0, len)
        this.endPacket()
      } else if (mode === CTS_STREAM) {
        this.sendData(tgt, id, 0, len, 0, data, null, null)
        this.sendDone(tgt, orgCntr, shdlr, sinfo)
      } else {
        this.sendDone(tgt, orgCntr, shdlr, sinfo)
      }
    }
    q.length = 0
    return n
  }

  private sendPulled (src: number, id: number): void {
    const off = this.beginPacket(src)
    this.writeHeader(this.wdv, off, T_AM_PULLED, 0, 0, id, 0, 0)
    this.endPacket()
  }

  /** The target has pulled a rendezvous: free the staging copy, or finish the send. */
  private onPulled (dv: DataView, off: number, src: number): void {
    const id = dv.getUint32(off + P_MSG_ID, true)
    const p = this.pendingSend(src, id)
    if (p === undefined) { this.duplicates++; return }
    const staged = p.staged; const shdlr = p.shdlr; const sinfo = p.sinfo; const tgt = p.tgt
    this.dropPending(p)
    if (staged !== 0) { this.c.mem.free(staged); return }
    // pulled from the caller's Addr: the target has bumped the origin counter already
    this.sendCompleted++
    if (shdlr !== null) this.c.runSendHandler(shdlr, sinfo, tgt, ErrClass.AM_ERR)
  }

  private onFin (dv: DataView, off: number, src: number): void {
    const s = this.sources[src]!
    const id = dv.getUint32(off + P_MSG_ID, true)
    if (s.done.has(id)) { this.duplicates++; return }
    const m = s.inProgress.get(id)
    if (m === undefined || !m.headSeen || !m.rndv) { this.dropped++; return }
    m.got = m.msgLen
    this.landed(m, s)
  }
}

/** Total bytes described by a (checked) vector. */
export function vecBytes (v: lapi_vec_t): number {
  if (v.vec_type === VecType.LAPI_GEN_STRIDED_XFER) return v.num_vecs * (v.info[1] as number)
  let t = 0
  for (let i = 0; i < v.num_vecs; i++) t += v.len![i]!
  return t
}

/** Stream offset where each piece starts, plus the total at the end. */
function pieceOffsets (v: lapi_vec_t): number[] {
  const o = new Array<number>(v.num_vecs + 1)
  let t = 0
  for (let i = 0; i < v.num_vecs; i++) {
    o[i] = t
    t += v.vec_type === VecType.LAPI_GEN_STRIDED_XFER ? (v.info[1] as number) : v.len![i]!
  }
  o[v.num_vecs] = t
  return o
}

/** Index of the piece holding stream offset `pos` (binary search over piece starts). */
function findPiece (offsets: number[], pos: number): number {
  let lo = 0; let hi = offsets.length - 2
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if (offsets[mid]! <= pos) lo = mid
    else hi = mid - 1
  }
  return lo
}
