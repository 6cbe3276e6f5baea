/**
 * `@amlapi/lapi/transport`: the pieces a transport author needs — the inbox rings every packet is
 * delivered through and the packet header layout. Not for applications.
 */
export { RingReader, RingWriter, createInbox, isPageAligned, pageAlignedShared, ringGeometry, RING_HEADER_BYTES, SLOT_PACKET, SLOT_STAMP_BYTES, type RingGeometry } from './ring.js'
export * from './packet.js'
