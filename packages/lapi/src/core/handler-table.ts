/**
 * The handler table of a context (docs/lapi.md, "Handler table"): header handlers by index, in
 * three ranges — the program's (LAPI_Addr_set), the layered libraries' (am2) and the automatic one
 * (functions given to Address_init or as hdr_hdl, SPMD style) — the index each function is
 * registered at, and the in-place receivers of the library slots' one-packet messages.
 */
import { LapiStatus as S } from '../base/status.js'
import type { short_hndlr_t } from '../am/types.js'
import type { Ref } from '../base/types.js'
import type { HandlerFn, HandlerRanges } from './types.js'

/** Slots of the range reserved for layered libraries. */
export const LIBRARY_SLOTS = 64
/** Entries of the automatic range. */
export const AUTO_SLOTS = 1024

export class HandlerTable {
  readonly ranges: HandlerRanges
  readonly handlers: Array<HandlerFn | null>
  private readonly handlerIndex = new Map<HandlerFn, number>()
  /** In-place receivers of SHORT packets, by table index (library range only; see setLibraryShortHandler). */
  private readonly shortHandlers: Array<short_hndlr_t | null>
  private nextAuto: number

  /** `user`: LOC_ADDRTBL_SZ, the size of the program's range. */
  constructor(user: number) {
    this.ranges = { user, library: user, auto: user + LIBRARY_SLOTS, size: user + LIBRARY_SLOTS + AUTO_SLOTS }
    this.handlers = new Array<HandlerFn | null>(this.ranges.size).fill(null)
    this.shortHandlers = new Array<short_hndlr_t | null>(this.ranges.size).fill(null)
    this.nextAuto = this.ranges.auto
  }

  /** LAPI_Addr_set: registers `fn` at `index` (1..LOC_ADDRTBL_SZ-1); null clears the entry. */
  addrSet(fn: HandlerFn | null, index: number): number {
    if (!Number.isInteger(index) || index < 1 || index >= this.ranges.user) return S.ERR_ADDR_HNDL_RANGE
    if (fn !== null && typeof fn !== 'function') return S.ERR_ORG_ADDR_NULL
    this.setHandlerAt(index, fn)
    return S.SUCCESS
  }

  /** LAPI_Addr_get: the function at `index`, or null. */
  addrGet(ret: Ref<HandlerFn | null> | null | undefined, index: number): number {
    if (ret === null || ret === undefined || typeof ret !== 'object') return S.ERR_RET_PTR_NULL
    if (!Number.isInteger(index) || index < 1 || index >= this.ranges.user) return S.ERR_ADDR_HNDL_RANGE
    ret.value = this.handlers[index] ?? null
    return S.SUCCESS
  }

  /**
   * Registers a handler of a layered library (am2) at `slot` of the reserved library range
   * (0..LIBRARY_SLOTS-1). Returns the table index, or -1 when the slot is out of range.
   */
  setLibraryHandler(slot: number, fn: HandlerFn | null): number {
    if (!Number.isInteger(slot) || slot < 0 || slot >= LIBRARY_SLOTS) return -1
    this.setHandlerAt(this.ranges.library + slot, fn)
    // a slot given up or given a new header handler loses its in-place receiver (it belonged to
    // the old one)
    this.shortHandlers[this.ranges.library + slot] = null
    return this.ranges.library + slot
  }

  /**
   * Sets the in-place receiver of the SHORT packets without data, and of those of at most 32
   * bytes of user header and data, sent to library slot `slot` (its header handler keeps every
   * other packet). Returns the table index; -1 when the slot is out of range, or when
   * `fn` is not null and the slot has no header handler.
   */
  setLibraryShortHandler(slot: number, fn: short_hndlr_t | null): number {
    if (!Number.isInteger(slot) || slot < 0 || slot >= LIBRARY_SLOTS) return -1
    const index = this.ranges.library + slot
    if (fn !== null && this.handlers[index] === null) return -1
    this.shortHandlers[index] = fn
    return index
  }

  /** The in-place receiver at table index `index` (any int: a packet says it), or null. */
  shortHandlerAt(index: number): short_hndlr_t | null {
    return index >>> 0 < this.shortHandlers.length ? this.shortHandlers[index]! : null
  }

  /** The handler at a table index, or null. */
  handlerAt(index: number): HandlerFn | null {
    return Number.isInteger(index) && index > 0 && index < this.handlers.length ? (this.handlers[index] ?? null) : null
  }

  /** The table index a function is registered at (any range), or -1. */
  indexOfHandler(fn: HandlerFn): number {
    return this.handlerIndex.get(fn) ?? -1
  }

  /** Puts `fn` at `index` (null clears it), keeping the index of each function up to date. */
  setHandlerAt(index: number, fn: HandlerFn | null): void {
    const old = this.handlers[index]
    if (old !== null && old !== undefined && this.handlerIndex.get(old) === index) this.handlerIndex.delete(old)
    this.handlers[index] = fn
    if (fn !== null && !this.handlerIndex.has(fn)) this.handlerIndex.set(fn, index)
  }

  /** The index of `fn`, registered in the automatic range if it is not in the table yet; -1 when that range is full. */
  registerAuto(fn: HandlerFn): number {
    const have = this.handlerIndex.get(fn)
    if (have !== undefined) return have
    if (this.nextAuto >= this.ranges.size) return -1
    const idx = this.nextAuto++
    this.setHandlerAt(idx, fn)
    return idx
  }
}
