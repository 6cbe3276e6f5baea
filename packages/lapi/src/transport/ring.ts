/**
 * The two ends of an inbox ring (layout/ring.ts lays the rings out): `RingWriter`, the one
 * producer, and `RingReader`, the one consumer. Nothing here allocates.
 */
import { RING_HEAD, RING_HEADER_BYTES, RING_LANDED, RING_TAIL, SLOT_STAMP_BYTES, type RingGeometry } from '../layout/ring.js'

/** One set of views per inbox, shared by all ends of its rings (so a packet's memory is one array). */
const inboxViews = new WeakMap<SharedArrayBuffer, { u8: Uint8Array; dv: DataView; i32: Int32Array }>()

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
  constructor(inbox: SharedArrayBuffer, g: RingGeometry, ring: number, at = ring * g.ringBytes) {
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
  reserve(): number
  publish(): void
  readonly published: number
  pending(): number
  /** Slots of the ring (it is full when `pending()` reaches them). */
  readonly slots: number
  markSent(): void
  outstanding(): number
}

/** The sending end of one ring. */
export class RingWriter extends RingEnd implements OutRing {
  readonly slots: number
  private next: number
  /** TAIL as last read (the consumer only moves it forward). */
  private seenTail: number
  /** Messages sent on this ring (for the fence; counted by the sender, see `markSent`). */
  private sent = 0

  constructor(inbox: SharedArrayBuffer, g: RingGeometry, ring: number, at = ring * g.ringBytes) {
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
  reserve(): number {
    if (((this.next - this.seenTail) | 0) >= this.slots) {
      this.seenTail = Atomics.load(this.i32, this.tail)
      if (((this.next - this.seenTail) | 0) >= this.slots) return -1
    }
    return this.firstBody + (this.next & this.mask) * this.slotBytes
  }

  /** Packets published on this ring so far (free-running; this end's own count, no memory read). */
  get published(): number {
    return this.next
  }

  /**
   * Takes the ring's positions from memory: for a ring several threads write in turn, one at a
   * time (the network rings, under the process's network lock), after another one wrote.
   */
  resync(): void {
    this.next = Atomics.load(this.i32, this.head)
    this.seenTail = Atomics.load(this.i32, this.tail)
  }

  /** Publishes the slot `reserve()` returned (stores its STAMP): the consumer may now see it. */
  publish(): void {
    const k = this.next
    const n = (k + 1) | 0
    this.next = n
    this.i32[this.head] = n
    Atomics.store(this.i32, this.firstWord + (k & this.mask) * this.slotWords, n)
  }

  /** Packets published and not yet consumed. */
  pending(): number {
    this.seenTail = Atomics.load(this.i32, this.tail)
    return (this.next - this.seenTail) | 0
  }

  /** A message went out on this ring (it is outstanding until the consumer counts it landed). */
  markSent(): void {
    this.sent = (this.sent + 1) | 0
  }

  /**
   * Messages sent on this ring that have not landed yet. TAIL is read first: the consumer writes
   * LANDED before its store of TAIL (see `RingReader.publishTail`), so that read orders the next.
   */
  outstanding(): number {
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

  constructor(inbox: SharedArrayBuffer, g: RingGeometry, ring: number, at = ring * g.ringBytes) {
    super(inbox, g, ring, at)
    this.next = Atomics.load(this.i32, this.tail)
    this.seen = this.next
  }

  /** Declares that `w`, in this thread, is the only writer of this ring. */
  sameThreadWriter(w: RingWriter): void {
    this.partner = w
  }

  /**
   * Takes the ring's position from memory: for a ring several threads read in turn, one at a time
   * (the rings toward the network, under the process's network lock), after another one read.
   */
  resync(): void {
    this.next = Atomics.load(this.i32, this.tail)
    this.seen = this.next
    this.held = 0
    this.heldLanded = 0
  }

  /** True when packet `k` is published: its slot's STAMP reads k + 1 (one atomic read). */
  private stamped(k: number): boolean {
    return Atomics.load(this.i32, this.firstWord + (k & this.mask) * this.slotWords) === ((k + 1) | 0)
  }

  /** Byte offset (in the inbox) of the oldest unconsumed packet's body, or -1 when the ring is empty. */
  peek(): number {
    return this.nonEmpty ? this.front() : -1
  }

  /**
   * True when packet `k`, one past a packet already found, is published: a plain read first (a
   * slot not published yet costs no atomic call), confirmed by an atomic read, which orders the
   * reads of the packet after it. A plain read that comes late only leaves the packet to the next look.
   */
  private stampedAhead(k: number): boolean {
    const w = this.firstWord + (k & this.mask) * this.slotWords
    const want = (k + 1) | 0
    return this.i32[w] === want && Atomics.load(this.i32, w) === want
  }

  /**
   * Packets published and not yet taken, in a row from the oldest (at most a ring's worth): none
   * read again that a look already found, an atomic read of the first STAMP otherwise, and the
   * slots after the known ones looked at with `stampedAhead` (none at all for a same-thread ring).
   */
  available(): number {
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
  front(): number {
    return this.firstBody + (this.next & this.mask) * this.slotBytes
  }

  /**
   * Slots given back whose TAIL is not published yet (1, else 0: a number, not a boolean, see
   * ContextState.inHeaderHandler in core/state.ts), and the LANDED count that goes with them.
   */
  private held = 0
  private heldLanded = 0

  /** Whether this ring's writer is in this thread (`sameThreadWriter`). */
  get sameThread(): boolean {
    return this.partner !== null
  }

  /**
   * Gives the front slot back to the producer and counts `landed` more of the sender's messages
   * complete (the one in that slot, when it completed as it was handled). With `hold` 1 (ignored
   * for a same-thread ring, whose writer may be waiting in this very thread) the producer learns
   * of it only at the next `publishTail`: the caller publishes later, off the path of the message
   * it just handled.
   */
  release(landed = 0, hold = 0): void {
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
  publishTail(): number {
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
  get nonEmpty(): boolean {
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
  markLanded(n: number): boolean {
    Atomics.add(this.i32, this.landed, n)
    return true
  }
}
