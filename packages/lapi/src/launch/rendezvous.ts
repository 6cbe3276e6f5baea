/**
 * The rendezvous of a job of several processes: where they prove the job key, publish their
 * transport's address and get the job (the address table and the settings). `lapirun
 * --procs` runs it in the launcher (launch/processes.ts); under `lapirun --join` rank 0 runs it at
 * AMLAPI_RENDEZVOUS (launch/join.ts).
 *
 * Protocol (length-prefixed msgpackr, transport/messages.ts), per process:
 *   rendezvous → {t:'challenge', n}            process → {t:'hello', rank, n, p: proof(key,'join',…)}
 *   rendezvous → {t:'welcome', p: proof(key,'rendezvous',…)}   process → {t:'addr', host, port}
 *   rendezvous → {t:'job', table, numTasks, config, label, graceMs, data, timeoutMs}  (once all are in)
 *   process → {t:'fail', task, reason} (its first failure)    rendezvous → {t:'abort', task, reason} (to all)
 *   process → {t:'done', codes}                                  (its tasks' exit codes, then it exits)
 *   rendezvous → {t:'report', id}     process → {t:'report', id, tasks: TaskWatch[] | null, net}
 *   process → {t:'ask', why: 'report' | 'interrupt'}   (SIGUSR1 or Ctrl-C there: `onAsk` decides)
 * A hello's proof is checked first; a connection that fails any check (the proof, a rank out of
 * range or taken, a message too long or that does not decode, no hello within HANDSHAKE_MS) is told
 * {t:'refused'} — the same for every reason — and closed, and the reason logged with its address
 * (transport/strangers.ts bounds what strangers cost). Nothing here says which program a process
 * runs: each runs the program of its own command line.
 */
import { createServer, type Server, type Socket } from 'node:net'
import type { Logger } from 'pino'
import { makeNonce, proof, sameProof } from '../transport/auth.js'
import type { PeerAddress } from '../transport/contract.js'
import { MAX_MESSAGE_BYTES, encodeMessage, field, readMessages } from '../transport/messages.js'
import { StrangerGate } from '../transport/strangers.js'
import type { JobConfig } from '../base/config.js'
import { placement } from '../layout/job-spec.js'
import { formatReport, type TaskWatch } from '../agent/watch.js'

/** What every process is told once all have met. */
export interface RendezvousJob {
  numTasks: number
  config: JobConfig
  label: boolean
  graceMs: number
  data: unknown
  timeoutMs?: number
}

export interface RendezvousOptions {
  key: Uint8Array
  procs: number
  /** Address and port to listen on (port 0: any). */
  host: string
  port: number
  job: RendezvousJob
  log: Logger
  /** A process reported a failure (the others are sent an abort by `abort`, which the caller decides on). */
  onFail: (task: number, reason: string) => void
  /** Process `rank` is done, with its tasks' exit codes. */
  onDone: (rank: number, codes: unknown) => void
  /** Every process has published its address (the job went out). */
  onComplete?: () => void
  /** A process asks for a report of the job ('report': SIGUSR1 there) or for one and the job's end ('interrupt': Ctrl-C there). */
  onAsk?: (why: 'report' | 'interrupt') => void
}

export interface Rendezvous {
  readonly port: number
  /** Whether every process has published its address. */
  readonly complete: boolean
  /** Who the rendezvous still waits for, in words ("" once complete): for the message of a job that did not start. */
  waitingFor: () => string
  /**
   * Tells every process the job is aborted; `reasonOf` gives a process a reason of its own (the
   * one that printed the report is told it, the others where to find it).
   */
  abort: (task: number, reason: string, reasonOf?: (rank: number) => string) => void
  /**
   * What each task of the job is doing, a line each (formatReport), with each process's network:
   * every process is asked, and one that has not answered within `ms` is named.
   */
  report: (ms?: number) => Promise<string>
  close: () => void
}

/** What every refused connection is told, whatever the reason (a stranger learns nothing of the job from it). */
const REFUSED = encodeMessage({ t: 'refused' })

/** Listens; resolves once it does (rejects when it cannot: a port in use, an address not here). */
export async function serveRendezvous(o: RendezvousOptions): Promise<Rendezvous> {
  const P = o.procs
  const socks: Array<Socket | null> = new Array<Socket | null>(P).fill(null)
  const addrs: Array<PeerAddress | null> = new Array<PeerAddress | null>(P).fill(null)
  let complete = false
  const gate = new StrangerGate('rendezvous', o.log, REFUSED)
  // (reports asked for and not yet complete, by id: what each process answered)
  const reports = new Map<number, { got: Array<{ tasks: TaskWatch[] | null; net: string } | undefined>; done: () => void }>()
  let reportId = 0
  const send = (r: number, m: unknown): void => {
    const s = socks[r]
    if (s !== null && !s.destroyed) s.write(encodeMessage(m))
  }
  const server: Server = createServer((sock) => {
    const challenge = makeNonce()
    let rank = -1
    if (!gate.admit(sock)) return
    sock.on('error', () => {
      /* its process's end says what happened */
    })
    sock.write(encodeMessage({ t: 'challenge', n: challenge }))
    const reader = readMessages(
      sock,
      (m) => {
        const t = field(m, 't')
        if (rank < 0) {
          if (!gate.waiting(sock)) return
          // (the proof first, for every hello alike; then what it claims)
          const r = field(m, 'rank')
          const nc = field(m, 'n')
          const proved =
            t === 'hello' &&
            (typeof r === 'number' || typeof r === 'string') &&
            nc instanceof Uint8Array &&
            sameProof(field(m, 'p'), proof(o.key, 'join', challenge, nc, r))
          const why = !proved
            ? 'it did not prove the job key'
            : typeof r !== 'number' || !Number.isInteger(r) || r < 0 || r >= P
              ? `rank ${String(r)} is not in the job (0-${P - 1})`
              : socks[r] !== null
                ? `rank ${r} is in the job already`
                : ''
          // (nothing more is read from a refused connection: what it sent after costs nothing)
          if (why !== '') {
            reader.stop()
            gate.refuse(sock, why)
            return
          }
          rank = r as number
          gate.proven(sock)
          reader.setLimit(MAX_MESSAGE_BYTES)
          socks[rank] = sock
          sock.write(encodeMessage({ t: 'welcome', p: proof(o.key, 'rendezvous', challenge, nc as Uint8Array, rank) }))
          return
        }
        switch (t) {
          case 'addr': {
            const host = field(m, 'host')
            const port = field(m, 'port')
            if (typeof host !== 'string' || typeof port !== 'number' || host.length > 255 || !Number.isInteger(port) || port < 1 || port > 65535) {
              sock.destroy()
              return
            }
            addrs[rank] = { host, port }
            if (!complete && addrs.every((a) => a !== null)) {
              complete = true
              // (nobody else may come now: the listener stops, strangers' connections close)
              server.close()
              gate.closeStrangers()
              for (let r = 0; r < P; r++) send(r, { t: 'job', table: addrs, ...o.job })
              o.onComplete?.()
            }
            break
          }
          case 'fail': {
            const task = field(m, 'task')
            const reason = field(m, 'reason')
            o.onFail(typeof task === 'number' ? task : -1, typeof reason === 'string' ? reason : 'failed')
            break
          }
          case 'done':
            o.onDone(rank, field(m, 'codes'))
            break
          case 'report': {
            const id = field(m, 'id')
            const pending = reports.get(id as number)
            if (pending === undefined) break
            pending.got[rank] = {
              tasks: taskWatches(field(m, 'tasks'), o.job.numTasks),
              net: typeof field(m, 'net') === 'string' ? (field(m, 'net') as string).slice(0, 4096) : '',
            }
            if (pending.got.every((g, r) => g !== undefined || socks[r] === null || socks[r]!.destroyed)) pending.done()
            break
          }
          case 'ask':
            o.onAsk?.(field(m, 'why') === 'interrupt' ? 'interrupt' : 'report')
            break
          default:
            break
        }
      },
      (why) => {
        if (gate.waiting(sock)) gate.refuse(sock, why)
        else sock.destroy()
      },
    )
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(o.port, o.host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const a = server.address()
  const port = typeof a === 'object' && a !== null ? a.port : 0
  return {
    port,
    get complete() {
      return complete
    },
    waitingFor: () => {
      if (complete) return ''
      const absent: number[] = []
      const silent: number[] = []
      for (let r = 0; r < P; r++) {
        if (socks[r] === null) absent.push(r)
        else if (addrs[r] === null) silent.push(r)
      }
      const parts: string[] = []
      if (absent.length > 0) parts.push(`process${absent.length > 1 ? 'es' : ''} ${list(absent)} never joined`)
      if (silent.length > 0) parts.push(`process${silent.length > 1 ? 'es' : ''} ${list(silent)} joined but sent no address`)
      if (gate.refused > 0)
        parts.push(
          `${gate.refused} connection${gate.refused > 1 ? 's were' : ' was'} refused (a wrong AMLAPI_JOB_KEY, a rank out of range or taken: this process's log says which)`,
        )
      return parts.join('; ')
    },
    abort: (task, reason, reasonOf) => {
      for (let r = 0; r < P; r++) send(r, { t: 'abort', task, reason: reasonOf?.(r) ?? reason })
    },
    report: async (ms = REPORT_MS) => {
      const id = ++reportId
      const got = new Array<{ tasks: TaskWatch[] | null; net: string } | undefined>(P).fill(undefined)
      let timer: NodeJS.Timeout | undefined
      await new Promise<void>((resolve) => {
        reports.set(id, { got, done: resolve })
        timer = setTimeout(resolve, ms)
        for (let r = 0; r < P; r++) send(r, { t: 'report', id })
        if (socks.every((s) => s === null || s.destroyed)) resolve()
      })
      clearTimeout(timer)
      reports.delete(id)
      const n = o.job.numTasks
      const records: TaskWatch[] = []
      const more: string[] = []
      for (let r = 0; r < P; r++) {
        const g = got[r]
        const { first, count } = placement(n, P, r)
        const tasks = count === 1 ? `task ${first}` : `tasks ${first}-${first + count - 1}`
        if (g === undefined)
          more.push(`process ${r} (${tasks}) did not answer within ${ms / 1000} s${socks[r] === null || socks[r]!.destroyed ? ' (it had left the job)' : ''}`)
        else if (g.tasks === null) more.push(`process ${r} (${tasks}) had not started its tasks`)
        else records.push(...g.tasks.filter((w) => w.task >= first && w.task < first + count))
      }
      for (let r = 0; r < P; r++) {
        const net = got[r]?.net
        if (net !== undefined && net !== '') more.push(net)
      }
      return formatReport(records, n, more)
    },
    close: () => {
      // (every connection, strangers' too: none may keep this process from exiting)
      gate.closeAll()
      server.close()
    },
  }
}

/** Ranks in words: "1", "1, 4, 7", "1, 2, 3 … (9 in all)". */
function list(ranks: number[]): string {
  return ranks.length <= 8 ? ranks.join(', ') : `${ranks.slice(0, 8).join(', ')} … (${ranks.length} in all)`
}

/** How long a report waits for the processes' answers, ms (each watches its tasks for WATCH_MS). */
export const REPORT_MS = 1000

/** A process's task records as its message carries them, checked field by field (null: not a list of records). */
function taskWatches(v: unknown, numTasks: number): TaskWatch[] | null {
  if (!Array.isArray(v) || v.length > numTasks) return null
  const out: TaskWatch[] = []
  for (const x of v) {
    if (typeof x !== 'object' || x === null) return null
    const w = x as Record<string, unknown>
    const int = (k: string): number | null => (typeof w[k] === 'number' && Number.isInteger(w[k]) ? (w[k] as number) : null)
    const task = int('task')
    const state = int('state')
    const call = int('call')
    const word = int('word')
    const val = int('val')
    if (task === null || state === null || call === null || word === null || val === null || task < 0 || task >= numTasks) return null
    out.push({ task, state, call, word, val, code: int('code'), holds: int('holds') })
  }
  return out
}
