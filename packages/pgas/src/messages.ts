/**
 * Tagged point-to-point messages, what the barrier and the collectives are made of: LAPI active
 * messages to a library handler, matched at the target by (source, sequence, round). A receive
 * posted before its message comes has the data land straight in its buffer (LAPI's landing
 * buffer, no copy); one that comes first waits in a buffer of its own until the receive takes it.
 * Each message also says what it belongs to (a kind and an argument, such as a collective and its
 * root or size): a receive that expected something else reports a mismatch instead of taking it.
 * Tasks that called different collectives may wait for messages that never come; so a receive
 * that waited PROBE_MS asks its source what it is doing at that sequence number (a probe, answered
 * from the source's progress), and a different answer ends the wait of both with a mismatch.
 *
 * Between tasks of one process, larger messages take no LAPI rendezvous: bytes in the sender's
 * segment go by reference (a one-packet message says where they are; the receiver copies them
 * straight into its receive's buffer once that is posted, then bumps the sender's counter), and
 * other bytes through a channel (channels.ts). Neither needs a buffer for a message that comes
 * before its receive. The sending side is msg-send.ts.
 *
 * A sequence number as messages carry it is tagged with its team (team.ts): bits 0–19 count the
 * team's barriers and collectives, bits 20–31 are the team's id (0: the world). Each team id has
 * its own stream here (its messages, and the kinds it gave its sequence numbers), so the
 * collectives of different teams never match each other's messages.
 */
import type { compl_hndlr_t, lapi_return_info_t, Ref } from '@amlapi/lapi'
import { WaitCall } from '@amlapi/lapi'
import { type ChannelSink, Channels, type Landing } from './channels.js'
import type { Core } from './core.js'
import { REF, REF_BYTES, Sends, UHDR } from './msg-send.js'
import type { OpHandle } from './rma.js'
import { type SharedBlocks, W_AT_KIND, W_AT_SEQ } from './shared-block.js'
import { PgasStatus as S } from './status.js'

/** The LAPI library slots of these messages, and of the probes and their answers. */
export const SLOT_MSG = 8
export const SLOT_PROBE = 11
export const SLOT_PROBE_ANSWER = 12
/** How long a receive waits before it probes its source, and then between probes. */
export const PROBE_MS = 200
/** Sequence numbers whose kind a task remembers (for answering probes). */
const KINDS = 1024
/** Marks a remembered kind whose collective ended in a mismatch here (its probers end theirs too). */
const FAILED = 1 << 20
/** Rounds per sequence number (a collective's steps); a kind has 20 bits. */
export const ROUNDS = 4096
/** Bits of a tagged sequence number above the sequence number proper: the team id. */
export const TEAM_SHIFT = 20
/** Team ids: 0 (the world) to TEAM_IDS − 1. */
export const TEAM_IDS = 4096

class Entry implements Landing {
  src = 0
  seq = 0
  /** The receive's buffer (null: not posted yet). */
  dst: Uint8Array | null = null
  /** The message's bytes when it came before the receive, or landed elsewhere after a mismatch. */
  data: Uint8Array | null = null
  arrived = false
  /** What the message said it is (kind, argument) and its length. */
  kind = 0
  arg = 0
  len = 0
  /** What the receive expects (set when posted). */
  wantKind = 0
  wantArg = 0
  mismatch = false
  /** A message by reference not taken yet: where its bytes are in the sender's segment, and the sender's counter (0: none). */
  refAddr = 0
  refCntr = 0
  /** Where the message's bytes land (set when it came: its receive's buffer, or `data`). */
  land: Uint8Array | null = null
  /** Its bytes are still landing (LAPI's or a channel's copy): not reused before they are in. */
  busy = false
  landing(): Uint8Array {
    return this.land!
  }
  landed(): void {
    this.arrived = true
    this.busy = false
  }
}

/** One team id's messages (by key) and the kinds this task gave its sequence numbers (kept by their 20 bits: never -1). */
class Stream {
  readonly entries = new Map<number, Entry>()
  readonly kindSeq = new Int32Array(KINDS).fill(-1)
  readonly kindOf = new Int32Array(KINDS)
}

export class Messages implements ChannelSink {
  private readonly core: Core
  private readonly chan: Channels
  /** The sending side (msg-send.ts). */
  private readonly out: Sends
  /** Per team id, its stream (made when the team or its first message comes; 0: the world's). */
  private readonly streams: Array<Stream | undefined> = [new Stream()]
  private readonly uhdr = new Int32Array(UHDR / 4)
  private readonly uhdr8 = new Uint8Array(this.uhdr.buffer)
  private readonly landed: compl_hndlr_t = (_h, e) => {
    ;(e as Entry).landed()
  }
  private waiting: Entry | null = null
  private probeAt = 0
  /** A channel moved bytes during the last wait (which then ended, to wait afresh). */
  private moved = false
  private readonly arrivedCond = (): boolean => {
    const w = this.waiting!
    if (w.arrived || w.mismatch) return true
    const now = performance.now()
    if (this.chan.any && this.chan.pump(now)) {
      this.moved = true
      return true
    }
    return now >= this.probeAt
  }
  private readonly hProbe: number
  private readonly hAnswer: number
  /** Probes to answer (source, sequence number, its kind), from the probe header handler. */
  private readonly probes: number[] = []
  /** Waits ended by a mismatch that a probe found. */
  probeMismatches = 0
  /** Messages by reference dropped: not from a task of this process, or outside its segment. */
  badRefs = 0

  constructor(core: Core, blocks: SharedBlocks) {
    this.core = core
    this.chan = new Channels(core, this, blocks)
    this.at = blocks.has(core.rank) ? blocks.at[core.rank]! >> 2 : -1
    const hdr = core.lapi.setLibraryHandler(
      SLOT_MSG,
      (_h: number, uhdr: Uint8Array, _ul: number, info: lapi_return_info_t, comp: Ref<compl_hndlr_t | null>, ui: Ref<unknown>) =>
        this.onMessage(uhdr, info, comp, ui),
    )
    this.out = new Sends(core, this.chan, hdr)
    core.lapi.setLibraryShortHandler(SLOT_MSG, (w, at, ul, dl, src) => this.onShort(w, at, ul, dl, src))
    this.hProbe = core.lapi.setLibraryHandler(
      SLOT_PROBE,
      (_h: number, uhdr: Uint8Array, _ul: number, info: lapi_return_info_t, comp: Ref<compl_hndlr_t | null>) => {
        this.probes.push(info.src, i32At(uhdr, 0), i32At(uhdr, 4))
        comp.value = this.answerProbes
        return null
      },
    )
    this.hAnswer = core.lapi.setLibraryHandler(SLOT_PROBE_ANSWER, (_h: number, uhdr: Uint8Array, _ul: number, info: lapi_return_info_t) => {
      const seq = i32At(uhdr, 0)
      const kind = i32At(uhdr, 4)
      const w = this.waiting
      if (w !== null && w.seq === seq && w.src === info.src && kind >= 0 && ((kind & FAILED) !== 0 || kind !== w.wantKind)) {
        w.mismatch = true
        this.probeMismatches++
      }
      return null
    })
  }

  /** The stream of (tagged) sequence number `seq`'s team. */
  private stream(seq: number): Stream {
    const id = seq >>> TEAM_SHIFT
    return this.streams[id] ?? (this.streams[id] = new Stream())
  }

  /**
   * Forgets team id `id` (team.ts, when a team is destroyed: every member has completed its
   * collectives, so no message of it is still to come), and what came for it.
   */
  dropTeam(id: number): void {
    const s = this.streams[id]
    if (id <= 0 || s === undefined) return
    // (a message by reference left by a mismatched call: its sender is freed, nothing copied)
    if (this.refs > 0)
      for (const e of s.entries.values())
        if (e.refCntr !== 0) {
          e.mismatch = true
          this.takeRef(e)
        }
    this.streams[id] = undefined
  }

  /**
   * Says which kind of collective this task runs as sequence number `seq` (answers probes, judges
   * what comes; the world's also published in the shared block, for the tasks of this process:
   * only the world's barriers and all-reduces use the shared mailboxes).
   */
  enter(seq: number, kind: number): void {
    const s = this.stream(seq)
    const i = seq & (KINDS - 1)
    s.kindSeq[i] = seq & 0xfffff
    s.kindOf[i] = kind & 0xfffff
    if (this.at >= 0 && seq >>> TEAM_SHIFT === 0) {
      const w = this.core.i32[this.core.rank]!
      Atomics.store(w, this.at + W_AT_KIND, kind & 0xfffff)
      Atomics.store(w, this.at + W_AT_SEQ, seq)
    }
  }

  /** Word index of this task's shared block (-1: none). */
  private readonly at: number

  /** Remembers that the collective of sequence number `seq` ended in a mismatch here (its probers then end theirs too). */
  markFailed(seq: number): void {
    this.failed(seq)
  }

  private failed(seq: number): void {
    const s = this.stream(seq)
    const i = seq & (KINDS - 1)
    if (s.kindSeq[i] === (seq & 0xfffff)) s.kindOf[i] = s.kindOf[i]! | FAILED
    // (messages by reference of that collective will not be received: their senders are freed)
    if (this.refs > 0) {
      for (const e of s.entries.values())
        if (e.refCntr !== 0 && e.seq === seq && e.dst === null) {
          e.mismatch = true
          this.takeRef(e)
        }
    }
  }

  /** The kind this task gave sequence number `seq`, or -1 when it has not reached it (or forgot it). */
  private kindAt(seq: number): number {
    const s = this.streams[seq >>> TEAM_SHIFT]
    const i = seq & (KINDS - 1)
    return s !== undefined && s.kindSeq[i] === (seq & 0xfffff) ? s.kindOf[i]! : -1
  }

  /** Answers the probes that came (a completion handler: it may send). */
  private readonly answerProbes: compl_hndlr_t = () => {
    const q = this.probes
    while (q.length > 0) {
      const src = q.shift()!
      const seq = q.shift()!
      const theirs = q.shift()!
      const mine = this.kindAt(seq)
      // (this task waits at that sequence number too, for something else: its wait ends as well)
      const w = this.waiting
      if (mine >= 0 && (mine & ~FAILED) !== theirs && w !== null && w.seq === seq) {
        w.mismatch = true
        this.probeMismatches++
      }
      const u = new Int32Array([seq, mine, 0, 0])
      this.core.lapi.amsendCode(src, this.hAnswer, new Uint8Array(u.buffer), UHDR, null, 0, 0)
    }
  }

  /** The key of (source, sequence, round) in its team's stream. */
  private key(src: number, seq: number, round: number): number {
    return ((seq & 0xfffff) * ROUNDS + round) * this.core.size + src
  }

  /** The header handler: where the message lands, and what it completes. */
  private onMessage(uhdr: Uint8Array, info: lapi_return_info_t, comp: Ref<compl_hndlr_t | null>, ui: Ref<unknown>): Uint8Array | null {
    const one = info.udata_one_pkt_ptr
    if (i32At(uhdr, 12) === REF && one !== null && info.msg_len === REF_BYTES) {
      this.arriveRef(info.src, i32At(uhdr, 0), i32At(uhdr, 4), i32At(uhdr, 8), i32At(one, 4), i32At(one, 0), i32At(one, 8))
      return null
    }
    const e = this.arrive(info.src, i32At(uhdr, 0), i32At(uhdr, 4), i32At(uhdr, 8), info.msg_len, one, 0)
    if (e === null) return null
    comp.value = this.landed
    ui.value = e
    return e.land
  }

  /**
   * The in-place receiver of one-packet messages (Lapi.setLibraryShortHandler): the header and the
   * data read straight from the packet.
   */
  private onShort(words: Int32Array, at: number, uhdrLen: number, dataLen: number, src: number): void {
    if (words[at + 3] === REF && dataLen === REF_BYTES) {
      const d = at + (uhdrLen >> 2)
      this.arriveRef(src, words[at]!, words[at + 1]!, words[at + 2]!, words[d + 1]!, words[d]!, words[d + 2]!)
      return
    }
    if (words.buffer !== this.inboxBuffer) {
      this.inboxBuffer = words.buffer
      this.inboxBytes = new Uint8Array(words.buffer)
    }
    this.arrive(src, words[at]!, words[at + 1]!, words[at + 2]!, dataLen, this.inboxBytes, words.byteOffset + 4 * at + uhdrLen)
  }

  private inboxBuffer: ArrayBufferLike | null = null
  private inboxBytes: Uint8Array = new Uint8Array(0)

  /**
   * A message came: (seq, w1 = round | kind << 12, arg), `len` bytes, which are at `off` of `bytes`
   * when they came with it (else null: they land later). Matches it with its receive; returns the
   * entry when its bytes are still to land (in `dst` or `data`), else null.
   */
  private arrive(src: number, seq: number, w1: number, arg: number, len: number, bytes: Uint8Array | null, off: number): Entry | null {
    const e = this.came(src, seq, w1, arg, len)
    const kind = e.kind
    let land: Uint8Array
    if (e.dst !== null && e.wantKind === kind && e.wantArg === arg && e.dst.length === len) land = e.dst
    else {
      if (e.dst !== null) e.mismatch = true
      land = e.data = new Uint8Array(len)
    }
    if (len === 0 || bytes !== null) {
      if (len > 0) land.set(bytes!.subarray(off, off + len))
      e.arrived = true
      return null
    }
    e.land = land
    e.busy = true
    return e
  }

  /**
   * The entry of a message that came, (seq, w1 = round | kind << 12, arg) and `len` bytes, with
   * what it says it is; a message of the sequence number this task waits at, of another kind,
   * ends that wait with a mismatch (the tasks disagree).
   */
  private came(src: number, seq: number, w1: number, arg: number, len: number): Entry {
    const k = this.key(src, seq, w1 & 0xfff)
    const m = this.stream(seq).entries
    let e = m.get(k)
    if (e === undefined) {
      e = this.entry()
      e.src = src
      e.seq = seq
      m.set(k, e)
    }
    const kind = w1 >>> 12
    const w = this.waiting
    if (w !== null && w.seq === seq && kind !== w.wantKind) w.mismatch = true
    e.kind = kind
    e.arg = arg
    e.len = len
    return e
  }

  /** The channels' look at a message that came on one (ChannelSink). */
  begin(src: number, seq: number, w1: number, arg: number, len: number, force: boolean): Landing | null {
    if (!force) {
      const e = this.stream(seq).entries.get(this.key(src, seq, w1 & 0xfff))
      if (e === undefined || e.dst === null) return null
    }
    return this.arrive(src, seq, w1, arg, len, null, 0)
  }

  /** Whether this task waits for a message of `src` whose bytes have not begun to land (ChannelSink). */
  waitsFor(src: number): boolean {
    const w = this.waiting
    return w !== null && w.src === src && !w.arrived && w.land === null
  }

  /**
   * A message by reference came: `len` bytes at `addr` of task `src`'s segment, `cntr` its counter
   * to bump once they are copied. Taken now when its receive is posted, else by that receive.
   */
  private arriveRef(src: number, seq: number, w1: number, arg: number, len: number, addr: number, cntr: number): void {
    // (only a task of this process sends by reference, of its own segment: anything else is dropped)
    const size = this.core.segmentSize
    if (!this.core.isLocal(src) || src === this.core.rank || len <= 0 || addr <= 0 || addr > size - len || cntr <= 0 || (cntr & 3) !== 0 || cntr > size - 4) {
      this.badRefs++
      return
    }
    const e = this.came(src, seq, w1, arg, len)
    e.refAddr = addr
    e.refCntr = cntr
    this.refs++
    // (a message of a collective this task runs as something else, or that failed here, will not be
    // received: its sender is freed at once)
    const mine = this.kindAt(seq)
    if (mine >= 0 && ((mine & FAILED) !== 0 || mine !== e.kind)) {
      e.mismatch = true
      this.takeRef(e)
      return
    }
    if (e.dst !== null) this.takeRef(e)
  }

  /**
   * Copies the bytes of message-by-reference `e` into its receive's buffer (nothing on a mismatch,
   * or into a buffer of its own when it has no receive) and frees the sender's.
   */
  private takeRef(e: Entry): void {
    const seg = this.core.u8[e.src]!
    const dst = e.dst
    if (e.mismatch) {
      /* (not to be received: nothing copied) */
    } else if (dst !== null && e.wantKind === e.kind && e.wantArg === e.arg && dst.length === e.len) {
      dst.set(seg.subarray(e.refAddr, e.refAddr + e.len))
    } else if (dst !== null) e.mismatch = true
    else e.data = seg.slice(e.refAddr, e.refAddr + e.len)
    const c = e.refCntr
    e.refAddr = 0
    e.refCntr = 0
    this.refs--
    e.arrived = true
    // (the sender's LAPI counter, bumped as a co-located Put's target counter is: an atomic add,
    // then its doorbell; this may run in a short handler, where LAPI calls that send may not)
    Atomics.add(this.core.i32[e.src]!, c >>> 2, 1)
    this.core.lapi.wake(e.src)
  }

  /** Messages by reference that came and were not taken yet. */
  private refs = 0

  /**
   * What a wait outside this file does after PROBE_MS (shm-sync.ts): frees senders that may wait
   * for this task, taking messages by reference into buffers of their own and draining channels
   * whose writers are stalled.
   */
  unblock(): void {
    this.takeAllRefs()
    if (this.chan.any) this.chan.pump(performance.now())
  }

  /** Takes every message by reference still waiting for its receive, each into a buffer of its own (their senders may wait on them). */
  private takeAllRefs(): void {
    if (this.refs === 0) return
    for (const s of this.streams) {
      if (s !== undefined) for (const e of s.entries.values()) if (e.refCntr !== 0 && e.dst === null) this.takeRef(e)
    }
  }

  /** Sends `data` to task `tgt` as round `round` of sequence `seq`, saying (kind, arg). Blocking until `data` may be reused. */
  send(tgt: number, seq: number, round: number, kind: number, arg: number, data: Uint8Array): number {
    return this.out.wait(this.out.sendNb(tgt, seq, round, kind, arg, data))
  }

  /** `send` that returns at once: `data` must stay unchanged until the handle is complete (msg-send.ts). */
  sendNb(tgt: number, seq: number, round: number, kind: number, arg: number, data: Uint8Array): OpHandle {
    return this.out.sendNb(tgt, seq, round, kind, arg, data)
  }

  /** Waits for a send handle, once (a channel's handle is then used again). */
  wait(h: OpHandle): number {
    return this.out.wait(h)
  }

  /**
   * Posts the receive of round `round` of `seq` from `src` into `dst` ahead of `recv` (which must
   * follow with the same arguments), so that the message lands in `dst` even if it comes first.
   */
  post(src: number, seq: number, round: number, kind: number, arg: number, dst: Uint8Array): void {
    this.posted(this.stream(seq).entries, this.key(src, seq, round), src, seq, kind, arg, dst)
  }

  /**
   * The entry of key `k` with `dst` as its receive's buffer: a new one, or one by reference that
   * came first, copied now straight into `dst`. One whose message came, or is coming, otherwise
   * is returned as it is (its bytes land in a buffer of their own).
   */
  private posted(m: Map<number, Entry>, k: number, src: number, seq: number, kind: number, arg: number, dst: Uint8Array): Entry {
    let e = m.get(k)
    if (e === undefined) {
      e = this.entry()
      e.src = src
      e.seq = seq
      m.set(k, e)
    } else if (e.refCntr === 0 || e.dst !== null) return e
    e.dst = dst
    e.wantKind = kind & 0xfffff
    e.wantArg = arg
    if (e.refCntr !== 0) this.takeRef(e)
    return e
  }

  /**
   * Receives round `round` of sequence `seq` from task `src` into `dst` (exactly `dst.length`
   * bytes), expecting (kind, arg): OK, or ERR_COLL_MISMATCH when the message is something else.
   */
  recv(src: number, seq: number, round: number, kind: number, arg: number, dst: Uint8Array): number {
    const k = this.key(src, seq, round)
    const m = this.stream(seq).entries
    const e = this.posted(m, k, src, seq, kind, arg, dst)
    // (one that came, or began coming, before this receive lands in its own buffer: what it must be)
    if (!e.arrived || e.data !== null) {
      e.wantKind = kind & 0xfffff
      e.wantArg = arg
    }
    if (!e.arrived) {
      this.waiting = e
      this.probeAt = performance.now() + PROBE_MS
      this.chan.waiting(true)
      try {
        for (;;) {
          this.core.lapi.waitUntil(this.arrivedCond, WaitCall.PGAS_COLLECTIVE)
          if (e.arrived || e.mismatch) break
          // (bytes moved on a channel: wait afresh, with a whole spin budget before any sleep)
          if (this.moved) {
            this.moved = false
            continue
          }
          // (senders of messages by reference nobody received yet may wait for them: free them)
          this.takeAllRefs()
          this.probe(src, seq, kind)
          this.probeAt = performance.now() + PROBE_MS
        }
      } finally {
        this.chan.waiting(false)
        this.waiting = null
      }
      if (!e.arrived) {
        // (a mismatch found by a probe: the message may never come; one that does later is dropped with its entry)
        m.delete(k)
        this.recycle(e)
        this.failed(seq)
        return S.ERR_COLL_MISMATCH
      }
    }
    m.delete(k)
    let rc: number = S.OK
    if (e.mismatch || e.kind !== (kind & 0xfffff) || e.arg !== arg || e.len !== dst.length) {
      rc = S.ERR_COLL_MISMATCH
      this.failed(seq)
    } else if (e.data !== null) dst.set(e.data)
    this.recycle(e)
    return rc
  }

  private readonly spare: Entry[] = []

  private entry(): Entry {
    return this.spare.pop() ?? new Entry()
  }

  private recycle(e: Entry): void {
    e.dst = null
    e.data = null
    e.arrived = false
    e.mismatch = false
    e.src = 0
    e.seq = 0
    e.refAddr = 0
    e.refCntr = 0
    e.kind = 0
    e.arg = 0
    e.len = 0
    e.wantKind = 0
    e.wantArg = 0
    e.land = null
    // (one whose bytes still land, after its receive gave up on it, is left to the collector)
    if (!e.busy && this.spare.length < 64) this.spare.push(e)
  }

  /** Asks task `src` which kind it runs as sequence number `seq`. */
  private probe(src: number, seq: number, kind: number): void {
    const u = this.uhdr
    u[0] = seq
    u[1] = kind & 0xfffff
    u[2] = 0
    u[3] = 0
    const c = this.core.counter()
    if (this.core.lapi.amsendCode(src, this.hProbe, this.uhdr8, UHDR, null, 0, c) === 0) c.wait(1)
    this.core.release(c)
  }

  /** Whether round `round` of `seq` from `src` has arrived (for split-phase waits that must not block). */
  arrived(src: number, seq: number, round: number): boolean {
    const e = this.streams[seq >>> TEAM_SHIFT]?.entries.get(this.key(src, seq, round))
    return e !== undefined && e.arrived
  }
}

/** The little-endian int32 at byte `at` of `b`. */
function i32At(b: Uint8Array, at: number): number {
  return b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)
}
