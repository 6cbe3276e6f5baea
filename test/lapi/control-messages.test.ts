/**
 * The agents' control protocol (agent/control-messages.ts): every message kind round-trips through
 * the encoder and the decoder, the bytes are those of the plain maps (the wire format), and a
 * malformed message of each kind is rejected with a reason — by the decoder, never a throw, and by
 * the agent's control plane, which drops, counts and logs it.
 */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { ControlPlane, createControl, decodeControl, encodeControl, type ControlJob, type ControlMessage, type ControlOptions } from '#lapi-internal'
import { encodeMessage } from '@amlapi/lapi/transport'

/** 6 tasks over 3 processes: process 0 has tasks 0-1, process 1 tasks 2-3, process 2 tasks 4-5. */
const N = 6
const PROCS = 3
const AT0: ControlJob = { numTasks: N, processes: PROCS, rank: 0 }
const AT1: ControlJob = { numTasks: N, processes: PROCS, rank: 1 }

/** Any value as a message body: msgpack without the length prefix. */
const encodeBody = (v: unknown): Uint8Array => encodeMessage(v).subarray(4)

const bytes = (n: number, seed = 1): Uint8Array => Uint8Array.from({ length: n }, (_, k) => (k * 7 + seed) & 0xff)

/** The body of `m` on the wire (the frame path sends it without the length prefix). */
const body = (m: ControlMessage): Uint8Array => encodeControl(m).subarray(4)

/** `m` with its binaries as plain Uint8Arrays (the decoder hands back Buffers), for comparison. */
function plain(m: ControlMessage): ControlMessage {
  if (m.t === 'arrive' || m.t === 'release') return { ...m, f: new Uint8Array(m.f), i: new Uint8Array(m.i) }
  return m
}

describe('control messages: encoding', () => {
  const messages: Array<[string, ControlMessage, number, ControlJob]> = [
    ['arrive (process 1 to process 0)', { t: 'arrive', g: 5, f: bytes(32), i: bytes(32, 9) }, 1, AT0],
    ['arrive, generation wrapped to a negative', { t: 'arrive', g: -2147483648, f: bytes(32), i: bytes(32, 3) }, 2, AT0],
    ['release (process 0 to process 1)', { t: 'release', g: 6, f: bytes(16 * N), i: bytes(16 * N, 5) }, 0, AT1],
    ['state: exited', { t: 'state', task: 3, state: 3, g: 4 }, 1, AT0],
    ['state: failed', { t: 'state', task: 4, state: 4, g: 0 }, 2, AT1],
    ['state: terminated', { t: 'state', task: 0, state: 2, g: 1 }, 0, AT1],
    ['abort of a task', { t: 'abort', task: 5, reason: 'task 5 failed: uncaught error: boom' }, 2, AT0],
    ['abort of no task', { t: 'abort', task: -1, reason: '' }, 0, AT1],
  ]
  for (const [name, m, peer, job] of messages) {
    it(`round-trips: ${name}`, () => {
      const d = decodeControl(body(m), peer, job)
      expect(d.ok).toBe(true)
      if (d.ok) expect(plain(d.message)).toEqual(plain(m))
    })
  }

  it('writes the bytes of the plain maps, in their key order (the wire format)', () => {
    for (const [, m] of messages) {
      const literal =
        m.t === 'state'
          ? { t: m.t, task: m.task, state: m.state, g: m.g }
          : m.t === 'abort'
            ? { t: m.t, task: m.task, reason: m.reason }
            : { t: m.t, g: m.g, f: m.f, i: m.i }
      expect(Buffer.from(encodeControl(m)).equals(encodeMessage(literal))).toBe(true)
    }
    // (pinned: a change of the encoding shows here)
    expect(Buffer.from(body({ t: 'abort', task: 1, reason: 'x' })).toString('hex')).toBe('de0003a174a561626f7274a47461736b01a6726561736f6ea178')
    expect(Buffer.from(body({ t: 'state', task: 2, state: 4, g: -3 })).toString('hex')).toBe('de0004a174a57374617465a47461736b02a5737461746504a167fd')
    expect(Buffer.from(body({ t: 'arrive', g: 7, f: Uint8Array.of(1, 2), i: Uint8Array.of(3) })).toString('hex')).toBe(
      'de0004a174a6617272697665a16707a166c4020102a169c40103',
    )
  })
})

/** Malformed messages: what is sent, by whom, to whom, and the reason expected. */
const MALFORMED: Array<[string, Uint8Array, number, ControlJob, RegExp]> = [
  ['a byte no msgpack value starts with', Uint8Array.of(0xc1), 1, AT0, /^not (msgpack|a map)/],
  ['an extension of no known type', Uint8Array.of(0xd4, 0x05, 0x01), 1, AT0, /^not msgpack/],
  ['a timestamp', Uint8Array.of(0xd6, 0xff, 0, 0, 0, 1), 1, AT0, /^not a map but a value of type Date/],
  ['a truncated map', encodeBody({ t: 'abort', task: 1, reason: 'x' }).subarray(0, 10), 1, AT0, /^not msgpack/],
  ['an array', encodeBody(['abort', 1, 'x']), 1, AT0, /^not a map but an array of 3/],
  ['a number', encodeBody(7), 1, AT0, /^not a map but 7/],
  ['a binary', encodeBody(Buffer.alloc(3)), 1, AT0, /^not a map but 3 bytes/],
  ['no kind', encodeBody({ task: 1, reason: 'x' }), 1, AT0, /^no kind \(field t: undefined\)/],
  ['a kind that is no string', encodeBody({ t: 3 }), 1, AT0, /^no kind \(field t: 3\)/],
  ['an unknown kind', encodeBody({ t: 'hello' }), 1, AT0, /^an unknown kind "hello"/],
  ['a kind of the prototype', encodeBody({ t: 'constructor' }), 1, AT0, /^an unknown kind "constructor"/],
  // arrive
  ['arrive: a field missing', encodeBody({ t: 'arrive', g: 1, f: bytes(32) }), 1, AT0, /^arrive: no field i/],
  ['arrive: a field extra', encodeBody({ t: 'arrive', g: 1, f: bytes(32), i: bytes(32), x: 1 }), 1, AT0, /^arrive: an unexpected field "x"/],
  [
    'arrive: at a process other than 0',
    encodeBody({ t: 'arrive', g: 1, f: bytes(32), i: bytes(32) }),
    2,
    AT1,
    /^arrive: sent to process 1 \(only process 0 gathers\)/,
  ],
  [
    'arrive: a fractional generation',
    encodeBody({ t: 'arrive', g: 1.5, f: bytes(32), i: bytes(32) }),
    1,
    AT0,
    /^arrive: the generation 1\.5 is no 32-bit integer/,
  ],
  [
    'arrive: a generation past 32 bits',
    encodeBody({ t: 'arrive', g: 2 ** 31, f: bytes(32), i: bytes(32) }),
    1,
    AT0,
    /^arrive: the generation 2147483648 is no 32-bit integer/,
  ],
  [
    'arrive: a generation that is a string',
    encodeBody({ t: 'arrive', g: '1', f: bytes(32), i: bytes(32) }),
    1,
    AT0,
    /^arrive: the generation "1" is no 32-bit integer/,
  ],
  [
    "arrive: entries of another process's size",
    encodeBody({ t: 'arrive', g: 1, f: bytes(48), i: bytes(32) }),
    1,
    AT0,
    /^arrive: field f is 48 bytes, not 32 bytes/,
  ],
  ['arrive: entries that are no binary', encodeBody({ t: 'arrive', g: 1, f: bytes(32), i: 'x'.repeat(32) }), 1, AT0, /^arrive: field i is "x+", not 32 bytes/],
  // release
  ['release: a field missing', encodeBody({ t: 'release', f: bytes(96), i: bytes(96) }), 0, AT1, /^release: no field g/],
  ['release: a field extra', encodeBody({ t: 'release', g: 1, f: bytes(96), i: bytes(96), y: null }), 0, AT1, /^release: an unexpected field "y"/],
  [
    'release: from a process other than 0',
    encodeBody({ t: 'release', g: 1, f: bytes(96), i: bytes(96) }),
    2,
    AT1,
    /^release: sent by process 2 \(only process 0 releases\)/,
  ],
  [
    'release: a generation that is no number',
    encodeBody({ t: 'release', g: null, f: bytes(96), i: bytes(96) }),
    0,
    AT1,
    /^release: the generation null is no 32-bit integer/,
  ],
  ['release: tables of the wrong size', encodeBody({ t: 'release', g: 1, f: bytes(96), i: bytes(95) }), 0, AT1, /^release: field i is 95 bytes, not 96 bytes/],
  // state
  ['state: a field missing', encodeBody({ t: 'state', task: 2, state: 3 }), 1, AT0, /^state: no field g/],
  ['state: a field extra', encodeBody({ t: 'state', task: 2, state: 3, g: 0, reason: 'x' }), 1, AT0, /^state: an unexpected field "reason"/],
  ['state: a task of another process', encodeBody({ t: 'state', task: 0, state: 3, g: 0 }), 1, AT0, /^state: task 0 is not one of process 1's \(2-3\)/],
  ['state: a task past the job', encodeBody({ t: 'state', task: 6, state: 3, g: 0 }), 2, AT0, /^state: task 6 is not one of process 2's \(4-5\)/],
  ['state: a fractional task', encodeBody({ t: 'state', task: 2.5, state: 3, g: 0 }), 1, AT0, /^state: task 2\.5 is not one of process 1's/],
  ['state: a running task', encodeBody({ t: 'state', task: 2, state: 1, g: 0 }), 1, AT0, /^state: 1 is not the state of a task that ended/],
  [
    'state: a state that is no number',
    encodeBody({ t: 'state', task: 2, state: 'exited', g: 0 }),
    1,
    AT0,
    /^state: "exited" is not the state of a task that ended/,
  ],
  ['state: a fractional generation', encodeBody({ t: 'state', task: 2, state: 3, g: 0.5 }), 1, AT0, /^state: the generation 0\.5 is no 32-bit integer/],
  // abort
  ['abort: a field missing', encodeBody({ t: 'abort', task: 1 }), 1, AT0, /^abort: no field reason/],
  ['abort: a field extra', encodeBody({ t: 'abort', task: 1, reason: 'x', g: 1 }), 1, AT0, /^abort: an unexpected field "g"/],
  ['abort: a task below -1', encodeBody({ t: 'abort', task: -2, reason: 'x' }), 1, AT0, /^abort: task -2 is neither a task of the job \(0-5\) nor -1/],
  ['abort: a task past the job', encodeBody({ t: 'abort', task: 6, reason: 'x' }), 1, AT0, /^abort: task 6 is neither/],
  ['abort: a task that is no number', encodeBody({ t: 'abort', task: true, reason: 'x' }), 1, AT0, /^abort: task true is neither/],
  ['abort: a reason that is no string', encodeBody({ t: 'abort', task: 1, reason: { why: 'x' } }), 1, AT0, /^abort: the reason is a map, not a string/],
]

describe('control messages: the decoder rejects', () => {
  for (const [name, b, peer, job, why] of MALFORMED) {
    it(name, () => {
      const d = decodeControl(b, peer, job)
      expect(d.ok).toBe(false)
      if (!d.ok) expect(d.reason).toMatch(why)
    })
  }

  it('a long string from the network only in part', () => {
    const d = decodeControl(encodeBody({ t: 'x'.repeat(10_000) }), 1, AT0)
    expect(d.ok).toBe(false)
    if (!d.ok) expect(d.reason.length).toBeLessThan(120)
  })

  it("never throws: any bytes, and any msgpack value, with the kinds' fields mixed in", () => {
    const job = fc.constantFrom(AT0, AT1)
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.integer({ min: 0, max: PROCS - 1 }), job, (b, peer, j) => {
        const d = decodeControl(b, peer, j)
        expect(typeof d.ok).toBe('boolean')
      }),
      { numRuns: 2000 },
    )
    const value = fc.oneof(
      fc.integer(),
      fc.double(),
      fc.string(),
      fc.uint8Array({ maxLength: 120 }),
      fc.constant(null),
      fc.boolean(),
      fc.array(fc.integer(), { maxLength: 3 }),
    )
    const message = fc.record(
      {
        t: fc.constantFrom('arrive', 'release', 'state', 'abort', 'other'),
        g: value,
        f: value,
        i: value,
        task: value,
        state: value,
        reason: value,
      },
      { requiredKeys: ['t'] },
    )
    fc.assert(
      fc.property(message, fc.integer({ min: 0, max: PROCS - 1 }), job, (m, peer, j) => {
        const d = decodeControl(encodeBody(m), peer, j)
        // (what it takes in, it sends again as the same message)
        if (d.ok) {
          const again = decodeControl(body(d.message), peer, j)
          expect(again.ok && plain(again.message)).toEqual(plain(d.message))
        } else expect(d.reason).not.toBe('')
      }),
      { numRuns: 3000 },
    )
  })
})

describe("control messages: the agent's control plane", () => {
  /** A control plane of process `rank` of the 6-task job, what it logs, sends and aborts. */
  function plane(rank: number): {
    cp: ControlPlane
    logged: Array<[string, Record<string, unknown>, string]>
    sent: Array<[number, Buffer]>
    aborts: Array<[number, string]>
  } {
    const logged: Array<[string, Record<string, unknown>, string]> = []
    const sent: Array<[number, Buffer]> = []
    const aborts: Array<[number, string]> = []
    const at =
      (level: string) =>
      (fields: Record<string, unknown>, msg: string): void => {
        logged.push([level, fields, msg])
      }
    const log = { warn: at('warn'), debug: at('debug'), trace: at('trace') } as unknown as ControlOptions['log']
    const first = [0, 2, 4][rank]!
    const spec = { numTasks: N, processes: PROCS, firstTask: first, localTasks: 2, control: createControl(N, first, 2) } as unknown as ControlOptions['spec']
    const cp = new ControlPlane({
      spec,
      rank,
      log,
      send: (p, m) => {
        sent.push([p, m])
      },
      onAbort: (t, r) => {
        aborts.push([t, r])
      },
    })
    return { cp, logged, sent, aborts }
  }

  it('drops each malformed message, counts it and names it in the log, without a throw', () => {
    const { cp, logged, aborts } = plane(0)
    let n = 0
    for (const [, b, peer, job] of MALFORMED) {
      if (job !== AT0) continue
      expect(() => cp.onBody(peer, b)).not.toThrow()
      n++
      expect(cp.dropped).toBe(n)
      const [level, fields, msg] = logged.at(-1)!
      expect(msg).toBe('control message dropped')
      expect(level).toBe(n <= 16 ? 'warn' : 'debug')
      expect(fields).toMatchObject({ peer, dropped: n })
      expect(fields['reason']).toBe((decodeControl(b, peer, job) as { reason: string }).reason)
    }
    expect(n).toBeGreaterThan(16)
    expect(aborts).toEqual([])
  })

  it("takes in well-formed messages: the barrier, a task's end, an abort", () => {
    const zero = plane(0)
    // (process 0's own tasks arrive, then processes 1 and 2: the release goes to both)
    zero.cp.arrive(1)
    zero.cp.onBody(1, body({ t: 'arrive', g: 1, f: bytes(32), i: bytes(32) }))
    expect(zero.sent).toEqual([])
    zero.cp.onBody(2, body({ t: 'arrive', g: 1, f: bytes(32), i: bytes(32) }))
    expect(zero.sent.map(([p]) => p)).toEqual([1, 2])
    const rel = decodeControl(zero.sent[0]![1].subarray(4), 0, AT1)
    expect(rel.ok && rel.message.t === 'release' && rel.message.g === 1).toBe(true)
    // (process 1 takes the release in; the same again is one generation behind: dropped, named)
    const one = plane(1)
    one.cp.onBody(0, zero.sent[0]![1].subarray(4))
    expect(one.cp.dropped).toBe(0)
    one.cp.onBody(0, zero.sent[0]![1].subarray(4))
    expect(one.cp.dropped).toBe(1)
    expect(one.logged.at(-1)![1]['reason']).toBe('release: barrier generation 1, this process waits for 2')
    one.cp.onBody(2, body({ t: 'state', task: 4, state: 3, g: 1 }))
    one.cp.onBody(2, body({ t: 'abort', task: 4, reason: 'task 4 failed' }))
    expect(one.cp.dropped).toBe(1)
    expect(one.aborts).toEqual([[4, 'task 4 failed']])
    expect(zero.cp.dropped).toBe(0)
  })

  it('sends an abort of a number that is no task of the job as one of no task (-1)', () => {
    const { cp, sent } = plane(1)
    cp.abort(99, 'why')
    cp.abort(3, 'why')
    expect(sent.map(([p, m]) => [p, decodeControl(m.subarray(4), 1, AT0)])).toEqual([
      [0, { ok: true, message: { t: 'abort', task: -1, reason: 'why' } }],
      [2, { ok: true, message: { t: 'abort', task: -1, reason: 'why' } }],
      [0, { ok: true, message: { t: 'abort', task: 3, reason: 'why' } }],
      [2, { ok: true, message: { t: 'abort', task: 3, reason: 'why' } }],
    ])
  })
})
