/**
 * Bodies through the control-message reader before the key, for test/security/fuzz-reader.test.ts
 * (what becomes of them) and fuzz-reader.perf.test.ts (how long it takes): one body through a
 * reader, a flat message of a given size, and the bombs a stranger may send.
 */
import { PRE_AUTH_MAX_BYTES } from '#lapi-internal'
import { encodeMessage, readMessages } from '@amlapi/lapi/transport'
import { FakeSocket, errorBomb, fixedHostileBodies, framed, structuredCloneBomb } from './fuzz-msgpack.js'

/** One body through a reader before the key (framed, in one chunk): its outcomes, the message or why not, how long it took (ms). */
export function throughReader(body: Uint8Array): { outcomes: number; m: unknown; why: string | null; ms: number } {
  const msg = framed(body)
  const sock = new FakeSocket()
  const r: { outcomes: number; m: unknown; why: string | null; ms: number } = { outcomes: 0, m: undefined, why: null, ms: 0 }
  readMessages(
    sock.sock,
    (m) => {
      r.outcomes++
      r.m = m
    },
    (w) => {
      r.outcomes++
      r.why = w
    },
  )
  const t0 = performance.now()
  sock.feed(msg)
  r.ms = performance.now() - t0
  return r
}

/** A flat message whose body is `size` bytes or a little less (entries of strings of at most 200 characters). */
export function flatOfSize(size: number): Buffer {
  const m: Record<string, string> = { t: 'x' }
  for (let i = 0; i < 15 && encodeMessage(m).length - 4 < size - 8; i++) {
    // (a key of 2 characters and a str8 header: 5 bytes)
    m[`p${i.toString(16)}`] = 'p'.repeat(Math.max(0, Math.min(200, size - (encodeMessage(m).length - 4) - 5)))
  }
  return encodeMessage(m)
}

/** The structured-clone and Error-extension bombs, alone and as a map's value, and every fixed hostile body. */
export function bombs(): Array<[string, Buffer]> {
  const inMap = (b: Buffer): Buffer =>
    Buffer.concat([Buffer.from([0x82, 0xa1, 0x74, 0xa5, ...Buffer.from('hello'), 0xa1, 0x6d]), b]).subarray(0, PRE_AUTH_MAX_BYTES)
  return [
    ['structured clone, 998 bytes', structuredCloneBomb(76)],
    ['Error extensions (d4 65 00 92 a1 45 a0) to 1 KiB', errorBomb()],
    ['structured clone as a map value', inMap(structuredCloneBomb(76))],
    ['Error extensions as a map value', inMap(errorBomb())],
    ...fixedHostileBodies(),
  ]
}
