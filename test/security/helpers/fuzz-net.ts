/**
 * Strangers' connections for the fuzz tests (test/security/fuzz-listeners.test.ts): a connection to a
 * loopback listener that takes its challenge (or not), sends fuzzed bytes in fuzzed pieces, ends
 * or resets, and collects every byte it is answered until the listener closes it (or a deadline);
 * and hello-like messages built from a fuzzed recipe over the challenge it was given.
 */
import { connect } from 'node:net'
import fc from 'fast-check'
import { decodeBody, encodeMessage, sameProof } from '@amlapi/lapi/transport'
import { flatOrNull, framed, hostileBodyArb, mstr } from './fuzz-msgpack.js'

/** How a stranger connection behaves. */
export interface Plan {
  /** Wait for the listener's challenge before sending (else send at once, blind). */
  waitChallenge: boolean
  /** Sizes of the writes the payload is cut into (cycled), a turn of the event loop between. */
  sizes: readonly number[]
  /** 'end': half-close after the payload (the listener closes, with or without its answer); 'reset': reset the connection. */
  finish: 'end' | 'reset'
}

export interface Outcome {
  /** The challenge's nonce (null: none came, or not one). */
  challenge: Uint8Array | null
  /** Whether the first message was a well-formed challenge, {t:'challenge', n: 16 bytes}. */
  challengeOk: boolean
  /** Every byte after the challenge. */
  answer: Buffer
  /** The bytes sent. */
  sent: Buffer
  /** Whether the listener closed the connection before the deadline. */
  closed: boolean
}

/** The first length-prefixed message of `b`, with the bytes after it; null while incomplete. */
function firstMessage(b: Buffer): { body: Buffer; rest: Buffer } | null {
  if (b.length < 4) return null
  const n = b.readUInt32LE(0)
  if (b.length < 4 + n) return null
  return { body: b.subarray(4, 4 + n), rest: b.subarray(4 + n) }
}

/** A stranger's connection to 127.0.0.1:`port`; `build` makes what it sends from the challenge it got (null when it did not wait). */
export function stranger(port: number, plan: Plan, build: (challenge: Uint8Array | null) => Buffer, deadlineMs = 4000): Promise<Outcome> {
  return new Promise((resolve) => {
    const got: Buffer[] = []
    let sent: Buffer = Buffer.alloc(0)
    let started = false
    let done = false
    const sock = connect({ host: '127.0.0.1', port })
    sock.on('error', () => {
      /* a reset or a write after the listener closed: the outcome says what came */
    })
    const challengeOf = (): Uint8Array | null => {
      const f = firstMessage(Buffer.concat(got))
      if (f === null) return null
      try {
        const m = decodeBody(f.body) as Record<string, unknown> | null
        return m !== null && typeof m === 'object' && m['t'] === 'challenge' && m['n'] instanceof Uint8Array ? m['n'] : null
      } catch {
        return null
      }
    }
    const finish = (closed: boolean): void => {
      if (done) return
      done = true
      clearTimeout(deadline)
      sock.destroy()
      const all = Buffer.concat(got)
      const f = firstMessage(all)
      const challenge = challengeOf()
      resolve({ challenge, challengeOk: challenge !== null && challenge.length === 16, answer: f === null ? all : f.rest, sent, closed })
    }
    const deadline = setTimeout(() => finish(false), deadlineMs)
    const send = async (challenge: Uint8Array | null): Promise<void> => {
      if (started) return
      started = true
      sent = build(challenge)
      let at = 0
      for (let i = 0; at < sent.length && !sock.destroyed; i++) {
        const n = Math.max(1, plan.sizes[i % plan.sizes.length]!)
        sock.write(sent.subarray(at, at + n))
        at += n
        if (at < sent.length) await new Promise((resolve) => setImmediate(resolve))
      }
      if (sock.destroyed) return
      if (plan.finish === 'end') sock.end()
      else sock.resetAndDestroy()
    }
    sock.on('data', (d: Buffer) => {
      got.push(d)
      if (plan.waitChallenge && !started && firstMessage(Buffer.concat(got)) !== null) void send(challengeOf())
    })
    sock.once('connect', () => {
      if (!plan.waitChallenge) void send(null)
    })
    sock.once('close', () => finish(true))
  })
}

export const planArb: fc.Arbitrary<Plan> = fc.record({
  waitChallenge: fc.boolean(),
  sizes: fc.oneof(fc.constant([1 << 20]), fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 4 })),
  finish: fc.oneof({ arbitrary: fc.constant('end' as const), weight: 9 }, { arbitrary: fc.constant('reset' as const), weight: 1 }),
})

// ───────────────────────────── hello-like messages ─────────────────────────────

/** How a listener checks a hello: what it proves, and when it would welcome one (the fuzz must never send such). */
export interface Listener {
  key: Uint8Array
  /** The proof a hello of rank `r` (a number or string) and nonce `n` must carry for challenge `c`. */
  hello: (key: Uint8Array, c: Uint8Array, n: Uint8Array, r: number | string) => Buffer
  /** The proof the listener answers with (a stranger may send it back). */
  answer: (key: Uint8Array, c: Uint8Array, n: Uint8Array, r: number | string) => Buffer
  /** Whether a hello claiming `r` with a right proof would be welcomed. */
  admits: (r: unknown) => boolean
}

type Val = { k: 'absent' } | { k: 'v'; v: unknown }
type ProofKind = 'absent' | 'random' | 'zeros' | 'short' | 'wrongKey' | 'otherChallenge' | 'answer' | 'rightKey' | 'string' | 'array'
type NonceKind = 'nonce' | 'absent' | 'short' | 'long' | 'string' | 'number' | 'challenge'
type Framing = 'exact' | 'truncated' | 'trailing' | 'overLimit' | 'shortPrefix' | 'twice'

export interface Recipe {
  kind: 'hello' | 'hostile' | 'json' | 'bytes'
  t: Val
  rank: Val
  n: NonceKind
  p: ProofKind
  extra: Record<string, unknown>
  /** The hello as a map, inside an array, inside a map, or written by hand with a key twice. */
  wrap: 'map' | 'array' | 'nested' | 'dupT' | 'dupRank'
  framing: Framing
  cut: number
  tail: Uint8Array
  hostile: Buffer
  json: unknown
  bytes: Uint8Array
  /** The hello's nonce, and 32 bytes for a random proof. */
  nonce: Uint8Array
  random: Uint8Array
}

const valArb = (a: fc.Arbitrary<unknown>): fc.Arbitrary<Val> =>
  fc.oneof({ arbitrary: fc.constant<Val>({ k: 'absent' }), weight: 1 }, { arbitrary: a.map((v): Val => ({ k: 'v', v })), weight: 6 })

const rankArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer({ min: -2, max: 3 }),
  fc.constantFrom(0.5, 1.5, -1e-300, 2 ** 31, 2 ** 32, 2 ** 53, 1e300, Number.NaN, Infinity, -Infinity, '0', '1', ' 0', '0x0', '', '1e0', null, true, false),
  fc.constantFrom(BigInt(0), BigInt(1), BigInt(-1), BigInt(2) ** BigInt(63)),
  fc.constantFrom([0], { r: 0 }, Buffer.from([0])),
  fc.integer(),
  fc.double(),
)

export const recipeArb: fc.Arbitrary<Recipe> = fc.record({
  kind: fc.oneof({ arbitrary: fc.constant('hello' as const), weight: 6 }, fc.constantFrom('hostile' as const, 'json' as const, 'bytes' as const)),
  t: valArb(
    fc.oneof(
      { arbitrary: fc.constant('hello'), weight: 6 },
      fc.constantFrom('Hello', 'hello\u0000', 'welcome', 'challenge', 'addr', 'done', 'fail', 'refused', 1, null, true),
      fc.constant(Buffer.from('hello')),
    ),
  ),
  rank: valArb(rankArb),
  n: fc.constantFrom<NonceKind>('nonce', 'nonce', 'nonce', 'absent', 'short', 'long', 'string', 'number', 'challenge'),
  p: fc.constantFrom<ProofKind>(
    'absent',
    'random',
    'zeros',
    'short',
    'wrongKey',
    'otherChallenge',
    'answer',
    'rightKey',
    'rightKey',
    'rightKey',
    'string',
    'array',
  ),
  extra: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
  wrap: fc.constantFrom('map', 'map', 'map', 'map', 'array', 'nested', 'dupT', 'dupRank'),
  framing: fc.constantFrom<Framing>('exact', 'exact', 'exact', 'truncated', 'trailing', 'overLimit', 'shortPrefix', 'twice'),
  cut: fc.nat(),
  tail: fc.uint8Array({ maxLength: 40 }),
  hostile: hostileBodyArb(1024),
  json: fc.jsonValue({ maxDepth: 3 }),
  bytes: fc.uint8Array({ maxLength: 1200 }),
  nonce: fc.uint8Array({ minLength: 16, maxLength: 16 }),
  random: fc.uint8Array({ minLength: 32, maxLength: 32 }),
})

/** A listener's view of a message: whether it would be welcomed (never to be sent by the fuzz). */
function welcomes(l: Listener, m: unknown, challenge: Uint8Array): boolean {
  if (m === null || typeof m !== 'object') return false
  const o = m as Record<string, unknown>
  const r = o['rank']
  const n = o['n']
  if (o['t'] !== 'hello' || !(n instanceof Uint8Array) || (typeof r !== 'number' && typeof r !== 'string')) return false
  return l.admits(r) && sameProof(o['p'], l.hello(l.key, challenge, n, r))
}

/**
 * The bytes of a recipe, for `challenge` (null: the stranger did not wait for it; a random one
 * stands in) and `other` (another connection's challenge, to replay a proof made for it). Proofs
 * with the right key are kept only where the listener must still refuse (a rank it does not
 * admit, a string rank, another challenge, its own answer's role): a message it would welcome has
 * its proof replaced.
 */
export function build(l: Listener, rc: Recipe, challenge: Uint8Array | null, other: Uint8Array): Buffer {
  if (rc.kind === 'hostile') return frame(rc, rc.hostile)
  if (rc.kind === 'json') return frame(rc, encodeMessage(rc.json).subarray(4))
  if (rc.kind === 'bytes') return Buffer.from(rc.bytes)
  const c = challenge ?? Buffer.alloc(16)
  const nonce = Buffer.from(rc.nonce)
  const n: unknown = {
    nonce,
    absent: undefined,
    short: nonce.subarray(0, 15),
    long: Buffer.concat([nonce, nonce, nonce]),
    string: nonce.toString('hex'),
    number: 7,
    challenge: c,
  }[rc.n]
  const nb = n instanceof Uint8Array ? n : nonce
  const r = rc.rank.k === 'v' && (typeof rc.rank.v === 'number' || typeof rc.rank.v === 'string') ? rc.rank.v : 0
  const wrongKey = Buffer.alloc(l.key.length, 0x5a)
  const p: unknown = {
    absent: undefined,
    random: Buffer.from(rc.random),
    zeros: Buffer.alloc(32),
    short: Buffer.from(rc.random.subarray(0, 16)),
    wrongKey: l.hello(wrongKey, c, nb, r),
    otherChallenge: l.hello(l.key, other, nb, r),
    answer: l.answer(l.key, c, nb, r),
    rightKey: l.hello(l.key, c, nb, r),
    string: 'p'.repeat(32),
    array: [...Buffer.alloc(32)],
  }[rc.p]
  const msg: Record<string, unknown> = { ...rc.extra }
  if (rc.t.k === 'v') msg['t'] = rc.t.v
  if (rc.rank.k === 'v') msg['rank'] = rc.rank.v
  if (n !== undefined) msg['n'] = n
  if (p !== undefined) msg['p'] = p
  let body = bodyOf(rc, msg)
  // (what the listener would welcome is a member's hello, not a stranger's: its proof is spoilt. The
  // listener takes flat maps only before the key: a right proof in any other body stays, to be refused)
  const flat = flatOrNull(body)
  if (flat !== null && welcomes(l, flat, c)) {
    msg['p'] = Buffer.alloc(32, 1)
    body = bodyOf(rc, msg)
  }
  return frame(rc, body)
}

function bodyOf(rc: Recipe, msg: Record<string, unknown>): Buffer {
  switch (rc.wrap) {
    case 'map':
      return encodeMessage(msg).subarray(4)
    case 'array':
      return encodeMessage([msg]).subarray(4)
    case 'nested':
      return encodeMessage({ t: 'hello', hello: msg }).subarray(4)
    case 'dupT':
    case 'dupRank': {
      // a map whose key comes twice: the message's, then a second value (the later one counts)
      const k = rc.wrap === 'dupT' ? 't' : 'rank'
      const inner = encodeMessage(msg).subarray(4)
      const second = encodeMessage(k === 't' ? 'hello' : 0).subarray(4)
      const count = Object.keys(msg).length + 1
      if (count > 15) return inner
      return Buffer.concat([Buffer.from([0x80 | count]), inner.subarray(1), Buffer.from(mstr(k)), second])
    }
  }
}

function frame(rc: Recipe, body: Buffer): Buffer {
  switch (rc.framing) {
    case 'exact':
      return framed(body)
    case 'truncated': {
      const f = framed(body)
      return f.subarray(0, rc.cut % f.length)
    }
    case 'trailing':
      return Buffer.concat([framed(body), rc.tail])
    case 'overLimit':
      return framed(body, 1025 + (rc.cut % 0xfffff))
    case 'shortPrefix':
      return framed(body, body.length === 0 ? 0 : rc.cut % body.length)
    case 'twice':
      return Buffer.concat([framed(body), framed(body)])
  }
}
