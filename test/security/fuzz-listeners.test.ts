/**
 * Property-based fuzzing of the listeners that face strangers before they prove the job key
 * (docs/security.md): the rendezvous, the tcp transport's listener and the udp handshake. Fuzzed
 * bytes and hello-like messages from strangers (wrong keys, replayed and reflected proofs, odd
 * types, truncated streams) are refused, never welcomed, and a member with the key still joins
 * after. (The reader under the stream listeners, `readMessages` and its flat decoder, is fuzzed
 * by itself in fuzz-reader.test.ts.)
 *
 * Each property is seeded (FUZZ_SEED) and runs for a time (FUZZ_MS per property, for a longer run:
 * `npm run test:fuzz`); FUZZ_VERBOSE=1 prints what each reached.
 */
import { createSocket, type Socket as DgramSocket } from 'node:dgram'
import { connect, type Socket } from 'node:net'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { DEFAULT_CONFIG } from '@amlapi/lapi'
import { PRE_AUTH_MAX_BYTES, UdpTransport, createDatagramShared, logger, serveRendezvous } from '#lapi-internal'
import {
  MAX_MESSAGE_BYTES,
  TcpTransport,
  createStreamShared,
  encodeMessage,
  makeKey,
  makeNonce,
  proof,
  readMessages,
  sameProof,
  type PeerAddress,
} from '@amlapi/lapi/transport'
import { flatOrNull, flatValueArb, hostileBodyArb, modelStream, Suspects, timed } from './helpers/fuzz-msgpack.js'
import { build, planArb, recipeArb, stranger, type Listener } from './helpers/fuzz-net.js'
import { DECODE_MS, FUZZ_SEED, budget, limit, note, runFor } from './helpers/fuzz-run.js'

const log = logger('fuzz')

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

/** Waits until `cond` holds, looking every 5 ms, for at most `ms`; whether it came. */
async function until(cond: () => boolean, ms: number): Promise<boolean> {
  const end = performance.now() + ms
  while (!cond() && performance.now() < end) await new Promise((resolve) => setTimeout(resolve, 5))
  return cond()
}

/** Waits until `count()` has not changed for 100 ms (at most 3 s): what a listener still had to read is counted. */
async function quiet(count: () => number): Promise<number> {
  const end = performance.now() + 3000
  let last = count()
  let since = performance.now()
  while (performance.now() < end && performance.now() - since < 100) {
    await new Promise((resolve) => setTimeout(resolve, 10))
    const now = count()
    if (now !== last) {
      last = now
      since = performance.now()
    }
  }
  return last
}

/** `p`, or the text `timeout` after `ms`; a rejection as its message. */
async function settle(p: Promise<unknown>, ms: number): Promise<string> {
  let t: NodeJS.Timeout | undefined
  const to = new Promise<string>((resolve) => {
    t = setTimeout(() => resolve('timeout'), ms)
  })
  try {
    return await Promise.race([
      p.then(
        () => 'ok',
        (e: unknown) => `rejected: ${(e as Error).message}`,
      ),
      to,
    ])
  } finally {
    clearTimeout(t)
  }
}

// ───────────────────────────── stream listeners ─────────────────────────────

/** What one round of strangers came to. */
interface Tally {
  connections: number
  refusals: number
  resets: number
  answered: number
  lostAnswers: number
}

/**
 * Sends batches of 1-3 concurrent strangers (planArb, recipeArb) at `port` for `ms`, checking each
 * outcome: closed before its deadline, a challenge first (unless it reset), and then `refusal`
 * or nothing (for a reset: a prefix of those). The model says which connections must be refused
 * (a complete message, a prefix over the limit, a body that does not decode): `refusals`.
 */
async function strangers(port: number, l: Listener, refusal: Buffer, ms: number, seed: number): Promise<Tally> {
  const tally: Tally = { connections: 0, refusals: 0, resets: 0, answered: 0, lostAnswers: 0 }
  let other: Uint8Array = makeNonce()
  await fc.assert(
    fc.asyncProperty(fc.array(fc.tuple(planArb, recipeArb), { minLength: 1, maxLength: 3 }), async (batch) => {
      const outs = await Promise.all(batch.map(([plan, rc]) => stranger(port, plan, (c) => build(l, rc, c, other))))
      for (const [i, o] of outs.entries()) {
        const plan = batch[i]![0]
        tally.connections++
        const sent = `sent ${o.sent.toString('hex').slice(0, 400)} (${plan.waitChallenge ? 'after' : 'before'} the challenge, ${plan.finish})`
        expect(o.closed, `the listener closed the connection; ${sent}`).toBe(true)
        if (o.challenge !== null) other = o.challenge
        if (plan.finish === 'reset') {
          tally.resets++
          expect(refusal.subarray(0, o.answer.length).equals(o.answer), `answer ${o.answer.toString('hex')}; ${sent}`).toBe(true)
          continue
        }
        expect(o.challengeOk, `a challenge first; ${sent}`).toBe(true)
        const v = modelStream(o.sent, PRE_AUTH_MAX_BYTES)
        const refused = v.error || v.messages.length > 0
        if (refused) tally.refusals++
        if (o.answer.length > 0) tally.answered++
        if (refused && o.answer.length === 0 && refusal.length > 0) tally.lostAnswers++
        const allowed = refused ? [refusal.toString('hex'), ''] : ['']
        expect(allowed, `answer ${o.answer.toString('hex')}; ${sent}`).toContain(o.answer.toString('hex'))
      }
    }),
    runFor(ms, seed, true),
  )
  return tally
}

/** A member with the key, emulated: joins the rendezvous as `rank`; resolves once welcomed (its proof checked). */
function member(port: number, key: Uint8Array, rank: number): Promise<{ sock: Socket; welcomed: boolean; later: unknown[] }> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: '127.0.0.1', port })
    cleanups.push(() => {
      sock.destroy()
    })
    const nonce = makeNonce()
    let challenge: Uint8Array | null = null
    const later: unknown[] = []
    let welcomed: boolean | null = null
    const timer = setTimeout(() => {
      sock.destroy()
      reject(new Error(`member ${rank}: no welcome within 5 s`))
    }, 5000)
    sock.on('error', () => {})
    sock.once('close', () => {
      clearTimeout(timer)
      reject(new Error(`member ${rank}: closed before the welcome`))
    })
    const reader = readMessages(
      sock,
      (m) => {
        const o = m as Record<string, unknown>
        if (welcomed !== null) {
          later.push(m)
          return
        }
        if (o['t'] === 'challenge' && challenge === null && o['n'] instanceof Uint8Array) {
          challenge = o['n']
          sock.write(encodeMessage({ t: 'hello', rank, n: nonce, p: proof(key, 'join', challenge, nonce, rank) }))
        } else if (o['t'] === 'welcome' && challenge !== null) {
          welcomed = sameProof(o['p'], proof(key, 'rendezvous', challenge, nonce, rank))
          reader.setLimit(MAX_MESSAGE_BYTES)
          clearTimeout(timer)
          resolve({ sock, welcomed, later })
        } else {
          clearTimeout(timer)
          reject(new Error(`member ${rank}: ${JSON.stringify(m)}`))
        }
      },
      (why) => {
        clearTimeout(timer)
        reject(new Error(`member ${rank}: ${why}`))
      },
    )
  })
}

describe('the rendezvous, to strangers', () => {
  it(
    `fuzzed bytes and hello-like messages: each refused with {t:'refused'} or closed without a word, none welcomed; ` +
      `then both members join and get the job (seed ${FUZZ_SEED})`,
    async () => {
      const ms = budget(1300)
      const key = makeKey()
      const rv = await serveRendezvous({
        key,
        procs: 2,
        host: '127.0.0.1',
        port: 0,
        log,
        onFail: () => {},
        onDone: () => {},
        job: { numTasks: 2, config: { ...DEFAULT_CONFIG }, label: false, graceMs: 1000, data: { fuzz: true } },
      })
      cleanups.push(() => rv.close())
      const l: Listener = {
        key,
        hello: (k, c, n, r) => proof(k, 'join', c, n, r),
        answer: (k, c, n, r) => proof(k, 'rendezvous', c, n, r),
        admits: (r) => typeof r === 'number' && Number.isInteger(r) && r >= 0 && r < 2,
      }
      const refusal = encodeMessage({ t: 'refused' })
      const tally = await strangers(rv.port, l, refusal, ms, FUZZ_SEED)
      const refusedNow = (): number => Number(/(\d+) connections? (?:were|was) refused/.exec(rv.waitingFor())?.[1] ?? 0)
      const refused = await quiet(refusedNow)
      const waiting = rv.waitingFor()
      note(`rendezvous: ${tally.connections} connections in ${ms} ms:`, tally, `refused ${refused}`)
      expect(waiting, 'no stranger joined').toMatch(/^processes 0, 1 never joined/)
      expect(refused, 'refusals counted').toBeGreaterThanOrEqual(tally.refusals)
      expect(refused, 'refusals counted').toBeLessThanOrEqual(tally.refusals + tally.resets)
      expect(tally.connections).toBeGreaterThan(5)

      // members with the key join; a stranger with a right proof for a rank taken is refused; the job goes out
      const m0 = await member(rv.port, key, 0)
      expect(m0.welcomed, 'the welcome proves the key').toBe(true)
      const dup = await stranger(rv.port, { waitChallenge: true, sizes: [1 << 20], finish: 'end' }, (c) => {
        const n = makeNonce()
        return encodeMessage({ t: 'hello', rank: 0, n, p: proof(key, 'join', c!, n, 0) })
      })
      expect(dup.answer.toString('hex'), 'a second rank 0 is refused').toBe(refusal.toString('hex'))
      const m1 = await member(rv.port, key, 1)
      expect(m1.welcomed).toBe(true)
      m0.sock.write(encodeMessage({ t: 'addr', host: '127.0.0.1', port: 1000 }))
      m1.sock.write(encodeMessage({ t: 'addr', host: '127.0.0.1', port: 1001 }))
      type Msg = Record<string, unknown>
      const job = (m: { later: unknown[] }): Msg | undefined => m.later.find((x) => (x as Msg)['t'] === 'job') as Msg | undefined
      expect(await until(() => job(m0) !== undefined && job(m1) !== undefined, 5000), 'both members get the job').toBe(true)
      expect(job(m0)!['table']).toEqual([
        { host: '127.0.0.1', port: 1000 },
        { host: '127.0.0.1', port: 1001 },
      ])
      expect(job(m1)!['data']).toEqual({ fuzz: true })
      expect(rv.complete).toBe(true)
    },
    limit(budget(1300)),
  )
})

describe("the tcp transport's listener, to strangers", () => {
  it(
    `fuzzed bytes and hello-like messages: closed without a word and counted, no bytes to the frame path; ` +
      `then rank 1 with the key connects (seed ${FUZZ_SEED})`,
    async () => {
      // (rounds of at most 20 s: connect() gives up after 30 s)
      let left = budget(1100)
      for (let round = 0; left > 0; round++) {
        const ms = Math.min(left, 20_000)
        left -= ms
        const key = makeKey()
        const ts = [0, 1].map((rank) => {
          const t = new TcpTransport({ rank, size: 2, key, log })
          t.useShared(createStreamShared(2, 64 << 10))
          cleanups.push(() => t.close())
          return t
        })
        const table: PeerAddress[] = [await ts[0]!.listen(), await ts[1]!.listen()]
        let bytes = 0
        const lost: string[] = []
        const c0 = ts[0]!.connect(table, {
          onBytes: (_p, _c, n) => {
            bytes += n
          },
          onPeerLost: (p, why) => {
            lost.push(`${p}: ${why}`)
          },
        })
        c0.catch(() => {
          /* (settled below; a failure before then must not leave it unhandled) */
        })
        const l: Listener = {
          key,
          hello: (k, c, n, r) => proof(k, 'tcp-connect', c, n, r, 0),
          answer: (k, c, n, r) => proof(k, 'tcp-accept', c, n, 0, r),
          admits: (r) => r === 1,
        }
        const tally = await strangers(table[0]!.port, l, Buffer.alloc(0), ms, FUZZ_SEED + round)
        const refused = await quiet(() => ts[0]!.stats().connectionsRefused)
        note(`tcp round ${round}: ${tally.connections} connections in ${ms} ms:`, tally, `refused ${refused}`)
        expect(tally.answered, 'no stranger is answered').toBe(0)
        expect(bytes, "no stranger's bytes reach the frame path").toBe(0)
        expect(refused).toBeGreaterThanOrEqual(tally.refusals)
        expect(refused).toBeLessThanOrEqual(tally.refusals + tally.resets)
        expect(tally.connections).toBeGreaterThan(5)

        const c1 = ts[1]!.connect(table, { onBytes: () => {}, onPeerLost: () => {} })
        expect(await settle(Promise.all([c0, c1]), 10_000), 'rank 1 with the key connects').toBe('ok')
        expect(ts[0]!.stats().connectionsRefused, 'rank 1 was not refused').toBe(refused)
        expect(lost).toEqual([])
        await Promise.all(ts.map((t) => t.close()))
      }
    },
    limit(budget(1100)),
  )
})

// ───────────────────────────── udp handshake ─────────────────────────────

/** UdpTransport's insides the fuzz reaches (udp/transport.ts): the handshake parser and what it keeps. */
interface UdpInside {
  events: unknown
  table: PeerAddress[]
  readyCount: number
  shakes: Array<{ mine: Buffer; ready: boolean; sock: unknown; theirs: Uint8Array | null }>
  onHandshake(b: Buffer, from: string): void
  sendHs(r: number, m: Record<string, unknown>): void
  refuse(from: string, why: string): void
  acceptorNonce(nj: Uint8Array, r: number): Buffer
}

const MAGIC = Buffer.from('AMLH')

type V = { k: 'absent' } | { k: 'v'; v: unknown }
const vArb = (a: fc.Arbitrary<unknown>): fc.Arbitrary<V> =>
  fc.oneof({ arbitrary: fc.constant<V>({ k: 'absent' }), weight: 1 }, { arbitrary: a.map((v): V => ({ k: 'v', v })), weight: 8 })
const numArb = fc.oneof(fc.constantFrom(0, -1, 1, 64, 1024, 1472, 4096, 65507, 65535, 65536, 2 ** 32, 0.5, 1e300, Number.NaN, '1000', null), fc.integer())

interface UdpRecipe {
  kind: 'map' | 'hostile' | 'json' | 'bytes'
  /** A real peer's challenge (from 0), response (from 2) or welcome (from 0) but for its proof (`p`: tampered, wrong key, reflected). */
  near: 'no' | 'challenge' | 'response' | 'welcome'
  magic: 'ok' | 'wrong' | 'cut'
  t: V
  from: V
  to: V
  nj: 'mine' | 'nonce' | 'short' | 'long' | 'string' | 'absent' | 'number'
  ni: 'acceptor' | 'nonce' | 'absent' | 'mine' | 'long'
  port: V
  max: V
  win: V
  /** Sizes a real peer would send (so that a proof it took would be the only check left), or the fuzzed ones. */
  valid: boolean
  p: 'absent' | 'random' | 'wrongKey' | 'reflect' | 'tamper' | 'short' | 'string'
  tamper: 'nj' | 'ni' | 'from' | 'to' | 'port' | 'max' | 'win'
  extra: Record<string, unknown>
  pad: number
  nonce: Uint8Array
  random: Uint8Array
  hostile: Buffer
  json: unknown
  bytes: Uint8Array
}

const udpRecipeArb: fc.Arbitrary<UdpRecipe> = fc.record({
  kind: fc.oneof({ arbitrary: fc.constant('map' as const), weight: 8 }, fc.constantFrom('hostile' as const, 'json' as const, 'bytes' as const)),
  near: fc.constantFrom('no', 'no', 'no', 'no', 'challenge', 'response', 'welcome'),
  magic: fc.constantFrom('ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'wrong', 'cut'),
  t: vArb(fc.oneof({ arbitrary: fc.constantFrom('hello', 'challenge', 'response', 'welcome'), weight: 8 }, fc.constantFrom('other', 'HELLO', 1, null, true))),
  from: vArb(fc.oneof({ arbitrary: fc.constantFrom(0, 2), weight: 6 }, fc.constantFrom(1, 3, -1, 0.5, 2.5, '2', '0', Number.NaN, 2 ** 32, null), fc.integer())),
  to: vArb(fc.oneof({ arbitrary: fc.constant(1), weight: 8 }, fc.constantFrom(0, 2, '1', 1.5, null), fc.integer())),
  nj: fc.constantFrom('mine', 'mine', 'mine', 'nonce', 'nonce', 'short', 'long', 'string', 'absent', 'number'),
  ni: fc.constantFrom('acceptor', 'acceptor', 'acceptor', 'nonce', 'absent', 'mine', 'long'),
  port: vArb(numArb),
  max: vArb(numArb),
  win: vArb(numArb),
  valid: fc.oneof(fc.constant(true), fc.constant(true), fc.constant(false)),
  p: fc.constantFrom('absent', 'random', 'wrongKey', 'wrongKey', 'reflect', 'reflect', 'tamper', 'tamper', 'tamper', 'tamper', 'short', 'string'),
  tamper: fc.constantFrom('nj', 'ni', 'from', 'to', 'port', 'max', 'win'),
  // (flat extras mostly, so that a map reaches the checks after the decoder; some not flat)
  extra: fc.oneof(
    { arbitrary: fc.dictionary(fc.string({ maxLength: 4 }), flatValueArb, { maxKeys: 2 }), weight: 3 },
    fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }),
  ),
  pad: fc.oneof({ arbitrary: fc.constant(0), weight: 3 }, fc.nat({ max: 250 }), fc.nat({ max: 1500 })),
  nonce: fc.uint8Array({ minLength: 16, maxLength: 16 }),
  random: fc.uint8Array({ minLength: 32, maxLength: 32 }),
  hostile: hostileBodyArb(2000),
  json: fc.jsonValue({ maxDepth: 3 }),
  bytes: fc.uint8Array({ maxLength: 2000 }),
})

/**
 * A handshake datagram from a recipe, to process `rank` (1 of 3) whose dialer nonce toward 0 is
 * `mine`. Proofs: a wrong key's over the right fields; the key's as this process itself would
 * make them (its own messages reflected); or the key's over the fields with one changed (a real
 * peer's message tampered with). None is a real peer's message.
 */
function udpDatagram(rc: UdpRecipe, key: Uint8Array, inside: UdpInside): Buffer {
  if (rc.near !== 'no') {
    const p = rc.p === 'wrongKey' || rc.p === 'reflect' ? rc.p : 'tamper'
    rc = {
      ...rc,
      kind: 'map',
      magic: 'ok',
      t: { k: 'v', v: rc.near },
      from: { k: 'v', v: rc.near === 'response' ? 2 : 0 },
      to: { k: 'v', v: 1 },
      nj: rc.near === 'response' ? 'nonce' : 'mine',
      ni: 'acceptor',
      valid: true,
      p,
      pad: 0,
    }
  }
  let body: Buffer
  if (rc.kind === 'hostile') body = rc.hostile
  else if (rc.kind === 'json') body = encodeMessage(rc.json).subarray(4)
  else if (rc.kind === 'bytes') return Buffer.from(rc.bytes)
  else {
    const mine = inside.shakes[0]!.mine
    const nonce = Buffer.from(rc.nonce)
    const nj: unknown = {
      mine,
      nonce,
      short: nonce.subarray(0, 15),
      long: Buffer.concat([nonce, nonce]),
      string: nonce.toString('hex'),
      absent: undefined,
      number: 16,
    }[rc.nj]
    const njb = nj instanceof Uint8Array ? nj : nonce
    const from = rc.from.k === 'v' && typeof rc.from.v === 'number' ? rc.from.v : 2
    const ni: unknown = {
      acceptor: inside.acceptorNonce(njb, from),
      nonce: Buffer.from(rc.random.subarray(0, 16)),
      absent: undefined,
      mine,
      long: Buffer.from(rc.random),
    }[rc.ni]
    const nib = ni instanceof Uint8Array ? ni : nonce
    if (rc.valid) {
      rc = { ...rc, port: { k: 'v', v: 40000 }, max: { k: 'v', v: 1472 }, win: { k: 'v', v: 16 } }
    }
    const num = (x: V): number => (x.k === 'v' && typeof x.v === 'number' && Number.isInteger(x.v) ? x.v : -1)
    const f = { nj: njb, ni: nib, from, to: 1, port: num(rc.port), max: num(rc.max), win: num(rc.win) }
    if (rc.p === 'tamper') {
      const g = f as Record<string, unknown>
      g[rc.tamper] = typeof g[rc.tamper] === 'number' ? (g[rc.tamper] as number) + 1 : Buffer.concat([g[rc.tamper] as Uint8Array, Buffer.from([0])])
    }
    const t = rc.t.k === 'v' ? rc.t.v : 'hello'
    const wrong = Buffer.alloc(key.length, 0x5a)
    const k = rc.p === 'wrongKey' ? wrong : key
    // the proof each step's receiver checks, and (reflect) what this process sends at the step before it
    const check = (): Buffer =>
      t === 'challenge'
        ? proof(k, 'udp-accept', f.nj, f.ni, f.from, f.to, f.port, f.max, f.win)
        : t === 'response'
          ? proof(k, 'udp-connect', f.ni, f.nj, f.from, f.to, f.port, f.max, f.win)
          : proof(k, 'udp-welcome', f.ni, f.nj, f.from, f.to)
    const reflect = (): Buffer =>
      t === 'challenge'
        ? proof(key, 'udp-accept', f.nj, f.ni, 1, 2, f.port, f.max, f.win)
        : t === 'response'
          ? proof(key, 'udp-connect', f.ni, f.nj, 1, 0, f.port, f.max, f.win)
          : proof(key, 'udp-welcome', f.ni, f.nj, 1, 2)
    const p: unknown = {
      absent: undefined,
      random: Buffer.from(rc.random),
      wrongKey: check(),
      tamper: check(),
      reflect: reflect(),
      short: Buffer.from(rc.random.subarray(0, 8)),
      string: 'p',
    }[rc.p]
    const m: Record<string, unknown> = { ...rc.extra }
    const put = (name: string, v: V | { k: 'v'; v: unknown }): void => {
      if (v.k === 'v' && v.v !== undefined) m[name] = v.v
    }
    put('t', rc.t)
    put('from', rc.from)
    put('to', rc.to)
    put('nj', { k: 'v', v: nj })
    put('ni', { k: 'v', v: ni })
    put('port', rc.port)
    put('max', rc.max)
    put('win', rc.win)
    put('p', { k: 'v', v: p })
    if (rc.pad > 0) m['pad'] = 'x'.repeat(rc.pad)
    body = encodeMessage(m).subarray(4)
  }
  const magic = rc.magic === 'ok' ? MAGIC : rc.magic === 'wrong' ? Buffer.from(rc.random.subarray(0, 4)) : MAGIC.subarray(0, rc.pad % 4)
  return rc.magic === 'cut' ? magic : Buffer.concat([magic, body])
}

/**
 * What process 1 of 3 must do with handshake datagram `b` from a stranger: answer a well-formed hello
 * from rank 2 (stateless), else refuse it. Its body must be a flat map (`flatModel`: a stranger's).
 */
function udpVerdict(b: Buffer): 'answer' | 'refuse' {
  if (b.length < 5 || b.length > PRE_AUTH_MAX_BYTES || !b.subarray(0, 4).equals(MAGIC)) return 'refuse'
  const m = flatOrNull(b.subarray(4))
  if (m === null) return 'refuse'
  const from = m['from']
  const nj = m['nj']
  return m['to'] === 1 && m['t'] === 'hello' && from === 2 && nj instanceof Uint8Array && nj.length === 16 ? 'answer' : 'refuse'
}

describe('the udp handshake, to strangers', () => {
  it(
    `fuzzed handshake datagrams (called directly, then some sent): each refused and counted, or a hello answered; within ${DECODE_MS} ms ` +
      `each; none over 1 KiB taken; no peer ready; then the job's three processes meet (seed ${FUZZ_SEED})`,
    async () => {
      const ms = budget(600)
      const msReal = budget(300)
      const key = makeKey()
      const us = [0, 1, 2].map((rank) => {
        const u = new UdpTransport({ rank, size: 3, key, log, mac: false, faults: null, peerTimeoutMs: 5000 })
        cleanups.push(() => u.close())
        return u
      })
      const table: PeerAddress[] = []
      for (const u of us) table.push(await u.listen())
      for (const [rank, u] of us.entries()) u.useShared(createDatagramShared(3, 128 << 10, rank, u.geometry()))
      const node = us[1]!
      const inside = node as unknown as UdpInside
      let bytes = 0
      const events = {
        onBytes: (_p: number, _c: Uint8Array, n: number) => {
          bytes += n
        },
        onPeerLost: () => {},
      }
      // (what connect() sets, without its 30-second deadline: the fuzz may run longer)
      inside.events = events
      inside.table = table
      const sends: Array<{ r: number; t: unknown }> = []
      const sendHs = inside.sendHs.bind(node)
      inside.sendHs = (r, m) => {
        sends.push({ r, t: m['t'] })
        sendHs(r, m)
      }
      // (refusals by source: other programs on this machine may send to a port that was theirs)
      const refusals: Array<{ from: string; why: string }> = []
      const refuse = inside.refuse.bind(node)
      inside.refuse = (from, why) => {
        refusals.push({ from, why })
        refuse(from, why)
      }
      const refusedFrom = (...from: string[]): number => refusals.filter((x) => from.includes(x.from)).length
      const FROM = '127.0.0.1:9'
      const noneReady = (): void => {
        expect(inside.readyCount, 'no peer ready').toBe(0)
        expect(
          inside.shakes.flatMap((s) => [s.ready, s.sock !== null, s.theirs !== null]).every((x) => !x),
          'no handshake state',
        ).toBe(true)
        expect(bytes, 'no bytes to the data path').toBe(0)
      }

      // called directly: fast, and each call's effect is its own
      const slow = new Suspects()
      let runs = 0
      let answered = 0
      let over = 0
      let worst = 0
      fc.assert(
        fc.property(udpRecipeArb, (rc) => {
          runs++
          const b = udpDatagram(rc, key, inside)
          const want = udpVerdict(b)
          if (b.length > PRE_AUTH_MAX_BYTES) over++
          const r0 = node.stats().connectionsRefused
          sends.length = 0
          let tries = 0
          const t = timed(() => {
            tries++
            inside.onHandshake(b, FROM)
          }, DECODE_MS)
          worst = Math.max(worst, t)
          const what = `${want}: ${b.toString('hex').slice(0, 600)} (${b.length} bytes)`
          if (t >= DECODE_MS) slow.add(`seed ${FUZZ_SEED}, ${what}`, () => inside.onHandshake(b, FROM))
          if (want === 'answer') {
            answered++
            expect(node.stats().connectionsRefused - r0, what).toBe(0)
            expect(sends, what).toEqual(new Array(tries).fill({ r: 2, t: 'challenge' }))
          } else {
            expect(node.stats().connectionsRefused - r0, what).toBe(tries)
            expect(sends, what).toEqual([])
          }
          noneReady()
        }),
        runFor(ms, FUZZ_SEED, true),
      )
      note(
        `udp direct: ${runs} datagrams (${answered} hellos answered, ${over} over 1 KiB), worst ${worst.toFixed(2)} ms ` +
          `(${slow.size} timed again), in ${ms} ms`,
      )
      expect(runs).toBeGreaterThan(10)
      expect(await slow.confirm(DECODE_MS), 'slow handshake datagrams').toEqual([])

      // real datagrams to its handshake port, one at a time
      const sock: DgramSocket = createSocket('udp4')
      cleanups.push(
        () =>
          new Promise<void>((resolve) => {
            try {
              sock.close(() => resolve())
            } catch {
              resolve()
            }
          }),
      )
      sock.on('error', () => {})
      await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', resolve))
      const client = `127.0.0.1:${sock.address().port}`
      let real = 0
      await fc.assert(
        fc.asyncProperty(udpRecipeArb, async (rc) => {
          real++
          const b = udpDatagram(rc, key, inside)
          const want = udpVerdict(b)
          const r0 = refusedFrom(client)
          sends.length = 0
          sock.send(b, table[1]!.port, '127.0.0.1')
          const came = await until(() => refusedFrom(client) !== r0 || sends.length > 0, 2000)
          const what = `${want}: ${b.toString('hex').slice(0, 600)} (${b.length} bytes)`
          expect(came, `the datagram was taken: ${what}`).toBe(true)
          expect([refusedFrom(client) - r0, sends.length], what).toEqual(want === 'answer' ? [0, 1] : [1, 0])
          noneReady()
        }),
        runFor(msReal, FUZZ_SEED + 1, true),
      )
      note(`udp real: ${real} datagrams in ${msReal} ms`)
      expect(real).toBeGreaterThan(5)

      // the job's processes, with the key, meet; none of their datagrams is refused
      delete (inside as Partial<UdpInside>).sendHs
      const peers = [table[0]!, table[2]!].map((a) => `${a.host}:${a.port}`)
      const ev = { onBytes: () => {}, onPeerLost: () => {} }
      const all = Promise.all(us.map((u, rank) => u.connect(table, rank === 1 ? events : ev)))
      expect(await settle(all, 10_000), 'the three processes meet').toBe('ok')
      expect(inside.readyCount).toBe(2)
      expect(
        refusals.filter((x) => peers.includes(x.from)),
        'no real peer refused',
      ).toEqual([])
      const foreign = refusals.filter((x) => x.from !== FROM && x.from !== client && !peers.includes(x.from))
      if (foreign.length > 0) note(`udp: ${foreign.length} datagrams from other programs refused:`, foreign.slice(0, 5))
    },
    limit(budget(600) + budget(300)),
  )
})
