/**
 * `lapirun --join` meets a user's mistakes at start: each is said in one line, with the values
 * involved, at once or at the first signal, rather than after the 30 s a start may take. (How soon
 * is test/lapi/join.perf.test.ts's, for the cases of test/helpers/join-cases.ts.)
 */
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { meetingFile } from '#lapi-internal'
import { FIXTURES } from '../helpers/job.js'
import { LAPIRUN, runNode } from '../helpers/run.js'
import { freePort, member, until } from '../helpers/join.js'
import { differentTasksPerProc, interruptedBeforeRendezvous, junkNote } from '../helpers/join-cases.js'

const PUTGET = FIXTURES + 'lapi/putget.mjs'
const ENV_KEY = FIXTURES + 'security/env-key.mjs'
const key = (): string => randomBytes(32).toString('hex')
const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'amlapi-mistakes-'))
  dirs.push(d)
  return d
}

describe('lapirun --join: mistakes at start', () => {
  it('a job of one process runs in it, whatever rendezvous is set', async () => {
    for (const rv of [`127.0.0.1:${await freePort()}`, `file:${tempDir()}`]) {
      const r = await runNode([LAPIRUN, '--join', '--tasks-per-proc', '2', PUTGET], {
        env: { AMLAPI_RANK: '0', AMLAPI_SIZE: '1', AMLAPI_RENDEZVOUS: rv, AMLAPI_JOB_KEY: key() },
      })
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout.match(/putget ok/g)).toHaveLength(2)
    }
  }, 30_000)

  it('a malformed rank or size is a usage error (exit 2) naming the variables', async () => {
    const above = await runNode([LAPIRUN, '--join', PUTGET], { env: { AMLAPI_RANK: '2', AMLAPI_SIZE: '2' } })
    expect(above.code).toBe(2)
    expect(above.stderr).toMatch(/^lapirun: AMLAPI_RANK=2 is not below AMLAPI_SIZE=2$/m)
    const word = await runNode([LAPIRUN, '--join', PUTGET], { env: { AMLAPI_RANK: 'x', AMLAPI_SIZE: '2' } })
    expect(word.code).toBe(2)
    expect(word.stderr).toMatch(/AMLAPI_RANK=x/)
  }, 30_000)

  it('process 0 given an address not its own is a usage error saying so', async () => {
    // (192.0.2.0/24 is TEST-NET-1, documentation only: never an address of this host, nothing is sent)
    const r = await runNode([LAPIRUN, '--join', PUTGET], {
      env: { AMLAPI_RANK: '0', AMLAPI_SIZE: '2', AMLAPI_RENDEZVOUS: '192.0.2.199:4000', AMLAPI_JOB_KEY: key() },
    })
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/process 0 cannot listen at AMLAPI_RENDEZVOUS=192\.0\.2\.199:4000: 192\.0\.2\.199 is not an address of this host/)
  }, 30_000)

  it('a process waiting for a rendezvous not up yet ends at its first SIGINT, with 130', async () => {
    await interruptedBeforeRendezvous()
  }, 30_000)

  it('processes started with different --tasks-per-proc: the one that differs says so, with both counts', async () => {
    await differentTasksPerProc()
  }, 45_000)

  it('a note left by a killed process 0 is passed over: the next job of its name meets', async () => {
    const dir = tempDir()
    const env = { AMLAPI_SIZE: '2', AMLAPI_RENDEZVOUS: `file:${dir}`, AMLAPI_JOB_ID: 'rerun' }
    const dead = member(0, 2, env, [PUTGET])
    const note = meetingFile(dir, 'rerun')
    await until(() => existsSync(note), 15_000)
    dead.p.kill('SIGKILL')
    await dead.code
    expect(existsSync(note), 'the killed process 0 left its note').toBe(true)
    // (process 1 first: it finds the dead job's note, fresh, and must not take it)
    const p1 = member(1, 2, env, [PUTGET])
    await new Promise((resolve) => setTimeout(resolve, 300))
    const p0 = member(0, 2, env, [PUTGET])
    expect([await p0.code, await p1.code], p0.err + p1.err).toEqual([0, 0])
    expect((p0.out + p1.out).match(/putget ok/g)).toHaveLength(2)
  }, 45_000)

  it('a note that does not read as one is refused at once, named', async () => {
    await junkNote(tempDir())
  }, 30_000)

  it('a one-process job does not hand a key found in the environment to its tasks', async () => {
    const r = await runNode([LAPIRUN, '-n', '2', ENV_KEY], { env: { AMLAPI_JOB_KEY: key() } })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout.match(/key unset/g)).toHaveLength(4)
  }, 30_000)
})
