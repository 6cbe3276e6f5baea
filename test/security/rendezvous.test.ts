/**
 * A local user against a job's sockets while it starts (docs/security.md, "What a stranger can
 * cost"; docs/transports.md "Joining: rendezvous and key"). A job that has started listens on no
 * tcp port: the rendezvous stops once every process has joined, each process's tcp listener once
 * its peers are connected, both closing strangers' connections. So the attacks aim at the start:
 * the job's ports are found as anyone on the host finds them (/proc, every few ms) and attacked as
 * soon as they listen — under --join process 1 is held back 1.2 s, while process 0's rendezvous
 * and tcp listener are up; under --procs the launcher's rendezvous is up while its processes start
 * (their listeners only for a moment, attacked where found). Then
 *   - 200 hostile connections per port (16 MiB claims that trickle, and silent ones) cost each
 *     process less than 32 MiB over the same job unattacked, the job still verifies, none is
 *     welcomed, and the rendezvous refuses every way alike (the same bytes);
 *   - once the job has started, every port attacked refuses connections (the kernel's
 *     ECONNREFUSED) and the strangers' connections have been closed;
 *   - strangers that keep trying to connect again do not keep lapirun, or a --join process, from
 *     exiting (within 2 s of the program's last line: rendezvous.perf.test.ts, `npm run
 *     test:perf`), and every try after the start is refused;
 *   - a rendezvous in the middle that knows the key still cannot choose what a process runs;
 *   - the job key is not in a task's environment, nor a spawned process's, nor in a debug log.
 * Times are recorded in the messages (SECURITY_VERBOSE=1 prints them), never asserted (a timing tier does that).
 * `npm test` floods the job under --procs and ends the one under --join; `npm run test:full` both of
 * each.
 */
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { MAX_MESSAGE_BYTES, decodeBody, encodeMessage, makeNonce, proof, readMessages } from '@amlapi/lapi/transport'
import { FIXTURES } from '../helpers/job.js'
import { LAPIRUN } from '../helpers/run.js'
import { answerChallenge, watchMemory, type HostileOptions, type HostileStats, type MemorySeen, type Target } from './helpers/attack.js'
import { freePort, mib, runWorkJob, type JobRun, type Shape } from './helpers/jobs.js'
import { reapAll, startNode, survivors, until, within } from './helpers/procs.js'
import { FULL, matrix } from '../helpers/tier.js'

const MiB = 1024
/** Figures for a reader of the run (SECURITY_VERBOSE=1), not for the assertions: each assertion's message holds them too. */
const note = (line: string): void => {
  if (process.env['SECURITY_VERBOSE'] === '1') process.stdout.write(`[rendezvous security] ${line}\n`)
}
const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})
// (no test leaves a process behind: what is left is killed, and must then be gone)
afterEach(async () => {
  expect(await reapAll(), 'processes left running after the test').toEqual([])
})

/**
 * 200 strangers per port, opened at once as soon as it listens: three of four claim a 16 MiB
 * message, send 64 KiB of random bytes and trickle 4 KiB more every 50 ms; one of four sends nothing.
 */
const FLOOD: HostileOptions = { perTarget: 200, kinds: ['claim', 'claim', 'claim', 'idle'] }

/** The ports that must have been attacked while the job started: the others listen too briefly to be found for sure. */
const MUST: Record<Shape, string[]> = { procs: ['rendezvous'], join: ['rendezvous', 'process 0 tcp'] }

/** "launcher: peak VmHWM 60.1 → 61.0 MiB, sampled VmRSS 58.0 → 59.2 MiB" for each role. */
function memoryReport(base: Map<string, MemorySeen>, hit: Map<string, MemorySeen>): string {
  return [...base.keys()]
    .map((role) => {
      const b = base.get(role)!
      const h = hit.get(role)
      return (
        `${role}: peak VmHWM ${mib(b.peakKiB)} → ${h === undefined ? '?' : mib(h.peakKiB)} MiB, ` +
        `sampled VmRSS ${mib(b.maxRssKiB)} → ${h === undefined ? '?' : mib(h.maxRssKiB)} MiB`
      )
    })
    .join('; ')
}

/** What the strangers of each port got: "rendezvous (found at 312 ms): 200 made, 200 closed by it, 0 refused; …". */
function strangersReport(r: JobRun, stats: Record<string, HostileStats>): string {
  return [...r.found]
    .map(([label, f]) => {
      const s = stats[label]
      const what =
        s === undefined
          ? 'not attacked'
          : `${s.opened} tried, ${s.connected} made, ${s.closedByListener} closed by it, ${s.refusedByKernel} refused by the kernel, ` +
            `${s.refusals} {t:'refused'}, ${s.welcomes} welcomed`
      return `${label} (found at ${Math.round(f.foundMs)} ms): ${what}`
    })
    .join('; ')
}

/**
 * The rendezvous's answer to each way a stranger can fail its hello (with the key, where known, for
 * the ways that need it: `inJob` is a rank that has joined already).
 */
async function refusals(rv: Target, keyHex: string | null, inJob: number): Promise<Map<string, Buffer>> {
  const key = keyHex === null ? null : Buffer.from(keyHex, 'hex')
  const hello = (rank: number, c: Uint8Array, withKey: Buffer | null): Buffer => {
    const n = makeNonce()
    return encodeMessage({ t: 'hello', rank, n, p: withKey === null ? randomBytes(32) : proof(withKey, 'join', c, n, rank) })
  }
  const ways: Array<[string, (c: Uint8Array) => Buffer]> = [
    ['a hello with a wrong proof', (c) => hello(1, c, null)],
    ['a message over 1 KiB', (c) => encodeMessage({ t: 'hello', rank: 1, n: makeNonce(), p: proof(randomBytes(32), 'join', c), pad: randomBytes(2000) })],
    ['a message that is no hello', () => encodeMessage({ t: 'addr', host: '127.0.0.1', port: 9 })],
    ['bytes that do not decode', () => Buffer.from([4, 0, 0, 0, 0xc1, 0xc1, 0xc1, 0xc1])],
  ]
  if (key !== null) {
    ways.push(['a proven hello of a rank out of range', (c) => hello(7, c, key)])
    ways.push(['a proven hello of a rank in the job already', (c) => hello(inJob, c, key)])
  }
  const got = await Promise.all(ways.map(([, answer]) => answerChallenge(rv, answer, 4000)))
  return new Map(ways.map(([why], i) => [why, got[i]!.closed ? got[i]!.reply : Buffer.from('(not closed)')]))
}

/** Once the job started: every port it listened on refuses connections, and no stranger's connection is left open. */
function expectClosedAfterStart(r: JobRun, report: string): void {
  expect(Object.keys(r.afterStart).sort(), report).toEqual([...r.found.keys()].sort())
  for (const [label, got] of Object.entries(r.afterStart)) expect(got, `${label}, connected to once the job had started: ${report}`).toBe('ECONNREFUSED')
  expect(r.closedAtStart, `strangers' connections still open once the job had started: ${report}`).toBe(true)
  for (const [label, s] of Object.entries(r.atStart)) expect(s.closedByListener, `${label}: ${report}`).toBe(s.connected)
}

/** The same job unattacked, then under the flood: memory, verification, welcomes, refusals, the ports after the start. */
async function floodTest(shape: Shape): Promise<void> {
  let answers = new Map<string, Buffer>()
  const base = await runWorkJob(shape, {
    // (rank 0 is in the job: under --join process 0 joined its own rendezvous before its tcp listener opened)
    atRendezvous: async (rv, keyHex) => {
      answers = await refusals(rv, keyHex, 0)
    },
  })
  expect(base.ok, `unattacked job:\n${base.err}`).toBe(true)
  expect(survivors(), 'processes left after the unattacked job').toEqual([])
  expectClosedAfterStart(base, `unattacked: ${JSON.stringify(base.afterStart)}`)
  const hit = await runWorkJob(shape, { attack: FLOOD })
  const times =
    `job time unattacked ${Math.round(base.totalMs)} ms (rounds ${base.workMs} ms), ` +
    `attacked ${Math.round(hit.totalMs)} ms (rounds ${hit.workMs} ms)${shape === 'join' ? `, process 1 started at ${Math.round(hit.heldMs)} ms` : ''}`
  const report =
    `${memoryReport(base.memory, hit.memory)}; ${times}; strangers when the job started: ${strangersReport(hit, hit.atStart)}; ` +
    `connecting after the start: ${JSON.stringify(hit.afterStart)}`
  expect(hit.ok, `attacked job (${report}):\n${hit.err}`).toBe(true)
  expect(hit.out.match(/^task \d work ok /gm), report).toHaveLength(4)
  expect(survivors(), 'processes left after the attacked job').toEqual([])
  // the ports that listen long enough were attacked while the job started, each with every connection
  for (const label of MUST[shape]) {
    expect(hit.atEnd[label], `${label} attacked: ${report}`).toBeDefined()
    expect(hit.atEnd[label]!.connected, `${label}: connections made: ${report}`).toBe(FLOOD.perTarget)
  }
  for (const [label, s] of Object.entries(hit.atEnd)) expect(s.welcomes, `${label}: ${report}`).toBe(0)
  expectClosedAfterStart(hit, report)
  expect([...hit.memory.keys()].sort(), report).toEqual([...base.memory.keys()].sort())
  for (const role of base.memory.keys()) {
    const grew = hit.memory.get(role)!.peakKiB - base.memory.get(role)!.peakKiB
    expect(grew, `${role} grew ${mib(grew)} MiB under attack: ${report}`).toBeLessThan(32 * MiB)
  }
  // one refusal, the same bytes, whatever the reason; nothing of the key in it
  expect(answers.size).toBe(shape === 'join' ? 6 : 4)
  const first = [...answers.values()][0]!
  expect(decodeBody(first.subarray(4)), 'the refusal').toEqual({ t: 'refused' })
  expect(first.readUInt32LE(0) + 4).toBe(first.length)
  for (const [why, bytes] of answers) expect(bytes.toString('hex'), `refusal of ${why}`).toBe(first.toString('hex'))
  if (base.keyHex !== null) expect(first.includes(Buffer.from(base.keyHex, 'hex'))).toBe(false)
  note(`${shape}: ${report}`)
}

describe('strangers while a job starts, before they prove the key', () => {
  it('lapirun -n 4 --procs 2: 200 hostile connections on each port as it opens cost each process < 32 MiB; the job verifies; ' +
    'once started, its ports refuse connections', async () => {
    await floodTest('procs')
  }, 50_000)

  it.runIf(FULL)(
    'lapirun --join, 2 processes, process 1 started 1.2 s after process 0: the same, and the rendezvous refuses six ways with the same bytes',
    async () => {
      await floodTest('join')
    },
    50_000,
  )
})

/**
 * Strangers that hold connections open while the job starts (silent ones, and hellos sent half
 * way), and try again 100 ms after each is closed or refused: up to 3000 tries per port (10 s of them).
 */
const HOLDERS: HostileOptions = { perTarget: 30, kinds: ['idle', 'idle', 'half-hello'], reopenMs: 100, retryFailed: true, maxOpens: 3000 }

describe('the end of a job', () => {
  for (const shape of matrix(['procs', 'join'] as const, ['join'])) {
    const who = shape === 'procs' ? 'lapirun --procs' : 'every lapirun --join process'
    it(`${who} exits, whatever strangers that held its ports while it started try since`, async () => {
      const r: JobRun = await runWorkJob(shape, { rounds: 100, pauseMs: 600, attack: HOLDERS })
      const after = r.exitsAt.map((at) => Math.round(at - r.lastLineAt))
      const tries = (label: string, k: keyof HostileStats, from: Record<string, HostileStats>, to: Record<string, HostileStats>): number =>
        (to[label]![k] as number) - (from[label]![k] as number)
      const report =
        `exits ${after.join(', ')} ms after the last line; while the job started: ${strangersReport(r, r.atStart)}; ` +
        `tries since the start, to the last line and in all: ${Object.keys(r.atEnd)
          .map(
            (l) =>
              `${l} ${tries(l, 'opened', r.atStart, r.atLastLine)}/${tries(l, 'opened', r.atStart, r.atEnd)} ` +
              `(${tries(l, 'refusedByKernel', r.atStart, r.atEnd)} refused by the kernel, ${tries(l, 'connected', r.atStart, r.atEnd)} made)`,
          )
          .join('; ')}`
      expect(r.ok, `${report}\n${r.err}`).toBe(true)
      // (strangers held connections to the ports that listen long enough while the job started)
      for (const label of MUST[shape]) expect(r.atStart[label]?.connected ?? 0, `${label}: ${report}`).toBeGreaterThanOrEqual(HOLDERS.perTarget)
      expectClosedAfterStart(r, report)
      // every try since the start was refused by the kernel, up to the last line and after it
      for (const label of Object.keys(r.atEnd)) {
        expect(tries(label, 'connected', r.atStart, r.atEnd), `${label}: connections made after the start: ${report}`).toBe(0)
        expect(tries(label, 'failed', r.atStart, r.atEnd), `${label}: ${report}`).toBe(tries(label, 'refusedByKernel', r.atStart, r.atEnd))
      }
      // (and they were still at it when the job ended: tries refused between the start and the last line, their budget not spent)
      for (const label of MUST[shape]) {
        expect(tries(label, 'refusedByKernel', r.atStart, r.atLastLine), `${label}: tries refused before the last line: ${report}`).toBeGreaterThan(0)
        expect(r.atLastLine[label]!.opened, `${label}: ${report}`).toBeLessThan(HOLDERS.maxOpens!)
      }
      expect(survivors(), 'processes left after the job').toEqual([])
      note(`the end, ${shape}: ${report}`)
    }, 40_000)
  }
})

/**
 * A rendezvous in the middle, for process 1: it knows the key, proves it to process 1 itself, joins
 * process 0's real rendezvous as rank 1 and passes the messages both ways — adding `extra` (a
 * program and arguments of its choosing) to the job message. Counts the job messages it forged.
 */
interface Forger {
  port: number
  forged: () => number
  close: () => void
}
async function forgingRendezvous(key: Buffer, upstreamPort: number, extra: Record<string, unknown>): Promise<Forger> {
  let forged = 0
  const socks = new Set<Socket>()
  const track = (s: Socket): Socket => {
    socks.add(s)
    s.on('error', () => {})
    s.once('close', () => socks.delete(s))
    return s
  }
  const server: Server = createServer((down) => {
    track(down)
    const challenge = makeNonce()
    down.write(encodeMessage({ t: 'challenge', n: challenge }))
    let up: Socket | null = null
    let upJoined = false
    const queued: unknown[] = []
    const toUp = (m: unknown): void => {
      if (upJoined) up!.write(encodeMessage(m))
      else queued.push(m)
    }
    const joinUpstream = async (rank: number): Promise<void> => {
      // (process 0 may not listen yet: tried again for 10 s at most)
      for (let i = 0; i < 100 && up === null; i++) {
        const s = connect({ host: '127.0.0.1', port: upstreamPort })
        const ok = await new Promise<boolean>((resolve) => {
          s.once('connect', () => resolve(true))
          s.once('error', () => resolve(false))
        })
        if (ok) up = track(s)
        else {
          s.destroy()
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
      }
      if (up === null) {
        down.destroy()
        return
      }
      const u: Socket = up
      const nonce = makeNonce()
      readMessages(
        u,
        (m) => {
          const t = (m as Record<string, unknown>)['t']
          if (t === 'challenge') u.write(encodeMessage({ t: 'hello', rank, n: nonce, p: proof(key, 'join', (m as { n: Uint8Array }).n, nonce, rank) }))
          else if (t === 'welcome') {
            upJoined = true
            for (const q of queued.splice(0)) u.write(encodeMessage(q))
          } else if (t === 'job') {
            forged++
            down.write(encodeMessage({ ...(m as object), ...extra }))
          } else down.write(encodeMessage(m))
        },
        () => {
          u.destroy()
          down.destroy()
        },
        MAX_MESSAGE_BYTES,
      )
      u.once('close', () => down.end())
      down.once('close', () => u.end())
    }
    let rank = -1
    readMessages(
      down,
      (m) => {
        const f = m as Record<string, unknown>
        if (rank < 0) {
          const n = f['n'] as Uint8Array
          const r = f['rank'] as number
          if (f['t'] !== 'hello' || !proof(key, 'join', challenge, n, r).equals(f['p'] as Uint8Array)) {
            down.destroy()
            return
          }
          rank = r
          down.write(encodeMessage({ t: 'welcome', p: proof(key, 'rendezvous', challenge, n, r) }))
          void joinUpstream(r)
          return
        }
        toUp(m)
      },
      () => down.destroy(),
      MAX_MESSAGE_BYTES,
    )
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    forged: () => forged,
    close: () => {
      for (const s of socks) s.destroy()
      server.close()
    },
  }
}

describe('what a process runs', () => {
  it('a rendezvous that knows the key and names another program in its job message: the process runs its own', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'amlapi-sec-rv-'))
    dirs.push(dir)
    const marker = join(dir, 'evil-ran')
    const key = randomBytes(32)
    const port = await freePort()
    const mitm = await forgingRendezvous(key, port, { program: pathToFileURL(FIXTURES + 'security/evil.mjs').href, args: [marker] })
    try {
      const env = { AMLAPI_SIZE: '2', AMLAPI_JOB_KEY: key.toString('hex') }
      const own = ['--join', '--transport', 'tcp', FIXTURES + 'lapi/putget.mjs']
      const p0 = startNode([LAPIRUN, ...own], { ...env, AMLAPI_RANK: '0', AMLAPI_RENDEZVOUS: `127.0.0.1:${port}` })
      const p1 = startNode([LAPIRUN, ...own], { ...env, AMLAPI_RANK: '1', AMLAPI_RENDEZVOUS: `127.0.0.1:${mitm.port}` })
      const [e0, e1] = await Promise.all([p0, p1].map((p) => within(p.exit, 30_000, { at: NaN, code: null, signal: null })))
      expect(mitm.forged(), `the forged job message went out\n${p1.err}`).toBe(1)
      expect(existsSync(marker), 'the program the rendezvous named ran').toBe(false)
      // (process 1 ran the program of its own command line, to the end)
      expect([e0!.code, e1!.code], p0.err + p1.err).toEqual([0, 0])
      expect(p1.out).toMatch(/^task 1 putget ok$/m)
      expect(p0.out).toMatch(/^task 0 putget ok$/m)
    } finally {
      mitm.close()
    }
  }, 40_000)
})

/** The forms the key could take in a log line: hex (either case), base64, its bytes as a JSON array. */
function keyForms(keyHex: string): string[] {
  const k = Buffer.from(keyHex, 'hex')
  return [keyHex.toLowerCase(), keyHex.toUpperCase(), k.toString('base64'), k.toString('base64url'), `[${[...k].join(',')}]`]
}

describe('the job key', () => {
  it('lapirun --procs 2: no task, nor a process it spawns, has AMLAPI_JOB_KEY; no debug log line holds the key', async () => {
    const p = startNode([LAPIRUN, '-n', '2', '--procs', '2', FIXTURES + 'security/env-key.mjs'], { AMLAPI_LOG_LEVEL: 'debug' })
    // (the key, read as its own user can: the environment the launcher gave its processes, /proc/<pid>/environ)
    const w = watchMemory(p.pid, { everyMs: 10 })
    const e = await within(p.exit, 30_000, { at: NaN, code: null, signal: null })
    const seen = [...w.stop().values()]
    expect(e.code, p.err).toBe(0)
    expect(p.out.match(/^task \d (child )?key unset$/gm), p.out).toHaveLength(4)
    expect(p.out).not.toMatch(/key set/)
    const keyHex = seen.map((m) => m.env?.get('AMLAPI_JOB_KEY')).find((k) => k !== undefined)
    expect(keyHex, 'the key as the processes got it').toMatch(/^[0-9a-f]{64}$/)
    expect(p.err).toMatch(/"level":20/)
    for (const form of keyForms(keyHex!)) expect(p.err.includes(form), `the key (${form.slice(0, 8)}…) in the debug log`).toBe(false)
  }, 40_000)

  it('lapirun --join with AMLAPI_JOB_KEY: no task, nor a process it spawns, has it; no debug log line of either process holds it', async () => {
    const keyHex = randomBytes(32).toString('hex')
    const env = { AMLAPI_SIZE: '2', AMLAPI_RENDEZVOUS: `127.0.0.1:${await freePort()}`, AMLAPI_JOB_KEY: keyHex, AMLAPI_LOG_LEVEL: 'debug' }
    const ps = [0, 1].map((r) => startNode([LAPIRUN, '--join', FIXTURES + 'security/env-key.mjs'], { ...env, AMLAPI_RANK: String(r) }))
    const exits = await Promise.all(ps.map((p) => within(p.exit, 30_000, { at: NaN, code: null, signal: null })))
    const out = ps.map((p) => p.out).join('')
    const err = ps.map((p) => p.err).join('')
    expect(
      exits.map((e) => e.code),
      err,
    ).toEqual([0, 0])
    expect(out.match(/^task \d (child )?key unset$/gm), out).toHaveLength(4)
    expect(out).not.toMatch(/key set/)
    expect(err).toMatch(/"level":20/)
    for (const form of keyForms(keyHex)) expect(err.includes(form), `the key (${form.slice(0, 8)}…) in the debug log`).toBe(false)
    await until(() => survivors().length === 0, 2000)
  }, 40_000)
})
