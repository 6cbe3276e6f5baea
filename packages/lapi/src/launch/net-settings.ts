/**
 * The network settings of one process of a job, from its environment: what `lapirun` passes its
 * processes, and what a process started by another launcher (`lapirun --join`) is given.
 *
 *   AMLAPI_TRANSPORT         the transport's name (transport/registry.ts; default DEFAULT_TRANSPORT)
 *   AMLAPI_FAULTS            seeded fault injection (transport/faults.ts)
 *   AMLAPI_UDP_MAC           1: every datagram carries a MAC (udp)
 *   AMLAPI_PEER_TIMEOUT_MS   a peer silent this long is lost (udp; default 5000: its PEER_TIMEOUT_MS)
 *   AMLAPI_UDP_DATAGRAM      the largest datagram, bytes (udp; default from the interface's MTU)
 */
import { parseFaults, type FaultSpec } from '../transport/faults.js'
import { DEFAULT_TRANSPORT, isTransport, transportList } from '../transport/registry.js'

/** A transport's name (transport/registry.ts). */
export type NetTransport = string

export interface NetSettings {
  transport: NetTransport
  faults: FaultSpec | null
  mac: boolean
  /** AMLAPI_PEER_TIMEOUT_MS (unset: the transport's default). */
  peerTimeoutMs?: number
  maxDatagram?: number
}

/** The whole number in variable `name` of `env` (undefined: not set); throws RangeError naming it when out of [lo, hi]. */
export function wholeEnv(env: NodeJS.ProcessEnv, name: string, lo: number, hi = Number.MAX_SAFE_INTEGER): number | undefined {
  const t = env[name]
  if (t === undefined || t.trim() === '') return undefined
  const n = Number(t)
  if (!Number.isInteger(n) || n < lo || n > hi)
    throw new RangeError(`${name}=${t} is not a whole number from ${lo}${hi < Number.MAX_SAFE_INTEGER ? ` to ${hi}` : ''}`)
  return n
}

/** The settings in `env`; throws RangeError naming the variable that is wrong. */
export function netSettings(env: NodeJS.ProcessEnv): NetSettings {
  const t = envTransport(env)
  const mac = (env['AMLAPI_UDP_MAC'] ?? '').trim()
  if (mac !== '' && mac !== '0' && mac !== '1') throw new RangeError(`AMLAPI_UDP_MAC=${mac}: 0 or 1`)
  const s: NetSettings = {
    transport: t,
    faults: parseFaults(env['AMLAPI_FAULTS'] ?? ''),
    mac: mac === '1',
  }
  const timeout = wholeEnv(env, 'AMLAPI_PEER_TIMEOUT_MS', 100, 3_600_000)
  if (timeout !== undefined) s.peerTimeoutMs = timeout
  const d = wholeEnv(env, 'AMLAPI_UDP_DATAGRAM', 576, 65507)
  if (d !== undefined) s.maxDatagram = d
  return s
}

/** The transport AMLAPI_TRANSPORT of `env` names (DEFAULT_TRANSPORT when unset); throws RangeError listing the known ones otherwise. */
export function envTransport(env: NodeJS.ProcessEnv): NetTransport {
  const t = (env['AMLAPI_TRANSPORT'] ?? '').trim() || DEFAULT_TRANSPORT
  if (!isTransport(t)) throw new RangeError(`AMLAPI_TRANSPORT=${t}: ${transportList()}`)
  return t
}
