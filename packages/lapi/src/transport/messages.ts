/**
 * Control messages over a stream socket: each a 4-byte little-endian length, then a msgpackr
 * body. What the rendezvous and the transports' handshakes speak; the data plane uses fixed
 * layouts instead (transport/contract.ts, transport/packet.ts).
 */
import type { Socket } from 'node:net'
import { Packr } from 'msgpackr/pack'

const packr = new Packr({ useRecords: false, moreTypes: false })

/** Longest control message accepted (a larger length prefix is a broken or hostile stream). */
export const MAX_MESSAGE_BYTES = 16 << 20

export function encodeMessage (msg: unknown): Buffer {
  const body = packr.pack(msg)
  const out = Buffer.allocUnsafe(4 + body.length)
  out.writeUInt32LE(body.length, 0)
  body.copy(out, 4)
  return out
}

/** A message's msgpack body, without the length prefix (a datagram carries its own length). */
export function encodeBody (msg: unknown): Buffer {
  return packr.pack(msg)
}

export function decodeBody (body: Uint8Array): unknown {
  return packr.unpack(body)
}

/**
 * Reads length-prefixed messages from `sock` and calls `onMessage` with each (decoded), until
 * `stop()`; bytes after the last whole message are handed back then (the rest of the stream may
 * speak another protocol). A message over MAX_MESSAGE_BYTES or one that does not decode is
 * `onError`'s, and reading stops.
 */
export function readMessages (sock: Socket, onMessage: (m: unknown) => void, onError: (why: string) => void): { stop: () => Buffer } {
  let buf: Buffer = Buffer.alloc(0)
  let stopped = false
  const onData = (chunk: Buffer): void => {
    buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk])
    while (!stopped && buf.length >= 4) {
      const n = buf.readUInt32LE(0)
      if (n > MAX_MESSAGE_BYTES) { stopped = true; sock.off('data', onData); onError(`a control message of ${n} bytes`); return }
      if (buf.length < 4 + n) break
      const body = buf.subarray(4, 4 + n)
      buf = buf.subarray(4 + n)
      let m: unknown
      try {
        m = decodeBody(body)
      } catch (e) {
        stopped = true
        sock.off('data', onData)
        onError(`a control message that does not decode (${(e as Error).message})`)
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
      return buf
    },
  }
}

/** A field of a decoded message, when the message is an object. */
export function field (m: unknown, k: string): unknown {
  return m !== null && typeof m === 'object' ? (m as Record<string, unknown>)[k] : undefined
}
