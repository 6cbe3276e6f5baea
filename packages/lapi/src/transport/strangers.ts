/**
 * What a connection costs a listener before it proves the job key (docs/security.md, "What a
 * stranger can cost"): the rendezvous and the tcp transport's listener admit every connection
 * through a `StrangerGate`, which gives it HANDSHAKE_MS to prove the key, holds at most
 * MAX_STRANGERS such connections at once (a new one beyond that pushes out the oldest of the
 * source address that holds the most, if it has had SAFE_MS to prove the key; else the new one is
 * closed), and logs refusals sparingly. A connection closed for time or pushed out is closed
 * without an answer: a real peer's dials again (launch/member.ts, transport/tcp/transport.ts) until its start
 * deadline. Meanwhile its messages are flat maps of PRE_AUTH_MAX_BYTES at most (transport/messages.ts).
 */
import type { Socket } from 'node:net'
import type { Logger } from 'pino'

/** How long a connection may take to prove the key, ms. */
export const HANDSHAKE_MS = 5000
/** Connections a listener holds at once that have not proved the key. */
export const MAX_STRANGERS = 64
/**
 * How long a new connection is safe from being pushed out, ms: a real peer proves the key within a
 * round trip or two, so a burst of strangers cannot push it out before it does (while every
 * waiting connection is this young, a newer one is closed at once instead, and a real peer's
 * dials again a little later).
 */
export const SAFE_MS = 50
/** Refusals logged one by one, then every LOG_EVERY-th. */
const LOG_FIRST = 10
const LOG_EVERY = 1000

interface Pending {
  source: string
  timer: NodeJS.Timeout
  since: number
}

export class StrangerGate {
  private readonly pending = new Map<Socket, Pending>()
  /** Every connection not yet closed, proven or not (closed all at once by `closeAll`). */
  private readonly all = new Set<Socket>()
  /** Connections refused, pushed out or closed for want of room so far. */
  refused = 0
  private readonly what: string
  private readonly log: Logger
  private readonly answer: Buffer | null

  /**
   * @param what the listener, for the log ("rendezvous", "tcp")
   * @param answer what a refused connection is told before it is closed (the same whatever the reason), if anything
   */
  constructor(what: string, log: Logger, answer: Buffer | null = null) {
    this.what = what
    this.log = log
    this.answer = answer
  }

  /** Takes a new connection in: it has HANDSHAKE_MS to be `proven`. False when it was closed at once (no room). */
  admit(sock: Socket): boolean {
    const source = sock.remoteAddress ?? '?'
    this.all.add(sock)
    sock.once('close', () => {
      this.all.delete(sock)
      const p = this.pending.get(sock)
      if (p !== undefined) {
        clearTimeout(p.timer)
        this.pending.delete(sock)
      }
    })
    if (this.pending.size >= MAX_STRANGERS && !this.evictOne()) {
      this.refused++
      sock.destroy()
      return false
    }
    const timer = setTimeout(() => this.refuse(sock, 'no proof of the key in time', false), HANDSHAKE_MS)
    timer.unref()
    this.pending.set(sock, { source, timer, since: performance.now() })
    return true
  }

  /** The connection proved the key: no deadline, no longer a stranger. */
  proven(sock: Socket): void {
    const p = this.pending.get(sock)
    if (p === undefined) return
    clearTimeout(p.timer)
    this.pending.delete(sock)
  }

  /** Whether the connection is still waiting to prove the key. */
  waiting(sock: Socket): boolean {
    return this.pending.has(sock)
  }

  /**
   * Refuses a connection and closes it: with the listener's answer (the same whatever the reason,
   * which is only logged) when `answer`, else without a word — a connection that ran out of time
   * or was pushed out may be a real peer's, which then tries again.
   */
  refuse(sock: Socket, why: string, answer = true): void {
    const p = this.pending.get(sock)
    if (p !== undefined) {
      clearTimeout(p.timer)
      this.pending.delete(sock)
    }
    this.refused++
    if (this.refused <= LOG_FIRST || this.refused % LOG_EVERY === 0) {
      this.log.warn({ from: `${sock.remoteAddress ?? '?'}:${sock.remotePort ?? '?'}`, why, refused: this.refused }, `${this.what}: connection refused`)
    }
    if (!answer || this.answer === null || sock.destroyed) {
      sock.destroy()
      return
    }
    // (the answer is written, then the connection closed: at once once it is flushed, 1 s at most)
    const t = setTimeout(() => sock.destroy(), 1000)
    t.unref()
    sock.once('finish', () => {
      clearTimeout(t)
      sock.destroy()
    })
    sock.end(this.answer)
  }

  /** Closes every connection that has not proved the key. */
  closeStrangers(): void {
    for (const [s, p] of this.pending) {
      clearTimeout(p.timer)
      s.destroy()
    }
    this.pending.clear()
  }

  /** Closes every connection, proven or not. */
  closeAll(): void {
    for (const s of this.all) s.destroy()
    for (const p of this.pending.values()) clearTimeout(p.timer)
    this.pending.clear()
  }

  /**
   * Pushes out the oldest connection older than SAFE_MS of the source that holds the most such (on
   * one host: the oldest); false when every waiting connection is younger.
   */
  private evictOne(): boolean {
    const old = performance.now() - SAFE_MS
    const count = new Map<string, number>()
    let top = ''
    let most = 0
    for (const p of this.pending.values()) {
      if (p.since > old) continue
      const c = (count.get(p.source) ?? 0) + 1
      count.set(p.source, c)
      if (c > most) {
        most = c
        top = p.source
      }
    }
    if (most === 0) return false
    for (const [s, p] of this.pending) {
      if (p.source !== top || p.since > old) continue
      this.refuse(s, `pushed out: ${MAX_STRANGERS} connections were waiting to prove the key`, false)
      return true
    }
    return false
  }
}
