/**
 * One process of a job of several: joins the rendezvous with the job key, connects to the other
 * processes through the transport, and runs its tasks (runTasks) with the agent (agent/agent.ts)
 * serving their network traffic. Started by `lapirun --procs` (launch/child.ts) or, one per process
 * of another launcher's job, by `lapirun --join` (launch/join.ts). Its network settings come from
 * its environment (launch/net-settings.ts).
 */
import { createSocket } from 'node:dgram'
import { connect, isIPv6, type Socket } from 'node:net'
import { Agent } from '../agent/agent.js'
import { makeNonce, proof, sameProof } from '../transport/auth.js'
import type { PeerAddress } from '../transport/contract.js'
import { MAX_MESSAGE_BYTES, encodeMessage, field, readMessages } from '../transport/messages.js'
import { transportKind } from '../transport/registry.js'
import { splitHostPort } from './meeting.js'
import { netSettings } from './net-settings.js'
import { logger } from '../base/log.js'
import { failureLine, runTasks, type RunJobOptions } from './run-job.js'
import type { JobReports } from './options.js'
import type { TaskWatch } from '../agent/watch.js'
import { checkJobFits, createJob } from './create-job.js'
import type { RendezvousJob } from './rendezvous.js'

/** The job as the rendezvous describes it. */
type JobMessage = RendezvousJob & { table: PeerAddress[] }

export interface MemberOptions {
  /** The program this process's tasks run, and its arguments: its own command line's (never the rendezvous's word). */
  program: URL
  args: string[]
  /** Under --join: the job's tasks and this process's share as its command line says (the rendezvous's must agree). */
  numTasks?: number
  tasksPerProc?: number
  rank: number
  size: number
  /** The rendezvous, host:port. */
  rendezvous: string
  key: Uint8Array
  /** Where the network settings come from (AMLAPI_TRANSPORT, AMLAPI_BIND, …). */
  env: NodeJS.ProcessEnv
  /**
   * `lapirun --join`: no launcher watches this process. The rendezvous may not be up yet (it is
   * tried again until START_TIMEOUT_MS), its end after the start is no abort (the transport tells
   * lost processes), and a failure is reported here, on stderr.
   */
  join: boolean
  /** Called once this process's tasks have ended, as it starts to leave the job (lapirun --join: a signal then ends the process at once). */
  onLeave?: () => void
  /** Under --join: set while the job runs; asking sends the request to process 0, which prints the report (its `ask` resolves with ''). */
  reports?: JobReports
  /** Under --join, process 0: failures whose line it printed already (a report, at once). */
  reported?: ReadonlySet<string>
}

/** How long a process of `lapirun --join` keeps trying to reach the rendezvous, ms. */
const START_TIMEOUT_MS = 30_000

/** Runs this process's part of the job; resolves with its exit code. */
export async function runMember(o: MemberOptions): Promise<number> {
  const { rank, size, key } = o
  const rv = o.rendezvous
  const { host, port } = splitHostPort(rv)
  const log = logger('lapi:agent', { rank })
  const bind = o.env['AMLAPI_BIND'] ?? (o.join ? await localAddressToward(host) : host)
  const net = netSettings(o.env)
  const transport = transportKind(net.transport).createTransport({
    rank,
    size,
    key,
    bind,
    log: logger(`lapi:${net.transport}`, { rank }),
    mac: net.mac,
    faults: net.faults,
    ...(net.peerTimeoutMs !== undefined ? { peerTimeoutMs: net.peerTimeoutMs } : {}),
    ...(net.maxDatagram !== undefined ? { maxDatagram: net.maxDatagram } : {}),
  })
  // Ctrl-C reaches every process of the terminal's group: the launcher decides what it means

  const startEnd = performance.now() + START_TIMEOUT_MS
  // (a signal while the rendezvous is not up yet ends the wait at once)
  let interrupted = false
  const onEarlySignal = (): void => {
    if (o.join) interrupted = true
  }
  process.on('SIGINT', onEarlySignal)
  if (o.join) process.on('SIGTERM', onEarlySignal)
  let sock: Socket
  try {
    sock = await reach(host, port, startEnd, () => interrupted)
  } catch (e) {
    await transport.close().catch(() => {})
    throw e
  } finally {
    process.off('SIGINT', onEarlySignal)
    process.off('SIGTERM', onEarlySignal)
  }
  let failFn: ((task: number, reason: string) => void) | null = null
  let watchFn: (() => Promise<TaskWatch[]>) | null = null
  let pendingAbort: { task: number; reason: string } | null = null
  let finished = false
  let started = false
  // (before the job is known, an abort or a lost launcher ends this process's wait for it)
  let notJoined: ((e: Error) => void) | null = null
  const abort = (task: number, reason: string): void => {
    if (finished) return
    if (failFn !== null) failFn(task, reason)
    else {
      pendingAbort ??= { task, reason }
      notJoined?.(new Error(reason))
    }
  }
  // (under a launcher, which decides what it means; under --join, the job is interrupted: Ctrl-C or
  // SIGTERM (Open MPI's mpirun passes Ctrl-C on as SIGTERM) asks process 0 for the report first,
  // which then ends the job — or this process does, after INTERRUPT_WAIT_MS, if that does not come;
  // a second signal ends it at once)
  let interruptTimer: NodeJS.Timeout | undefined
  const onSignal = (): void => {
    if (!o.join) return
    if (failFn === null || interruptTimer !== undefined || sock.destroyed) {
      abort(-1, 'the job was interrupted')
      return
    }
    sock.write(encodeMessage({ t: 'ask', why: 'interrupt' }))
    interruptTimer = setTimeout(() => abort(-1, 'the job was interrupted'), INTERRUPT_WAIT_MS)
    interruptTimer.unref()
  }
  process.on('SIGINT', onSignal)
  if (o.join) process.on('SIGTERM', onSignal)
  let job: JobMessage
  let spec: ReturnType<typeof createJob>
  let agent: Agent | null = null
  try {
    job = await new Promise<JobMessage>((resolve, reject) => {
      notJoined = reject
      let joined = false
      // (a rendezvous that answers and then says nothing — something else on its port — is given up
      // at the start deadline like one that never answers)
      const unwelcomed = setTimeout(
        () => {
          if (joined) return
          sock.destroy()
          reject(
            new Error(`the rendezvous at ${rv} did not welcome this process within ${START_TIMEOUT_MS / 1000} s (is AMLAPI_RENDEZVOUS process 0's address?)`),
          )
        },
        Math.max(0, startEnd - performance.now()),
      )
      unwelcomed.unref()
      /** One connection to the rendezvous, up to its welcome (then the job's). */
      const attempt = (s: Socket): void => {
        sock = s
        s.setNoDelay(true)
        const nonce = makeNonce()
        let challenge: Uint8Array | null = null
        let refused = false
        s.on('error', () => {
          /* its close follows */
        })
        const fail = (e: Error): void => {
          refused = true
          clearTimeout(unwelcomed)
          s.destroy()
          reject(e)
        }
        // (until the rendezvous proves the key its messages are a stranger's: short, PRE_AUTH_MAX_BYTES)
        const reader = readMessages(
          s,
          (m) => {
            const t = field(m, 't')
            if (t === 'challenge' && !joined && challenge === null) {
              const n = field(m, 'n')
              if (!(n instanceof Uint8Array)) {
                fail(new Error('the rendezvous sent a malformed challenge'))
                return
              }
              challenge = n
              s.write(encodeMessage({ t: 'hello', rank, n: nonce, p: proof(key, 'join', n, nonce, rank) }))
            } else if (t === 'welcome' && !joined && challenge !== null) {
              if (!sameProof(field(m, 'p'), proof(key, 'rendezvous', challenge, nonce, rank))) {
                fail(new Error('the rendezvous did not prove the job key'))
                return
              }
              joined = true
              clearTimeout(unwelcomed)
              reader.setLimit(MAX_MESSAGE_BYTES)
              log.debug({ rendezvous: rv }, 'welcomed by the rendezvous')
              void transport.listen().then((a) => s.write(encodeMessage({ t: 'addr', host: a.host, port: a.port })), reject)
            } else if (t === 'job' && joined) {
              resolve(m as JobMessage)
            } else if (t === 'refused' && !joined) {
              // (one answer for every reason: process 0's log names which)
              fail(
                new Error(
                  'the rendezvous refused this process: a wrong AMLAPI_JOB_KEY, or a rank out of range or already in the job ' +
                    "(process 0's log, AMLAPI_LOG_LEVEL=warn, says which)",
                ),
              )
            } else if (t === 'report' && joined) {
              const id = field(m, 'id')
              const w = watchFn
              void (w !== null ? w() : Promise.resolve(null)).then((tasks) => {
                if (!s.destroyed) s.write(encodeMessage({ t: 'report', id, tasks, net: agent?.describe() ?? '' }))
              })
            } else if (t === 'abort' && joined) {
              const task = field(m, 'task')
              const reason = field(m, 'reason')
              abort(typeof task === 'number' ? task : -1, typeof reason === 'string' ? reason : 'aborted')
            }
          },
          (why) => fail(new Error(`the rendezvous sent ${why}`)),
        )
        s.once('close', () => {
          if (sock !== s) return
          if (!joined && !refused && performance.now() < startEnd) {
            // (closed before the welcome, without a refusal: out of time, or pushed out by strangers
            // holding the rendezvous's connections; tried again until the start deadline)
            log.debug({ rendezvous: rv }, 'the rendezvous closed the connection before its welcome: connecting again')
            setTimeout(() => {
              reach(host, port, startEnd, () => pendingAbort !== null).then(attempt, reject)
            }, 50)
            return
          }
          if (!o.join || !started) abort(-1, o.join ? 'the rendezvous (process 0) is gone' : 'the launcher is gone')
        })
      }
      attempt(sock)
    })
    started = true
    // (an abort while the transport connects ends that wait too)
    const called = new Promise<never>((_resolve, reject) => {
      notJoined = reject
    })
    called.catch(() => {})
    const early = pendingAbort as { task: number; reason: string } | null
    if (early !== null) notJoined!(new Error(early.reason))
    if (o.numTasks !== undefined && job.numTasks !== o.numTasks) {
      throw new Error(
        `process 0 runs a job of ${job.numTasks} tasks, this process was started for one of ${o.numTasks}` +
          (o.tasksPerProc !== undefined ? ` (--tasks-per-proc ${o.tasksPerProc} × ${size} processes): give every process the same command` : ''),
      )
    }
    checkJobFits(job.numTasks, job.config, size, [rank], undefined, net.transport)
    const geometry = transport.geometry?.()
    spec = createJob(job.numTasks, job.config, {
      procs: size,
      rank,
      transport: net.transport,
      ...(geometry !== undefined ? { geometry } : {}),
      ...(net.faults !== null ? { faults: net.faults } : {}),
    })
    const a = (agent = new Agent({ spec, rank, transport, log, onAbort: abort }))
    transport.useShared?.(spec.net!.stream)
    await Promise.race([
      called,
      transport.connect(job.table, {
        onBytes: (peer, chunk, len) => a.onBytes(peer, chunk, len),
        onPeerLost: (peer, reason, normal) => a.onPeerLost(peer, reason, normal),
      }),
    ])
    notJoined = null
  } catch (e) {
    // (a start that fails leaves nothing open: this process exits with its message; once it has the
    // job, the others hear of it through the rendezvous rather than wait for it)
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    if (started && !sock.destroyed) {
      sock.end(encodeMessage({ t: 'fail', task: -1, reason: `process ${rank}: ${(e as Error).message}` }))
      setTimeout(() => sock.destroy(), 1000).unref()
    } else sock.destroy()
    agent?.stop()
    await transport.close().catch(() => {})
    throw e
  }
  agent.start()
  log.debug({ tasks: `${spec.firstTask}-${spec.firstTask + spec.localTasks - 1}` }, 'process joined the job')

  const opts: RunJobOptions = {
    program: o.program,
    numTasks: job.numTasks,
    args: o.args,
    label: job.label,
    graceMs: job.graceMs,
    data: job.data,
    // (under --join process 0 times the job at the rendezvous, and reports it whole; each process
    // times it too, later, should process 0 not be heard of)
    ...(o.join && typeof job.timeoutMs === 'number' ? { timeoutMs: job.timeoutMs + BACKSTOP_MS } : {}),
  }
  if (o.reports !== undefined)
    o.reports.ask = async () => {
      if (!sock.destroyed) sock.write(encodeMessage({ t: 'ask', why: 'report' }))
      return ''
    }
  const result = await runTasks(opts, spec, {
    bind: (fail, watch) => {
      failFn = fail
      watchFn = watch
      if (pendingAbort !== null) fail(pendingAbort.task, pendingAbort.reason)
    },
    onFail: (task, reason) => {
      // (what the network held when the job failed here: a hang's report names one process's, this is each one's)
      log.debug({ network: agent.describe(true) }, 'the job failed')
      sock.write(encodeMessage({ t: 'fail', task, reason }))
      agent.abort(task, reason)
    },
    onTaskEnded: (task, failed) => agent.taskEnded(task, failed),
    describe: () => agent.describe(),
  })
  finished = true
  clearTimeout(interruptTimer)
  if (o.reports !== undefined) o.reports.ask = null
  log.debug('the tasks of this process ended: leaving the job')
  o.onLeave?.()
  if (o.join && result.failure !== undefined && o.reported?.has(result.failure.reason) !== true) process.stderr.write(failureLine(result.failure))
  const codes = result.taskExitCodes.slice(spec.firstTask, spec.firstTask + spec.localTasks)
  await agent.finish()
  agent.stop()
  await transport.close()
  log.debug({ stats: transport.stats(), agent: agent.stats() }, 'process leaves the job')
  // (the rendezvous's end closes the connection; where its FIN or reset is lost, as on a lossy
  // network, this end would wait for it for ever: it lets go after LEAVE_MS)
  await new Promise<void>((resolve) => {
    if (sock.destroyed) {
      resolve()
      return
    }
    const t = setTimeout(() => {
      sock.destroy()
      resolve()
    }, LEAVE_MS)
    sock.once('close', () => {
      clearTimeout(t)
      resolve()
    })
    sock.end(encodeMessage({ t: 'done', codes }))
  })
  return result.exitCode
}

/** Under --join, how much later than process 0 each process times the job itself, ms. */
const BACKSTOP_MS = 5000
/** Under --join, how long a process that got Ctrl-C waits for process 0's report and end of the job before it ends its part, ms. */
const INTERRUPT_WAIT_MS = 2500

/** How long a leaving process waits for the rendezvous to close their connection, ms. */
const LEAVE_MS = 2000

/**
 * How long one attempt to reach the rendezvous (to connect and get its challenge) may take, ms: a
 * refusal or a connection request lost on a lossy network would otherwise leave the attempt to
 * the kernel's retries (a minute or two, backing off).
 */
const REACH_TRY_MS = 2000

/** Connects to the rendezvous, trying again while nothing listens there yet (until `end`, performance.now() ms). */
async function reach(host: string, port: number, end: number, stop: () => boolean = () => false): Promise<Socket> {
  for (let wait = 20; ; wait = Math.min(2 * wait, 500)) {
    if (stop()) throw new Error('the job was interrupted')
    const s = connect({ host, port })
    const ok = await new Promise<boolean>((resolve) => {
      const t = setTimeout(() => resolve(false), REACH_TRY_MS)
      // (reached once the rendezvous's challenge is there, left unread for the caller: a connection
      // that stalls before it, as on a lossy network, is tried again like one that never opened)
      s.once('readable', () => {
        clearTimeout(t)
        resolve(true)
      })
      s.once('error', () => {
        clearTimeout(t)
        resolve(false)
      })
    })
    if (ok) return s
    s.destroy()
    if (performance.now() > end)
      throw new Error(
        `cannot reach the rendezvous at ${host}:${port} within ${START_TIMEOUT_MS / 1000} s (is process 0 running, and AMLAPI_RENDEZVOUS its address?)`,
      )
    await new Promise((resolve) => setTimeout(resolve, wait))
  }
}

/** The local address this host sends from toward `host` (what its routes choose): the default bind of a joining process. */
function localAddressToward(host: string): Promise<string> {
  return new Promise((resolve) => {
    const s = createSocket(isIPv6(host) ? 'udp6' : 'udp4')
    s.once('error', () => {
      s.close()
      resolve(host)
    })
    // (a connected UDP socket sends nothing: the kernel only picks the route and the source address)
    s.connect(9, host, () => {
      const a = s.address().address
      s.close()
      resolve(a)
    })
  })
}
