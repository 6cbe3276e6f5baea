/**
 * The AM-2 runtime of a task (docs/am2.md, docs/architecture.md): the one implementation behind
 * the idiomatic classes (`Bundle`, `Endpoint`, `Token`) and the C-style `AM_*` functions of
 * compat.ts, with AM_Init and AM_Terminate, which make and end it. Every method returns an AM
 * code; the idiomatic wrappers throw `AmError`.
 *
 * The runtime is one object built in layers, one file each; each layer's class extends the one
 * below it, and `Runtime`, the top, adds the SPMD hooks and the end:
 *
 *   request.ts   Requests   requests and replies: checks, flow control, the poll after a request
 *   poll.ts      Poller     AM_Poll, AM_WaitSema: dispatching queued messages to their handlers
 *   send.ts      Sender     writing a message and handing it to LAPI (compact, packed, data, local)
 *   receive.ts   Receiver   am2's LAPI header handler and in-place receiver: checks, queueing
 *   invoke.ts    Invoker    calling a handler; the state of the handlers running now
 *   flow.ts      Flow       freeing request instances; requests returned because their peer left
 *   registry.ts  Registry   bundles, endpoints, tags, segments, translation and handler tables
 *   tokens.ts    Tokens     the token pool and the Medium payload buffers
 *   state.ts     RuntimeState  the LAPI context, the segment, the logger, the tokens to return
 *
 * A layer calls only the layers below it, so the imports go one way. Layers of one object rather
 * than objects of their own because a message's path crosses most of them: calls between them
 * stay calls on `this`, and the per-message functions compile as they would in one class (V8's
 * inlining budgets count their bytecode: docs/architecture.md, "Writing the per-message paths for
 * V8"). The objects a program holds are in objects.ts, which sees this class only as
 * `RuntimeFace`.
 *
 * A request or reply is one LAPI active message to the receiving endpoint's task, with am2's
 * header handler. The AM-2 header and the arguments are the LAPI user header; when the payload
 * fits behind them as well (`packedLimit`) it travels there too, so the whole message is one
 * packet (the packed fast path); otherwise the payload is the LAPI data. Messages between
 * endpoints of one task skip LAPI. A request takes one of `depth` instances of its peer
 * (AM_SetExpectedResources' n_outstanding_requests) and names it in the header; the reply — the
 * handler's, or the automatic empty one sent when a request handler did not reply — echoes it and
 * frees it. Replies take no instance and never wait for one.
 */
import { Lapi, type lapi_return_info_t, type Ref } from '@amlapi/lapi'
import { AM_MAX_SHORT, AmStatus } from './constants.js'
import { bindRuntime, type RuntimeFace } from './objects.js'
import { argsError } from './explain.js'
import { Requests } from './request.js'
import { SLOT_CTRL, SLOT_MSG } from './types.js'

const S = AmStatus

let runtime: Runtime | null = null
let initCount = 0

/** The runtime of this task, or null before AM_Init. @internal */
export function currentRuntime(): Runtime | null {
  return runtime
}

/** AM_Init: reference-counted; the first call joins (or opens) this task's LAPI context. */
export function amInit(lapi?: Lapi): number {
  if (runtime === null) {
    let l = lapi ?? Lapi.current()
    let owns = false
    if (l === null) {
      l = Lapi.init()
      owns = true
    }
    runtime = new Runtime(l, owns)
    bindRuntime(runtime)
    runtime.log.debug({ numTasks: runtime.numTasks, ownsLapi: owns }, 'AM_Init: runtime started')
  }
  initCount++
  return S.OK
}

/** AM_Terminate: the last call frees every bundle and endpoint (and LAPI, if AM_Init opened it). */
export function amTerminate(): number {
  if (runtime === null) return S.ERR_NOT_INIT
  if (--initCount > 0) return S.OK
  const rt = runtime
  for (const b of [...rt.bundles]) rt.freeBundle(b)
  rt.close()
  rt.log.debug('AM_Terminate: runtime closed')
  runtime = null
  bindRuntime(null)
  return S.OK
}

/** @internal the implementation */
export class Runtime extends Requests implements RuntimeFace {
  private readonly ownsLapi: boolean
  readonly hCtrl: number
  /** The SPMD layer's state (spmd.ts), when AMX_SPMDStartup ran. */
  spmd: unknown = null
  /** Control-message handler of the SPMD layer (spmd.ts). */
  ctrlHandler:
    | ((
        src: number,
        u8: Uint8Array,
        dv: DataView,
        base: number,
        uhdrLen: number,
        info: lapi_return_info_t,
        comp: Ref<unknown>,
        uinfo: Ref<unknown>,
      ) => Uint8Array | null)
    | null = null

  constructor(lapi: Lapi, owns: boolean) {
    super(lapi)
    this.ownsLapi = owns
    this.hCtrl = lapi.setLibraryHandler(
      SLOT_CTRL,
      (_h: number, uhdr: Uint8Array, uhdrLen: number, info: lapi_return_info_t, comp: Ref<unknown>, uinfo: Ref<unknown>) => {
        const dv = this.dvOf(uhdr)
        return this.ctrlHandler === null ? null : this.ctrlHandler(info.src, uhdr, dv, uhdr.byteOffset, uhdrLen, info, comp, uinfo)
      },
    )
  }

  close(): void {
    this.lapi.setLibraryHandler(SLOT_MSG, null)
    this.lapi.setLibraryHandler(SLOT_CTRL, null)
    try {
      this.lapi.free(this.orgCntr)
    } catch {
      /* terminated */
    }
    if (this.ownsLapi && !this.lapi.isFinalized) this.lapi.finalize()
  }

  /** Arguments of an idiomatic call `what`, in the scratch array (int32); an AmError for one that is no number (a BigInt). */
  argsOf(args: number[], what: string): Int32Array {
    const a = this.argScratch
    const n = args.length < AM_MAX_SHORT ? args.length : AM_MAX_SHORT
    try {
      for (let i = 0; i < n; i++) a[i] = args[i]! | 0
    } catch {
      throw argsError(what, args)
    }
    return a
  }

  /** The scratch argument array the compat functions fill. */
  get scratchArgs(): Int32Array {
    return this.argScratch
  }
}
