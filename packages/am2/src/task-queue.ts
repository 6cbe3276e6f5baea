/**
 * The bundle task queue of AMLAPI: a single-producer / single-consumer linked list with a
 * *firewall*, so that the producer (the LAPI dispatcher, whose header handler appends a token for
 * every arriving message) and the consumer (AM_Poll, which runs handlers) never write the same
 * node. Written from the description on the AMLAPI page (the C file it names is not used).
 *
 *   FIREWALL → n1 → n2 → … → tail          next[] links; NIL ends the list
 *   producer: allocates a node, sets its token and state, then links it: next[tail] = node,
 *             tail = node. `next[tail]` is the only word of an existing node it ever writes.
 *   consumer: walks from the firewall to the first READY node (not only the head: a message whose
 *             data is still arriving does not hold up the ones behind it), takes its token, and
 *             unlinks it — unless it is the tail, whose `next` the producer may be writing: then
 *             it only marks it TAKEN and leaves it as a firewall, to be unlinked by a later walk
 *             once something has been appended behind it. The permanent FIREWALL node at the
 *             front is never removed, so the consumer always has a predecessor to relink.
 *
 * A handler run by the consumer may send, which runs the dispatcher, which appends: appending
 * during a walk is safe because the walk only reads `next` of nodes it has reached and the
 * producer only writes `next[tail]` of a node the walk has either passed or not reached.
 *
 * Links and states live in Int32Arrays. Producer and consumer are the task's thread at different
 * moments (LAPI's dispatcher runs header handlers on the thread that polls), so plain reads and
 * writes are enough: with Atomics a loopback round trip through two queues cost 0.41 µs instead of
 * 0.27. Were the dispatcher moved to a thread of its own, the arrays would go into a
 * SharedArrayBuffer and `next`/`state` accesses (and `live`) would become Atomics again; the
 * firewall discipline above is what keeps that correct. Nodes are pooled: no allocation per
 * message once the pool has grown to the number of messages in flight.
 */

/** Node states. */
export const NodeState = { FREE: 0, PENDING: 1, READY: 2, TAKEN: 3 } as const

const NIL = -1
const FIREWALL = 0

export class TaskQueue {
  private next: Int32Array
  private state: Int32Array
  private token: Int32Array
  /** Free nodes (a stack of indices); node 0 is the firewall and never free. */
  private free: Int32Array
  private freeTop = 0
  /** The last node (producer-owned). */
  private tail = FIREWALL
  private live = 0
  /** Test hook: called at every node a walk visits (to interleave producer steps mid-walk). */
  onVisit: (() => void) | null = null

  constructor(capacity = 64) {
    let cap = 2
    while (cap < capacity + 1) cap <<= 1
    this.next = new Int32Array(cap).fill(NIL)
    this.state = new Int32Array(cap)
    this.token = new Int32Array(cap)
    this.free = new Int32Array(cap)
    for (let i = cap - 1; i >= 1; i--) this.free[this.freeTop++] = i
    this.state[FIREWALL] = NodeState.TAKEN
  }

  /** Tokens queued and not yet taken. */
  get size(): number {
    return this.live
  }

  /**
   * Producer: appends `token` (a non-negative int: the caller's token index) in state PENDING, or
   * READY when `ready`. Returns the node, which `markReady` takes later.
   */
  push(token: number, ready: boolean): number {
    if (this.freeTop === 0) this.grow()
    const n = this.free[--this.freeTop]!
    this.token[n] = token
    this.next[n] = NIL
    this.state[n] = ready ? NodeState.READY : NodeState.PENDING
    this.next[this.tail] = n
    this.tail = n
    this.live++
    return n
  }

  /** Producer: the message of `node` is complete (its completion handler ran). */
  markReady(node: number): void {
    if (this.state[node]! !== NodeState.PENDING) throw new Error(`task queue: node ${node} is not pending`)
    this.state[node] = NodeState.READY
  }

  /**
   * Consumer: takes the first READY token in queue order and returns it, or -1 when none is ready.
   * On the way it unlinks TAKEN nodes left behind as firewalls that are no longer the tail.
   */
  take(): number {
    // nothing queued (the consumer's own count: producer and consumer are the same thread today)
    if (this.live === 0) return -1
    let prev = FIREWALL
    let n = this.next[FIREWALL]!
    while (n !== NIL) {
      if (this.onVisit !== null) this.onVisit()
      // (re-read this.next: a producer step may have grown the arrays)
      const next = this.next
      const after = next[n]!
      const st = this.state[n]!
      if (st === NodeState.TAKEN) {
        if (after !== NIL) {
          next[prev] = after
          this.release(n)
          n = after
          continue
        }
        return -1
      }
      if (st === NodeState.READY) {
        const t = this.token[n]!
        this.live--
        if (after !== NIL) {
          next[prev] = after
          this.release(n)
        } else {
          this.state[n] = NodeState.TAKEN // the tail stays, as a firewall
        }
        return t
      }
      prev = n
      n = after
    }
    return -1
  }

  private release(n: number): void {
    this.state[n] = NodeState.FREE
    this.free[this.freeTop++] = n
  }

  /** More nodes: doubles the arrays (the list keeps its node indices). */
  private grow(): void {
    const old = this.next.length
    const cap = old * 2
    const next = new Int32Array(cap).fill(NIL)
    next.set(this.next)
    const state = new Int32Array(cap)
    state.set(this.state)
    const token = new Int32Array(cap)
    token.set(this.token)
    const free = new Int32Array(cap)
    free.set(this.free.subarray(0, this.freeTop))
    for (let i = cap - 1; i >= old; i--) free[this.freeTop++] = i
    this.next = next
    this.state = state
    this.token = token
    this.free = free
  }
}
