/**
 * `@amlapi/lapi/transport`: the pieces a transport author needs — the contract a network transport
 * implements (and the `tcp` one), the job key's proofs, the control-message framing, the inbox
 * rings every packet is delivered through and the packet header layout. Not for applications.
 */
export { RingReader, RingWriter, createInbox, isPageAligned, netRingAt, netRingGeometry, pageAlignedShared, ringGeometry, NET_RING_SLOTS, RING_HEADER_BYTES, SLOT_PACKET, SLOT_STAMP_BYTES, type RingGeometry, type OutRing } from './ring.js'
export * from './packet.js'
export * from './contract.js'
export { TcpTransport, type TcpOptions } from './tcp.js'
export { StreamPath, createStreamShared, peerFlags, setPeerFd, streamStats, PEER_BYE, PEER_EOF, PEER_ERROR, PEER_MALFORMED, type StreamShared } from './stream-path.js'
export { makeKey, makeNonce, parseKey, proof, sameProof, KEY_BYTES, MIN_KEY_BYTES } from './auth.js'
export { DatagramSum } from './checksum.js'
export { FdIo, type Sum4 } from './fd-io.js'
export { sharedMemory, type WasmMemory } from './wasm.js'
export { encodeMessage, decodeBody, readMessages, MAX_MESSAGE_BYTES } from './messages.js'
