/**
 * Collectives on typed arrays, made of tagged messages (messages.ts), every task calling the same
 * collectives in the same order. Each call takes the next sequence number; its messages say which
 * collective, root and operator they belong to, and their lengths must match what the receiver
 * expects, so a mismatched call is reported (ERR_COLL_MISMATCH), not silently mixed up.
 *
 * Algorithms, by size (P tasks, m bytes):
 * - broadcast: binomial tree (⌈log2 P⌉ steps) up to BCAST_TREE_MAX; above, a pipelined chain in
 *   segments (P − 1 + m/segment steps of a segment each: bandwidth, not latency);
 * - reduce: binomial tree; all-reduce: recursive doubling (through shared mailboxes where every
 *   task shares this process, P is a power of two and the operand at most SYNC_DATA bytes; else
 *   messages, non-powers of two folding the extra tasks in first and out last) up to
 *   ALLREDUCE_RD_MAX, above it a ring reduce-scatter and a ring all-gather (2(P − 1) steps of
 *   m/P bytes);
 * - gather: binomial tree up to GATHER_TREE_MAX in all, above it every task straight to the root;
 * - all-gather: recursive doubling for a power-of-two P up to ALLGATHER_RD_MAX, else a ring;
 * - all-to-all: every message posted at once up to ALLTOALL_LINEAR_MAX per pair, above it pairwise
 *   exchange (P − 1 steps, one partner each); all-to-all-v: pairwise exchange;
 * - scan and exclusive scan: recursive doubling (Hillis–Steele, ⌈log2 P⌉ steps).
 */
import type { Core } from './core.js'
import type { Messages } from './messages.js'
import type { OpHandle } from './rma.js'
import type { ShmSync } from './shm-sync.js'
import { type NumArray, bytesOf, combine, isNumArray, like, opFits } from './reduce-ops.js'
import { PgasStatus as S } from './status.js'

export const BCAST_TREE_MAX = 32 * 1024
export const ALLREDUCE_RD_MAX = 64 * 1024
export const GATHER_TREE_MAX = 64 * 1024
export const ALLGATHER_RD_MAX = 64 * 1024
export const ALLTOALL_LINEAR_MAX = 1024
/** Smallest segment of a pipelined broadcast. */
const SEGMENT = 64 * 1024

/** Collective kinds (5 bits) of the messages: the barrier's is 1. */
const K_BCAST = 2
const K_REDUCE = 3
const K_ALLREDUCE = 4
const K_GATHER = 5
const K_ALLGATHER = 6
const K_ALLTOALL = 7
const K_ALLTOALLV = 8
const K_SCAN = 9
const K_EXSCAN = 10

/** A message's kind: the collective, its operator and its root. */
function kindOf (k: number, root = 0, op = 0): number { return k | (op << 5) | ((root & 0xfff) << 8) }

export class Collectives {
  private readonly core: Core
  private readonly msg: Messages

  private readonly sync: ShmSync

  constructor (core: Core, msg: Messages, sync: ShmSync) {
    this.core = core
    this.msg = msg
    this.sync = sync
  }

  /** The next sequence number, said to be `kind`'s. */
  private begin (kind: number): number {
    const seq = this.core.nextSeq()
    this.msg.enter(seq, kind)
    return seq
  }

  private badRoot (root: number): boolean { return !Number.isInteger(root) || root < 0 || root >= this.core.size }

  /** Send handles of the running collective (emptied by waitAll). */
  private readonly handles: OpHandle[] = []

  /** Waits for every handle of `hs` and empties it: the first failure, or OK. */
  private waitAll (hs: OpHandle[]): number {
    let rc = 0
    for (let i = 0; i < hs.length; i++) { const r = this.msg.wait(hs[i]!); if (rc === 0) rc = r }
    hs.length = 0
    return rc
  }

  /** Sends `data` to `to` and receives into `into` from `from`, both in round `round`. */
  private exchange (seq: number, round: number, kind: number, arg: number, to: number, data: Uint8Array, from: number, into: Uint8Array): number {
    this.msg.post(from, seq, round, kind, arg, into)
    const h = this.msg.sendNb(to, seq, round, kind, arg, data)
    const rc = this.msg.recv(from, seq, round, kind, arg, into)
    const rs = this.msg.wait(h)
    return rc !== 0 ? rc : rs
  }

  /** Broadcast of `buf` from `root` to every task's `buf`. */
  bcast (buf: NumArray, root: number): number {
    if (!isNumArray(buf) || this.badRoot(root)) return S.ERR_BAD_ARG
    const n = this.core.size
    const kind = kindOf(K_BCAST, root)
    const seq = this.begin(kind)
    if (n === 1) return S.OK
    const b = bytesOf(buf)
    const rel = (this.core.rank - root + n) % n
    const abs = (r: number): number => (r + root) % n
    if (b.length <= BCAST_TREE_MAX || n === 2) {
      let mask = 1
      while (mask < n) {
        if ((rel & mask) !== 0) { const rc = this.msg.recv(abs(rel - mask), seq, 0, kind, b.length, b); if (rc !== 0) return rc; break }
        mask <<= 1
      }
      for (mask >>= 1; mask > 0; mask >>= 1) {
        if (rel + mask < n) { const rc = this.msg.send(abs(rel + mask), seq, 0, kind, b.length, b); if (rc !== 0) return rc }
      }
      return S.OK
    }
    if (this.core.allLocal) {
      // (one shared memory: every task takes the root's bytes itself, all at once)
      if (rel > 0) return this.msg.recv(root, seq, 0, kind, b.length, b)
      const hs = this.handles
      hs.length = 0
      for (let t = 1; t < n; t++) hs.push(this.msg.sendNb(abs(t), seq, 0, kind, b.length, b))
      return this.waitAll(hs)
    }
    // (a chain rel 0 → 1 → … → P−1, segment by segment: each task passes a segment on as soon as it has it)
    const seg = Math.max(SEGMENT, Math.ceil(b.length / 4000))
    let pending: OpHandle | null = null
    for (let s = 0, off = 0; off < b.length; s++, off += seg) {
      const piece = b.subarray(off, Math.min(b.length, off + seg))
      if (rel > 0) { const rc = this.msg.recv(abs(rel - 1), seq, s, kind, b.length, piece); if (rc !== 0) return rc }
      if (rel < n - 1) {
        if (pending !== null) { const rc = this.msg.wait(pending); if (rc !== 0) return rc }
        pending = this.msg.sendNb(abs(rel + 1), seq, s, kind, b.length, piece)
      }
    }
    return pending !== null ? this.msg.wait(pending) : S.OK
  }

  /** Reduction of every task's `send` with `op` into `recv` at `root` (`recv` is not touched elsewhere and may be null there). */
  reduce (send: NumArray, recv: NumArray | null, op: number, root: number): number {
    if (!isNumArray(send) || this.badRoot(root) || !opFits(op, send)) return S.ERR_BAD_ARG
    const me = this.core.rank
    if (me === root && (recv === null || !isNumArray(recv) || recv.length !== send.length || recv.constructor !== send.constructor)) return S.ERR_BAD_ARG
    const n = this.core.size
    const kind = kindOf(K_REDUCE, root, op)
    const seq = this.begin(kind)
    const acc = send.slice() as NumArray
    const tmp = like(send, send.length)
    const len = bytesOf(send).length
    const rel = (me - root + n) % n
    for (let mask = 1; mask < n; mask <<= 1) {
      if ((rel & mask) === 0) {
        const src = rel | mask
        if (src < n) {
          const rc = this.msg.recv((src + root) % n, seq, 0, kind, len, bytesOf(tmp))
          if (rc !== 0) return rc
          combine(op, acc, tmp)
        }
      } else {
        return this.msg.send(((rel & ~mask) + root) % n, seq, 0, kind, len, bytesOf(acc))
      }
    }
    recv!.set(acc as never)
    return S.OK
  }

  /** Reduction of every task's `send` with `op` into every task's `recv` (may be `send` itself). */
  allreduce (send: NumArray, recv: NumArray, op: number): number {
    if (!isNumArray(send) || !isNumArray(recv) || recv.length !== send.length || recv.constructor !== send.constructor || !opFits(op, send)) return S.ERR_BAD_ARG
    const n = this.core.size
    const kind = kindOf(K_ALLREDUCE, 0, op)
    const seq = this.begin(kind)
    if (recv !== send) recv.set(send as never)
    if (n === 1) return S.OK
    const len = send.byteLength
    if (this.sync.doubles(len)) {
      // (every task in this process, P a power of two, a small operand: through shared mailboxes)
      const rc = this.sync.double(seq, kind, recv, op)
      if (rc !== 0) this.msg.markFailed(seq)
      return rc
    }
    if (len <= ALLREDUCE_RD_MAX || send.length < n) return this.allreduceRd(seq, kind, len, recv, op)
    return this.allreduceRing(seq, kind, len, recv, op)
  }

  private allreduceRd (seq: number, kind: number, len: number, acc: NumArray, op: number): number {
    const n = this.core.size; const me = this.core.rank
    const tmp = like(acc, acc.length)
    const t8 = bytesOf(tmp); const a8 = bytesOf(acc)
    let pof2 = 1
    while (pof2 * 2 <= n) pof2 *= 2
    const rem = n - pof2
    let newRank: number
    let rc: number
    // (the first 2·rem tasks pair up: the even one hands its data to the odd one and sits out)
    if (me < 2 * rem) {
      if ((me & 1) === 0) {
        rc = this.msg.send(me + 1, seq, 0, kind, len, a8); if (rc !== 0) return rc
        newRank = -1
      } else {
        rc = this.msg.recv(me - 1, seq, 0, kind, len, t8); if (rc !== 0) return rc
        combine(op, acc, tmp)
        newRank = me >> 1
      }
    } else newRank = me - rem
    if (newRank >= 0) {
      for (let mask = 1, round = 1; mask < pof2; mask <<= 1, round++) {
        const nr = newRank ^ mask
        const dst = nr < rem ? nr * 2 + 1 : nr + rem
        rc = this.exchange(seq, round, kind, len, dst, a8, dst, t8)
        if (rc !== 0) return rc
        combine(op, acc, tmp)
      }
    }
    if (me < 2 * rem) {
      if ((me & 1) === 1) return this.msg.send(me - 1, seq, 100, kind, len, a8)
      return this.msg.recv(me + 1, seq, 100, kind, len, a8)
    }
    return S.OK
  }

  private allreduceRing (seq: number, kind: number, len: number, acc: NumArray, op: number): number {
    const n = this.core.size; const me = this.core.rank
    const m = acc.length
    const lo = (b: number): number => Math.floor(b * m / n)
    const right = (me + 1) % n; const left = (me + n - 1) % n
    const tmp = like(acc, Math.ceil(m / n) + 1)
    const part = (a: NumArray, b: number): Uint8Array => bytesOf(a.subarray(lo(b), lo(b + 1)))
    for (let s = 0; s < n - 1; s++) {
      const sb = (me - s + n) % n; const rb = (me - s - 1 + 2 * n) % n
      const cnt = lo(rb + 1) - lo(rb)
      const into = bytesOf(tmp.subarray(0, cnt))
      const rc = this.exchange(seq, s, kind, len, right, part(acc, sb), left, into)
      if (rc !== 0) return rc
      combine(op, acc.subarray(lo(rb), lo(rb + 1)) as NumArray, tmp.subarray(0, cnt) as NumArray)
    }
    for (let s = 0; s < n - 1; s++) {
      const sb = (me + 1 - s + n) % n; const rb = (me - s + n) % n
      const rc = this.exchange(seq, n + s, kind, len, right, part(acc, sb), left, part(acc, rb))
      if (rc !== 0) return rc
    }
    return S.OK
  }

  /** Gather of every task's `send` (equal lengths) into `recv` at `root`, task t's at t·send.length. */
  gather (send: NumArray, recv: NumArray | null, root: number): number {
    if (!isNumArray(send) || this.badRoot(root)) return S.ERR_BAD_ARG
    const n = this.core.size; const me = this.core.rank
    if (me === root && (recv === null || !isNumArray(recv) || recv.length !== n * send.length || recv.constructor !== send.constructor)) return S.ERR_BAD_ARG
    const kind = kindOf(K_GATHER, root)
    const seq = this.begin(kind)
    const bs = bytesOf(send).length
    if (bs * n > GATHER_TREE_MAX) {
      if (me !== root) return this.msg.send(root, seq, 0, kind, bs, bytesOf(send))
      const r8 = bytesOf(recv!)
      for (let t = 0; t < n; t++) {
        const into = r8.subarray(t * bs, (t + 1) * bs)
        if (t === me) { into.set(bytesOf(send)); continue }
        const rc = this.msg.recv(t, seq, 0, kind, bs, into)
        if (rc !== 0) return rc
      }
      return S.OK
    }
    // (binomial: a task collects its subtree's blocks, relative ranks rel .. rel + count − 1, in order)
    const rel = (me - root + n) % n
    const tmp = new Uint8Array(bs * n)
    tmp.set(bytesOf(send))
    let have = 1
    for (let mask = 1; mask < n; mask <<= 1) {
      if ((rel & mask) === 0) {
        const src = rel + mask
        if (src < n) {
          const cnt = Math.min(mask, n - src)
          const rc = this.msg.recv((src + root) % n, seq, 0, kind, bs, tmp.subarray(mask * bs, (mask + cnt) * bs))
          if (rc !== 0) return rc
          have += cnt
        }
      } else {
        return this.msg.send((rel - mask + root) % n, seq, 0, kind, bs, tmp.subarray(0, have * bs))
      }
    }
    const r8 = bytesOf(recv!)
    for (let i = 0; i < n; i++) r8.set(tmp.subarray(i * bs, (i + 1) * bs), ((i + root) % n) * bs)
    return S.OK
  }

  /** Gather of every task's `send` into every task's `recv` (task t's at t·send.length). */
  allgather (send: NumArray, recv: NumArray): number {
    const n = this.core.size; const me = this.core.rank
    if (!isNumArray(send) || !isNumArray(recv) || recv.length !== n * send.length || recv.constructor !== send.constructor) return S.ERR_BAD_ARG
    const kind = kindOf(K_ALLGATHER)
    const seq = this.begin(kind)
    const bs = bytesOf(send).length
    const r8 = bytesOf(recv)
    r8.set(bytesOf(send), me * bs)
    if (n === 1) return S.OK
    if ((n & (n - 1)) === 0 && bs * n <= ALLGATHER_RD_MAX) {
      for (let mask = 1, round = 0; mask < n; mask <<= 1, round++) {
        const partner = me ^ mask
        const mine = me & ~(mask - 1); const theirs = partner & ~(mask - 1)
        const rc = this.exchange(seq, round, kind, bs, partner, r8.subarray(mine * bs, (mine + mask) * bs), partner, r8.subarray(theirs * bs, (theirs + mask) * bs))
        if (rc !== 0) return rc
      }
      return S.OK
    }
    const right = (me + 1) % n; const left = (me + n - 1) % n
    for (let s = 0; s < n - 1; s++) {
      const sb = (me - s + n) % n; const rb = (me - s - 1 + 2 * n) % n
      const rc = this.exchange(seq, s, kind, bs, right, r8.subarray(sb * bs, (sb + 1) * bs), left, r8.subarray(rb * bs, (rb + 1) * bs))
      if (rc !== 0) return rc
    }
    return S.OK
  }

  /** All-to-all: block t of `send` (send.length / P elements) to task t, whose block `rank` of `recv` gets it. */
  alltoall (send: NumArray, recv: NumArray): number {
    const n = this.core.size; const me = this.core.rank
    if (!isNumArray(send) || !isNumArray(recv) || send.length !== recv.length || send.length % n !== 0 || recv.constructor !== send.constructor) return S.ERR_BAD_ARG
    const kind = kindOf(K_ALLTOALL)
    const seq = this.begin(kind)
    const s8 = bytesOf(send); const r8 = bytesOf(recv)
    const bs = s8.length / n
    if (n === 1) { r8.set(s8); return S.OK }
    if (bs <= ALLTOALL_LINEAR_MAX || this.core.allLocal) {
      // (small blocks, or one shared memory: every receive posted, every block sent, at once)
      const hs = this.handles
      hs.length = 0
      for (let s = 1; s < n; s++) { const t = (me - s + n) % n; this.msg.post(t, seq, 0, kind, bs, r8.subarray(t * bs, (t + 1) * bs)) }
      for (let s = 1; s < n; s++) { const t = (me + s) % n; hs.push(this.msg.sendNb(t, seq, 0, kind, bs, s8.subarray(t * bs, (t + 1) * bs))) }
      r8.set(s8.subarray(me * bs, (me + 1) * bs), me * bs)
      let rc = 0
      for (let s = 1; s < n; s++) { const t = (me - s + n) % n; const r = this.msg.recv(t, seq, 0, kind, bs, r8.subarray(t * bs, (t + 1) * bs)); if (rc === 0) rc = r }
      const rs = this.waitAll(hs)
      return rc !== 0 ? rc : rs
    }
    // (the own block is copied while the first partner takes what it was sent)
    for (let s = 1; s < n; s++) {
      const to = (me + s) % n; const from = (me - s + n) % n
      const into = r8.subarray(from * bs, (from + 1) * bs)
      this.msg.post(from, seq, s, kind, bs, into)
      const h = this.msg.sendNb(to, seq, s, kind, bs, s8.subarray(to * bs, (to + 1) * bs))
      if (s === 1) r8.set(s8.subarray(me * bs, (me + 1) * bs), me * bs)
      const rc = this.msg.recv(from, seq, s, kind, bs, into)
      const rs = this.msg.wait(h)
      if (rc !== 0 || rs !== 0) return rc !== 0 ? rc : rs
    }
    return S.OK
  }

  /**
   * All-to-all with counts: `sendCounts[t]` elements from `sendDispls[t]` of `send` to task t,
   * `recvCounts[t]` elements from task t into `recv` at `recvDispls[t]` (pairwise exchange).
   */
  alltoallv (send: NumArray, sendCounts: ArrayLike<number>, sendDispls: ArrayLike<number>, recv: NumArray, recvCounts: ArrayLike<number>, recvDispls: ArrayLike<number>): number {
    const n = this.core.size; const me = this.core.rank
    if (!isNumArray(send) || !isNumArray(recv) || recv.constructor !== send.constructor) return S.ERR_BAD_ARG
    if (sendCounts.length !== n || sendDispls.length !== n || recvCounts.length !== n || recvDispls.length !== n) return S.ERR_BAD_ARG
    for (let t = 0; t < n; t++) {
      const sc = sendCounts[t]!; const sd = sendDispls[t]!; const rcn = recvCounts[t]!; const rd = recvDispls[t]!
      if (![sc, sd, rcn, rd].every((v) => Number.isInteger(v) && v >= 0) || sd + sc > send.length || rd + rcn > recv.length) return S.ERR_BAD_ARG
    }
    const kind = kindOf(K_ALLTOALLV)
    const seq = this.begin(kind)
    const piece = (a: NumArray, d: number, c: number): Uint8Array => bytesOf(a.subarray(d, d + c))
    if (sendCounts[me] !== recvCounts[me]) return S.ERR_COLL_MISMATCH
    piece(recv, recvDispls[me]!, recvCounts[me]!).set(piece(send, sendDispls[me]!, sendCounts[me]!))
    for (let s = 1; s < n; s++) {
      const to = (me + s) % n; const from = (me - s + n) % n
      const rc = this.exchange(seq, s, kind, 0, to, piece(send, sendDispls[to]!, sendCounts[to]!), from, piece(recv, recvDispls[from]!, recvCounts[from]!))
      if (rc !== 0) return rc
    }
    return S.OK
  }

  /**
   * Prefix reduction: task r's `recv` = send₀ op … op send_r (inclusive), or send₀ op … op
   * send_{r−1} when `exclusive` (task 0's `recv` is then left as it is).
   */
  scan (send: NumArray, recv: NumArray, op: number, exclusive = false): number {
    if (!isNumArray(send) || !isNumArray(recv) || recv.length !== send.length || recv.constructor !== send.constructor || !opFits(op, send) || recv === send) return S.ERR_BAD_ARG
    const n = this.core.size; const me = this.core.rank
    const kind = kindOf(exclusive ? K_EXSCAN : K_SCAN, 0, op)
    const seq = this.begin(kind)
    const len = bytesOf(send).length
    const acc = send.slice() as NumArray
    const tmp = like(send, send.length)
    let got = false
    for (let mask = 1, round = 0; mask < n; mask <<= 1, round++) {
      const h = me + mask < n ? this.msg.sendNb(me + mask, seq, round, kind, len, bytesOf(acc)) : null
      let rc = 0
      if (me - mask >= 0) {
        rc = this.msg.recv(me - mask, seq, round, kind, len, bytesOf(tmp))
      }
      const rs = h !== null ? this.msg.wait(h) : 0
      if (rc !== 0) return rc
      if (rs !== 0) return rs
      if (me - mask >= 0) {
        if (exclusive) { if (got) combine(op, recv, tmp); else recv.set(tmp as never) }
        got = true
        combine(op, acc, tmp)
      }
    }
    if (!exclusive) recv.set(acc as never)
    return S.OK
  }
}
