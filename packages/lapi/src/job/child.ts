/**
 * One process of a job of several (job/processes.ts starts it): joins the rendezvous with the job
 * key, connects to the other processes through the transport, and runs its tasks (runTasks) with
 * the agent (agent/agent.ts) serving their network traffic. Reads AMLAPI_RANK, AMLAPI_SIZE,
 * AMLAPI_RENDEZVOUS (host:port) and AMLAPI_JOB_KEY (hex); everything else comes from the rendezvous.
 */
import { connect } from 'node:net'
import { Agent } from '../agent/agent.js'
import { makeNonce, parseKey, proof, sameProof } from '../transport/auth.js'
import type { PeerAddress } from '../transport/contract.js'
import { encodeMessage, field, readMessages } from '../transport/messages.js'
import { TcpTransport } from '../transport/tcp.js'
import { UdpTransport } from '../transport/udp.js'
import type { DatagramShared } from '../transport/datagram-path.js'
import { netSettings } from './net-settings.js'
import type { JobConfig } from '../config.js'
import { describeError } from '../errors.js'
import { logger } from '../log.js'
import { runTasks, type RunJobOptions } from './run-job.js'
import { checkJobFits, createJob } from './spec.js'

/** The job as the rendezvous describes it. */
interface JobMessage {
  table: PeerAddress[]
  numTasks: number
  program: string
  args: string[]
  config: JobConfig
  label: boolean
  graceMs: number
  data: unknown
}

function env (name: string): string {
  const v = process.env[name]
  if (v === undefined || v === '') throw new Error(`${name} is not set`)
  return v
}

async function main (): Promise<number> {
  const rank = Number(env('AMLAPI_RANK'))
  const size = Number(env('AMLAPI_SIZE'))
  const rv = env('AMLAPI_RENDEZVOUS')
  const key = parseKey(env('AMLAPI_JOB_KEY'))
  const colon = rv.lastIndexOf(':')
  const host = rv.slice(0, colon)
  const port = Number(rv.slice(colon + 1))
  const log = logger('lapi:agent', { rank })
  const bind = process.env['AMLAPI_BIND'] ?? host
  const net = netSettings(process.env)
  const transport = net.transport === 'udp'
    ? new UdpTransport({ rank, size, key, bind, log: logger('lapi:udp', { rank }), mac: net.mac, faults: net.faults, peerTimeoutMs: net.peerTimeoutMs, ...(net.maxDatagram !== undefined ? { maxDatagram: net.maxDatagram } : {}) })
    : new TcpTransport({ rank, size, key, bind, log: logger('lapi:tcp', { rank }) })
  // Ctrl-C reaches every process of the terminal's group: the launcher decides what it means
  process.on('SIGINT', () => { /* the launcher aborts the job */ })

  const sock = connect({ host, port })
  sock.setNoDelay(true)
  const nonce = makeNonce()
  let failFn: ((task: number, reason: string) => void) | null = null
  let pendingAbort: { task: number, reason: string } | null = null
  let finished = false
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
  const job = await new Promise<JobMessage>((resolve, reject) => {
    notJoined = reject
    let joined = false
    let challenge: Uint8Array | null = null
    sock.once('error', (e) => reject(new Error(`cannot reach the rendezvous at ${rv}: ${e.message}`)))
    readMessages(sock, (m) => {
      const t = field(m, 't')
      if (t === 'challenge' && !joined) {
        const n = field(m, 'n')
        if (!(n instanceof Uint8Array)) { reject(new Error('the rendezvous sent a malformed challenge')); return }
        challenge = n
        sock.write(encodeMessage({ t: 'hello', rank, n: nonce, p: proof(key, 'join', n, nonce, rank) }))
      } else if (t === 'welcome' && !joined && challenge !== null) {
        if (!sameProof(field(m, 'p'), proof(key, 'rendezvous', challenge, nonce, rank))) { sock.destroy(); reject(new Error('the rendezvous did not prove the job key')); return }
        joined = true
        void transport.listen().then((a) => sock.write(encodeMessage({ t: 'addr', host: a.host, port: a.port })), reject)
      } else if (t === 'job' && joined) {
        resolve(m as JobMessage)
      } else if (t === 'abort') {
        const task = field(m, 'task'); const reason = field(m, 'reason')
        abort(typeof task === 'number' ? task : -1, typeof reason === 'string' ? reason : 'aborted')
      }
    }, (why) => reject(new Error(`the rendezvous sent ${why}`)))
    sock.once('close', () => abort(-1, 'the launcher is gone'))
  })

  notJoined = null
  checkJobFits(job.numTasks, job.config, size, [rank])
  const spec = createJob(job.numTasks, job.config, {
    procs: size,
    rank,
    ...(transport instanceof UdpTransport ? { datagram: transport.geometry() } : {}),
    ...(net.faults !== null ? { faults: net.faults } : {}),
  })
  const agent = new Agent({ spec, rank, transport, log, onAbort: abort })
  if (transport instanceof UdpTransport) transport.useShared(spec.net!.stream as DatagramShared)
  else transport.useShared(spec.net!.stream)
  await transport.connect(job.table, {
    onBytes: (peer, chunk, len) => agent.onBytes(peer, chunk, len),
    onPeerLost: (peer, reason, normal) => agent.onPeerLost(peer, reason, normal),
  })
  agent.start()
  log.debug({ tasks: `${spec.firstTask}-${spec.firstTask + spec.localTasks - 1}` }, 'process joined the job')

  const opts: RunJobOptions = {
    program: new URL(job.program),
    numTasks: job.numTasks,
    args: job.args,
    label: job.label,
    graceMs: job.graceMs,
    data: job.data,
  }
  const result = await runTasks(opts, spec, {
    bind: (fail) => {
      failFn = fail
      if (pendingAbort !== null) fail(pendingAbort.task, pendingAbort.reason)
    },
    onFail: (task, reason) => {
      sock.write(encodeMessage({ t: 'fail', task, reason }))
      agent.abort(task, reason)
    },
    onTaskEnded: (task, failed) => agent.taskEnded(task, failed),
  })
  finished = true
  const codes = result.taskExitCodes.slice(spec.firstTask, spec.firstTask + spec.localTasks)
  await agent.finish()
  agent.stop()
  await transport.close()
  log.debug({ stats: transport.stats(), agent: agent.stats() }, 'process leaves the job')
  await new Promise<void>((resolve) => sock.end(encodeMessage({ t: 'done', codes }), resolve))
  return result.exitCode
}

try {
  process.exitCode = await main()
} catch (e) {
  process.stderr.write(`lapirun: process ${process.env['AMLAPI_RANK'] ?? '?'}: ${describeError(e)}\n`)
  process.exitCode = 1
}
