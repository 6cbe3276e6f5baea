/**
 * How soon `lapirun --join` processes end (`npm run test:perf`): a stalled connection to the
 * rendezvous is given up and made again, a job called off or interrupted ends its process at once,
 * a lost or killed process ends the other, and a user's mistakes at start are said at once rather
 * than after the 30 s a start may take. The cases are test/helpers/join-cases.ts's, which
 * test/lapi/join.test.ts and join-mistakes.test.ts run for what happens; here each bound holds in
 * one of three tries (test/helpers/perf.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  calledOff,
  differentTasksPerProc,
  interruptedBeforeRendezvous,
  interruptedWhileLeaving,
  junkNote,
  killedProcess,
  lostProcess,
  stalledRendezvous,
} from '../helpers/join-cases.js'
import { bestOf } from '../helpers/perf.js'

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe('lapirun --join: how soon', () => {
  it('a stalled connection to the rendezvous: the job has run within 20 s (the stalled attempt gives up after 2 s)', async () => {
    await bestOf(3, async () => {
      expect(await stalledRendezvous()).toBeLessThan(20_000)
    })
  }, 150_000)

  for (const transport of ['tcp', 'udp'] as const) {
    it(`a job called off before it starts ends its process within 10 s (${transport})`, async () => {
      await bestOf(3, async () => {
        expect(await calledOff(transport)).toBeLessThan(10_000)
      })
    }, 150_000)

    it(`Ctrl-C of a process whose leave waits for a stopped peer ends it within 3 s, not after its leave's several seconds (${transport})`, async () => {
      await bestOf(3, async () => {
        expect(await interruptedWhileLeaving(transport)).toBeLessThan(3000)
      })
    }, 150_000)

    it(`a lost process ends the other within 10 s, for LAPI's err_hndlr and AM-2's returned requests (${transport})`, async () => {
      await bestOf(3, async () => {
        for (const ms of await lostProcess(transport)) expect(ms).toBeLessThan(10_000)
      })
    }, 150_000)

    it(`a process killed with kill -9 ends the other within 10 s (${transport})`, async () => {
      await bestOf(3, async () => {
        expect(await killedProcess(transport)).toBeLessThan(10_000)
      })
    }, 150_000)
  }

  it('a process waiting for a rendezvous not up yet ends within 5 s of its first SIGINT', async () => {
    await bestOf(3, async () => {
      expect(await interruptedBeforeRendezvous()).toBeLessThan(5000)
    })
  }, 100_000)

  it('processes started with different --tasks-per-proc: process 0 hears of it through the rendezvous and ends within 10 s', async () => {
    await bestOf(3, async () => {
      expect(await differentTasksPerProc()).toBeLessThan(10_000)
    })
  }, 150_000)

  it('a note that does not read as one is refused within 10 s', async () => {
    await bestOf(3, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'amlapi-mistakes-'))
      dirs.push(dir)
      expect(await junkNote(dir)).toBeLessThan(10_000)
    })
  }, 100_000)
})
