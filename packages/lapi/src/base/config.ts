/**
 * Settings of a job and of one task, their defaults, and the environment variables that set them.
 * Every optimisation with a knob has it here (spin budget, packet size), with its unit.
 */
import type { JitMode } from './jit.js'

/** Settings shared by every task of a job. Sizes are in bytes, times in microseconds. */
export interface JobConfig {
  /** Bytes of each task's segment (AMLAPI_SEGMENT_SIZE, `lapirun --segment-size`). */
  segmentSize: number
  /** Payload bytes of one packet (LAPI_Qenv MAX_PKT_SZ; AMLAPI_MAX_PKT_SZ). */
  maxPktSz: number
  /** Largest user header of an active message (MAX_UHDR_SZ; AMLAPI_MAX_UHDR_SZ). */
  maxUhdrSz: number
  /** Packet slots of each inbox ring (NUM_REX_BUFS; AMLAPI_RING_SLOTS). */
  ringSlots: number
  /** How long a wait spins before it sleeps on the doorbell, µs (AMLAPI_SPIN_US; 0 = sleep at once). */
  spinUs: number
  /**
   * Longest spin the adaptive budget may grow to, µs (AMLAPI_SPIN_MAX_US): a wait whose sleep a
   * doorbell ended soon spins longer the next time (docs/architecture.md, "Progress, waiting
   * and doorbells"). At most
   * `spinUs` (or spinUs 0, or more tasks than CPUs) turns the adaptation off.
   */
  spinMaxUs: number
  /** Size of the Addr_set table (LOC_ADDRTBL_SZ). */
  locAddrTblSz: number
  /**
   * Active messages with more data than this (bytes) use a rendezvous: the first packet carries only
   * the header, the target's header handler picks the landing buffer, and the origin copies the
   * data once, straight into it (AMLAPI_RNDV_THRESHOLD).
   */
  rndvThreshold: number
  /**
   * Test transport: every packet this job sends is held back, shuffled and sometimes duplicated
   * (seeded), to prove that nothing depends on packet order (AMLAPI_CHAOS="seed=7,dup=0.1,hold=0.5").
   * null = off; with `dup` and `hold` 0 the packets take the plain rings (only `firstId` and `firstPacket` apply).
   */
  chaos: ChaosConfig | null
  /**
   * What `runJob` does with V8's inlining budgets before it starts the tasks: `'default'` leaves
   * them as node has them; `'tuned'` raises them for the whole process (base/jit.ts: message paths
   * 7–20 % cheaper once compiled, about three times the compile time first) (AMLAPI_JIT,
   * `lapirun --jit`).
   */
  jit: JitMode
}

/** Settings of the reordering and duplicating test transport. */
export interface ChaosConfig {
  /** Seed of the per-task generator (mixed with the task id). */
  seed: number
  /** Probability that a packet is sent twice. */
  dup: number
  /** Probability that a packet is held back for another dispatcher round (at most 8 rounds). */
  hold: number
  /**
   * The id of the first active message between each pair of tasks (an unsigned 32-bit integer;
   * default 0). Ids wrap after 2^32 messages; a value near 2^32 makes a test cross the wrap at once.
   */
  firstId?: number
  /**
   * The packet count every ring starts at (an integer, -2^31..2^32-1, taken mod 2^32; default 0).
   * The counts are int32 and wrap; a value near 2^31 or 2^32 makes a test cross the wrap at once.
   */
  firstPacket?: number
}

/** A valid ChaosConfig.firstId: a message id, an unsigned 32-bit integer. */
function isFirstId(n: number): boolean {
  return Number.isInteger(n) && n >= 0 && n < 2 ** 32
}
/** A valid ChaosConfig.firstPacket: an integer that is an int32 or a uint32 (taken mod 2^32). */
function isFirstPacket(n: number): boolean {
  return Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 32
}

/** Parses AMLAPI_CHAOS ("seed=7,dup=0.1,hold=0.5,firstId=4294967200,firstPacket=-20"); throws RangeError for a bad text. */
export function parseChaos(text: string): ChaosConfig {
  const c: ChaosConfig = { seed: 1, dup: 0.1, hold: 0.5 }
  for (const part of text.split(',')) {
    if (part.trim() === '' || part.trim() === '1' || part.trim() === 'on') continue
    const [k, v] = part.split('=')
    const n = Number(v)
    if (k === undefined || v === undefined || !Number.isFinite(n)) throw new RangeError(`bad AMLAPI_CHAOS part '${part}'`)
    if (k.trim() === 'seed') c.seed = n | 0
    else if (k.trim() === 'dup' && n >= 0 && n < 1) c.dup = n
    else if (k.trim() === 'hold' && n >= 0 && n < 1) c.hold = n
    else if (k.trim() === 'firstId' && isFirstId(n)) c.firstId = n
    else if (k.trim() === 'firstPacket' && isFirstPacket(n)) c.firstPacket = n
    else throw new RangeError(`bad AMLAPI_CHAOS part '${part}'`)
  }
  return c
}

export const DEFAULT_CONFIG: Readonly<JobConfig> = Object.freeze({
  segmentSize: 64 * 1024 * 1024,
  maxPktSz: 4096,
  maxUhdrSz: 1024,
  ringSlots: 32,
  spinUs: 200,
  spinMaxUs: 2000,
  locAddrTblSz: 256,
  rndvThreshold: 16384,
  chaos: null,
  jit: 'default',
})

/** Smallest and largest segment a job accepts, bytes. */
export const MIN_SEGMENT_SIZE = 64 * 1024
export const MAX_SEGMENT_SIZE = 2 ** 31 - 8

/**
 * Parses a byte size: a non-negative integer with an optional K, M or G suffix (powers of 1024),
 * e.g. `65536`, `64K`, `16M`. Returns NaN when the text is not a size.
 */
export function parseSize(text: string): number {
  const m = /^\s*(\d+)\s*([kKmMgG]?)[iI]?[bB]?\s*$/.exec(text)
  if (m === null) return NaN
  const n = Number(m[1])
  const unit = (m[2] ?? '').toUpperCase()
  const mult = unit === 'K' ? 1024 : unit === 'M' ? 1024 ** 2 : unit === 'G' ? 1024 ** 3 : 1
  return n * mult
}

function envNumber(env: NodeJS.ProcessEnv, name: string, parse: (s: string) => number): number | undefined {
  const raw = env[name]
  if (raw === undefined || raw === '') return undefined
  const v = parse(raw)
  if (!Number.isFinite(v)) throw new RangeError(`${name}=${raw} is not a valid value`)
  return v
}

/**
 * The job settings: `overrides` first, then the environment (AMLAPI_SEGMENT_SIZE, AMLAPI_MAX_PKT_SZ,
 * AMLAPI_MAX_UHDR_SZ, AMLAPI_RING_SLOTS, AMLAPI_SPIN_US, AMLAPI_SPIN_MAX_US, AMLAPI_RNDV_THRESHOLD,
 * AMLAPI_CHAOS, AMLAPI_JIT), then the defaults. Throws RangeError for a value out of range.
 */
export function resolveConfig(overrides: Partial<JobConfig> = {}, env: NodeJS.ProcessEnv = process.env): JobConfig {
  const cfg: JobConfig = {
    segmentSize: overrides.segmentSize ?? envNumber(env, 'AMLAPI_SEGMENT_SIZE', parseSize) ?? DEFAULT_CONFIG.segmentSize,
    maxPktSz: overrides.maxPktSz ?? envNumber(env, 'AMLAPI_MAX_PKT_SZ', parseSize) ?? DEFAULT_CONFIG.maxPktSz,
    maxUhdrSz: overrides.maxUhdrSz ?? envNumber(env, 'AMLAPI_MAX_UHDR_SZ', parseSize) ?? DEFAULT_CONFIG.maxUhdrSz,
    ringSlots: overrides.ringSlots ?? envNumber(env, 'AMLAPI_RING_SLOTS', Number) ?? DEFAULT_CONFIG.ringSlots,
    spinUs: overrides.spinUs ?? envNumber(env, 'AMLAPI_SPIN_US', Number) ?? DEFAULT_CONFIG.spinUs,
    spinMaxUs: overrides.spinMaxUs ?? envNumber(env, 'AMLAPI_SPIN_MAX_US', Number) ?? DEFAULT_CONFIG.spinMaxUs,
    locAddrTblSz: overrides.locAddrTblSz ?? DEFAULT_CONFIG.locAddrTblSz,
    rndvThreshold: overrides.rndvThreshold ?? envNumber(env, 'AMLAPI_RNDV_THRESHOLD', parseSize) ?? DEFAULT_CONFIG.rndvThreshold,
    chaos:
      overrides.chaos !== undefined
        ? overrides.chaos
        : env['AMLAPI_CHAOS'] !== undefined && env['AMLAPI_CHAOS'] !== '' && env['AMLAPI_CHAOS'] !== '0'
          ? parseChaos(env['AMLAPI_CHAOS'])
          : null,
    jit: overrides.jit ?? ((env['AMLAPI_JIT'] ?? '') === '' ? DEFAULT_CONFIG.jit : (env['AMLAPI_JIT'] as JitMode)),
  }
  const check = (ok: boolean, what: string): void => {
    if (!ok) throw new RangeError(`invalid ${what}`)
  }
  check(
    Number.isInteger(cfg.segmentSize) && cfg.segmentSize >= MIN_SEGMENT_SIZE && cfg.segmentSize <= MAX_SEGMENT_SIZE,
    `segment size ${cfg.segmentSize} (between ${MIN_SEGMENT_SIZE} and ${MAX_SEGMENT_SIZE} bytes)`,
  )
  check(
    Number.isInteger(cfg.maxPktSz) && cfg.maxPktSz >= 256 && cfg.maxPktSz <= 65536 && cfg.maxPktSz % 8 === 0,
    `packet size ${cfg.maxPktSz} (256..65536, a multiple of 8)`,
  )
  check(
    Number.isInteger(cfg.maxUhdrSz) && cfg.maxUhdrSz >= 8 && cfg.maxUhdrSz % 8 === 0 && cfg.maxUhdrSz <= cfg.maxPktSz,
    `user header size ${cfg.maxUhdrSz} (a multiple of 8, at most the packet size)`,
  )
  check(Number.isInteger(cfg.ringSlots) && cfg.ringSlots >= 2 && cfg.ringSlots <= 4096, `ring slots ${cfg.ringSlots} (2..4096)`)
  check(Number.isFinite(cfg.spinUs) && cfg.spinUs >= 0 && cfg.spinUs <= 1e7, `spin time ${cfg.spinUs} µs (0..10^7)`)
  check(Number.isFinite(cfg.spinMaxUs) && cfg.spinMaxUs >= 0 && cfg.spinMaxUs <= 1e7, `longest spin time ${cfg.spinMaxUs} µs (0..10^7)`)
  check(Number.isInteger(cfg.rndvThreshold) && cfg.rndvThreshold >= 0, `rendezvous threshold ${cfg.rndvThreshold}`)
  const first = cfg.chaos?.firstId
  check(first === undefined || isFirstId(first), `first message id ${String(first)} (0..2^32-1)`)
  const firstPkt = cfg.chaos?.firstPacket
  check(firstPkt === undefined || isFirstPacket(firstPkt), `first packet count ${String(firstPkt)} (-2^31..2^32-1)`)
  check(cfg.jit === 'tuned' || cfg.jit === 'default', `JIT mode '${String(cfg.jit)}' (tuned or default)`)
  check(Number.isInteger(cfg.locAddrTblSz) && cfg.locAddrTblSz >= 2 && cfg.locAddrTblSz <= 65536, `address table size ${cfg.locAddrTblSz}`)
  return cfg
}
