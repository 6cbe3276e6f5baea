/**
 * @packageDocumentation
 * `@amlapi/bufmgr`: the buffer manager. It manages the free space of one `ArrayBuffer` or
 * `SharedArrayBuffer` (or a sub-range of it) and hands out regions as byte offsets into it:
 * size classes over slabs for small and medium regions (O(1), no garbage per call), and a TLSF
 * coalescing allocator over granules for large regions and slabs. All metadata is off-band.
 * It knows nothing of tasks or transports. See docs/bufmgr.md.
 *
 * @example
 * ```ts
 * import { BufferManager, BufMgrError } from '@amlapi/bufmgr'
 *
 * const mm = new BufferManager({ size: 1 << 20, offset: 4096 })   // keep a 4 KiB header
 * const a = mm.alloc(100)             // ≥ 100 bytes, 16-aligned; 0 when the space is exhausted
 * if (a !== 0) {
 *   mm.view(a).fill(1)                // a view over the region, not a copy
 *   mm.free(a)
 * }
 * try { mm.free(a) } catch (e) { if (e instanceof BufMgrError && e.code === 'DOUBLE_FREE') handle(e) }
 * ```
 */
export { BufferManager } from './buffer-manager.js'
export type { BufferManagerOptions } from './options.js'
export type { BufMgrStats, BufMgrClassStats } from './stats.js'
export { AmlapiError } from './amlapi-error.js'
export { BufMgrError, BufMgrErrorCode } from './errors.js'
export { ALIGNMENT, classIndexOf, classSizeOf } from './size-classes.js'
export { ViewCache } from './views.js'
