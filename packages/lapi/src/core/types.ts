/**
 * The types the parts of a context share, in one file that imports no part: the handler table's
 * shapes, the views of the segments, the statistics a context reports, and the two interfaces
 * through which a lower part reaches a higher one without importing it: `Progress` (the
 * dispatcher, for whoever waits or must make progress) and `RemoteHost` (the context, for the
 * one-sided operations on tasks of other processes in net/remote-ops.ts).
 */
import type { BufferManager } from '@amlapi/bufmgr'
import type { NetEngine } from '../engine/engine.js'
import type { JobConfig } from '../base/config.js'
import type { OutRing } from '../transport/ring.js'
import type { Addr, compl_hndlr_t, scompl_hndlr_t } from '../base/types.js'

/** A registered header handler (typed loosely here; am/types.ts defines its exact shapes). */
export type HandlerFn = (...args: never[]) => unknown

/** Index ranges of the handler table (docs/lapi.md, "Handler table"). */
export interface HandlerRanges {
  /** Addr_set indices: 1 .. user-1 (LOC_ADDRTBL_SZ = user). */
  user: number
  /** First index reserved for layered libraries (am2): user .. user+LIBRARY_SLOTS-1. */
  library: number
  /** First index of the automatic range (functions given to Address_init or as hdr_hdl). */
  auto: number
  /** Table length. */
  size: number
}

/** Tasks' segments seen from this thread. */
export interface SegmentViews {
  u8: Uint8Array[]
  i32: Int32Array[]
  i64: BigInt64Array[]
}

/** What `Context.stats()` / `Lapi.stats()` report. */
export interface DispatcherStats {
  /** Packets dropped because their version, type or length was wrong. */
  packetsDropped: number
  /** Duplicate packets recognised and dropped. */
  duplicatesDropped: number
  /** Active messages that completed here (all data in place). */
  messagesReceived: number
  /** Active messages whose origin buffers became reusable. */
  messagesSent: number
  /** Of messagesReceived, those an in-place receiver took (Lapi.setLibraryShortHandler). */
  receivedInPlace: number
  /** Times a blocking wait of this task slept on its doorbell after its spin budget ran out. */
  sleeps: number
  /**
   * The spin budget the next blocking wait starts with, µs (adaptive: docs/architecture.md,
   * "Progress, waiting and doorbells").
   */
  spinUs: number
  /** Times a short sleep made the spin budget grow. */
  spinGrown: number
  /**
   * Sleeps of blocking waits and of polls' naps that this task spent in the kernel on its
   * process's connections rather than on its doorbell (jobs of several processes, one task each:
   * docs/transports.md, "Sleeping on the connections").
   */
  connectionSleeps: number
}

/**
 * What waiting and the collectives need of the dispatcher (am/dispatcher.ts implements it; the
 * parts of sync/ get it once it is built).
 */
export interface Progress {
  /**
   * A full dispatcher round: packets in, then (unless a send is blocked) the queued CTS actions and
   * completion handlers. Returns the number of things done. `now` (the default): the network is
   * read and what waits written at once; false on the side of a send.
   */
  progress(now?: boolean): number
  /** Takes in the packets waiting in the inbox only (what a send blocked on a full ring runs). */
  poll(now?: boolean): number
  /** True when a packet waits in the inbox. */
  inboxPending(): boolean
  /** Work queued or held that needs more dispatcher rounds (a waiting task must not sleep). */
  readonly busy: boolean
  /** True when the test transport still holds packets back. */
  readonly holding: boolean
  /** Sends the packets the test transport holds back (`all`: every one, now). */
  flushChaos(all: boolean): void
}

/** What the one-sided operations on tasks of other processes (net/remote-ops.ts) use of their context. */
export interface RemoteHost {
  readonly config: Readonly<JobConfig>
  readonly taskId: number
  readonly ctl: Int32Array
  readonly seg: SegmentViews
  readonly mem: BufferManager
  readonly netState: Int32Array | null
  readonly outbox: OutRing[]
  /** This thread's network engine (null in a job of one process). */
  readonly net: NetEngine | null
  /** The active-message layer: a send that finds its ring full waits for room there. */
  readonly am: { waitForSlot(tgt: number): number }
  waitUntil(cond: () => boolean, call?: number): number
  bumpLocal(c: Addr): void
  runSendHandler(h: scompl_hndlr_t, sinfo: unknown, tgt: number, cls: number): void
  runComplHandler(h: compl_hndlr_t, info: unknown, tgt: number, cls: number): void
}
