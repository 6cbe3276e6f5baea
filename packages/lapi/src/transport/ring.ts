/**
 * Inbox rings: single-producer / single-consumer rings of fixed-size packet slots in a
 * SharedArrayBuffer (docs/wire-format.md). Every task has one inbox: a ring per co-located sender
 * task plus one from its process's agent (what comes over the network). Only the sender writes
 * its ring's slots and HEAD; only the owner reads slots and writes TAIL.
 *
 *   inbox of task r (one SharedArrayBuffer), ring i at i × ringBytes (i = sender task; N = agent):
 *   ┌──────────── ring ────────────────────────────────────────────────────────────┐
 *   │ +0    HEAD u32   packets published (free-running; the producer's own record)  │
 *   │ +128  TAIL u32   packets consumed  (free-running; written by the consumer)   │
 *   │ +132  LANDED u32 messages of this sender complete here (consumer; the fence)  │
 *   │ +256  slot 0 │ slot 1 │ … │ slot S-1      each slotBytes (a multiple of 64)    │
 *   └──────────────────────────────────────────────────────────────────────────────┘
 *   slot: +0 STAMP u32 (packet number + 1) │ +4 body: what reserve()/front() point at
 *   empty: HEAD == TAIL;  full: HEAD - TAIL == S;  packet k lives in slot k mod S.
 *
 * A packet is published by its slot's STAMP: the producer writes the body, then stores k + 1
 * (packet k, free-running) into STAMP with Atomics.store (sequentially consistent, so the body is
 * visible first); the consumer waits for STAMP of its next slot to read k + 1 (Atomics.load), so
 * the mark that a packet is there and the packet's first bytes travel in one cache line: a small
 * packet costs the consumer one line from the producer's cache, not two (a separate HEAD word and
 * then the slot). A stamp of an earlier lap is k + 1 - S, never k + 1, so slots need no clearing.
 * The consumer processes the slot and then releases it with Atomics.store(TAIL), at once or, with
 * `release(…, hold)`, at its next `publishTail` (several slots in one store). HEAD is the
 * producer's own count (a plain write that nobody polls); a writer made later on the same inbox
 * starts from it. Back-pressure is a return value (reserve() = -1), never a throw. Nothing here
 * allocates. The producer keeps the last TAIL it read and reads it again only when the ring looks
 * full, so a packet costs it no read of the consumer's cache line. LANDED (in TAIL's line) counts
 * the sender's messages that are complete here: the sender's fence compares it with what it sent.
 * HEAD, TAIL and the slots each start a 128-byte block, so the two ends never write the same pair
 * of lines (adjacent-line prefetchers move lines in pairs); the inbox is page-aligned for that
 * (`pageAlignedShared`: a plain SharedArrayBuffer is only 16-byte aligned). The consumer gives
 * each slot back as soon as its packet is handled (a handler further on may send into the same
 * ring); a ring whose writer is in the same thread never holds TAIL back.
 */
import { WASM_PAGE, sharedMemory } from './wasm.js'

export const RING_HEAD = 0
export const RING_TAIL = 32
/** Word index of LANDED: messages from this ring's sender whose data has landed (written by the consumer). */
export const RING_LANDED = 33
export const RING_HEADER_BYTES = 256
/** Bytes of a slot before its body: the STAMP word that publishes the packet. */
export const SLOT_STAMP_BYTES = 4
/**
 * Where a packet with the common 64-byte header starts, from its slot's start: after STAMP and a
 * word the one-line formats use, so that its payload is 8-aligned. A writer of such a packet must
 * put 0 in that word (the body's first): a SHORT packet's first word there (`0x00000601`) makes
 * the dispatcher read the slot as one.
 */
export const SLOT_PACKET = 8

/** Geometry of every ring of a job's inboxes. */
export interface RingGeometry {
  /** Slots per ring (a power of two). */
  slots: number
  /** Bytes per slot: STAMP, a word, then the largest packet, rounded up to 64. */
  slotBytes: number
  /** Bytes per ring including its header. */
  ringBytes: number
  /** Rings per inbox: one per task of the process (a job of several processes adds its network ring: `netRingGeometry`). */
  rings: number
}

/**
 * Slots of a task's network ring (at least; the job's ring slots where more): it carries what the
 * engine takes in from every remote task, and one datagram of a burst brings tens of packets. The
 * engine takes in only what the ring holds, and a batch of handlers answers in one write only what
 * the ring toward the network holds (which has as many slots), so the ring's size bounds how many
 * messages share a datagram (docs/transports.md, "Memory").
 */
export const NET_RING_SLOTS = 128

/**
 * The geometry of a task's network ring, whose packets are `g`'s; with `extra` bytes more per slot
 * for its ring toward the network (the destination tag), which has as many slots.
 */
export function netRingGeometry (g: RingGeometry, extra = 0): RingGeometry {
  const slots = Math.max(g.slots, NET_RING_SLOTS)
  const slotBytes = g.slotBytes + extra
  return { slots, slotBytes, ringBytes: RING_HEADER_BYTES + slots * slotBytes, rings: 1 }
}

/** Where an inbox's network ring starts: after the rings of the process's tasks. */
export function netRingAt (g: RingGeometry): number { return g.rings * g.ringBytes }

/**
 * The geometry for `localTasks` senders (the tasks of one process), `slots` slots (rounded up to a
 * power of two) that hold packets of up to `packetBytes` at SLOT_PACKET.
 */
export function ringGeometry (localTasks: number, slots: number, packetBytes: number): RingGeometry {
  let s = 1
  while (s < slots) s <<= 1
  const slotBytes = Math.ceil((packetBytes + SLOT_PACKET) / 64) * 64
  return { slots: s, slotBytes, ringBytes: RING_HEADER_BYTES + s * slotBytes, rings: localTasks }
}

/** A page-aligned shared buffer of `pages` pages: the buffer of a shared WebAssembly.Memory. */
function sharedBuffer (pages: number): SharedArrayBuffer { return sharedMemory(pages).buffer }

/**
 * A SharedArrayBuffer of at least `bytes` bytes that starts on a page boundary: the buffer of a
 * shared WebAssembly.Memory, `bytes` rounded up to its 64 KiB pages. A plain SharedArrayBuffer's
 * backing store is only 16-byte aligned on Node 20 (malloc; a large one starts 16 bytes into a
 * page), so cache-line blocks laid out from its start begin 16 bytes into a line: a SHORT packet
 * with more than 16 bytes of user header and data then straddles two lines, and the receiver
 * fetches both (an AM-2 Short request, 24 bytes of user header, is one). Falls back to a plain
 * SharedArrayBuffer of `bytes` where the engine has no shared WebAssembly memory or refuses one
 * (an address-space limit, say). `memory` is for tests.
 */
export function pageAlignedShared (bytes: number, memory: (pages: number) => SharedArrayBuffer = sharedBuffer): SharedArrayBuffer {
  let b: SharedArrayBuffer
  try {
    b = memory(Math.max(1, Math.ceil(bytes / WASM_PAGE)))
  } catch {
    return new SharedArrayBuffer(bytes)
  }
  pageAligned.add(b)
  return b
}

/** The buffers pageAlignedShared got page-aligned (in this thread). */
const pageAligned = new WeakSet<SharedArrayBuffer>()

/** Whether `b` came from pageAlignedShared page-aligned (false for its fallback and any other buffer). */
export function isPageAligned (b: SharedArrayBuffer): boolean {
  return pageAligned.has(b)
}

/** Creates one inbox (all its rings, and the network ring `net` after them if given, empty), page-aligned (`pageAlignedShared`). */
export function createInbox (g: RingGeometry, net: RingGeometry | null = null): SharedArrayBuffer {
  return pageAlignedShared(netRingAt(g) + (net === null ? 0 : net.ringBytes))
}

/**
 * Starts every ring of a new inbox at packet `k` (an int32) instead of 0, for tests of the
 * counters' wrap: HEAD, TAIL and LANDED read `k`, and every slot's STAMP `k` too, which no packet
 * of the first lap waits for (packet j waits for j + 1); zeros would be taken for the publication
 * of packet -1.
 */
export function startRingsAt (inbox: SharedArrayBuffer, g: RingGeometry, k: number, net: RingGeometry | null = null): void {
  const i32 = new Int32Array(inbox)
  const start = (at: number, r: RingGeometry): void => {
    const base = at >> 2
    i32[base + RING_HEAD] = k
    i32[base + RING_TAIL] = k
    i32[base + RING_LANDED] = k
    for (let s = 0; s < r.slots; s++) i32[base + (RING_HEADER_BYTES >> 2) + s * (r.slotBytes >> 2)] = k
  }
  for (let r = 0; r < g.rings; r++) start(r * g.ringBytes, g)
  if (net !== null) start(netRingAt(g), net)
}

/** One set of views per inbox, shared by all ends of its rings (so a packet's memory is one array). */
const inboxViews = new WeakMap<SharedArrayBuffer, { u8: Uint8Array, dv: DataView, i32: Int32Array }>()

/** What both ends of a ring know: its views and where its words and slots are. */
abstract class RingEnd {
  /**
   * Byte view of the whole inbox (the same array for every ring end of it in this thread); slot
   * bodies are at the offsets reserve()/front() return.
   */
  readonly u8: Uint8Array
  readonly dv: DataView
  /** Int32 view of the whole inbox (the SHORT fast paths read and write packets word by word). */
  readonly i32: Int32Array
  protected readonly head: number
  protected readonly tail: number
  protected readonly landed: number
  protected readonly mask: number
  protected readonly slotBytes: number
  protected readonly first: number
  /**
   * Byte offset of slot 0's body: first + SLOT_STAMP_BYTES, kept as a field because V8 reads an
   * exported constant through its cell at every use (docs/architecture.md, "Writing the
   * per-message paths for V8").
   */
  protected readonly firstBody: number
  /** Word index of slot 0's STAMP, and words per slot. */
  protected readonly firstWord: number
  protected readonly slotWords: number

  /** Ring `ring` of `inbox`, or the ring of geometry `g` at byte `at` (an inbox's network ring: `netRingAt`). */
  constructor (inbox: SharedArrayBuffer, g: RingGeometry, ring: number, at = ring * g.ringBytes) {
    const base = at
    let v = inboxViews.get(inbox)
    if (v === undefined) {
      v = { u8: new Uint8Array(inbox), dv: new DataView(inbox), i32: new Int32Array(inbox) }
      inboxViews.set(inbox, v)
    }
    this.u8 = v.u8
    this.dv = v.dv
    this.i32 = v.i32
    this.head = (base >> 2) + RING_HEAD
    this.tail = (base >> 2) + RING_TAIL
    this.landed = (base >> 2) + RING_LANDED
    this.mask = g.slots - 1
    this.slotBytes = g.slotBytes
    this.first = base + RING_HEADER_BYTES
    this.firstBody = this.first + SLOT_STAMP_BYTES
    this.firstWord = this.first >> 2
    this.slotWords = g.slotBytes >> 2
  }
}

/**
 * What a sender needs of the ring toward a target: a RingWriter, or for a task of another process
 * the stand-in that puts its packets on the way to the network (net/remote-ends.ts).
 */
export interface OutRing {
  readonly u8: Uint8Array
  readonly dv: DataView
  readonly i32: Int32Array
  reserve (): number
  publish (): void
  readonly published: number
  pending (): number
  /** Slots of the ring (it is full when `pending()` reaches them). */
  readonly slots: number
  markSent (): void
  outstanding (): number
}

/** The sending end of one ring. */
export class RingWriter extends RingEnd implements OutRing {
  readonly slots: number
  private next: number
  /** TAIL as last read (the consumer only moves it forward). */
  private seenTail: number
  /** Messages sent on this ring (for the fence; counted by the sender, see `markSent`). */
  private sent = 0

  constructor (inbox: SharedArrayBuffer, g: RingGeometry, ring: number, at = ring * g.ringBytes) {
    super(inbox, g, ring, at)
    this.slots = g.slots
    this.next = Atomics.load(this.i32, this.head)
    this.seenTail = Atomics.load(this.i32, this.tail)
    this.sent = Atomics.load(this.i32, this.landed)
  }

  /**
   * Byte offset (in the inbox) of the body of the next free slot (its STAMP word is just before:
   * the body has slotBytes - SLOT_STAMP_BYTES bytes), or -1 when the ring is full.
   */
  reserve (): number {
    if (((this.next - this.seenTail) | 0) >= this.slots) {
      this.seenTail = Atomics.load(this.i32, this.tail)
      if (((this.next - this.seenTail) | 0) >= this.slots) return -1
    }
    return this.firstBody + (this.next & this.mask) * this.slotBytes
  }

  /** Packets published on this ring so far (free-running; this end's own count, no memory read). */
  get published (): number { return this.next }

  /**
   * Takes the ring's positions from memory: for a ring several threads write in turn, one at a
   * time (the network rings, under the process's network lock), after another one wrote.
   */
  resync (): void {
    this.next = Atomics.load(this.i32, this.head)
    this.seenTail = Atomics.load(this.i32, this.tail)
  }

  /** Publishes the slot `reserve()` returned (stores its STAMP): the consumer may now see it. */
  publish (): void {
    const k = this.next
    const n = (k + 1) | 0
    this.next = n
    this.i32[this.head] = n
    Atomics.store(this.i32, this.firstWord + (k & this.mask) * this.slotWords, n)
  }

  /** Packets published and not yet consumed. */
  pending (): number {
    this.seenTail = Atomics.load(this.i32, this.tail)
    return (this.next - this.seenTail) | 0
  }

  /** A message went out on this ring (it is outstanding until the consumer counts it landed). */
  markSent (): void { this.sent = (this.sent + 1) | 0 }

  /**
   * Messages sent on this ring that have not landed yet. TAIL is read first: the consumer writes
   * LANDED before its store of TAIL (see `RingReader.publishTail`), so that read orders the next.
   */
  outstanding (): number {
    Atomics.load(this.i32, this.tail)
    return (this.sent - Atomics.load(this.i32, this.landed)) | 0
  }
}

/** The receiving end of one ring. */
export class RingReader extends RingEnd {
  private next: number
  /**
   * The writer of this ring when it is in the same thread (a task's ring from itself): its count
   * stands in for the stamps, so looking at that ring costs no atomic read (each is a call in Node 20).
   */
  private partner: RingWriter | null = null
  /** Packets known to be published (a look that found them spares the next look its atomic read). */
  private seen: number

  constructor (inbox: SharedArrayBuffer, g: RingGeometry, ring: number, at = ring * g.ringBytes) {
    super(inbox, g, ring, at)
    this.next = Atomics.load(this.i32, this.tail)
    this.seen = this.next
  }

  /** Declares that `w`, in this thread, is the only writer of this ring. */
  sameThreadWriter (w: RingWriter): void { this.partner = w }

  /**
   * Takes the ring's position from memory: for a ring several threads read in turn, one at a time
   * (the rings toward the network, under the process's network lock), after another one read.
   */
  resync (): void {
    this.next = Atomics.load(this.i32, this.tail)
    this.seen = this.next
    this.held = 0
    this.heldLanded = 0
  }

  /** True when packet `k` is published: its slot's STAMP reads k + 1 (one atomic read). */
  private stamped (k: number): boolean {
    return Atomics.load(this.i32, this.firstWord + (k & this.mask) * this.slotWords) === ((k + 1) | 0)
  }

  /** Byte offset (in the inbox) of the oldest unconsumed packet's body, or -1 when the ring is empty. */
  peek (): number {
    return this.nonEmpty ? this.front() : -1
  }

  /**
   * True when packet `k`, one past a packet already found, is published: a plain read first (a
   * slot not published yet costs no atomic call), confirmed by an atomic read, which orders the
   * reads of the packet after it. A plain read that comes late only leaves the packet to the next look.
   */
  private stampedAhead (k: number): boolean {
    const w = this.firstWord + (k & this.mask) * this.slotWords
    const want = (k + 1) | 0
    return this.i32[w] === want && Atomics.load(this.i32, w) === want
  }

  /**
   * Packets published and not yet taken, in a row from the oldest (at most a ring's worth): none
   * read again that a look already found, an atomic read of the first STAMP otherwise, and the
   * slots after the known ones looked at with `stampedAhead` (none at all for a same-thread ring).
   */
  available (): number {
    const p = this.partner
    if (p !== null) {
      const known = (this.seen - this.next) | 0
      if (known > 0) return known
      this.seen = p.published
      return (this.seen - this.next) | 0
    }
    let k = this.seen
    if (((k - this.next) | 0) <= 0) {
      if (!this.stamped(this.next)) return 0
      k = (this.next + 1) | 0
    }
    const end = (this.next + this.mask + 1) | 0
    while (k !== end && this.stampedAhead(k)) k = (k + 1) | 0
    this.seen = k
    return (k - this.next) | 0
  }

  /** Byte offset of the oldest untaken packet's body; only valid while `available()` counted it. */
  front (): number {
    return this.firstBody + (this.next & this.mask) * this.slotBytes
  }

  /**
   * Slots given back whose TAIL is not published yet (1, else 0: a number, not a boolean, see
   * ContextState.inHeaderHandler in core/state.ts), and the LANDED count that goes with them.
   */
  private held = 0
  private heldLanded = 0

  /** Whether this ring's writer is in this thread (`sameThreadWriter`). */
  get sameThread (): boolean { return this.partner !== null }

  /**
   * Gives the front slot back to the producer and counts `landed` more of the sender's messages
   * complete (the one in that slot, when it completed as it was handled). With `hold` 1 (ignored
   * for a same-thread ring, whose writer may be waiting in this very thread) the producer learns
   * of it only at the next `publishTail`: the caller publishes later, off the path of the message
   * it just handled.
   */
  release (landed = 0, hold = 0): void {
    this.next = (this.next + 1) | 0
    if (landed !== 0) this.heldLanded = (this.heldLanded + landed) | 0
    this.held = 1
    if (hold === 0 || this.partner !== null) this.publishTail()
  }

  /**
   * Publishes the slots given back since the last publication: LANDED first, written plainly (this
   * thread is its only writer), then the sequentially consistent store of TAIL, which publishes
   * both: one atomic operation, not two. Returns 1 when there was anything to publish, else 0 (a
   * number, not a boolean: see `held`).
   */
  publishTail (): number {
    if (this.held === 0) return 0
    this.held = 0
    const l = this.heldLanded
    if (l !== 0) {
      this.heldLanded = 0
      this.i32[this.landed] = (this.i32[this.landed]! + l) | 0
    }
    Atomics.store(this.i32, this.tail, this.next)
    return 1
  }

  /** True when a packet is waiting (a cheap check for wait loops: at most one atomic read). */
  get nonEmpty (): boolean {
    if (((this.seen - this.next) | 0) > 0) return true
    const p = this.partner
    if (p !== null) {
      this.seen = p.published
      return this.seen !== this.next
    }
    if (!this.stamped(this.next)) return false
    this.seen = (this.next + 1) | 0
    return true
  }

  /**
   * A message of this ring's sender is complete here (the sender's fence waits for these); true:
   * its doorbell is to be rung.
   */
  markLanded (n: number): boolean { Atomics.add(this.i32, this.landed, n); return true }
}
