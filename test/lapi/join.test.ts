/**
 * `lapirun --join`: processes started by someone else (here: this test, as a script would) find
 * their rank, meet at process 0's rendezvous with the job key, and run one job; strangers with a
 * wrong key are refused; a lost process ends the others.
 */
import { randomBytes } from 'node:crypto'
import { connect, createServer } from 'node:net'
import { describe, expect, it } from 'vitest'
import { logger, placementFromEnv, serveRendezvous } from '#lapi-internal'
import { DEFAULT_CONFIG } from '@amlapi/lapi'
import { FIXTURES } from '../helpers/job.js'
import { LAPIRUN, runNode } from '../helpers/run.js'
import { freePort, member, until } from '../helpers/join.js'

describe('lapirun --join', () => {
  it('reads rank and size from the first launcher variables found, and warns when others disagree', () => {
    expect(placementFromEnv({})).toEqual({ rank: 0, size: 1, source: '', warnings: [] })
    expect(placementFromEnv({ AMLAPI_RANK: '2', AMLAPI_SIZE: '4' })).toMatchObject({ rank: 2, size: 4, source: 'AMLAPI_RANK/AMLAPI_SIZE', warnings: [] })
    expect(placementFromEnv({ PMI_RANK: '1', PMI_SIZE: '3', OMPI_COMM_WORLD_RANK: '1', OMPI_COMM_WORLD_SIZE: '3' })).toMatchObject({ rank: 1, size: 3, source: 'PMI_RANK/PMI_SIZE', warnings: [] })
    expect(placementFromEnv({ OMPI_COMM_WORLD_RANK: '0', OMPI_COMM_WORLD_SIZE: '2' })).toMatchObject({ rank: 0, size: 2 })
    expect(placementFromEnv({ PMIX_RANK: '3', SLURM_NTASKS: '8' })).toMatchObject({ rank: 3, size: 8, source: 'PMIX_RANK/SLURM_NTASKS' })
    expect(placementFromEnv({ SLURM_PROCID: '5', SLURM_NTASKS: '6' })).toMatchObject({ rank: 5, size: 6, source: 'SLURM_PROCID/SLURM_NTASKS' })
    // a rank without its size is no source
    expect(placementFromEnv({ PMI_RANK: '1', SLURM_PROCID: '0', SLURM_NTASKS: '2' })).toMatchObject({ rank: 0, size: 2, source: 'SLURM_PROCID/SLURM_NTASKS' })
    const w = placementFromEnv({ AMLAPI_RANK: '0', AMLAPI_SIZE: '2', SLURM_PROCID: '1', SLURM_NTASKS: '2' })
    expect(w).toMatchObject({ rank: 0, size: 2 })
    expect(w.warnings).toEqual(['SLURM_PROCID/SLURM_NTASKS say rank 1 of 2, but AMLAPI_RANK/AMLAPI_SIZE (used) say rank 0 of 2'])
    expect(() => placementFromEnv({ AMLAPI_RANK: '2', AMLAPI_SIZE: '2' })).toThrow(/AMLAPI_RANK=2 is not below AMLAPI_SIZE=2/)
    expect(() => placementFromEnv({ AMLAPI_RANK: 'x', AMLAPI_SIZE: '2' })).toThrow(/AMLAPI_RANK=x is not a whole number/)
  })

  it('a connection to the rendezvous that stalls before its challenge is dropped and made again', async () => {
    // Process 1 reaches the rendezvous through a relay that holds its first connection open and
    // silent (a connection that stalls on a lossy network); the next ones it passes through.
    const real = await freePort()
    const held: import('node:net').Socket[] = []
    let conns = 0
    const relay = createServer((c) => {
      c.on('error', () => {})
      if (conns++ === 0) { held.push(c); return }
      const up = connect({ host: '127.0.0.1', port: real })
      up.on('error', () => c.destroy())
      c.pipe(up); up.pipe(c)
    })
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve))
    const via = (relay.address() as import('node:net').AddressInfo).port
    try {
      const key = randomBytes(32).toString('hex')
      const args = ['--tasks-per-proc', '1', '--transport', 'tcp', FIXTURES + 'lapi/putget.mjs']
      const t0 = performance.now()
      const ps = [member(1, 2, { AMLAPI_RENDEZVOUS: `127.0.0.1:${via}`, AMLAPI_JOB_KEY: key }, args), member(0, 2, { AMLAPI_RENDEZVOUS: `127.0.0.1:${real}`, AMLAPI_JOB_KEY: key }, args)]
      const codes = await Promise.all(ps.map((p) => p.code))
      expect(codes, ps.map((p) => p.err).join('\n')).toEqual([0, 0])
      expect(conns).toBeGreaterThanOrEqual(2)
      // (the stalled attempt gives up after 2 s)
      expect(performance.now() - t0).toBeLessThan(20_000)
    } finally {
      for (const c of held) c.destroy()
      relay.close()
    }
  }, 45_000)

  for (const transport of ['tcp', 'udp']) {
    it(`two processes of two tasks each run one job over ${transport}`, async () => {
      const env = { AMLAPI_RENDEZVOUS: `127.0.0.1:${await freePort()}`, AMLAPI_JOB_KEY: randomBytes(32).toString('hex') }
      const args = ['--tasks-per-proc', '2', '--transport', transport, FIXTURES + 'lapi/putget.mjs']
      // (process 1 first: it waits for the rendezvous to come up)
      const ps = [member(1, 2, env, args), member(0, 2, env, args)]
      const codes = await Promise.all(ps.map((p) => p.code))
      expect(codes, ps.map((p) => p.err).join('\n')).toEqual([0, 0])
      expect(ps[1]!.out.match(/putget ok/g)).toHaveLength(2)
      expect(ps[0]!.out.match(/putget ok/g)).toHaveLength(2)
      expect((ps[0]!.out + ps[1]!.out).match(/task (\d) putget ok/g)!.map((l) => l[5]).sort()).toEqual(['0', '1', '2', '3'])
    }, 45_000)
  }

  it('a process with a wrong key is refused at the rendezvous (told no reason; process 0 logs it); one without a key is a usage error', async () => {
    const port = await freePort()
    const key = randomBytes(32).toString('hex')
    const good = member(0, 2, { AMLAPI_RENDEZVOUS: `127.0.0.1:${port}`, AMLAPI_JOB_KEY: key, AMLAPI_LOG_LEVEL: 'warn' }, [FIXTURES + 'lapi/putget.mjs'])
    const bad = member(1, 2, { AMLAPI_RENDEZVOUS: `127.0.0.1:${port}`, AMLAPI_JOB_KEY: randomBytes(32).toString('hex') }, [FIXTURES + 'lapi/putget.mjs'])
    expect(await bad.code).toBe(1)
    expect(bad.err).toMatch(/the rendezvous refused this process: a wrong AMLAPI_JOB_KEY, or a rank out of range or already in the job/)
    await until(() => good.err.includes('rendezvous: connection refused'), 5_000)
    expect(good.err).toMatch(/"why":"it did not prove the job key".*"msg":"rendezvous: connection refused"/)
    good.p.kill('SIGKILL')
    await good.code
    const none = await runNode([LAPIRUN, '--join', FIXTURES + 'lapi/putget.mjs'], { env: { AMLAPI_RANK: '0', AMLAPI_SIZE: '2', AMLAPI_RENDEZVOUS: `127.0.0.1:${port}`, AMLAPI_JOB_KEY: '' } })
    expect(none.code).toBe(2)
    expect(none.stderr).toMatch(/a host:port rendezvous needs AMLAPI_JOB_KEY.*openssl rand -hex 32/)
    const short = await runNode([LAPIRUN, '--join', FIXTURES + 'lapi/putget.mjs'], { env: { AMLAPI_RANK: '0', AMLAPI_SIZE: '2', AMLAPI_RENDEZVOUS: `127.0.0.1:${port}`, AMLAPI_JOB_KEY: 'abcd' } })
    expect(short.code).toBe(2)
    expect(short.stderr).toMatch(/AMLAPI_JOB_KEY must have at least 128 bits/)
  }, 45_000)

  for (const transport of ['tcp', 'udp']) {
    it(`a process whose job is called off before it starts exits at once, its sockets closed; the rendezvous names whom it waits for (${transport})`, async () => {
      const key = randomBytes(32)
      const rv = await serveRendezvous({
        key, procs: 2, host: '127.0.0.1', port: 0, log: logger('test'), onFail: () => {}, onDone: () => {},
        job: { numTasks: 2, config: { ...DEFAULT_CONFIG }, label: false, graceMs: 1000, data: undefined },
      })
      try {
        expect(rv.waitingFor()).toBe('processes 0, 1 never joined')
        const p = member(1, 2, { AMLAPI_RENDEZVOUS: `127.0.0.1:${rv.port}`, AMLAPI_JOB_KEY: Buffer.from(key).toString('hex') }, ['--transport', transport, FIXTURES + 'lapi/putget.mjs'])
        // (process 1 has bound its transport's sockets and said where they are)
        await until(() => rv.waitingFor() === 'process 0 never joined', 15_000)
        expect(rv.waitingFor()).toBe('process 0 never joined')
        const t0 = performance.now()
        rv.abort(-1, 'called off by the test')
        expect(await p.code, p.err).toBe(1)
        expect(performance.now() - t0).toBeLessThan(10_000)
        expect(p.err).toMatch(/^lapirun: called off by the test$/m)
      } finally {
        rv.close()
      }
    }, 45_000)
  }

  for (const transport of ['tcp', 'udp']) {
    it(`Ctrl-C of a process whose tasks have ended ends it at once with status 130, while its leave waits for a peer that does not answer; the peer, resumed, ends its job normally (${transport})`, async () => {
      const env = { AMLAPI_RENDEZVOUS: `127.0.0.1:${await freePort()}`, AMLAPI_JOB_KEY: randomBytes(32).toString('hex'), AMLAPI_LOG_LEVEL: 'debug' }
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
        expect(performance.now() - t0).toBeLessThan(1500)
        expect(ps[1]!.err).not.toContain('process leaves the job')
        // process 0 finds process 1 gone when it resumes, after its goodbye (over udp, a write to
        // the closed port finds it first; the goodbye still waits in the socket)
        ps[0]!.p.kill('SIGCONT')
        expect(await ps[0]!.code, ps[0]!.err).toBe(0)
        expect(ps[0]!.err).not.toMatch(/was lost/)
      } finally {
        ps[0]!.p.kill('SIGCONT')
        ps[0]!.p.kill('SIGKILL')
      }
    }, 45_000)
  }

  for (const transport of ['tcp', 'udp']) {
    it(`a lost process: LAPI's err_hndlr hears of it, and AM-2 requests in flight to it come back to handler 0 as EUNREACHABLE (${transport})`, async () => {
      for (const [file, want] of [['lapi/lost-handler.mjs', /^err_hndlr code 421 type 4 task 1 src 0$/m], ['am2/lost.mjs', /^lost: status 9 opcode 1$/m]] as const) {
        const env = { AMLAPI_RENDEZVOUS: `127.0.0.1:${await freePort()}`, AMLAPI_JOB_KEY: randomBytes(32).toString('hex') }
        const args = ['--transport', transport, FIXTURES + file]
        const ps = [member(0, 2, env, args), member(1, 2, env, args)]
        await until(() => /task 0 pid (\d+)/.test(ps[0]!.out) && /task 1 pid/.test(ps[1]!.out), 20_000)
        const pid = Number(/task 0 pid (\d+)/.exec(ps[0]!.out)![1])
        const t0 = performance.now()
        process.kill(pid, 'SIGKILL')
        expect(await ps[1]!.code, file).not.toBe(0)
        expect(performance.now() - t0, file).toBeLessThan(8000)
        expect(ps[1]!.out, file).toMatch(want)
        // (every request in flight came back: AM-2 keeps 4 of them to a peer here)
        if (file === 'am2/lost.mjs') expect(ps[1]!.out.match(/^lost: /gm)?.length).toBe(4)
        expect(ps[1]!.err, file).toMatch(/task 0 failed: process 0 \(task 0\) was lost: /)
        await ps[0]!.code
      }
    }, 45_000)

    it(`a process killed with kill -9 ends the other, which names its task (${transport})`, async () => {
      const env = { AMLAPI_RENDEZVOUS: `127.0.0.1:${await freePort()}`, AMLAPI_JOB_KEY: randomBytes(32).toString('hex') }
      const args = ['--transport', transport, FIXTURES + 'lapi/lose.mjs']
      const ps = [member(0, 2, env, args), member(1, 2, env, args)]
      await until(() => /task 1 pid (\d+)/.test(ps[1]!.out), 20_000)
      const pid = Number(/task 1 pid (\d+)/.exec(ps[1]!.out)![1])
      const t0 = performance.now()
      process.kill(pid, 'SIGKILL')
      expect(await ps[0]!.code).not.toBe(0)
      expect(performance.now() - t0).toBeLessThan(8000)
      expect(ps[0]!.err).toMatch(/task 1 failed: process 1 \(task 1\) was lost: /)
      await ps[1]!.code
    }, 45_000)
  }
})
