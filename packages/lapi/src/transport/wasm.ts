/**
 * The WebAssembly API this package uses (the `lib` setting it builds with does not declare it):
 * shared memories — page-aligned buffers for the rings (transport/ring.ts), and the frame path's
 * buffers, which its WASI ends read and write (transport/fd-io.ts) — and the module and instance
 * of those ends.
 */

/** A WebAssembly.Memory, as used here. */
export interface WasmMemory { readonly buffer: SharedArrayBuffer }

interface WasmApi {
  Memory: new (d: { initial: number, maximum: number, shared: boolean }) => WasmMemory
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
export function sharedMemory (pages: number): WasmMemory {
  if (Wasm === undefined) throw new Error('no WebAssembly')
  return new Wasm.Memory({ initial: pages, maximum: pages, shared: true })
}

/**
 * `sharedMemory(pages)`, or null where the engine has none or refuses one (an address-space limit
 * such as `ulimit -v`: V8 reserves guard regions around each memory); its users then take a plain
 * SharedArrayBuffer.
 */
export function trySharedMemory (pages: number): WasmMemory | null {
  try { return sharedMemory(pages) } catch { return null }
}

/**
 * A memory of `pages` pages for a frame path: shared WebAssembly memory (`wasm` true: its WASI
 * calls can move its bytes), or where that is refused a plain SharedArrayBuffer as large (the fs
 * calls then).
 */
export function sharedOrPlain (pages: number): { mem: WasmMemory, wasm: boolean } {
  const m = trySharedMemory(pages)
  return m !== null ? { mem: m, wasm: true } : { mem: { buffer: new SharedArrayBuffer(pages * WASM_PAGE) }, wasm: false }
}
