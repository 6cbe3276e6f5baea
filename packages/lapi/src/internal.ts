/**
 * What amlapi's tests and benchmarks use of lapi's inside, and applications do not: the
 * implementation behind a `Lapi` (its `Context`), the id tables of the message paths, and V8's
 * inlining budgets. Not a published export: the repository's own code imports it as
 * `#lapi-internal` (the root package.json's `imports`; scripts/bundle.mjs bundles it). No
 * stability promise.
 */
import type { Context } from './context.js'
import type { Lapi } from './lapi.js'

export type { Context } from './context.js'
export { DoneIds, IdTable } from './base/id-table.js'
export { tuneJit, jitFlags, jitApplied, JIT_INLINING, type JitMode } from './base/jit.js'
export { placementFromEnv, type EnvPlacement } from './launch/join.js'

/** The context behind a `Lapi` (its dispatcher, rings, statistics; for tests and layered libraries' internals). */
export function contextOf(lapi: Lapi): Context {
  return (lapi as unknown as { ctx: Context }).ctx
}
export {
  NoteError,
  awaitNote,
  jobIdFromEnv,
  meetingFile,
  meetingFromEnv,
  privateDir,
  publishNote,
  readNote,
  removeNote,
  runtimeDir,
  spansHosts,
  type Meeting,
} from './launch/meeting.js'
export { parsePmiLine } from './launch/pmi.js'
export { serveRendezvous, type Rendezvous } from './launch/rendezvous.js'
export { logger } from './base/log.js'
export { DatagramPath } from './transport/udp/path.js'
export {
  createDatagramShared,
  datagramLoss,
  datagramStats,
  setDatagramPeer,
  setReceiveFd,
  type DatagramShared,
  type DatagramOptions,
} from './transport/udp/shared.js'
export { DG_HEADER_BYTES, DG_MAC_BYTES, UDP_VERSION } from './transport/udp/header.js'
export { UdpTransport, type UdpOptions } from './transport/udp/transport.js'
// (the udp reliability driven alone, without sockets or a clock: test/lapi/udp-reliability.test.ts)
export { Reliability, type DatagramLink } from './transport/udp/reliability.js'
export { FrameBuffers } from './transport/frame-buffers.js'
export * as udpHeader from './transport/udp/header.js'
export * as udpConstants from './transport/udp/constants.js'
export * as datagramLayout from './layout/datagram.js'
export { PRE_AUTH_MAX_BYTES } from './transport/messages.js'
export { HANDSHAKE_MS, MAX_STRANGERS, StrangerGate } from './transport/strangers.js'
export { decodeControl, encodeControl, type ControlJob, type ControlMessage, type DecodedControl } from './agent/control-messages.js'
export { ControlPlane, type ControlOptions } from './agent/control.js'
export { createControl } from './layout/control.js'
