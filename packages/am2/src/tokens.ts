/**
 * The token pool and the Medium payload buffers (a layer of the runtime: runtime.ts). Tokens are
 * made once and reused (a queue entry names its token by index); a Medium's payload lands in a
 * bufmgr arena or, when that is full, in a pooled heap buffer, and both go back when the token is
 * released. Also the heap-buffer counts that `Am2.stats()` reports.
 */
import { BufferManager } from '@amlapi/bufmgr'
import type { Lapi } from '@amlapi/lapi'
import * as copy from './copy.js'
import { FreeList } from './free-list.js'
import { Token, type Bundle } from './objects.js'
import { RuntimeState } from './state.js'
import * as types from './types.js'

// What this file reads of types.ts and copy.ts, as module constants: TurboFan folds a module's own
// constants into the code that reads them, but loads an imported binding from its cell, with a
// hole check, at every use (the per-message paths read these).
const { views } = copy
const { T_FREE, T_QUEUED } = types

/** Bytes of the bufmgr arena for Medium payloads; larger demand falls back to heap buffers. */
const ARENA_BYTES = 8 * 1024 * 1024
/** Bytes of heap Medium buffers (those the arena had no room for) kept for reuse at most. */
const HEAP_POOL_BYTES = 64 * 1024 * 1024

/** The tokens of this task and the buffers of their Medium payloads. */
export class Tokens extends RuntimeState {
  /** Every token made, at its index. */
  protected readonly tokens: Token[] = []
  private readonly freeTokens = new FreeList<Token>()
  private readonly mem: BufferManager
  private readonly arena: Uint8Array
  /** Heap Medium buffers kept for reuse, by log2 of their length, and their bytes in all. */
  private readonly heapPool: Array<FreeList<Uint8Array>> = []
  private heapPooled = 0
  /** Mediums whose payload the arena had no room for, and the heap buffers made for them (Am2.stats). */
  heapMediums = 0
  heapBuffersMade = 0

  constructor(lapi: Lapi) {
    super(lapi)
    this.mem = new BufferManager({ size: ARENA_BYTES, shared: false, maxClassSize: 65536 })
    this.arena = new Uint8Array(this.mem.buffer)
  }

  /**
   * A Medium payload buffer of `n` bytes for `t`: bufmgr's, or, when the arena is full (deep
   * pipelines of large Mediums), a view of a heap buffer from a pool by power-of-two size, kept when
   * the token is released (up to HEAP_POOL_BYTES in all), so that a stream of them neither makes
   * nor zero-fills a buffer each (a new 512 KiB Uint8Array is zero-filled and later collected; the
   * n-byte view is all that is allocated).
   */
  protected bufferFor(t: Token, n: number): Uint8Array {
    const a = this.mem.alloc(n)
    if (a === 0) {
      const k = 32 - Math.clz32(n - 1)
      const b = (this.heapPool[k] ??= new FreeList()).take()
      this.heapMediums++
      if (b !== undefined) this.heapPooled -= b.length
      else this.heapBuffersMade++
      const buf = b ?? new Uint8Array(2 ** k)
      t.heapBuf = buf
      t.heap = buf.subarray(0, n)
      return t.heap
    }
    t.bufAddr = a
    // (kept for the handler's call: a second look in the view cache would cost as much again)
    t.heap = this.arenaView(a, n)
    return t.heap
  }

  /** A view of `n` bytes of the Medium arena at `a`. */
  protected arenaView(a: number, n: number): Uint8Array {
    return views.get(this.arena, a, n)
  }

  protected enqueue(t: Token, b: Bundle, ready: boolean): void {
    t.state = T_QUEUED
    t.queue = b.queue
    t.node = b.queue.push(t.index, ready)
  }

  protected takeToken(): Token {
    let t = this.freeTokens.take()
    if (t === undefined) {
      t = new Token(this.tokens.length)
      this.tokens.push(t)
    }
    return t
  }

  protected release(t: Token): void {
    if (t.bufAddr !== 0) {
      this.mem.free(t.bufAddr)
      t.bufAddr = 0
    }
    const hb = t.heapBuf
    if (hb !== null) {
      t.heapBuf = null
      if (this.heapPooled + hb.length <= HEAP_POOL_BYTES) {
        this.heapPool[31 - Math.clz32(hb.length)]!.give(hb)
        this.heapPooled += hb.length
      }
    }
    t.heap = null
    t.ep = null
    t.queue = null
    t.state = T_FREE
    this.freeTokens.give(t)
  }
}
