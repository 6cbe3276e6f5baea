/**
 * The collectives that combine with an operator (P members of the group, m bytes):
 * - reduce: binomial tree (⌈log2 P⌉ steps);
 * - all-reduce: recursive doubling (through shared mailboxes where the group is the world, every
 *   task shares this process, P is a power of two and the operand at most SYNC_DATA bytes; else
 *   messages, non-powers of two folding the extra tasks in first and out last) up to
 *   ALLREDUCE_RD_MAX, above it a ring reduce-scatter and a ring all-gather (2(P − 1) steps of
 *   m/P bytes);
 * - scan and exclusive scan: recursive doubling (Hillis–Steele, ⌈log2 P⌉ steps).
 */
import { ALLREDUCE_RD_MAX, CollBase, K_ALLREDUCE, K_EXSCAN, K_REDUCE, K_SCAN, kindOf } from './coll-base.js'
import type { Group } from './group.js'
import { type NumArray, bytesOf, combine, isNumArray, like, opFits } from './reduce-ops.js'
import { PgasStatus as S } from './status.js'

export class Reductions extends CollBase {
  /** Reduction of every member's `send` with `op` into `recv` at `root` (`recv` is not touched elsewhere and may be null there). */
  reduce(send: NumArray, recv: NumArray | null, op: number, root: number, g: Group = this.world): number {
    if (!isNumArray(send) || this.badRoot(g, root) || !opFits(op, send)) return S.ERR_BAD_ARG
    const me = g.rank
    const m = g.members
    if (me === root && (recv === null || !isNumArray(recv) || recv.length !== send.length || recv.constructor !== send.constructor)) return S.ERR_BAD_ARG
    const n = g.size
    const kind = kindOf(K_REDUCE, root, op)
    const seq = this.begin(g, kind)
    const acc = send.slice() as NumArray
    const tmp = like(send, send.length)
    const len = bytesOf(send).length
    const rel = (me - root + n) % n
    for (let mask = 1; mask < n; mask <<= 1) {
      if ((rel & mask) === 0) {
        const src = rel | mask
        if (src < n) {
          const rc = this.msg.recv(m[(src + root) % n]!, seq, 0, kind, len, bytesOf(tmp))
          if (rc !== 0) return rc
          combine(op, acc, tmp)
        }
      } else {
        return this.msg.send(m[((rel & ~mask) + root) % n]!, seq, 0, kind, len, bytesOf(acc))
      }
    }
    recv!.set(acc as never)
    return S.OK
  }

  /** Reduction of every member's `send` with `op` into every member's `recv` (may be `send` itself). */
  allreduce(send: NumArray, recv: NumArray, op: number, g: Group = this.world): number {
    if (!isNumArray(send) || !isNumArray(recv) || recv.length !== send.length || recv.constructor !== send.constructor || !opFits(op, send))
      return S.ERR_BAD_ARG
    const n = g.size
    const kind = kindOf(K_ALLREDUCE, 0, op)
    const seq = this.begin(g, kind)
    if (recv !== send) recv.set(send as never)
    if (n === 1) return S.OK
    const len = send.byteLength
    if (g.id === 0 && this.sync.doubles(len)) {
      // (the world, every task in this process, P a power of two, a small operand: through shared mailboxes)
      const rc = this.sync.double(seq, kind, recv, op)
      if (rc !== 0) this.msg.markFailed(seq)
      return rc
    }
    if (len <= ALLREDUCE_RD_MAX || send.length < n) return this.allreduceRd(g, seq, kind, len, recv, op)
    return this.allreduceRing(g, seq, kind, len, recv, op)
  }

  private allreduceRd(g: Group, seq: number, kind: number, len: number, acc: NumArray, op: number): number {
    const n = g.size
    const me = g.rank
    const m = g.members
    const tmp = like(acc, acc.length)
    const t8 = bytesOf(tmp)
    const a8 = bytesOf(acc)
    let pof2 = 1
    while (pof2 * 2 <= n) pof2 *= 2
    const rem = n - pof2
    let newRank: number
    let rc: number
    // (the first 2·rem members pair up: the even one hands its data to the odd one and sits out)
    if (me < 2 * rem) {
      if ((me & 1) === 0) {
        rc = this.msg.send(m[me + 1]!, seq, 0, kind, len, a8)
        if (rc !== 0) return rc
        newRank = -1
      } else {
        rc = this.msg.recv(m[me - 1]!, seq, 0, kind, len, t8)
        if (rc !== 0) return rc
        combine(op, acc, tmp)
        newRank = me >> 1
      }
    } else newRank = me - rem
    if (newRank >= 0) {
      for (let mask = 1, round = 1; mask < pof2; mask <<= 1, round++) {
        const nr = newRank ^ mask
        const dst = m[nr < rem ? nr * 2 + 1 : nr + rem]!
        rc = this.exchange(seq, round, kind, len, dst, a8, dst, t8)
        if (rc !== 0) return rc
        combine(op, acc, tmp)
      }
    }
    if (me < 2 * rem) {
      if ((me & 1) === 1) return this.msg.send(m[me - 1]!, seq, 100, kind, len, a8)
      return this.msg.recv(m[me + 1]!, seq, 100, kind, len, a8)
    }
    return S.OK
  }

  private allreduceRing(g: Group, seq: number, kind: number, len: number, acc: NumArray, op: number): number {
    const n = g.size
    const me = g.rank
    const cnt0 = acc.length
    const lo = (b: number): number => Math.floor((b * cnt0) / n)
    const right = g.members[(me + 1) % n]!
    const left = g.members[(me + n - 1) % n]!
    const tmp = like(acc, Math.ceil(cnt0 / n) + 1)
    const part = (a: NumArray, b: number): Uint8Array => bytesOf(a.subarray(lo(b), lo(b + 1)))
    for (let s = 0; s < n - 1; s++) {
      const sb = (me - s + n) % n
      const rb = (me - s - 1 + 2 * n) % n
      const cnt = lo(rb + 1) - lo(rb)
      const into = bytesOf(tmp.subarray(0, cnt))
      const rc = this.exchange(seq, s, kind, len, right, part(acc, sb), left, into)
      if (rc !== 0) return rc
      combine(op, acc.subarray(lo(rb), lo(rb + 1)) as NumArray, tmp.subarray(0, cnt) as NumArray)
    }
    for (let s = 0; s < n - 1; s++) {
      const sb = (me + 1 - s + n) % n
      const rb = (me - s + n) % n
      const rc = this.exchange(seq, n + s, kind, len, right, part(acc, sb), left, part(acc, rb))
      if (rc !== 0) return rc
    }
    return S.OK
  }

  /**
   * Prefix reduction: member r's `recv` = send₀ op … op send_r (inclusive), or send₀ op … op
   * send_{r−1} when `exclusive` (rank 0's `recv` is then left as it is).
   */
  scan(send: NumArray, recv: NumArray, op: number, exclusive = false, g: Group = this.world): number {
    if (!isNumArray(send) || !isNumArray(recv) || recv.length !== send.length || recv.constructor !== send.constructor || !opFits(op, send) || recv === send)
      return S.ERR_BAD_ARG
    const n = g.size
    const me = g.rank
    const m = g.members
    const kind = kindOf(exclusive ? K_EXSCAN : K_SCAN, 0, op)
    const seq = this.begin(g, kind)
    const len = bytesOf(send).length
    const acc = send.slice() as NumArray
    const tmp = like(send, send.length)
    let got = false
    for (let mask = 1, round = 0; mask < n; mask <<= 1, round++) {
      const h = me + mask < n ? this.msg.sendNb(m[me + mask]!, seq, round, kind, len, bytesOf(acc)) : null
      let rc = 0
      if (me - mask >= 0) {
        rc = this.msg.recv(m[me - mask]!, seq, round, kind, len, bytesOf(tmp))
      }
      const rs = h !== null ? this.msg.wait(h) : 0
      if (rc !== 0) return rc
      if (rs !== 0) return rs
      if (me - mask >= 0) {
        if (exclusive) {
          if (got) combine(op, recv, tmp)
          else recv.set(tmp as never)
        }
        got = true
        combine(op, acc, tmp)
      }
    }
    if (!exclusive) recv.set(acc as never)
    return S.OK
  }
}
