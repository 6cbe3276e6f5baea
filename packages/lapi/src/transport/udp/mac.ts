/**
 * The MAC of a `udp` datagram (with DG_MAC, AMLAPI_UDP_MAC): HMAC-SHA-256 under the pair's key
 * (made in the handshake: transport/udp/transport.ts) of the datagram with its MAC field zero, its
 * first DG_MAC_BYTES bytes in that field.
 */
import { lazyLoad } from '../../base/lazy.js'
import { DG_MAC_BYTES, H_MAC } from './header.js'
import type { DatagramShared } from './shared.js'

/** node:crypto's createHmac, loaded with the first MAC. */
let hmacOf: typeof import('node:crypto').createHmac | undefined

/** One thread's MACs of a datagram path's datagrams. */
export class DatagramMac {
  private readonly keys: SharedArrayBuffer
  private readonly mu8: Uint8Array
  /** Per peer, its key (copied from the shared memory when first used). */
  private readonly macKeys: Array<Buffer | null>

  constructor(s: DatagramShared) {
    this.keys = s.keys
    this.mu8 = new Uint8Array(s.mem.buffer)
    this.macKeys = new Array<Buffer | null>(s.procs).fill(null)
  }

  /** The HMAC of a datagram to or from peer `p`: `hl` header bytes of the memory at `h`, then `len` payload bytes at `at`. */
  of(p: number, h: number, hl: number, at: number, len: number): Buffer {
    let key = this.macKeys[p]!
    if (key === null) key = this.macKeys[p] = Buffer.from(new Uint8Array(this.keys, 32 * p, 32))
    // (node:crypto loaded with the first MAC, not in every thread of a job)
    hmacOf ??= lazyLoad<typeof import('node:crypto')>('node:crypto').createHmac
    const m = hmacOf('sha256', key).update(this.mu8.subarray(h, h + hl))
    if (len > 0) m.update(this.mu8.subarray(at, at + len))
    return m.digest()
  }

  /** Writes the MAC of the datagram to peer `p` (header at `h`, its MAC field zero; payload at `at`) into its header. */
  sign(p: number, h: number, hl: number, at: number, len: number): void {
    const m = this.of(p, h, hl, at, len)
    for (let k = 0; k < DG_MAC_BYTES; k++) this.mu8[h + H_MAC + k] = m[k]!
  }
}
