/**
 * The bottom layer of the AM-2 runtime (runtime.ts explains the layers): what every part shares.
 * The LAPI context and this task's place in the job, the task's LAPI segment (its buffer and the
 * word of the origin counter carved from it), the logger, the scratch argument array, and the
 * tokens to return whose receiving endpoint does not exist.
 */
import { logger, type Addr, type Lapi } from '@amlapi/lapi'
import type { Logger } from 'pino'
import { AM_MAX_SHORT } from './constants.js'
import type { Token } from './objects.js'

/** The state every layer of the runtime reads. */
export class RuntimeState {
  readonly lapi: Lapi
  readonly taskId: number
  readonly numTasks: number
  /** Tokens to return whose receiving endpoint does not exist (serviced by any poll). */
  readonly returns: Token[] = []
  protected readonly orgCntr: Addr
  protected readonly orgI32: Int32Array
  protected readonly segBuffer: ArrayBufferLike
  /** The whole LAPI segment of this task. */
  protected readonly segAll: Uint8Array
  readonly segmentSize: number
  protected readonly argScratch = new Int32Array(AM_MAX_SHORT)
  readonly log: Logger

  constructor(lapi: Lapi) {
    this.lapi = lapi
    this.taskId = lapi.rank
    this.numTasks = lapi.size
    this.orgCntr = lapi.malloc(8)
    const v = lapi.view(this.orgCntr, 8)
    this.segBuffer = v.buffer
    this.segAll = new Uint8Array(v.buffer, 0, lapi.segmentSize)
    this.segmentSize = lapi.segmentSize
    this.orgI32 = new Int32Array(v.buffer, v.byteOffset, 2)
    this.log = logger('am2', { task: this.taskId })
  }
}
