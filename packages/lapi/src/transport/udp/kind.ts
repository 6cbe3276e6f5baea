/**
 * The `udp` transport as the registry (transport/registry.ts) names it: its sockets and handshake
 * (transport.ts) and the datagram path over its shared memory (shared.ts, path.ts).
 */
import type { TransportKind } from '../contract.js'
import { peerFlags, streamMemoryBytes } from '../stream-path.js'
import { MAX_WINDOW, PEER_TIMEOUT_MS } from './constants.js'
import { DatagramPath } from './path.js'
import { createDatagramShared, isDatagramShared, type DatagramOptions } from './shared.js'
import { UdpTransport } from './transport.js'

export const udp: TransportKind = {
  name: 'udp',
  createTransport: (o) =>
    new UdpTransport({
      rank: o.rank,
      size: o.size,
      key: o.key,
      bind: o.bind,
      log: o.log,
      mac: o.mac,
      faults: o.faults,
      peerTimeoutMs: o.peerTimeoutMs ?? PEER_TIMEOUT_MS,
      ...(o.maxDatagram !== undefined ? { maxDatagram: o.maxDatagram } : {}),
    }),
  createShared(procs, bufBytes, rank, o) {
    // (the geometry is the transport's, known once it listens: UdpTransport.geometry)
    if (o.geometry === undefined) throw new Error("udp: shared memory made without the transport's geometry")
    return createDatagramShared(procs, bufBytes, rank, o.geometry as DatagramOptions)
  },
  // (the stream path's buffers, and at most a window of the largest datagrams per peer and two datagram buffers)
  memoryBytes: (procs, bufBytes) => streamMemoryBytes(procs, bufBytes) + (procs * MAX_WINDOW + 2) * 65536,
  createPath(shared, rank) {
    if (!isDatagramShared(shared)) throw new Error("udp: a frame path over memory that is not a datagram path's")
    return new DatagramPath(shared, rank)
  },
  peerFlags,
}
