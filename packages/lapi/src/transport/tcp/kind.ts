/**
 * The `tcp` transport as the registry (transport/registry.ts) names it: its connections
 * (transport/tcp/transport.ts) and the stream path over its shared memory (transport/stream-path.ts).
 */
import type { TransportKind } from '../contract.js'
import { faultState } from '../faults.js'
import { StreamPath, createStreamShared, peerFlags, streamMemoryBytes } from '../stream-path.js'
import { TcpTransport } from './transport.js'

export const tcp: TransportKind = {
  name: 'tcp',
  createTransport: (o) => new TcpTransport({ rank: o.rank, size: o.size, key: o.key, bind: o.bind, log: o.log }),
  // (of the faults, a byte stream takes `corrupt` only)
  createShared: (procs, bufBytes, rank, o) =>
    createStreamShared(procs, bufBytes, o.faults !== null && o.faults.corrupt > 0 ? { p: o.faults.corrupt, seed: faultState(o.faults.seed, rank) } : null),
  memoryBytes: streamMemoryBytes,
  createPath: (shared, rank) => new StreamPath(shared, rank),
  peerFlags,
  unusedOptions(o) {
    const out: string[] = []
    const f = o.faults
    const idle = f === null ? [] : (['drop', 'dup', 'reorder', 'delay'] as const).filter((k) => f[k] > 0)
    if (idle.length > 0)
      out.push(`--faults ${idle.join(', ')} ${idle.length === 1 ? 'does' : 'do'} nothing over tcp (a byte stream; only corrupt applies): use --transport udp`)
    if (o.mac) out.push("--mac does nothing over tcp (it is udp's per-datagram MAC; tcp proves the key at connect): use --transport udp")
    return out
  },
}
