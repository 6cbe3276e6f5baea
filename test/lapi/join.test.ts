/**
 * `lapirun --join`: processes started by someone else (here: this test, as a script would) find
 * their rank, meet at process 0's rendezvous with the job key, and run one job; strangers with a
 * wrong key are refused; a lost process ends the others. The cases that end a process run from
 * test/helpers/join-cases.ts, which test/lapi/join.perf.test.ts times (`npm run test:perf`);
 * `npm test` runs each of the last three over one transport, `npm run test:full` over both.
 */
import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { placementFromEnv } from '#lapi-internal'
import { FIXTURES } from '../helpers/job.js'
import { LAPIRUN, runNode } from '../helpers/run.js'
import { freePort, member, until } from '../helpers/join.js'
import { calledOff, interruptedWhileLeaving, killedProcess, lostProcess, stalledRendezvous } from '../helpers/join-cases.js'
import { matrix } from '../helpers/tier.js'

describe('lapirun --join', () => {
  it('reads rank and size from the first launcher variables found, and warns when others disagree', () => {
    expect(placementFromEnv({})).toEqual({ rank: 0, size: 1, source: '', warnings: [] })
    expect(placementFromEnv({ AMLAPI_RANK: '2', AMLAPI_SIZE: '4' })).toMatchObject({ rank: 2, size: 4, source: 'AMLAPI_RANK/AMLAPI_SIZE', warnings: [] })
    expect(placementFromEnv({ PMI_RANK: '1', PMI_SIZE: '3', OMPI_COMM_WORLD_RANK: '1', OMPI_COMM_WORLD_SIZE: '3' })).toMatchObject({
      rank: 1,
      size: 3,
      source: 'PMI_RANK/PMI_SIZE',
      warnings: [],
    })
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
    await stalledRendezvous()
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
      expect(
        (ps[0]!.out + ps[1]!.out)
          .match(/task (\d) putget ok/g)!
          .map((l) => l[5])
          .sort(),
      ).toEqual(['0', '1', '2', '3'])
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
    const none = await runNode([LAPIRUN, '--join', FIXTURES + 'lapi/putget.mjs'], {
      env: { AMLAPI_RANK: '0', AMLAPI_SIZE: '2', AMLAPI_RENDEZVOUS: `127.0.0.1:${port}`, AMLAPI_JOB_KEY: '' },
    })
    expect(none.code).toBe(2)
    expect(none.stderr).toMatch(/a host:port rendezvous needs AMLAPI_JOB_KEY.*openssl rand -hex 32/)
    const short = await runNode([LAPIRUN, '--join', FIXTURES + 'lapi/putget.mjs'], {
      env: { AMLAPI_RANK: '0', AMLAPI_SIZE: '2', AMLAPI_RENDEZVOUS: `127.0.0.1:${port}`, AMLAPI_JOB_KEY: 'abcd' },
    })
    expect(short.code).toBe(2)
    expect(short.stderr).toMatch(/AMLAPI_JOB_KEY must have at least 128 bits/)
  }, 45_000)

  for (const transport of ['tcp', 'udp'] as const) {
    it(`a process whose job is called off before it starts exits at once, its sockets closed; the rendezvous names whom it waits for (${transport})`, async () => {
      await calledOff(transport)
    }, 45_000)
  }

  for (const transport of matrix(['tcp', 'udp'] as const, ['tcp'])) {
    it(`Ctrl-C of a process whose tasks have ended ends it at once with status 130, while its leave waits for a peer that does not answer; the peer, resumed, ends its job normally (${transport})`, async () => {
      await interruptedWhileLeaving(transport)
    }, 45_000)
  }

  for (const transport of matrix(['tcp', 'udp'] as const, ['udp'])) {
    it(`a lost process: LAPI's err_hndlr hears of it, and AM-2 requests in flight to it come back to handler 0 as EUNREACHABLE (${transport})`, async () => {
      await lostProcess(transport)
    }, 45_000)
  }

  for (const transport of matrix(['tcp', 'udp'] as const, ['tcp'])) {
    it(`a process killed with kill -9 ends the other, which names its task (${transport})`, async () => {
      await killedProcess(transport)
    }, 45_000)
  }
})
