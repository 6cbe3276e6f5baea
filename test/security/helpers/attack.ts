/**
 * What a local user (no privileges, or root in a root-only tier) can do to a running job from
 * outside it: find its processes and the ports they listen on through /proc, watch their memory,
 * and open hostile connections to those ports. Linux only (/proc). Every loop here is bounded in
 * count and time, and the connections go only where the caller says (the tests: 127.0.0.1).
 *
 *   descendants(pid)                every process below `pid` (children, theirs, …)
 *   listeningPorts(pids, proto)     the loopback sockets those processes listen on
 *   rssKiB(pid), peakRssKiB(pid)    VmRSS and VmHWM of /proc/<pid>/status
 *   watchMemory(root)               samples the RSS of `root` and its descendants until stopped
 *   environOf(pid), cmdlineOf(pid)  the environment (its user only) and command line a process runs with
 *   hostileConnections(targets, o)  strangers that claim huge messages, trickle bytes, or sit idle
 *   tryConnect(target)              what one connection attempt gets: connected, or the error's code
 *   answerChallenge(target, reply)  one connection that answers a listener's challenge and reads what comes back
 */
import { randomBytes } from 'node:crypto'
import { readFileSync, readdirSync, readlinkSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { decodeBody } from '@amlapi/lapi/transport'

/** The children of `pid` (every thread's), or [] when it is gone. */
function childrenOf(pid: number): number[] {
  const out: number[] = []
  let tasks: string[]
  try {
    tasks = readdirSync(`/proc/${pid}/task`)
  } catch {
    return out
  }
  for (const t of tasks) {
    try {
      for (const c of readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim().split(/\s+/)) if (c !== '') out.push(Number(c))
    } catch {
      /* the thread ended, or a kernel without task/children: the scan below */
    }
  }
  return out
}

/** The parent of every process, from /proc/<pid>/stat (the fallback where task/children is missing). */
function parents(): Map<number, number> {
  const m = new Map<number, number>()
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const s = readFileSync(`/proc/${d}/stat`, 'utf8')
      // (the name, in parentheses, may hold spaces: the fields after its last ')' are fixed)
      m.set(Number(d), Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]))
    } catch {
      /* gone meanwhile */
    }
  }
  return m
}

/** Every live descendant of `pid` (not `pid` itself), nearest first; at most 4096. */
export function descendants(pid: number): number[] {
  const seen = new Set<number>()
  const queue = [pid]
  let haveChildren = true
  try {
    readFileSync(`/proc/${pid}/task/${pid}/children`)
  } catch {
    haveChildren = false
  }
  const ppid = haveChildren ? null : parents()
  while (queue.length > 0 && seen.size < 4096) {
    const p = queue.shift()!
    const kids = ppid === null ? childrenOf(p) : [...ppid].filter(([, pp]) => pp === p).map(([c]) => c)
    for (const c of kids)
      if (!seen.has(c) && c !== pid) {
        seen.add(c)
        queue.push(c)
      }
  }
  return [...seen]
}

/** Whether `pid` runs (process.kill(pid, 0) succeeds) and is no zombie waiting for its parent. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return s.slice(s.lastIndexOf(')') + 2, s.lastIndexOf(')') + 3) !== 'Z'
  } catch {
    return false
  }
}

export interface ListeningSocket {
  pid: number
  /** The local address, as text: 127.0.0.1, ::1, ::ffff:127.0.0.1, 0.0.0.0 … */
  host: string
  port: number
  proto: 'tcp' | 'udp'
  inode: number
  /** The kernel's state: '0A' LISTEN (tcp); '07' unconnected, '01' connected (udp). */
  state: string
}

/** An address of /proc/net/{tcp,udp}{,6} (hex, each 32-bit word in host order: little-endian here) as text. */
function hexAddress(hex: string): string {
  const words = hex.match(/.{8}/g) ?? []
  const bytes = words.flatMap((w) => [w.slice(6, 8), w.slice(4, 6), w.slice(2, 4), w.slice(0, 2)].map((b) => parseInt(b, 16)))
  if (bytes.length === 4) return bytes.join('.')
  const v4mapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff
  if (v4mapped) return `::ffff:${bytes.slice(12).join('.')}`
  const groups: number[] = []
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i]! << 8) | bytes[i + 1]!)
  // (RFC 5952: the longest run of two or more zero groups written as ::)
  let at = -1
  let len = 0
  for (let i = 0; i < 8; i++) {
    let j = i
    while (j < 8 && groups[j] === 0) j++
    if (j - i > len && j - i >= 2) {
      at = i
      len = j - i
    }
  }
  const hexes = groups.map((g) => g.toString(16))
  if (at < 0) return hexes.join(':')
  return `${hexes.slice(0, at).join(':')}::${hexes.slice(at + len).join(':')}`
}

/** Whether `host` (as `hexAddress` writes it) is a loopback address. */
function loopback(host: string): boolean {
  return host.startsWith('127.') || host === '::1' || host.startsWith('::ffff:127.')
}

/** The socket inodes a process holds open (its /proc/<pid>/fd: its own user's, or root's, to read). */
function socketInodes(pid: number): Set<number> {
  const out = new Set<number>()
  let fds: string[]
  try {
    fds = readdirSync(`/proc/${pid}/fd`)
  } catch {
    return out
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))
      if (m !== null) out.add(Number(m[1]))
    } catch {
      /* closed meanwhile */
    }
  }
  return out
}

/**
 * The sockets `pids` listen on, read as any local user can (the world-readable /proc/net tables),
 * then matched to the processes through their descriptors' inodes: for 'tcp' the LISTEN sockets,
 * for 'udp' every bound socket. Only loopback addresses unless `anyAddress` (a root tier's
 * namespaces); sorted by pid, then port.
 */
export function listeningPorts(pids: number[], proto: 'tcp' | 'udp', opts: { anyAddress?: boolean } = {}): ListeningSocket[] {
  const owner = new Map<number, number>()
  for (const pid of pids) for (const ino of socketInodes(pid)) owner.set(ino, pid)
  const out: ListeningSocket[] = []
  for (const table of [`/proc/net/${proto}`, `/proc/net/${proto}6`]) {
    let text: string
    try {
      text = readFileSync(table, 'utf8')
    } catch {
      continue
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/)
      if (f.length < 10) continue
      const [addr, portHex] = f[1]!.split(':') as [string, string]
      const state = f[3]!
      const inode = Number(f[9])
      if (proto === 'tcp' && state !== '0A') continue
      const pid = owner.get(inode)
      if (pid === undefined) continue
      const host = hexAddress(addr)
      if (opts.anyAddress !== true && !loopback(host)) continue
      out.push({ pid, host, port: parseInt(portHex, 16), proto, inode, state })
    }
  }
  return out.sort((a, b) => a.pid - b.pid || a.port - b.port)
}

/** A field of /proc/<pid>/status in KiB (VmRSS, VmHWM), or null when the process is gone. */
function statusKiB(pid: number, field: string): number | null {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m === null ? null : Number(m[1])
  } catch {
    return null
  }
}

/** The resident set of `pid` now, KiB (VmRSS), or null when it is gone. */
export function rssKiB(pid: number): number | null {
  return statusKiB(pid, 'VmRSS')
}

/** The largest resident set `pid` has had, KiB (VmHWM), or null when it is gone. */
export function peakRssKiB(pid: number): number | null {
  return statusKiB(pid, 'VmHWM')
}

/** The environment `pid` was started with (/proc/<pid>/environ: readable by its user and root only), or null. */
export function environOf(pid: number): Map<string, string> | null {
  try {
    const m = new Map<string, string>()
    for (const kv of readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
      const eq = kv.indexOf('=')
      if (eq > 0) m.set(kv.slice(0, eq), kv.slice(eq + 1))
    }
    return m
  } catch {
    return null
  }
}

/** What `watchMemory` saw of one process. */
export interface MemorySeen {
  pid: number
  /** The largest VmRSS sampled, KiB. */
  maxRssKiB: number
  /** The last VmHWM read before the process ended (its peak up to then), KiB. */
  peakKiB: number
  /** Its command line and environment (its user's to read): to tell a job's processes apart. */
  cmdline: string
  env: Map<string, string> | null
}

/** The command line of `pid` (arguments joined by spaces), or null when it is gone. */
export function cmdlineOf(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim()
  } catch {
    return null
  }
}

export interface MemoryWatch {
  /** What has been seen so far, by pid (the root and every descendant that showed up). */
  seen: () => Map<number, MemorySeen>
  /** Stops sampling (at most `limitMs` after it started it stops by itself) and returns what it saw. */
  stop: () => Map<number, MemorySeen>
}

/**
 * Samples VmRSS and VmHWM of `root` and of its descendants (looked for again each time) every
 * `everyMs` (default 50), for at most `limitMs` (default 60 s). A process seen between its fork
 * and its exec (its parent's copy) is seen afresh once it runs its own program.
 */
export function watchMemory(root: number, opts: { everyMs?: number; limitMs?: number } = {}): MemoryWatch {
  const seen = new Map<number, MemorySeen>()
  const sample = (): void => {
    for (const pid of [root, ...descendants(root)]) {
      const cmdline = cmdlineOf(pid)
      const rss = rssKiB(pid)
      const hwm = peakRssKiB(pid)
      if (rss === null || hwm === null || cmdline === null) continue
      let s = seen.get(pid)
      if (s === undefined || s.cmdline !== cmdline) {
        s = { pid, maxRssKiB: 0, peakKiB: 0, cmdline, env: environOf(pid) }
        seen.set(pid, s)
      }
      s.maxRssKiB = Math.max(s.maxRssKiB, rss)
      s.peakKiB = Math.max(s.peakKiB, hwm)
    }
  }
  sample()
  const timer = setInterval(sample, opts.everyMs ?? 50)
  const limit = setTimeout(() => clearInterval(timer), opts.limitMs ?? 60_000)
  return {
    seen: () => seen,
    stop: () => {
      clearInterval(timer)
      clearTimeout(limit)
      sample()
      return seen
    },
  }
}

export interface Target {
  host: string
  port: number /** For messages: "rendezvous", "process 1 tcp" … */
  label?: string
}

/**
 * What a hostile connection does:
 *   'claim'       a 4-byte little-endian length of `claimBytes` (16 MiB), `burstBytes` of random
 *                 bytes at once, then `trickleBytes` more every `trickleMs` (a message that never ends);
 *   'idle'        nothing at all;
 *   'half-hello'  the length of a hello and half of its body (a handshake that stops half way).
 */
export type HostileKind = 'claim' | 'idle' | 'half-hello'

export interface HostileOptions {
  /** Connections per target (opened at once). */
  perTarget: number
  /** What the connections do, assigned in turn (default: three 'claim' for each 'idle'). */
  kinds?: HostileKind[]
  /** The message length a 'claim' announces, bytes (default 16 MiB). */
  claimBytes?: number
  /** Random bytes a 'claim' sends with its length (default 64 KiB), then every `trickleMs` (default 50) `trickleBytes` (default 4 KiB). */
  burstBytes?: number
  trickleBytes?: number
  trickleMs?: number
  /** Bytes a connection may have queued before its trickle skips a turn (the attacker's own memory; default 256 KiB). */
  maxQueued?: number
  /** Where a listener closes a connection, open another in its place this many ms later (default: none). */
  reopenMs?: number
  /** With `reopenMs`: where a connection cannot be made (nothing listens there any more), try again as often. */
  retryFailed?: boolean
  /** The most connections opened in all, reopened ones included (default 20 per connection asked for). */
  maxOpens?: number
}

export interface HostileStats {
  /** Connections tried, in all. */
  opened: number
  /** Connections made (the listener's kernel completed the handshake). */
  connected: number
  /** Open now, per target (by label, else host:port). */
  open: Record<string, number>
  /** Closed (or reset) by the other end. */
  closedByListener: number
  /** Connections that could not be made, and of those the ones the kernel refused (ECONNREFUSED: nothing listens there). */
  failed: number
  refusedByKernel: number
  /** Messages received that say {t:'refused'}, {t:'welcome'}, and the rest (challenges…). */
  refusals: number
  welcomes: number
  otherMessages: number
  /** Bytes the connections wrote, and received. */
  bytesWritten: number
  bytesReceived: number
  /** The longest a listener let one connection be before it closed it, ms. */
  longestHeldMs: number
}

export interface Hostile {
  stats: () => HostileStats
  /** Stops the trickle and closes every connection this side still holds; resolves with the figures. */
  stop: () => Promise<HostileStats>
}

/** Bytes of received messages a connection parses (a challenge and a refusal fit in a tenth). */
const PARSE_LIMIT = 4096

/**
 * Opens `perTarget` hostile connections to each target and keeps them at it until `stop()` (the
 * caller's finally). Connections the listeners close stay closed unless `reopenMs` is given (and
 * connections that cannot be made are not tried again unless `retryFailed` too).
 * Parses what the listeners send (length-prefixed msgpack) to count welcomes and refusals.
 */
export function hostileConnections(targets: Target[], opts: HostileOptions): Hostile {
  const kinds = opts.kinds ?? ['claim', 'claim', 'claim', 'idle']
  const claim = opts.claimBytes ?? 16 << 20
  const burst = opts.burstBytes ?? 64 << 10
  const trickle = opts.trickleBytes ?? 4 << 10
  const maxQueued = opts.maxQueued ?? 256 << 10
  const maxOpens = opts.maxOpens ?? 20 * opts.perTarget * targets.length
  // (a few random buffers, reused: random enough for a parser, cheap for the attacker)
  const noise = Array.from({ length: 4 }, () => randomBytes(Math.max(burst, trickle)))
  const st: HostileStats = {
    opened: 0,
    connected: 0,
    open: {},
    closedByListener: 0,
    failed: 0,
    refusedByKernel: 0,
    refusals: 0,
    welcomes: 0,
    otherMessages: 0,
    bytesWritten: 0,
    bytesReceived: 0,
    longestHeldMs: 0,
  }
  const live = new Set<Socket>()
  const trickling = new Set<Socket>()
  const reopens = new Set<NodeJS.Timeout>()
  let stopping = false
  let turn = 0

  const write = (s: Socket, b: Buffer): void => {
    if (s.destroyed || s.writableLength > maxQueued) return
    st.bytesWritten += b.length
    s.write(b)
  }
  const open = (t: Target, kind: HostileKind): void => {
    if (stopping || st.opened >= maxOpens) return
    st.opened++
    const name = t.label ?? `${t.host}:${t.port}`
    const s = connect({ host: t.host, port: t.port })
    const t0 = performance.now()
    let connected = false
    let got = Buffer.alloc(0)
    live.add(s)
    s.on('error', (e: NodeJS.ErrnoException) => {
      if (!connected && e.code === 'ECONNREFUSED') st.refusedByKernel++
    })
    s.on('connect', () => {
      connected = true
      st.connected++
      st.open[name] = (st.open[name] ?? 0) + 1
      if (kind === 'claim') {
        const head = Buffer.alloc(4)
        head.writeUInt32LE(claim, 0)
        write(s, Buffer.concat([head, noise[turn % noise.length]!.subarray(0, burst)]))
        trickling.add(s)
      } else if (kind === 'half-hello') {
        // (a real hello is ~90 bytes: its length, then half of a plausible body)
        const body = Buffer.concat([Buffer.from([0x84, 0xa1, 0x74, 0xa5]), Buffer.from('hello'), randomBytes(40)])
        const head = Buffer.alloc(4)
        head.writeUInt32LE(body.length * 2, 0)
        write(s, Buffer.concat([head, body]))
      }
    })
    s.on('data', (d: Buffer) => {
      st.bytesReceived += d.length
      if (got.length >= PARSE_LIMIT) return
      got = Buffer.concat([got, d]).subarray(0, PARSE_LIMIT)
      while (got.length >= 4) {
        const n = got.readUInt32LE(0)
        if (got.length < 4 + n) break
        let m: unknown
        try {
          m = decodeBody(got.subarray(4, 4 + n))
        } catch {
          m = null
        }
        const kindOf = m !== null && typeof m === 'object' ? (m as Record<string, unknown>)['t'] : undefined
        if (kindOf === 'refused') st.refusals++
        else if (kindOf === 'welcome') st.welcomes++
        else st.otherMessages++
        got = got.subarray(4 + n)
      }
    })
    const again = (): void => {
      if (opts.reopenMs === undefined || stopping) return
      const r = setTimeout(() => {
        reopens.delete(r)
        open(t, kind)
      }, opts.reopenMs)
      reopens.add(r)
    }
    s.on('close', () => {
      live.delete(s)
      trickling.delete(s)
      if (!connected) {
        st.failed++
        if (opts.retryFailed === true) again()
        return
      }
      st.open[name] = (st.open[name] ?? 1) - 1
      if (stopping) return
      st.closedByListener++
      st.longestHeldMs = Math.max(st.longestHeldMs, performance.now() - t0)
      again()
    })
  }
  const timer = setInterval(() => {
    for (const s of trickling) write(s, noise[turn++ % noise.length]!.subarray(0, trickle))
  }, opts.trickleMs ?? 50)
  for (const t of targets) for (let i = 0; i < opts.perTarget; i++) open(t, kinds[i % kinds.length]!)
  const copy = (): HostileStats => ({ ...st, open: { ...st.open } })
  return {
    stats: copy,
    stop: async () => {
      stopping = true
      clearInterval(timer)
      for (const r of reopens) clearTimeout(r)
      const closing = [...live].map(
        (s) =>
          new Promise<void>((resolve) => {
            s.once('close', () => resolve())
            s.destroy()
          }),
      )
      // (a destroyed socket closes on the next turn of the loop; 2 s is a bound, not a wait)
      await Promise.race([Promise.all(closing), new Promise((resolve) => setTimeout(resolve, 2000))])
      return copy()
    },
  }
}

/**
 * One connection attempt to `target`: 'connected' (then closed at once), the error's code
 * ('ECONNREFUSED': nothing listens there), or 'timeout' after `deadlineMs` (default 2000).
 */
export function tryConnect(target: Target, deadlineMs = 2000): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ host: target.host, port: target.port })
    const done = (what: string): void => {
      clearTimeout(timer)
      s.destroy()
      resolve(what)
    }
    const timer = setTimeout(() => done('timeout'), deadlineMs)
    s.once('connect', () => done('connected'))
    s.once('error', (e: NodeJS.ErrnoException) => done(e.code ?? e.message))
  })
}

/** What `answerChallenge` got. */
export interface ChallengeReply {
  /** The listener's challenge nonce (null when the first message was none). */
  challenge: Uint8Array | null
  /** Every byte after the challenge, until the listener closed the connection or the deadline. */
  reply: Buffer
  /** Whether the listener closed the connection before the deadline. */
  closed: boolean
}

/**
 * One connection to a listener of the job's handshake (the rendezvous, a tcp transport): reads
 * its challenge, sends what `answer(challenge)` returns, and collects what comes back until the
 * listener closes the connection, or `deadlineMs` (default 3000) have passed.
 */
export function answerChallenge(target: Target, answer: (challenge: Uint8Array) => Buffer, deadlineMs = 3000): Promise<ChallengeReply> {
  return new Promise((resolve) => {
    const s = connect({ host: target.host, port: target.port })
    let buf = Buffer.alloc(0)
    let challenge: Uint8Array | null = null
    let answered = false
    const done = (closed: boolean): void => {
      clearTimeout(timer)
      s.destroy()
      resolve({ challenge, reply: answered ? buf : Buffer.alloc(0), closed })
    }
    const timer = setTimeout(() => done(false), deadlineMs)
    s.on('error', () => {
      /* the close says it */
    })
    s.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d])
      if (answered || buf.length < 4 || buf.length < 4 + buf.readUInt32LE(0)) return
      const n = buf.readUInt32LE(0)
      let m: unknown = null
      try {
        m = decodeBody(buf.subarray(4, 4 + n))
      } catch {
        /* not a challenge */
      }
      const c = m !== null && typeof m === 'object' ? (m as Record<string, unknown>)['n'] : undefined
      challenge = c instanceof Uint8Array ? c : null
      buf = buf.subarray(4 + n)
      answered = true
      s.write(answer(challenge ?? new Uint8Array(16)))
    })
    s.on('close', () => done(true))
  })
}
