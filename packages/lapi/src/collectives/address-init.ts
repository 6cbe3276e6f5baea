/**
 * LAPI_Address_init and LAPI_Address_init64: the all-gather of one value per task (an Addr, a
 * counter, a handler's table index), through the gather words of the control block and a barrier.
 * Two banks of words alternate, so a task may start the next all-gather while a slower one still
 * reads the last.
 */
import { controlLayout, WaitCall } from '../layout/control.js'
import { LapiStatus as S } from '../base/status.js'
import type { HandlerTable } from '../core/handler-table.js'
import type { ContextState } from '../core/state.js'
import type { HandlerFn } from '../core/types.js'
import type { Barrier } from './barrier.js'

export class AddressInit {
  private readonly s: ContextState
  private readonly table: HandlerTable
  private readonly barrier: Barrier
  private readonly gatherF64: Float64Array
  private readonly gatherI64: BigInt64Array
  private gatherGen = 0

  constructor(s: ContextState, table: HandlerTable, barrier: Barrier) {
    this.s = s
    this.table = table
    this.barrier = barrier
    const spec = s.spec
    const layout = controlLayout(spec.numTasks)
    this.gatherF64 = new Float64Array(spec.control, layout.gatherF64, 2 * spec.numTasks)
    this.gatherI64 = new BigInt64Array(spec.control, layout.gatherI64, 2 * spec.numTasks)
  }

  /**
   * LAPI_Address_init: all-gather of one number per task. `out[i]` gets task i's value. A function
   * is registered in the automatic range of the handler table and its index contributed instead.
   */
  addressInit(mine: number | HandlerFn | null | undefined, out: number[] | null | undefined): number {
    const s = this.s
    if (out === null || out === undefined || !Array.isArray(out)) return S.ERR_ADDR_TBL_NULL
    if (s.inHeaderHandler) return S.ERR_POLLING_NET
    let v: number
    if (typeof mine === 'function') {
      const idx = this.table.registerAuto(mine as HandlerFn)
      if (idx < 0) return S.ERR_MEMORY_EXHAUSTED
      v = idx
    } else if (mine === null || mine === undefined) v = 0
    else if (typeof mine === 'number' && Number.isFinite(mine)) v = mine
    else return S.ERR_ORG_ADDR_NULL
    const base = (this.gatherGen++ & 1) * s.numTasks
    this.gatherF64[base + s.taskId] = v
    this.barrier.barrier(WaitCall.ADDRESS_INIT)
    for (let i = 0; i < s.numTasks; i++) out[i] = this.gatherF64[base + i]!
    return S.SUCCESS
  }

  /** LAPI_Address_init64: the same with 64-bit integers. */
  addressInit64(mine: bigint, out: bigint[] | null | undefined): number {
    const s = this.s
    if (out === null || out === undefined || !Array.isArray(out)) return S.ERR_ADDR_TBL_NULL
    if (typeof mine !== 'bigint') return S.ERR_ORG_ADDR_NULL
    if (s.inHeaderHandler) return S.ERR_POLLING_NET
    const base = (this.gatherGen++ & 1) * s.numTasks
    this.gatherI64[base + s.taskId] = BigInt.asIntN(64, mine)
    this.barrier.barrier(WaitCall.ADDRESS_INIT64)
    for (let i = 0; i < s.numTasks; i++) out[i] = this.gatherI64[base + i]!
    return S.SUCCESS
  }
}
