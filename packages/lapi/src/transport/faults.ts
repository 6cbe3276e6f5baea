/**
 * Seeded fault injection on the network path, for tests (`lapirun --faults SPEC`, AMLAPI_FAULTS):
 * what the `udp` transport does to the datagrams it sends (drop, duplicate, hold back so that later
 * ones overtake them, corrupt a bit, delay), and what `tcp` does to its frames (corrupt only).
 * A program's results must be the same with and without faults (docs/transports.md, "Faults").
 *
 * SPEC is comma-separated `key=value`: `drop`, `dup`, `reorder`, `corrupt` (probabilities per
 * datagram, 0–1), `delay` (µs: an extra random delay up to this) and `seed` (an integer).
 */

export interface FaultSpec {
  drop: number
  dup: number
  reorder: number
  corrupt: number
  /** Largest extra delay of a datagram, µs (each gets a uniform random part of it). */
  delay: number
  seed: number
}

const PROBABILITIES = ['drop', 'dup', 'reorder', 'corrupt'] as const

/** Parses a fault SPEC; throws RangeError naming the part that is wrong. An empty text is null (no faults). */
export function parseFaults(text: string): FaultSpec | null {
  if (text.trim() === '') return null
  const f: FaultSpec = { drop: 0, dup: 0, reorder: 0, corrupt: 0, delay: 0, seed: 1 }
  for (const raw of text.split(',')) {
    const part = raw.trim()
    if (part === '') continue
    const eq = part.indexOf('=')
    const k = eq < 0 ? part : part.slice(0, eq).trim()
    const v = eq < 0 ? '' : part.slice(eq + 1).trim()
    const n = Number(v)
    if (v === '' || !Number.isFinite(n)) throw new RangeError(`faults: '${part}' needs a number (key=value)`)
    if ((PROBABILITIES as readonly string[]).includes(k)) {
      if (n < 0 || n > 1) throw new RangeError(`faults: ${k} is a probability from 0 to 1, not ${v}`)
      f[k as (typeof PROBABILITIES)[number]] = n
    } else if (k === 'delay') {
      if (n < 0 || n > 1e6) throw new RangeError(`faults: delay is microseconds from 0 to 1000000, not ${v}`)
      f.delay = n
    } else if (k === 'seed') {
      if (!Number.isInteger(n)) throw new RangeError(`faults: seed must be an integer, not ${v}`)
      f.seed = n
    } else {
      throw new RangeError(`faults: unknown key '${k}' (drop, dup, reorder, corrupt, delay, seed)`)
    }
  }
  return f
}

/** The first state of a process's generator: the seed mixed with its rank (never 0). */
export function faultState(seed: number, rank: number): number {
  let x = (Math.imul(seed | 0, 0x9e3779b1) ^ Math.imul(rank + 1, 0x85ebca6b)) | 0
  x ^= x >>> 16
  return x === 0 ? 0x6d2b79f5 : x
}

/** The next value of the xorshift generator whose state is word `at` of `w` (under the network lock): a number in [0, 1). */
export function nextRandom(w: Int32Array, at: number): number {
  let x = w[at]!
  x ^= x << 13
  x ^= x >>> 17
  x ^= x << 5
  w[at] = x
  return (x >>> 0) / 4294967296
}
