/**
 * The options of a BufferManager: their type, defaults and checks, and the settings they resolve
 * to (the buffer, the managed range, the granule, the largest class, the slab size).
 */
import { BufMgrError, BufMgrErrorCode } from './errors.js'
import { ALIGNMENT } from './layout.js'
import { MAX_CLASS_LIMIT, classIndexOf, classSizeOf } from './size-classes.js'

const KIB = 1024
const MIB = 1024 * KIB
/** Default size of a created buffer, bytes. */
const DEFAULT_SIZE = MIB
/** Default largest size served by size classes, bytes. */
const DEFAULT_MAX_CLASS = 8 * KIB
/** Default granule of the coalescing allocator, bytes. */
const DEFAULT_GRANULE = 256
/** Largest allowed slab size, bytes. */
const MAX_SLAB = MIB
/** The managed range must end at or below this byte offset (offsets stay int32). */
const MAX_END = 2 ** 31

/** Options of {@link BufferManager}. Every size is in bytes. */
export interface BufferManagerOptions {
  /** The buffer to manage. When absent, one of `size` bytes is created. */
  buffer?: ArrayBuffer | SharedArrayBuffer
  /** Bytes of the buffer to create when `buffer` is absent. Default 1 MiB. Ignored with `buffer`. */
  size?: number
  /** Create a `SharedArrayBuffer` (true, default) or an `ArrayBuffer`. Ignored with `buffer`. */
  shared?: boolean
  /**
   * Start of the managed range inside the buffer. Default 0. Rounded up to the alignment (16);
   * a range that starts at 0 starts at 16 instead, so that 0 (NULL) is never handed out.
   */
  offset?: number
  /**
   * Bytes managed from `offset` (the range is `[offset, offset + length)`). Default: to the end
   * of the buffer. The range must end at or below 2 GiB. The tail that does not fill a whole
   * granule is not used.
   */
  length?: number
  /** Zero every region when it is allocated. Default false (`alloc(n, true)` zero-fills one call). */
  zeroFill?: boolean
  /**
   * Largest request served by the size classes; larger requests go to the coalescing allocator.
   * Default 8 KiB. Allowed 16..65536, rounded up to a class size.
   */
  maxClassSize?: number
  /**
   * Granule of the coalescing allocator: large regions and slabs are whole granules, and the
   * off-band metadata costs about 17 bytes per granule. Default 256. A power of two, 16..65536.
   */
  granule?: number
  /**
   * Minimum slab size (a class's slab is this or 4 blocks, whichever is larger, rounded up to
   * the granule). Default: the power of two nearest to managed bytes / 256, clamped to
   * 4 KiB..64 KiB (4 KiB for a 1 MiB buffer, 64 KiB from 16 MiB up), and at least one granule,
   * so that one partial slab in every class stays a small part of the space. A multiple of the
   * granule, at most 1 MiB.
   */
  slabSize?: number
}

/** What a manager is built from: the options checked, defaults applied. Sizes in bytes. */
export interface Settings {
  /** The buffer given or created. */
  buffer: ArrayBuffer | SharedArrayBuffer
  /** First managed byte offset: a multiple of 16, > 0. */
  start: number
  /** Granules managed from `start` (≥ 1). */
  granules: number
  granule: number
  /** The option rounded up to a class size. */
  maxClassSize: number
  slabSize: number
  zeroFill: boolean
}

function isBuffer(b: unknown): b is ArrayBuffer | SharedArrayBuffer {
  const tag = Object.prototype.toString.call(b)
  return tag === '[object ArrayBuffer]' || tag === '[object SharedArrayBuffer]'
}

function badOptions(what: string): BufMgrError {
  return new BufMgrError(BufMgrErrorCode.BAD_OPTIONS, `bufmgr: bad options: ${what}`)
}

function intOption(v: unknown, name: string, dflt: number, min: number, max: number): number {
  if (v === undefined) return dflt
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) {
    throw badOptions(`${name} must be an integer in [${min}, ${max}], got ${String(v)}`)
  }
  return v
}

function boolOption(v: unknown, name: string, dflt: boolean): boolean {
  if (v === undefined) return dflt
  if (typeof v !== 'boolean') throw badOptions(`${name} must be a boolean, got ${String(v)}`)
  return v
}

/**
 * Checks the options in a fixed order (the first fault found is the one reported) and applies
 * the defaults; creates the buffer when none is given.
 * @param opts [in] the constructor's options
 * @throws BufMgrError `BAD_OPTIONS` for an invalid option or a range smaller than one granule
 */
export function resolveOptions(opts: BufferManagerOptions): Settings {
  if (opts === null || typeof opts !== 'object') throw badOptions('options must be an object')
  let buffer: ArrayBuffer | SharedArrayBuffer
  if (opts.buffer !== undefined) {
    if (!isBuffer(opts.buffer)) throw badOptions('buffer must be an ArrayBuffer or a SharedArrayBuffer')
    buffer = opts.buffer
  } else {
    const size = intOption(opts.size, 'size', DEFAULT_SIZE, 1, MAX_END)
    const shared = boolOption(opts.shared, 'shared', true)
    if (shared && typeof SharedArrayBuffer === 'undefined') throw badOptions('SharedArrayBuffer is not available here; pass shared: false')
    buffer = shared ? new SharedArrayBuffer(size) : new ArrayBuffer(size)
  }
  const total = buffer.byteLength
  const offset = intOption(opts.offset, 'offset', 0, 0, total)
  const length = intOption(opts.length, 'length', total - offset, 0, total - offset)
  const rangeEnd = offset + length
  if (rangeEnd > MAX_END) throw badOptions(`the managed range must end at or below 2 GiB (${MAX_END}); it ends at ${rangeEnd}`)
  const granule = intOption(opts.granule, 'granule', DEFAULT_GRANULE, ALIGNMENT, 65536)
  if ((granule & (granule - 1)) !== 0) throw badOptions(`granule must be a power of two, got ${granule}`)
  let start = Math.ceil(offset / ALIGNMENT) * ALIGNMENT
  if (start === 0) start = ALIGNMENT
  const count = Math.floor((rangeEnd - start) / granule)
  if (count < 1) {
    throw badOptions(`the managed range [${start}, ${rangeEnd}) is smaller than one granule (${granule} bytes)`)
  }
  const managed = count * granule
  const requestedMax = intOption(opts.maxClassSize, 'maxClassSize', DEFAULT_MAX_CLASS, 16, MAX_CLASS_LIMIT)
  const dfltSlab = Math.max(granule, Math.min(64 * KIB, Math.max(4 * KIB, 2 ** Math.round(Math.log2(managed / 256)))))
  const slabSize = intOption(opts.slabSize, 'slabSize', dfltSlab, granule, MAX_SLAB)
  if (slabSize % granule !== 0) throw badOptions(`slabSize (${slabSize}) must be a multiple of the granule (${granule})`)
  const zeroFill = boolOption(opts.zeroFill, 'zeroFill', false)
  return {
    buffer,
    start,
    granules: count,
    granule,
    maxClassSize: classSizeOf(classIndexOf(requestedMax)),
    slabSize,
    zeroFill,
  }
}
