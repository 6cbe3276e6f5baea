/**
 * The job key and the proofs made with it (docs/transports.md, "Joining: rendezvous and key"):
 * every job has a random key of at least 128 bits; a process proves it knows the key by answering
 * a fresh challenge with an HMAC-SHA-256 over the challenge, its own nonce and its role, so the key
 * itself never travels and a recorded answer is worth nothing for another challenge.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

/** Bytes of a key lapirun makes, and the fewest a given key may have. */
export const KEY_BYTES = 32
export const MIN_KEY_BYTES = 16
/** Bytes of a challenge or nonce. */
export const NONCE_BYTES = 16

export function makeKey(): Buffer {
  return randomBytes(KEY_BYTES)
}

export function makeNonce(): Buffer {
  return randomBytes(NONCE_BYTES)
}

/** A key from its hex text (AMLAPI_JOB_KEY); throws an Error that says what is wrong. */
export function parseKey(hex: string): Buffer {
  const t = hex.trim()
  if (!/^([0-9a-fA-F]{2})+$/.test(t)) throw new Error('AMLAPI_JOB_KEY must be hex digits (an even number of them)')
  const k = Buffer.from(t, 'hex')
  if (k.length < MIN_KEY_BYTES)
    throw new Error(`AMLAPI_JOB_KEY must have at least ${MIN_KEY_BYTES * 8} bits (${MIN_KEY_BYTES * 2} hex digits); it has ${k.length * 8}`)
  return k
}

/** The proof for `role` (what the prover claims to be) over the given parts. */
export function proof(key: Uint8Array, role: string, ...parts: Array<Uint8Array | string | number>): Buffer {
  const h = createHmac('sha256', key)
  h.update(role)
  for (const p of parts) {
    h.update('\u0000')
    h.update(typeof p === 'number' ? String(p) : p)
  }
  return h.digest()
}

/** Whether `got` is the proof `want` (in constant time). */
export function sameProof(got: unknown, want: Buffer): boolean {
  return got instanceof Uint8Array && got.length === want.length && timingSafeEqual(got, want)
}
