/**
 * The file rendezvous against what a user of the same host could plant in a shared directory
 * (docs/security.md; launch/meeting.ts): the note lives in DIR/amlapi-<uid>/amlapi-<job>.rv, a 0700
 * directory of the user's; a reader takes only a regular file of its own uid, mode 0600, opened
 * without following a link; the writer goes through an exclusive, no-follow temporary file and
 * removes the note once every process has joined and on every way out. Each attack runs against
 * real `lapirun --join` processes, with AMLAPI_RENDEZVOUS=file:DIR or mpirun's one-host default
 * (TMPDIR); the same user plays the attacker (no root needed).
 */
import { randomBytes } from 'node:crypto'
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  watch,
  writeFileSync,
  type FSWatcher,
} from 'node:fs'
import { createServer, type AddressInfo, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { FIXTURES } from '../helpers/job.js'
import { LAPIRUN } from '../helpers/run.js'
import { WORK } from './helpers/jobs.js'
import { reapAll, startNode, survivors, until, within, type Proc } from './helpers/procs.js'

const uid = process.getuid!()
const PUTGET = FIXTURES + 'lapi/putget.mjs'
const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})
afterEach(async () => {
  expect(await reapAll(), 'processes left running after the test').toEqual([])
})

/** A fresh shared directory (DIR), and where the user's note directory and note go in it. */
function place(job: string): { dir: string; own: string; note: string } {
  const dir = mkdtempSync(join(tmpdir(), 'amlapi-sec-file-'))
  dirs.push(dir)
  const own = join(dir, `amlapi-${uid}`)
  return { dir, own, note: join(own, `amlapi-${job}.rv`) }
}

/** The environment of process `rank` of 2 meeting through file:DIR, job `job`. */
function fileEnv(dir: string, job: string, rank: number): Record<string, string | undefined> {
  return { AMLAPI_RANK: String(rank), AMLAPI_SIZE: '2', AMLAPI_RENDEZVOUS: `file:${dir}`, AMLAPI_JOB_ID: job, AMLAPI_LOG_LEVEL: 'debug' }
}

/** The environment Open MPI's mpirun gives process `rank` of 2 on one host, with TMPDIR = `dir` (its one-host default). */
function mpirunEnv(dir: string, job: string, rank: number): Record<string, string | undefined> {
  return {
    OMPI_COMM_WORLD_RANK: String(rank),
    OMPI_COMM_WORLD_SIZE: '2',
    OMPI_COMM_WORLD_LOCAL_RANK: String(rank),
    OMPI_COMM_WORLD_LOCAL_SIZE: '2',
    OMPI_MCA_ess_base_jobid: job,
    TMPDIR: dir,
    XDG_RUNTIME_DIR: undefined,
    AMLAPI_RANK: undefined,
    AMLAPI_SIZE: undefined,
    AMLAPI_RENDEZVOUS: undefined,
    AMLAPI_JOB_ID: undefined,
    AMLAPI_JOB_KEY: undefined,
    AMLAPI_LOG_LEVEL: 'debug',
  }
}

function join2(env: Record<string, string | undefined>, program = PUTGET, args: string[] = []): Proc {
  return startNode([LAPIRUN, '--join', '--transport', 'tcp', program, ...args], env, 40_000)
}

/** A rendezvous an attacker would have a planted note point to: it only counts who comes. */
async function decoyRendezvous(): Promise<{ port: number; visits: () => number; close: () => void }> {
  let visits = 0
  const server: Server = createServer((s) => {
    visits++
    s.destroy()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { port: (server.address() as AddressInfo).port, visits: () => visits, close: () => server.close() }
}

/** A note as process 0 writes it, naming the decoy (fresh, so that its age does not get it passed over). */
function forgedNote(port: number): string {
  return JSON.stringify({ rendezvous: `127.0.0.1:${port}`, key: randomBytes(32).toString('hex') })
}

/**
 * Every name that appears in the note directory, seen through inotify (a temporary file lives
 * for microseconds), and whether a `.tmp` is there at the end.
 */
function watchNames(own: string): { names: Set<string>; close: () => void } {
  const names = new Set<string>()
  const w: FSWatcher = watch(own, (_e, name) => {
    if (name !== null) names.add(String(name))
  })
  return { names, close: () => w.close() }
}

const leftovers = (own: string): string[] => readdirSync(own)
const temporaries = (own: string): string[] => readdirSync(own).filter((n) => n.endsWith('.tmp'))

/** The exit of `p`, at most `ms` from now (code null and signal null past it). */
const exitOf = (p: Proc, ms = 15_000): Promise<Awaited<Proc['exit']>> => within(p.exit, ms, { at: NaN, code: null, signal: null })

describe("a reader takes only its own user's private note", () => {
  it('a symbolic link planted as the note: process 1 refuses it and names it, and never meets the rendezvous it leads to', async () => {
    const decoy = await decoyRendezvous()
    try {
      for (const how of ['file:DIR', "mpirun's one-host default"] as const) {
        const job = `link-${how === 'file:DIR' ? 'file' : 'ompi'}`
        const { dir, own, note } = place(job)
        mkdirSync(own, { mode: 0o700 })
        const target = join(dir, 'forged.json')
        writeFileSync(target, forgedNote(decoy.port), { mode: 0o600 })
        symlinkSync(target, note)
        const p = join2(how === 'file:DIR' ? fileEnv(dir, job, 1) : mpirunEnv(dir, job, 1))
        const e = await exitOf(p)
        expect(e.code, `${how}: ${p.err}`).toBe(1)
        expect(p.err, how).toContain(`lapirun: ${note} is a symbolic link: the file rendezvous refuses it`)
        expect(lstatSync(note).isSymbolicLink(), how).toBe(true)
      }
      expect(decoy.visits(), 'connections to the rendezvous the forged note named').toBe(0)
    } finally {
      decoy.close()
    }
  }, 40_000)

  it('a note of mode 0644 (one another user could have read the key from) is refused, naming its mode', async () => {
    const decoy = await decoyRendezvous()
    try {
      const { dir, own, note } = place('loose')
      mkdirSync(own, { mode: 0o700 })
      writeFileSync(note, forgedNote(decoy.port))
      chmodSync(note, 0o644)
      const p = join2(fileEnv(dir, 'loose', 1))
      const e = await exitOf(p)
      expect(e.code, p.err).toBe(1)
      expect(p.err).toContain(`lapirun: ${note} has mode 644, not 600: the file rendezvous refuses it`)
      expect(decoy.visits()).toBe(0)
    } finally {
      decoy.close()
    }
  }, 30_000)

  it('the note directory replaced by a symbolic link or a file: process 0 and process 1 refuse it, naming it; nothing is written there', async () => {
    const decoy = await decoyRendezvous()
    try {
      for (const swap of ['link', 'file'] as const) {
        const job = `swap-${swap}`
        const { dir, own } = place(job)
        // (a directory anyone may write, holding a note that names the decoy, where the link leads)
        const elsewhere = join(dir, 'elsewhere')
        mkdirSync(elsewhere)
        chmodSync(elsewhere, 0o777)
        writeFileSync(join(elsewhere, `amlapi-${job}.rv`), forgedNote(decoy.port), { mode: 0o600 })
        if (swap === 'link') symlinkSync(elsewhere, own)
        else writeFileSync(own, 'not a directory')
        const before = new Set(readdirSync(elsewhere))
        for (const rank of [1, 0]) {
          const p = join2(fileEnv(dir, job, rank))
          const e = await exitOf(p)
          expect(e.code, `${swap}, process ${rank}: ${p.err}`).toBe(1)
          expect(p.err, `${swap}, process ${rank}`).toContain(
            `lapirun: ${own} is not a directory of its own (a symbolic link or a file): the file rendezvous refuses it`,
          )
        }
        expect(
          readdirSync(elsewhere).filter((n) => !before.has(n)),
          `${swap}: new files where the link leads`,
        ).toEqual([])
        if (swap === 'file') expect(readFileSync(own, 'utf8')).toBe('not a directory')
      }
      expect(decoy.visits()).toBe(0)
    } finally {
      decoy.close()
    }
  }, 40_000)

  it('process 0 that refused a note directory which is a link removes nothing where the link leads', async () => {
    // (the link leads to another directory of the user's, holding a note of the same name)
    const { dir, own } = place('unlink')
    const elsewhere = join(dir, 'elsewhere')
    mkdirSync(elsewhere, { mode: 0o700 })
    const theirs = join(elsewhere, 'amlapi-unlink.rv')
    writeFileSync(theirs, "a file of the user's\n", { mode: 0o600 })
    symlinkSync(elsewhere, own)
    const p = join2(fileEnv(dir, 'unlink', 0))
    const e = await exitOf(p)
    expect(e.code, p.err).toBe(1)
    expect(p.err).toContain(`lapirun: ${own} is not a directory of its own`)
    expect(existsSync(theirs), `${theirs} after process 0 refused ${own}`).toBe(true)
  }, 30_000)
})

describe('the writer', () => {
  it('a link planted as the note: process 0 replaces the link and never writes where it leads; the job then runs', async () => {
    const { dir, own, note } = place('plant')
    mkdirSync(own, { mode: 0o700 })
    const victim = join(dir, 'victim.txt')
    writeFileSync(victim, "the user's own file\n", { mode: 0o600 })
    symlinkSync(victim, note)
    const names = watchNames(own)
    try {
      const p0 = join2(fileEnv(dir, 'plant', 0))
      expect(
        await until(() => {
          try {
            return lstatSync(note).isFile()
          } catch {
            return false
          }
        }, 15_000),
        p0.err,
      ).toBe(true)
      expect(lstatSync(note).mode & 0o777).toBe(0o600)
      expect(readFileSync(victim, 'utf8')).toBe("the user's own file\n")
      const p1 = join2(fileEnv(dir, 'plant', 1))
      const [e0, e1] = await Promise.all([exitOf(p0, 30_000), exitOf(p1, 30_000)])
      expect([e0.code, e1.code], p0.err + p1.err).toEqual([0, 0])
      expect(p0.out).toMatch(/^task 0 putget ok$/m)
      expect(p1.out).toMatch(/^task 1 putget ok$/m)
      expect(readFileSync(victim, 'utf8')).toBe("the user's own file\n")
      expect(leftovers(own)).toEqual([])
      // (the note went through a temporary file of an unpredictable name, which is gone too)
      expect([...names.names].filter((n) => /^\.[0-9a-f]{24}\.tmp$/.test(n)).length, [...names.names].join(' ')).toBeGreaterThan(0)
    } finally {
      names.close()
    }
  }, 40_000)

  it("under mpirun's one-host default: a note directory left 0755 is made 0700 again; the note is gone once all have joined, none is left", async () => {
    const job = '4242'
    const { dir, own, note } = place(job)
    mkdirSync(own)
    chmodSync(own, 0o755)
    const names = watchNames(own)
    let seen = false
    const looks: string[][] = []
    try {
      // (process 1 first: it waits for the note; work.mjs pauses 1.5 s once all are in)
      const ps = [1, 0].map((r) => join2(mpirunEnv(dir, job, r), WORK, ['50', '1500']))
      const ready = (): number => ps.reduce((n, p) => n + p.lines.filter((l) => /^task \d ready$/.test(l.text)).length, 0)
      await until(
        () => {
          seen ||= existsSync(note)
          return ready() > 0 || ps.some((p) => p.p.exitCode !== null)
        },
        20_000,
        2,
      )
      expect(ready(), ps.map((p) => p.err).join('\n')).toBeGreaterThan(0)
      // (the job message goes out after the note is removed: no process runs while it is there)
      expect(existsSync(note), 'the note once a task runs').toBe(false)
      expect(lstatSync(own).mode & 0o777).toBe(0o700)
      // (while the job runs: nothing in the directory, looked at every 50 ms for 1 s)
      for (let i = 0; i < 20; i++) {
        looks.push(leftovers(own))
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(
        looks.filter((l) => l.length > 0),
        'what the note directory held during the job',
      ).toEqual([])
      const exits = await Promise.all(ps.map((p) => exitOf(p, 30_000)))
      expect(
        exits.map((e) => e.code),
        ps.map((p) => p.err).join('\n'),
      ).toEqual([0, 0])
      expect(
        ps
          .map((p) => p.out)
          .join('')
          .match(/^task \d work ok /gm),
      ).toHaveLength(2)
      expect(leftovers(own)).toEqual([])
      expect(lstatSync(own).mode & 0o777).toBe(0o700)
      // (the note was there, named as the job's, before it was removed)
      expect(seen || names.names.has(`amlapi-${job}.rv`), [...names.names].join(' ')).toBe(true)
    } finally {
      names.close()
    }
  }, 40_000)

  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    it(`process 0 waiting for the others and ended by ${sig}: its note is gone, and no temporary file is left`, async () => {
      const job = `sig-${sig}`
      const { dir, own, note } = place(job)
      const p0 = join2(fileEnv(dir, job, 0))
      // (the note is written, and process 0 itself has joined its rendezvous: it waits for process 1)
      const waiting = await until(() => existsSync(note) && p0.err.includes('welcomed by the rendezvous'), 15_000)
      expect(waiting, p0.err).toBe(true)
      expect(lstatSync(note).mode & 0o777).toBe(0o600)
      p0.p.kill(sig)
      const e = await exitOf(p0, 10_000)
      if (sig === 'SIGHUP') expect(e.signal, p0.err).toBe('SIGHUP')
      else {
        // (as lapirun's own Ctrl-C: the status of a process interrupted by the signal, 128 + its number)
        expect(e.code, p0.err).toBe(sig === 'SIGTERM' ? 143 : 130)
        expect(p0.err).toMatch(/^lapirun: the job was interrupted$/m)
      }
      expect(existsSync(note), `the note after ${sig}`).toBe(false)
      expect(temporaries(own)).toEqual([])
      expect(leftovers(own)).toEqual([])
      expect(survivors()).toEqual([])
    }, 30_000)
  }
})
