/**
 * Control messages over a stream socket: each a 4-byte little-endian length, then a msgpackr
 * body. What the rendezvous and the transports' handshakes speak; the data plane uses fixed
 * layouts instead (transport/contract.ts, transport/packet.ts).
 */
import type { Socket } from 'node:net'
import { Packr } from 'msgpackr/pack'

// (structuredClone off: its id and pointer extensions let a 300-byte message describe a value of
// millions of nodes, which msgpackr's own error path then expands)
const packr = new Packr({ useRecords: false, moreTypes: false, structuredClone: false })

/** Longest control message accepted (a larger length prefix is a broken or hostile stream). */
export const MAX_MESSAGE_BYTES = 16 << 20

export function encodeMessage(msg: unknown): Buffer {
  const body = packr.pack(msg)
  const out = Buffer.allocUnsafe(4 + body.length)
  out.writeUInt32LE(body.length, 0)
  body.copy(out, 4)
  return out
}

/** A message's msgpack body, without the length prefix (a datagram carries its own length). */
export function encodeBody(msg: unknown): Buffer {
  return packr.pack(msg)
}

export function decodeBody(body: Uint8Array): unknown {
  return packr.unpack(body)
}

/** Entries a message from a peer that has not proved the key may have. */
const FLAT_ENTRIES = 16

/**
 * Decodes a message of a peer that has not proved the key: a msgpack map of at most FLAT_ENTRIES
 * entries whose keys are short strings and whose values are nil, booleans, integers, strings or
 * binaries of at most 255 bytes — every handshake message is one. Anything else (arrays, nested
 * maps, floats, extensions: what a general decoder may spend milliseconds on) throws. Linear in the
 * body, which must be read whole.
 */
export function decodeFlat(body: Uint8Array): Record<string, unknown> {
  const dv = new DataView(body.buffer, body.byteOffset, body.byteLength)
  let at = 0
  const need = (n: number): void => {
    if (at + n > body.length) throw new Error('a truncated message')
  }
  const byte = (): number => {
    need(1)
    return body[at++]!
  }
  const bytes = (n: number): Uint8Array => {
    need(n)
    const b = body.subarray(at, at + n)
    at += n
    return b
  }
  const text = (n: number): string => Buffer.from(bytes(n)).toString('utf8')
  const value = (): unknown => {
    const b = byte()
    if (b <= 0x7f) return b
    if (b >= 0xe0) return b - 0x100
    if (b >= 0xa0 && b <= 0xbf) return text(b & 0x1f)
    switch (b) {
      case 0xc0:
        return null
      case 0xc2:
        return false
      case 0xc3:
        return true
      case 0xc4:
        return Buffer.from(bytes(byte()))
      case 0xd9:
        return text(byte())
      case 0xcc:
        return byte()
      case 0xcd:
        need(2)
        at += 2
        return dv.getUint16(at - 2)
      case 0xce:
        need(4)
        at += 4
        return dv.getUint32(at - 4)
      case 0xd0:
        need(1)
        at += 1
        return dv.getInt8(at - 1)
      case 0xd1:
        need(2)
        at += 2
        return dv.getInt16(at - 2)
      case 0xd2:
        need(4)
        at += 4
        return dv.getInt32(at - 4)
      default:
        throw new Error(`a value of msgpack type 0x${b.toString(16)} (not taken before the key is proved)`)
    }
  }
  const head = byte()
  let n: number
  if (head >= 0x80 && head <= 0x8f) n = head & 0x0f
  else if (head === 0xde) {
    need(2)
    n = dv.getUint16(at)
    at += 2
  } else throw new Error('not a map')
  if (n > FLAT_ENTRIES) throw new Error(`a map of ${n} entries`)
  const m: Record<string, unknown> = Object.create(null) as Record<string, unknown>
  for (let i = 0; i < n; i++) {
    const k = value()
    if (typeof k !== 'string' || k.length > 32) throw new Error('a key that is no short string')
    m[k] = value()
  }
  if (at !== body.length) throw new Error('bytes after the message')
  return m
}

/**
 * Longest control message a peer may send before it has proved the job key (a challenge, a hello
 * and a welcome take well under 200 bytes): what a stranger's connection can make a process hold.
 */
export const PRE_AUTH_MAX_BYTES = 1024

/** What `readMessages` hands back: a way to stop it, and to raise its limit once the peer is known. */
export interface MessageReader {
  /** Stops reading; returns the bytes after the last whole message (the rest of the stream may speak another protocol). */
  stop: () => Buffer
  /** The longest message accepted from now on (after the peer proved the key: MAX_MESSAGE_BYTES, and every msgpack value). */
  setLimit: (bytes: number) => void
}

/**
 * Reads length-prefixed messages from `sock` and calls `onMessage` with each (decoded), until
 * `stop()`. A length over the limit (`maxBytes`, PRE_AUTH_MAX_BYTES unless said: a stranger's
 * messages are small flat maps, `decodeFlat`, until it proves the key and `setLimit` raises it) or
 * a body that does not decode is `onError`'s, and reading stops. Buffering is linear: a message's chunks are joined once, when all of it is there.
 */
export function readMessages(sock: Socket, onMessage: (m: unknown) => void, onError: (why: string) => void, maxBytes = PRE_AUTH_MAX_BYTES): MessageReader {
  let limit = maxBytes
  // (a stranger's messages are flat maps: `decodeFlat`, until the peer is known)
  let decode: (b: Uint8Array) => unknown = maxBytes <= PRE_AUTH_MAX_BYTES ? decodeFlat : decodeBody
  const chunks: Buffer[] = []
  let have = 0
  let stopped = false
  /** All buffered bytes as one buffer (joined once; kept as the only chunk). */
  const joined = (): Buffer => {
    if (chunks.length > 1) {
      const b = Buffer.concat(chunks, have)
      chunks.length = 0
      chunks.push(b)
    }
    return chunks[0] ?? Buffer.alloc(0)
  }
  /** The 4-byte length prefix, read across chunks. */
  const prefix = (): number => {
    const c0 = chunks[0]!
    if (c0.length >= 4) return c0.readUInt32LE(0)
    return joined().readUInt32LE(0)
  }
  const fail = (why: string): void => {
    stopped = true
    sock.off('data', onData)
    chunks.length = 0
    have = 0
    onError(why)
  }
  const onData = (chunk: Buffer): void => {
    if (stopped) return
    chunks.push(chunk)
    have += chunk.length
    while (!stopped && have >= 4) {
      const n = prefix()
      if (n > limit) {
        fail(`a control message of ${n} bytes (at most ${limit} here)`)
        return
      }
      if (have < 4 + n) break
      const buf = joined()
      const body = buf.subarray(4, 4 + n)
      const rest = buf.subarray(4 + n)
      chunks.length = 0
      have = rest.length
      if (have > 0) chunks.push(rest)
      let m: unknown
      try {
        m = decode(body)
      } catch (e) {
        fail(`a control message that does not decode (${(e as Error).message})`)
        return
      }
      onMessage(m)
    }
  }
  sock.on('data', onData)
  return {
    stop: () => {
      stopped = true
      sock.off('data', onData)
      return joined()
    },
    setLimit: (bytes: number) => {
      limit = bytes
      if (bytes > PRE_AUTH_MAX_BYTES) decode = decodeBody
    },
  }
}

/** A field of a decoded message, when the message is an object. */
export function field(m: unknown, k: string): unknown {
  return m !== null && typeof m === 'object' ? (m as Record<string, unknown>)[k] : undefined
}
