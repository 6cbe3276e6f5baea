/**
 * Attacks on the `udp` transport's handshake (docs/transports.md, "UDP"), each against the real
 * implementation:
 *
 *   - "Stateless handshake": a flood of forged hellos at a process's handshake port while its peer
 *     joins does not keep the pair from meeting (before, the acceptor's table of four answered
 *     hellos was pushed out faster than the real handshake could finish).
 *   - A handshake response handled twice before its sending socket is made counts the peer ready
 *     once (before, twice: a job of three went on with a peer it never met).
 *
 * The forged hellos meet a two-process job run with `lapirun --join`; the response a transport of
 * this process, its handshake called directly.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createSocket, type Socket } from 'node:dgram'
import { writeSync } from 'node:fs'
import { createServer } from 'node:net'
import { describe, expect, it } from 'vitest'
import { UdpTransport, createDatagramShared, logger } from '#lapi-internal'
import { decodeBody, encodeMessage, makeKey, makeNonce, proof, type PeerAddress } from '@amlapi/lapi/transport'
import { FIXTURES } from '../helpers/job.js'
import { LAPIRUN } from '../helpers/run.js'
import { cleanups, note } from './helpers/udp-cases.js'

// ───────────────────────────── forged-hello flood ─────────────────────────────

/** A free loopback port (for process 0's rendezvous). */
async function freePort(): Promise<number> {
  return await new Promise((resolve) => {
    const s = createServer()
    s.listen(0, '127.0.0.1', () => {
      const a = s.address()
      s.close(() => resolve(typeof a === 'object' && a !== null ? a.port : 0))
    })
  })
}

interface Member {
  p: ChildProcess
  out: string
  err: string
  exit: Promise<number | null>
  /** When it was started, when it logged its (first) handshake done, and when it ended (performance.now ms; 0: not yet). */
  started: number
  met: number
  ended: number
}

/** Starts `lapirun --join` as rank `rank` of a 2-process udp job running putget (one task per process); killed after the test. */
function member(rank: number, env: NodeJS.ProcessEnv): Member {
  const args = [LAPIRUN, '--join', '--tasks-per-proc', '1', '--transport', 'udp', FIXTURES + 'lapi/putget.mjs']
  const p = spawn(process.execPath, args, {
    env: { ...process.env, AMLAPI_RANK: String(rank), AMLAPI_SIZE: '2', AMLAPI_LOG_LEVEL: 'debug', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const m: Member = { p, out: '', err: '', exit: Promise.resolve(null), started: performance.now(), met: 0, ended: 0 }
  m.exit = new Promise((resolve) =>
    p.on('close', (c) => {
      m.ended = performance.now()
      resolve(c)
    }),
  )
  p.stdout!.on('data', (d: Buffer) => {
    m.out += d.toString()
  })
  p.stderr!.on('data', (d: Buffer) => {
    m.err += d.toString()
    if (m.met === 0 && m.err.includes('"msg":"udp: peer ready"')) m.met = performance.now()
  })
  cleanups.push(async () => {
    if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL')
    await m.exit
    expect(p.exitCode !== null || p.signalCode !== null, `process ${rank} is gone`).toBe(true)
  })
  return m
}

/** The pino records (AMLAPI_LOG_LEVEL=debug) with message `msg` in `stderr`. */
function records(stderr: string, msg: string): Array<Record<string, unknown>> {
  return stderr
    .split('\n')
    .filter((l) => l.startsWith('{') && l.includes(`"msg":"${msg}"`))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
}

/** The end of a process's stderr, less the refusals a flood makes it log. */
function logTail(p: Member): string {
  return p.err
    .split('\n')
    .filter((l) => !l.includes('handshake datagram refused'))
    .join('\n')
    .slice(-3000)
}

/** Waits for `cond`, looking every 10 ms, at most `ms`; whether it came. */
async function until(cond: () => boolean, ms: number): Promise<boolean> {
  const end = performance.now() + ms
  while (!cond() && performance.now() < end) await new Promise((resolve) => setTimeout(resolve, 10))
  return cond()
}

/**
 * A forged udp hello: "AMLH", then the msgpack map {t: 'hello', from, to, nj} (written out byte by
 * byte: a map of 4, short strings, small integers, a 16-byte bin).
 */
function forgedHello(from: number, to: number, nj: Uint8Array): Buffer {
  const str = (s: string): Buffer => Buffer.concat([Buffer.from([0xa0 | s.length]), Buffer.from(s)])
  return Buffer.concat([
    Buffer.from('AMLH'),
    Buffer.from([0x84]),
    str('t'),
    str('hello'),
    str('from'),
    Buffer.from([from]),
    str('to'),
    Buffer.from([to]),
    str('nj'),
    Buffer.from([0xc4, nj.length]),
    nj,
  ])
}

/** Sends forged hellos to `port` at `perSecond` until stopped (a connected socket, written to directly). */
async function flood(port: number, perSecond: number): Promise<{ stop: () => Promise<number> }> {
  const pool: Buffer[] = []
  for (let i = 0; i < 1024; i++) {
    // (mostly the real dialer's rank; some from ranks that are no peer of process 0, or to another)
    const r = i % 10
    const [from, to] = r < 7 ? [1, 0] : r === 7 ? [0, 0] : r === 8 ? [2 + (i % 5), 0] : [1, 1]
    pool.push(forgedHello(from, to, randomBytes(16)))
  }
  const sock: Socket = createSocket('udp4')
  sock.on('error', () => {})
  await new Promise<void>((resolve) => sock.connect(port, '127.0.0.1', resolve))
  const sym = Object.getOwnPropertySymbols(sock).find((x) => x.description === 'state symbol')!
  const fd = (sock as unknown as Record<symbol, { handle: { fd: number } }>)[sym]!.handle.fd
  const t0 = performance.now()
  let sent = 0
  const timer = setInterval(() => {
    const due = Math.min(Math.floor(((performance.now() - t0) * perSecond) / 1000), sent + perSecond / 20)
    try {
      for (; sent < due; sent++) writeSync(fd, pool[sent % pool.length]!)
    } catch {
      // (a refused write: the port is closed, its process gone; the next tick tries again)
      sent++
    }
  }, 5)
  let closed: Promise<void> | null = null
  const stop = async (): Promise<number> => {
    clearInterval(timer)
    closed ??= new Promise<void>((resolve) => sock.close(() => resolve()))
    await closed
    return sent
  }
  cleanups.push(stop)
  return { stop }
}

describe('udp: stateless handshake (forged hellos)', () => {
  it('a job whose process 0 is flooded with forged hellos (10,000/s) from before process 1 starts to the end still meets and verifies, about as fast as without', async () => {
    const RATE = 10_000
    /** Runs one job; `flooding` floods process 0's handshake port from 1 s before process 1 starts to the end. */
    const job = async (flooding: boolean): Promise<{ met: number; ran: number; sent: number; ps: Member[] }> => {
      const env = { AMLAPI_RENDEZVOUS: `127.0.0.1:${await freePort()}`, AMLAPI_JOB_KEY: randomBytes(32).toString('hex') }
      const p0 = member(0, env)
      const bound = await until(() => records(p0.err, 'udp: sockets bound').length > 0, 15_000)
      expect(bound, `process 0 bound its sockets\n${p0.err}`).toBe(true)
      const port = records(p0.err, 'udp: sockets bound')[0]!['handshakePort'] as number
      const f = flooding ? await flood(port, RATE) : null
      if (f !== null) await new Promise((resolve) => setTimeout(resolve, 1000))
      const p1 = member(1, env)
      let ended = false
      let sent = 0
      try {
        // (long enough for a process that never meets its peer to give up itself, after 30 s, and say so)
        ended = await until(() => p0.ended > 0 && p1.ended > 0, 35_000)
      } finally {
        if (f !== null) sent = await f.stop()
      }
      if (!ended) throw new Error(`the job did not end in 35 s${flooding ? ` (flooded: ${sent} forged hellos)` : ''}\nprocess 1: ${logTail(p1)}`)
      return { met: p1.met - p1.started, ran: p1.ended - p1.started, sent, ps: [p0, p1] }
    }
    const plain = await job(false)
    const flooded = await job(true)
    const figures = `process 1 met process 0 after ${flooded.met.toFixed(0)} ms flooded, ${plain.met.toFixed(0)} ms not; it ran ${flooded.ran.toFixed(0)} ms flooded, ${plain.ran.toFixed(0)} ms not (${flooded.sent} forged hellos)`
    note(figures)
    for (const [what, r] of [
      ['unflooded', plain],
      ['flooded', flooded],
    ] as const) {
      for (const [i, p] of r.ps.entries()) {
        expect(await p.exit, `${what}: process ${i}\n${logTail(p)}`).toBe(0)
        expect(p.out, `${what}: process ${i}`).toMatch(/task \d putget ok/)
      }
    }
    expect(flooded.sent, 'the flood ran at about its rate').toBeGreaterThan(RATE)
    // the handshake, what the flood attacks, takes about its usual time (before, it never ended:
    // both processes gave up after 30 s). The whole job is slower by what answering 7,000 hellos a
    // second costs both processes (two HMACs each in process 0, a challenge to refuse in process 1):
    // a second or two here, up to 5 s with the machine's load on one CPU; bounded loosely
    expect(plain.met, figures).toBeGreaterThan(0)
    expect(flooded.met, figures).toBeGreaterThan(0)
    expect(flooded.met, figures).toBeLessThan(plain.met + 3000)
    expect(flooded.ran, figures).toBeLessThan(plain.ran + 10_000)
    // the flood reached the handshake: process 0 refused the hellos from no peer of its, and those in
    // process 1's name once the pair had met (before, it answered them: process 1 refused those
    // challenges as to no hello of its, as many as came in the short time before they met)
    const left = (p: Member): Record<string, number> => (records(p.err, 'process leaves the job')[0]?.['stats'] ?? {}) as Record<string, number>
    expect(left(flooded.ps[0]!)['connectionsRefused'], 'process 0 refused forged hellos').toBeGreaterThan(100)
    if ((left(flooded.ps[1]!)['connectionsRefused'] ?? 0) > 0) expect(flooded.ps[1]!.err).toMatch(/"why":"a challenge to no hello of ours"/)
  }, 60_000)
})

// ─────────────────────────── a response taken once ───────────────────────────

/** UdpTransport's insides this test reaches (udp/transport.ts). */
interface UdpInside {
  readyCount: number
  onHandshake(b: Buffer, from: string): void
  acceptorNonce(nj: Uint8Array, r: number): Buffer
}

describe('udp: a handshake response taken once', () => {
  it('the same valid response handled twice in a row, before the socket toward its sender is made, counts the peer ready once', async () => {
    const key = makeKey()
    const u = new UdpTransport({ rank: 0, size: 3, key, log: logger('udp-response'), mac: false, faults: null, peerTimeoutMs: 5000 })
    cleanups.push(() => u.close())
    const self = await u.listen()
    u.useShared(createDatagramShared(3, 128 << 10, 0, u.geometry()))
    // ranks 1 and 2 as sockets of this test: where process 0's welcome goes, and rank 1's receiving socket
    const socks = await Promise.all(
      [0, 1, 2].map(async () => {
        const s = createSocket('udp4')
        s.on('error', () => {})
        await new Promise<void>((resolve) => s.bind(0, '127.0.0.1', resolve))
        cleanups.push(
          () =>
            new Promise<void>((resolve) => {
              try {
                s.close(() => resolve())
              } catch {
                resolve()
              }
            }),
        )
        return s
      }),
    )
    const welcomes: unknown[] = []
    socks[0]!.on('message', (b) => {
      try {
        welcomes.push((decodeBody(b.subarray(4)) as Record<string, unknown>)['t'])
      } catch {
        /* not ours */
      }
    })
    const table: PeerAddress[] = [self, ...[socks[0]!, socks[2]!].map((s) => ({ host: '127.0.0.1', port: s.address().port }))]
    let connected = false
    // (rank 2 never comes: connect() must not resolve; its 30 s deadline rejects after the test, unheard)
    u.connect(table, { onBytes: () => {}, onPeerLost: () => {} }).then(
      () => {
        connected = true
      },
      () => {},
    )
    const inside = u as unknown as UdpInside
    const nj = makeNonce()
    const ni = inside.acceptorNonce(nj, 1)
    const port = socks[1]!.address().port
    const max = 1472
    const win = 16
    // (rank 1's answer to the challenge process 0 would have sent its hello: a real peer's, with the key)
    const p = proof(key, 'udp-connect', ni, nj, 1, 0, port, max, win)
    const response = Buffer.concat([Buffer.from('AMLH'), encodeMessage({ t: 'response', from: 1, to: 0, nj, ni, port, max, win, p }).subarray(4)])
    const from = `127.0.0.1:${socks[0]!.address().port}`
    inside.onHandshake(response, from)
    inside.onHandshake(response, from)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(inside.readyCount, 'peers counted ready').toBe(1)
    expect(connected, 'connect() resolved without rank 2').toBe(false)
    expect(welcomes, 'welcomes sent to rank 1').toEqual(['welcome'])
    expect(u.stats().connectionsRefused, 'the copy is no refusal').toBe(0)
  })
})
