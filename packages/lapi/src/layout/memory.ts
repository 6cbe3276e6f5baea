/**
 * Shared memory for the layouts: page-aligned buffers (`pageAlignedShared`, for the control block
 * and the rings), and the WebAssembly API this package uses (the `lib` setting it builds with does
 * not declare it): shared memories — the rings' pages, and the frame path's buffers, which its
 * WASI ends read and write (transport/fd-io.ts) — and the module and instance of those ends.
 */

/** A WebAssembly.Memory, as used here. */
export interface WasmMemory {
  readonly buffer: SharedArrayBuffer
}

interface WasmApi {
  Memory: new (d: { initial: number; maximum: number; shared: boolean }) => WasmMemory
  Module: new (bytes: Uint8Array) => object
  Instance: new (module: object, imports: object) => object
}

/** The engine's WebAssembly object (undefined where it has none). */
export const Wasm = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly

/** Bytes per page of a WebAssembly.Memory. */
export const WASM_PAGE = 65536

/**
 * A shared WebAssembly memory of `pages` pages, which cannot grow (its buffer stays the same).
 * Throws where the engine has none or refuses one (an address-space limit such as `ulimit -v`).
 */
export function sharedMemory(pages: number): WasmMemory {
  if (Wasm === undefined) throw new Error('no WebAssembly')
  return new Wasm.Memory({ initial: pages, maximum: pages, shared: true })
}

/**
 * `sharedMemory(pages)`, or null where the engine has none or refuses one (an address-space limit
 * such as `ulimit -v`: V8 reserves guard regions around each memory); its users then take a plain
 * SharedArrayBuffer.
 */
export function trySharedMemory(pages: number): WasmMemory | null {
  try {
    return sharedMemory(pages)
  } catch {
    return null
  }
}

/**
 * A memory of `pages` pages for a frame path: shared WebAssembly memory (`wasm` true: its WASI
 * calls can move its bytes), or where that is refused a plain SharedArrayBuffer as large (the fs
 * calls then).
 */
export function sharedOrPlain(pages: number): { mem: WasmMemory; wasm: boolean } {
  const m = trySharedMemory(pages)
  return m !== null ? { mem: m, wasm: true } : { mem: { buffer: new SharedArrayBuffer(pages * WASM_PAGE) }, wasm: false }
}

/** A page-aligned shared buffer of `pages` pages: the buffer of a shared WebAssembly.Memory. */
function sharedBuffer(pages: number): SharedArrayBuffer {
  return sharedMemory(pages).buffer
}
/**
 * A SharedArrayBuffer of at least `bytes` bytes that starts on a page boundary: the buffer of a
 * shared WebAssembly.Memory, `bytes` rounded up to its 64 KiB pages. A plain SharedArrayBuffer's
 * backing store is only 16-byte aligned on Node 20 (malloc; a large one starts 16 bytes into a
 * page), so cache-line blocks laid out from its start begin 16 bytes into a line: a SHORT packet
 * with more than 16 bytes of user header and data then straddles two lines, and the receiver
 * fetches both (an AM-2 Short request, 24 bytes of user header, is one). Falls back to a plain
 * SharedArrayBuffer of `bytes` where the engine has no shared WebAssembly memory or refuses one
 * (an address-space limit, say). `memory` is for tests.
 */
export function pageAlignedShared(bytes: number, memory: (pages: number) => SharedArrayBuffer = sharedBuffer): SharedArrayBuffer {
  let b: SharedArrayBuffer
  try {
    b = memory(Math.max(1, Math.ceil(bytes / WASM_PAGE)))
  } catch {
    return new SharedArrayBuffer(bytes)
  }
  pageAligned.add(b)
  return b
}

/** The buffers pageAlignedShared got page-aligned (in this thread). */
const pageAligned = new WeakSet<SharedArrayBuffer>()

/** Whether `b` came from pageAlignedShared page-aligned (false for its fallback and any other buffer). */
export function isPageAligned(b: SharedArrayBuffer): boolean {
  return pageAligned.has(b)
}
