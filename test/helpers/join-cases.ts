/**
 * The `lapirun --join` cases that end a process or a job, each run to its end with what it must
 * show asserted, returning how long the end took (ms): test/lapi/join.test.ts and
 * join-mistakes.test.ts run them for what happens (the README's suite), test/lapi/join.perf.test.ts
 * for how soon (`npm run test:perf`).
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { connect, createServer, type AddressInfo, type Socket } from 'node:net'
import { join } from 'node:path'
import { expect } from 'vitest'
import { logger, meetingFile, serveRendezvous } from '#lapi-internal'
import { DEFAULT_CONFIG } from '@amlapi/lapi'
import { FIXTURES } from './job.js'
import { freePort, member, until } from './join.js'

const PUTGET = FIXTURES + 'lapi/putget.mjs'
const key = (): string => randomBytes(32).toString('hex')

/**
 * Process 1 reaches the rendezvous through a relay that holds its first connection open and silent
 * (a connection that stalls on a lossy network); the next ones it passes through. The job runs;
 * the time is from the start to both processes' ends (the stalled attempt gives up after 2 s).
 */
export async function stalledRendezvous(): Promise<number> {
  const real = await freePort()
  const held: Socket[] = []
  let conns = 0
  const relay = createServer((c) => {
    c.on('error', () => {})
    if (conns++ === 0) {
      held.push(c)
      return
    }
    const up = connect({ host: '127.0.0.1', port: real })
    up.on('error', () => c.destroy())
    c.pipe(up)
    up.pipe(c)
  })
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve))
  const via = (relay.address() as AddressInfo).port
  try {
    const k = key()
    const args = ['--tasks-per-proc', '1', '--transport', 'tcp', PUTGET]
    const t0 = performance.now()
    const ps = [
      member(1, 2, { AMLAPI_RENDEZVOUS: `127.0.0.1:${via}`, AMLAPI_JOB_KEY: k }, args),
      member(0, 2, { AMLAPI_RENDEZVOUS: `127.0.0.1:${real}`, AMLAPI_JOB_KEY: k }, args),
    ]
    const codes = await Promise.all(ps.map((p) => p.code))
    const ms = performance.now() - t0
    expect(codes, ps.map((p) => p.err).join('\n')).toEqual([0, 0])
    expect(conns).toBeGreaterThanOrEqual(2)
    return ms
  } finally {
    for (const c of held) c.destroy()
    relay.close()
  }
}

/**
 * A process whose job is called off (by its rendezvous) before it starts exits with 1, its
 * sockets closed; the rendezvous names whom it waits for. The time is from the call to the exit.
 */
export async function calledOff(transport: 'tcp' | 'udp'): Promise<number> {
  const k = randomBytes(32)
  const rv = await serveRendezvous({
    key: k,
    procs: 2,
    host: '127.0.0.1',
    port: 0,
    log: logger('test'),
    onFail: () => {},
    onDone: () => {},
    job: { numTasks: 2, config: { ...DEFAULT_CONFIG }, label: false, graceMs: 1000, data: undefined },
  })
  try {
    expect(rv.waitingFor()).toBe('processes 0, 1 never joined')
    const p = member(1, 2, { AMLAPI_RENDEZVOUS: `127.0.0.1:${rv.port}`, AMLAPI_JOB_KEY: Buffer.from(k).toString('hex') }, ['--transport', transport, PUTGET])
    // (process 1 has bound its transport's sockets and said where they are)
    await until(() => rv.waitingFor() === 'process 0 never joined', 15_000)
    expect(rv.waitingFor()).toBe('process 0 never joined')
    const t0 = performance.now()
    rv.abort(-1, 'called off by the test')
    expect(await p.code, p.err).toBe(1)
    const ms = performance.now() - t0
    expect(p.err).toMatch(/^lapirun: called off by the test$/m)
    return ms
  } finally {
    rv.close()
  }
}

/**
 * Ctrl-C of a process whose tasks have ended, while its leave waits for a peer that does not answer
 * (stopped): it exits with 130; the peer, resumed, ends its job normally. The time is from the
 * SIGINT to the exit.
 */
export async function interruptedWhileLeaving(transport: 'tcp' | 'udp'): Promise<number> {
  const env = { AMLAPI_RENDEZVOUS: `127.0.0.1:${await freePort()}`, AMLAPI_JOB_KEY: key(), AMLAPI_LOG_LEVEL: 'debug' }
  // (task 0 stays on 4 s, task 1 ends 1.5 s after the Gfence: by then process 0 is stopped,
  // and process 1's leave waits for it, FINISH_MS and LEAVE_MS, several seconds)
  const args = ['--transport', transport, FIXTURES + 'lapi/linger.mjs', '4000', '1500']
  const ps = [member(0, 2, env, args), member(1, 2, env, args)]
  try {
    await until(() => /^linger 0$/m.test(ps[0]!.out) && /^linger 1$/m.test(ps[1]!.out), 8_000)
    ps[0]!.p.kill('SIGSTOP')
    await until(() => ps[1]!.err.includes('leaving the job'), 8_000)
    expect(ps[1]!.err).toContain('leaving the job')
    const t0 = performance.now()
    ps[1]!.p.kill('SIGINT')
    expect(await ps[1]!.code, ps[1]!.err).toBe(130)
    const ms = performance.now() - t0
    expect(ps[1]!.err).not.toContain('process leaves the job')
    // process 0 finds process 1 gone when it resumes, after its goodbye (over udp, a write to
    // the closed port finds it first; the goodbye still waits in the socket)
    ps[0]!.p.kill('SIGCONT')
    expect(await ps[0]!.code, ps[0]!.err).toBe(0)
    expect(ps[0]!.err).not.toMatch(/was lost/)
    return ms
  } finally {
    ps[0]!.p.kill('SIGCONT')
    ps[0]!.p.kill('SIGKILL')
  }
}

/**
 * A lost process (killed with kill -9): LAPI's err_hndlr hears of it, and AM-2 requests in flight
 * to it come back to handler 0 as EUNREACHABLE. The times, one for each program, are from the
 * kill to the other process's exit.
 */
export async function lostProcess(transport: 'tcp' | 'udp'): Promise<number[]> {
  const times: number[] = []
  for (const [file, want] of [
    ['lapi/lost-handler.mjs', /^err_hndlr code 421 type 4 task 1 src 0$/m],
    ['am2/lost.mjs', /^lost: status 9 opcode 1$/m],
  ] as const) {
    const env = { AMLAPI_RENDEZVOUS: `127.0.0.1:${await freePort()}`, AMLAPI_JOB_KEY: key() }
    const args = ['--transport', transport, FIXTURES + file]
    const ps = [member(0, 2, env, args), member(1, 2, env, args)]
    await until(() => /task 0 pid (\d+)/.test(ps[0]!.out) && /task 1 pid/.test(ps[1]!.out), 20_000)
    const pid = Number(/task 0 pid (\d+)/.exec(ps[0]!.out)![1])
    const t0 = performance.now()
    process.kill(pid, 'SIGKILL')
    expect(await ps[1]!.code, file).not.toBe(0)
    times.push(performance.now() - t0)
    expect(ps[1]!.out, file).toMatch(want)
    // (every request in flight came back: AM-2 keeps 4 of them to a peer here)
    if (file === 'am2/lost.mjs') expect(ps[1]!.out.match(/^lost: /gm)?.length).toBe(4)
    expect(ps[1]!.err, file).toMatch(/task 0 failed: process 0 \(task 0\) was lost: /)
    await ps[0]!.code
  }
  return times
}

/** A process killed with kill -9 ends the other, which names its task. The time is from the kill to the other's exit. */
export async function killedProcess(transport: 'tcp' | 'udp'): Promise<number> {
  const env = { AMLAPI_RENDEZVOUS: `127.0.0.1:${await freePort()}`, AMLAPI_JOB_KEY: key() }
  const args = ['--transport', transport, FIXTURES + 'lapi/lose.mjs']
  const ps = [member(0, 2, env, args), member(1, 2, env, args)]
  await until(() => /task 1 pid (\d+)/.test(ps[1]!.out), 20_000)
  const pid = Number(/task 1 pid (\d+)/.exec(ps[1]!.out)![1])
  const t0 = performance.now()
  process.kill(pid, 'SIGKILL')
  expect(await ps[0]!.code).not.toBe(0)
  const ms = performance.now() - t0
  expect(ps[0]!.err).toMatch(/task 1 failed: process 1 \(task 1\) was lost: /)
  await ps[1]!.code
  return ms
}

/** A process waiting for a rendezvous not up yet ends at its first SIGINT, with 130. The time is from the SIGINT to the exit. */
export async function interruptedBeforeRendezvous(): Promise<number> {
  const p = member(1, 2, { AMLAPI_RENDEZVOUS: `127.0.0.1:${await freePort()}`, AMLAPI_JOB_KEY: key() }, [PUTGET])
  await new Promise((resolve) => setTimeout(resolve, 1500))
  const t0 = performance.now()
  p.p.kill('SIGINT')
  expect(await p.code, p.err).toBe(130)
  const ms = performance.now() - t0
  expect(p.err).toMatch(/^lapirun: the job was interrupted$/m)
  return ms
}

/**
 * Processes started with different --tasks-per-proc: the one that differs says so, with both
 * counts, and process 0 hears of it through the rendezvous. The time is from the first's exit to
 * process 0's.
 */
export async function differentTasksPerProc(): Promise<number> {
  const env = { AMLAPI_RENDEZVOUS: `127.0.0.1:${await freePort()}`, AMLAPI_JOB_KEY: key() }
  const p0 = member(0, 2, env, ['--tasks-per-proc', '2', PUTGET])
  const p1 = member(1, 2, env, ['--tasks-per-proc', '1', PUTGET])
  expect(await p1.code, p1.err).toBe(1)
  expect(p1.err).toMatch(
    /process 0 runs a job of 4 tasks, this process was started for one of 2 \(--tasks-per-proc 1 × 2 processes\): give every process the same command/,
  )
  const t0 = performance.now()
  expect(await p0.code).not.toBe(0)
  const ms = performance.now() - t0
  expect(p0.err).toMatch(/process 1: process 0 runs a job of 4 tasks/)
  return ms
}

/** A note in `dir` that does not read as one is refused, named. The time is from the start to the exit. */
export async function junkNote(dir: string): Promise<number> {
  const note = meetingFile(dir, 'junk')
  mkdirSync(join(note, '..'), { recursive: true, mode: 0o700 })
  writeFileSync(note, 'not a note', { mode: 0o600 })
  const t0 = performance.now()
  const p1 = member(1, 2, { AMLAPI_RENDEZVOUS: `file:${dir}`, AMLAPI_JOB_ID: 'junk' }, [PUTGET])
  expect(await p1.code).toBe(1)
  const ms = performance.now() - t0
  expect(p1.err).toMatch(/amlapi-junk\.rv is not a note of process 0 \(it does not read as one\): the file rendezvous refuses it/)
  return ms
}
