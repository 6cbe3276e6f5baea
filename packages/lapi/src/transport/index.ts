/**
 * `@amlapi/lapi/transport`: the pieces a transport author needs — the contract a network transport
 * implements (and the `tcp` one), the job key's proofs, the control-message framing, the inbox
 * rings every packet is delivered through and the packet header layout. Not for applications.
 */
export { RingReader, RingWriter, type OutRing } from './ring.js'
export {
  createInbox,
  netRingAt,
  netRingGeometry,
  ringGeometry,
  NET_RING_SLOTS,
  RING_HEADER_BYTES,
  SLOT_PACKET,
  SLOT_STAMP_BYTES,
  type RingGeometry,
} from '../layout/ring.js'
export { isPageAligned, pageAlignedShared } from '../layout/memory.js'
export * from './packet.js'
export * from './contract.js'
export { TcpTransport, type TcpOptions } from './tcp/transport.js'
export { StreamPath, createStreamShared, peerFlags, setPeerFd, streamStats } from './stream-path.js'
export { PEER_BYE, PEER_EOF, PEER_ERROR, PEER_MALFORMED, type StreamShared } from '../layout/stream.js'
export { makeKey, makeNonce, parseKey, proof, sameProof, KEY_BYTES, MIN_KEY_BYTES } from './auth.js'
export { DatagramSum } from './checksum.js'
export { FdIo, type Sum4 } from './fd-io.js'
export { sharedMemory, type WasmMemory } from '../layout/memory.js'
export { encodeMessage, decodeBody, readMessages, MAX_MESSAGE_BYTES } from './messages.js'
