/**
 * Collectives on typed arrays, made of tagged messages (messages.ts), every member of a group (the
 * world, or a team: group.ts) calling the same collectives in the same order. Each call takes the
 * group's next sequence number; its messages say which collective, root and operator they belong
 * to, and their lengths must match what the receiver expects, so a mismatched call is reported
 * (ERR_COLL_MISMATCH), not silently mixed up. Roots and ranks are the group's.
 *
 * Algorithms that move data, by size (P members, m bytes); the reductions are in reductions.ts:
 * - broadcast: binomial tree (⌈log2 P⌉ steps) up to BCAST_TREE_MAX; above, where every member
 *   shares this process, the root sends to all at once; else a pipelined chain in segments
 *   (P − 1 + m/segment steps of a segment each: bandwidth, not latency);
 * - scatter: binomial tree up to GATHER_TREE_MAX in all, above it (or in one process) the root
 *   straight to every member;
 * - gather: binomial tree up to GATHER_TREE_MAX in all, above it every member straight to the root;
 * - all-gather: recursive doubling for a power-of-two P up to ALLGATHER_RD_MAX, else a ring;
 * - all-to-all: every message posted at once up to ALLTOALL_LINEAR_MAX per pair (or in one
 *   process), above it pairwise exchange (P − 1 steps, one partner each); all-to-all-v: pairwise
 *   exchange.
 */
import {
  ALLGATHER_RD_MAX,
  ALLTOALL_LINEAR_MAX,
  BCAST_TREE_MAX,
  GATHER_TREE_MAX,
  K_ALLGATHER,
  K_ALLTOALL,
  K_ALLTOALLV,
  K_BCAST,
  K_GATHER,
  K_SCATTER,
  kindOf,
} from './coll-base.js'
import type { Group } from './group.js'
import type { OpHandle } from './rma.js'
import { type NumArray, bytesOf, isNumArray } from './reduce-ops.js'
import { Reductions } from './reductions.js'
import { PgasStatus as S } from './status.js'

export { ALLGATHER_RD_MAX, ALLREDUCE_RD_MAX, ALLTOALL_LINEAR_MAX, BCAST_TREE_MAX, GATHER_TREE_MAX } from './coll-base.js'
/** Smallest segment of a pipelined broadcast. */
const SEGMENT = 64 * 1024

export class Collectives extends Reductions {
  /** Broadcast of `buf` from `root` to every member's `buf`. */
  bcast(buf: NumArray, root: number, g: Group = this.world): number {
    if (!isNumArray(buf) || this.badRoot(g, root)) return S.ERR_BAD_ARG
    const n = g.size
    const m = g.members
    const kind = kindOf(K_BCAST, root)
    const seq = this.begin(g, kind)
    if (n === 1) return S.OK
    const b = bytesOf(buf)
    const rel = (g.rank - root + n) % n
    const abs = (r: number): number => m[(r + root) % n]!
    if (b.length <= BCAST_TREE_MAX || n === 2) {
      let mask = 1
      while (mask < n) {
        if ((rel & mask) !== 0) {
          const rc = this.msg.recv(abs(rel - mask), seq, 0, kind, b.length, b)
          if (rc !== 0) return rc
          break
        }
        mask <<= 1
      }
      for (mask >>= 1; mask > 0; mask >>= 1) {
        if (rel + mask < n) {
          const rc = this.msg.send(abs(rel + mask), seq, 0, kind, b.length, b)
          if (rc !== 0) return rc
        }
      }
      return S.OK
    }
    if (g.allLocal) {
      // (one shared memory: every member takes the root's bytes itself, all at once)
      if (rel > 0) return this.msg.recv(m[root]!, seq, 0, kind, b.length, b)
      const hs = this.handles
      hs.length = 0
      for (let t = 1; t < n; t++) hs.push(this.msg.sendNb(abs(t), seq, 0, kind, b.length, b))
      return this.waitAll(hs)
    }
    // (a chain rel 0 → 1 → … → P−1, segment by segment: each member passes a segment on as soon as it has it)
    const seg = Math.max(SEGMENT, Math.ceil(b.length / 4000))
    let pending: OpHandle | null = null
    for (let s = 0, off = 0; off < b.length; s++, off += seg) {
      const piece = b.subarray(off, Math.min(b.length, off + seg))
      if (rel > 0) {
        const rc = this.msg.recv(abs(rel - 1), seq, s, kind, b.length, piece)
        if (rc !== 0) return rc
      }
      if (rel < n - 1) {
        if (pending !== null) {
          const rc = this.msg.wait(pending)
          if (rc !== 0) return rc
        }
        pending = this.msg.sendNb(abs(rel + 1), seq, s, kind, b.length, piece)
      }
    }
    return pending !== null ? this.msg.wait(pending) : S.OK
  }

  /** Scatter: block r of the root's `send` (P × recv.length elements; null elsewhere) into rank r's `recv`. */
  scatter(send: NumArray | null, recv: NumArray, root: number, g: Group = this.world): number {
    if (!isNumArray(recv) || this.badRoot(g, root)) return S.ERR_BAD_ARG
    const n = g.size
    const me = g.rank
    const m = g.members
    if (me === root && (send === null || !isNumArray(send) || send.length !== n * recv.length || recv.constructor !== send.constructor)) return S.ERR_BAD_ARG
    const kind = kindOf(K_SCATTER, root)
    const seq = this.begin(g, kind)
    const r8 = bytesOf(recv)
    const bs = r8.length
    if (bs * n > GATHER_TREE_MAX || g.allLocal) {
      if (me !== root) return this.msg.recv(m[root]!, seq, 0, kind, bs, r8)
      const s8 = bytesOf(send!)
      const hs = this.handles
      hs.length = 0
      for (let s = 1; s < n; s++) {
        const t = (me + s) % n
        hs.push(this.msg.sendNb(m[t]!, seq, 0, kind, bs, s8.subarray(t * bs, (t + 1) * bs)))
      }
      r8.set(s8.subarray(me * bs, (me + 1) * bs))
      return this.waitAll(hs)
    }
    // (binomial, gather's mirror: a member gets its subtree's blocks, relative ranks rel .. rel +
    // count − 1 in order, from its parent, and hands its children theirs)
    const rel = (me - root + n) % n
    let mask = 1
    while (mask < n && (rel & mask) === 0) mask <<= 1
    const tmp = new Uint8Array(Math.min(mask, n - rel) * bs)
    if (rel === 0) {
      const s8 = bytesOf(send!)
      for (let i = 0; i < n; i++) {
        const t = (i + root) % n
        tmp.set(s8.subarray(t * bs, (t + 1) * bs), i * bs)
      }
    } else {
      const rc = this.msg.recv(m[(rel - mask + root) % n]!, seq, 0, kind, bs, tmp)
      if (rc !== 0) return rc
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
      if (rel + mask < n) {
        const cnt = Math.min(mask, n - rel - mask)
        const rc = this.msg.send(m[(rel + mask + root) % n]!, seq, 0, kind, bs, tmp.subarray(mask * bs, (mask + cnt) * bs))
        if (rc !== 0) return rc
      }
    }
    r8.set(tmp.subarray(0, bs))
    return S.OK
  }

  /** Gather of every member's `send` (equal lengths) into `recv` at `root`, rank r's at r·send.length. */
  gather(send: NumArray, recv: NumArray | null, root: number, g: Group = this.world): number {
    if (!isNumArray(send) || this.badRoot(g, root)) return S.ERR_BAD_ARG
    const n = g.size
    const me = g.rank
    const m = g.members
    if (me === root && (recv === null || !isNumArray(recv) || recv.length !== n * send.length || recv.constructor !== send.constructor)) return S.ERR_BAD_ARG
    const kind = kindOf(K_GATHER, root)
    const seq = this.begin(g, kind)
    const bs = bytesOf(send).length
    if (bs * n > GATHER_TREE_MAX) {
      if (me !== root) return this.msg.send(m[root]!, seq, 0, kind, bs, bytesOf(send))
      const r8 = bytesOf(recv!)
      for (let t = 0; t < n; t++) {
        const into = r8.subarray(t * bs, (t + 1) * bs)
        if (t === me) {
          into.set(bytesOf(send))
          continue
        }
        const rc = this.msg.recv(m[t]!, seq, 0, kind, bs, into)
        if (rc !== 0) return rc
      }
      return S.OK
    }
    // (binomial: a member collects its subtree's blocks, relative ranks rel .. rel + count − 1, in order)
    const rel = (me - root + n) % n
    const tmp = new Uint8Array(bs * n)
    tmp.set(bytesOf(send))
    let have = 1
    for (let mask = 1; mask < n; mask <<= 1) {
      if ((rel & mask) === 0) {
        const src = rel + mask
        if (src < n) {
          const cnt = Math.min(mask, n - src)
          const rc = this.msg.recv(m[(src + root) % n]!, seq, 0, kind, bs, tmp.subarray(mask * bs, (mask + cnt) * bs))
          if (rc !== 0) return rc
          have += cnt
        }
      } else {
        return this.msg.send(m[(rel - mask + root) % n]!, seq, 0, kind, bs, tmp.subarray(0, have * bs))
      }
    }
    const r8 = bytesOf(recv!)
    for (let i = 0; i < n; i++) r8.set(tmp.subarray(i * bs, (i + 1) * bs), ((i + root) % n) * bs)
    return S.OK
  }

  /** Gather of every member's `send` into every member's `recv` (rank r's at r·send.length). */
  allgather(send: NumArray, recv: NumArray, g: Group = this.world): number {
    const n = g.size
    const me = g.rank
    const m = g.members
    if (!isNumArray(send) || !isNumArray(recv) || recv.length !== n * send.length || recv.constructor !== send.constructor) return S.ERR_BAD_ARG
    const kind = kindOf(K_ALLGATHER)
    const seq = this.begin(g, kind)
    const bs = bytesOf(send).length
    const r8 = bytesOf(recv)
    r8.set(bytesOf(send), me * bs)
    if (n === 1) return S.OK
    if ((n & (n - 1)) === 0 && bs * n <= ALLGATHER_RD_MAX) {
      for (let mask = 1, round = 0; mask < n; mask <<= 1, round++) {
        const partner = me ^ mask
        const mine = me & ~(mask - 1)
        const theirs = partner & ~(mask - 1)
        const rc = this.exchange(
          seq,
          round,
          kind,
          bs,
          m[partner]!,
          r8.subarray(mine * bs, (mine + mask) * bs),
          m[partner]!,
          r8.subarray(theirs * bs, (theirs + mask) * bs),
        )
        if (rc !== 0) return rc
      }
      return S.OK
    }
    const right = m[(me + 1) % n]!
    const left = m[(me + n - 1) % n]!
    for (let s = 0; s < n - 1; s++) {
      const sb = (me - s + n) % n
      const rb = (me - s - 1 + 2 * n) % n
      const rc = this.exchange(seq, s, kind, bs, right, r8.subarray(sb * bs, (sb + 1) * bs), left, r8.subarray(rb * bs, (rb + 1) * bs))
      if (rc !== 0) return rc
    }
    return S.OK
  }

  /** All-to-all: block r of `send` (send.length / P elements) to rank r, whose block `rank` of `recv` gets it. */
  alltoall(send: NumArray, recv: NumArray, g: Group = this.world): number {
    const n = g.size
    const me = g.rank
    const m = g.members
    if (!isNumArray(send) || !isNumArray(recv) || send.length !== recv.length || send.length % n !== 0 || recv.constructor !== send.constructor)
      return S.ERR_BAD_ARG
    const kind = kindOf(K_ALLTOALL)
    const seq = this.begin(g, kind)
    const s8 = bytesOf(send)
    const r8 = bytesOf(recv)
    const bs = s8.length / n
    if (n === 1) {
      r8.set(s8)
      return S.OK
    }
    if (bs <= ALLTOALL_LINEAR_MAX || g.allLocal) {
      // (small blocks, or one shared memory: every receive posted, every block sent, at once)
      const hs = this.handles
      hs.length = 0
      for (let s = 1; s < n; s++) {
        const t = (me - s + n) % n
        this.msg.post(m[t]!, seq, 0, kind, bs, r8.subarray(t * bs, (t + 1) * bs))
      }
      for (let s = 1; s < n; s++) {
        const t = (me + s) % n
        hs.push(this.msg.sendNb(m[t]!, seq, 0, kind, bs, s8.subarray(t * bs, (t + 1) * bs)))
      }
      r8.set(s8.subarray(me * bs, (me + 1) * bs), me * bs)
      let rc = 0
      for (let s = 1; s < n; s++) {
        const t = (me - s + n) % n
        const r = this.msg.recv(m[t]!, seq, 0, kind, bs, r8.subarray(t * bs, (t + 1) * bs))
        if (rc === 0) rc = r
      }
      const rs = this.waitAll(hs)
      return rc !== 0 ? rc : rs
    }
    // (the own block is copied while the first partner takes what it was sent)
    for (let s = 1; s < n; s++) {
      const to = (me + s) % n
      const from = (me - s + n) % n
      const into = r8.subarray(from * bs, (from + 1) * bs)
      this.msg.post(m[from]!, seq, s, kind, bs, into)
      const h = this.msg.sendNb(m[to]!, seq, s, kind, bs, s8.subarray(to * bs, (to + 1) * bs))
      if (s === 1) r8.set(s8.subarray(me * bs, (me + 1) * bs), me * bs)
      const rc = this.msg.recv(m[from]!, seq, s, kind, bs, into)
      const rs = this.msg.wait(h)
      if (rc !== 0 || rs !== 0) return rc !== 0 ? rc : rs
    }
    return S.OK
  }

  /**
   * All-to-all with counts: `sendCounts[r]` elements from `sendDispls[r]` of `send` to rank r,
   * `recvCounts[r]` elements from rank r into `recv` at `recvDispls[r]` (pairwise exchange).
   */
  alltoallv(
    send: NumArray,
    sendCounts: ArrayLike<number>,
    sendDispls: ArrayLike<number>,
    recv: NumArray,
    recvCounts: ArrayLike<number>,
    recvDispls: ArrayLike<number>,
    g: Group = this.world,
  ): number {
    const n = g.size
    const me = g.rank
    const m = g.members
    if (!isNumArray(send) || !isNumArray(recv) || recv.constructor !== send.constructor) return S.ERR_BAD_ARG
    if (!counts(sendCounts, n) || !counts(sendDispls, n) || !counts(recvCounts, n) || !counts(recvDispls, n)) return S.ERR_BAD_ARG
    for (let t = 0; t < n; t++) {
      const sc = sendCounts[t]!
      const sd = sendDispls[t]!
      const rcn = recvCounts[t]!
      const rd = recvDispls[t]!
      if (![sc, sd, rcn, rd].every((v) => Number.isInteger(v) && v >= 0) || sd + sc > send.length || rd + rcn > recv.length) return S.ERR_BAD_ARG
    }
    const kind = kindOf(K_ALLTOALLV)
    const seq = this.begin(g, kind)
    const piece = (a: NumArray, d: number, c: number): Uint8Array => bytesOf(a.subarray(d, d + c))
    if (sendCounts[me] !== recvCounts[me]) return S.ERR_COLL_MISMATCH
    piece(recv, recvDispls[me]!, recvCounts[me]!).set(piece(send, sendDispls[me]!, sendCounts[me]!))
    for (let s = 1; s < n; s++) {
      const to = (me + s) % n
      const from = (me - s + n) % n
      const rc = this.exchange(
        seq,
        s,
        kind,
        0,
        m[to]!,
        piece(send, sendDispls[to]!, sendCounts[to]!),
        m[from]!,
        piece(recv, recvDispls[from]!, recvCounts[from]!),
      )
      if (rc !== 0) return rc
    }
    return S.OK
  }
}

/** Whether `a` is an array-like of `n` entries (counts or displacements, one per rank). */
function counts(a: ArrayLike<number>, n: number): boolean {
  return a !== null && typeof a === 'object' && a.length === n
}
