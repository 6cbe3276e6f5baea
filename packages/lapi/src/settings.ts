/**
 * LAPI_Qenv and LAPI_Senv of a context: what it reports about itself and the job, and the four
 * settings a program may change (ERROR_CHK, INTERRUPT_SET, TIMEOUT, ACK_THRESHOLD), with what
 * changing them does: interrupt mode starts or ends, and whether the dispatcher may hold TAILs
 * back follows the mode and ACK_THRESHOLD.
 */
import { LAPI_MAX_MSG_SZ, Query } from './base/constants.js'
import { LapiStatus as S } from './base/status.js'
import type { Rings } from './core/rings.js'
import type { ContextState } from './core/state.js'
import type { HandlerRanges } from './core/types.js'
import type { Interrupts } from './sync/interrupts.js'
import type { Ref } from './base/types.js'

const TIMEOUT_MIN = 10
const TIMEOUT_MAX = 86400
const TIMEOUT_DEFAULT = 900
const ACK_THRESHOLD_MAX = 30

export class Settings {
  private readonly s: ContextState
  private readonly rings: Rings
  private readonly interrupts: Interrupts
  private readonly ranges: HandlerRanges
  private readonly epoch: number
  private errorChk = 1
  private timeout = TIMEOUT_DEFAULT
  private ackThreshold = ACK_THRESHOLD_MAX

  constructor(s: ContextState, rings: Rings, interrupts: Interrupts, ranges: HandlerRanges, epoch: number) {
    this.s = s
    this.rings = rings
    this.interrupts = interrupts
    this.ranges = ranges
    this.epoch = epoch
  }

  /**
   * Whether the dispatcher may hold TAIL back until the task's next step in LAPI (Rings.holdTails):
   * in polling mode, unless ACK_THRESHOLD is 1 (LAPI's acknowledgements are then not batched).
   */
  holds(): number {
    return this.s.interrupt === 0 && this.ackThreshold > 1 ? 1 : 0
  }

  /** LAPI_Qenv. */
  qenv(query: number, ret: Ref<number> | null | undefined): number {
    if (ret === null || ret === undefined || typeof ret !== 'object') return S.ERR_RET_PTR_NULL
    const s = this.s
    const config = s.config
    let v: number
    switch (query) {
      case Query.TASK_ID:
        v = s.taskId
        break
      case Query.NUM_TASKS:
        v = s.numTasks
        break
      case Query.MAX_UHDR_SZ:
        v = config.maxUhdrSz
        break
      case Query.MAX_DATA_SZ:
        v = LAPI_MAX_MSG_SZ
        break
      case Query.ERROR_CHK:
        v = this.errorChk
        break
      case Query.TIMEOUT:
        v = this.timeout
        break
      case Query.MIN_TIMEOUT:
        v = TIMEOUT_MIN
        break
      case Query.MAX_TIMEOUT:
        v = TIMEOUT_MAX
        break
      case Query.INTERRUPT_SET:
        v = s.interrupt
        break
      case Query.MAX_PORTS:
        v = 1
        break
      case Query.MAX_PKT_SZ:
        v = config.maxPktSz
        break
      case Query.NUM_REX_BUFS:
        v = config.ringSlots
        break
      case Query.REX_BUF_SZ:
        v = config.maxPktSz
        break
      case Query.LOC_ADDRTBL_SZ:
        v = this.ranges.user
        break
      case Query.EPOCH_NUM:
        v = this.epoch
        break
      case Query.USE_THRESH:
        v = 1
        break
      case Query.RCV_FIFO_SIZE:
        v = config.ringSlots * config.maxPktSz
        break
      case Query.MAX_ATOM_SIZE:
        v = 8
        break
      case Query.BUF_CP_SIZE:
        v = 64
        break
      case Query.MAX_PKTS_OUT:
        v = config.ringSlots
        break
      case Query.ACK_THRESHOLD:
        v = this.ackThreshold
        break
      case Query.QUERY_SHM_ENABLED:
        v = 1
        break
      case Query.QUERY_SHM_NUM_TASKS:
        v = s.spec.localTasks
        break
      default:
        return S.ERR_QUERY_TYPE
    }
    ret.value = v
    return S.SUCCESS
  }

  /** LAPI_Senv: ERROR_CHK (0/1), INTERRUPT_SET (0/1), TIMEOUT (MIN..MAX s), ACK_THRESHOLD (1..30). */
  senv(query: number, val: number): number {
    if (!Number.isInteger(val))
      return query === Query.ERROR_CHK || query === Query.INTERRUPT_SET || query === Query.TIMEOUT || query === Query.ACK_THRESHOLD
        ? S.ERR_SET_VAL
        : S.ERR_QUERY_TYPE
    switch (query) {
      case Query.ERROR_CHK:
        if (val !== 0 && val !== 1) return S.ERR_SET_VAL
        this.errorChk = val
        return S.SUCCESS
      case Query.INTERRUPT_SET:
        if (val !== 0 && val !== 1) return S.ERR_SET_VAL
        this.s.interrupt = val
        this.rings.holdTails = this.holds()
        if (val === 1) {
          this.rings.flushTails()
          this.interrupts.start()
        }
        return S.SUCCESS
      case Query.TIMEOUT:
        if (val < TIMEOUT_MIN || val > TIMEOUT_MAX) return S.ERR_SET_VAL
        this.timeout = val
        return S.SUCCESS
      case Query.ACK_THRESHOLD:
        if (val < 1 || val > ACK_THRESHOLD_MAX) return S.ERR_SET_VAL
        this.ackThreshold = val
        this.rings.holdTails = this.holds()
        this.rings.flushTails()
        return S.SUCCESS
      default:
        return S.ERR_QUERY_TYPE
    }
  }
}
