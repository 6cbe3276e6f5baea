/**
 * @amlapi/am2 with real worker threads: the AM-2 rules, returned messages and tags, waiting, and the
 * layering (am2 uses only lapi's and bufmgr's public exports). No allocation per message is
 * test/am2/noalloc.perf.test.ts's (`npm run test:perf`).
 */
import { readFileSync, readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { expectOk, runFixture } from '../helpers/job.js'
import { matrix } from '../helpers/tier.js'

// The message tests also run over LAPI's test transport, which holds back, shuffles and duplicates
// packets (seeded): nothing in am2 may depend on packet order. (`npm test` runs them over the rings,
// and test/am2/amx.test.ts a program through the test transport; `npm run test:full` over both.)
const transports: Array<[string, { seed: number; dup: number; hold: number } | null]> = [
  ['in-order rings', null],
  ['reordering + duplicating transport', { seed: 7, dup: 0.15, hold: 0.5 }],
]
for (const [name, chaos] of matrix(transports, [transports[0]!])) {
  describe(`am2 messages over ${name}`, () => {
    const config = { chaos }
    it('enforces the AM-2 rules: one reply, no sends from reply handlers or handler 0, automatic replies, depth, replies not flow-controlled, bad arguments', async () => {
      expectOk(await runFixture('am2/rules.mjs', 2, { config, args: [chaos ? 'chaos' : 'plain'] }), 2, 'am2 rules ok')
    })

    it('returns refused messages to handler 0 with status, opcode and a queryable token; tags; a peer that left the job', async () => {
      expectOk(await runFixture('am2/returned.mjs', 3, { config }), 3, 'am2 returned ok')
    })

    it('one-packet messages read in place (header alone; compact Short, Medium and Long): malformed ones dropped or returned, hand-made requests run their handlers', async () => {
      expectOk(await runFixture('am2/inplace.mjs', 2, { config, args: [chaos ? 'chaos' : 'plain'] }), 2, 'am2 inplace ok')
    })

    it('Long messages, ReplyXfer, GetXfer (packed, eager, rendezvous; Uint8Array and Addr segments), loopback of every category', async () => {
      expectOk(await runFixture('am2/xfer.mjs', 2, { config: { ...config, segmentSize: 16 * 1024 * 1024 } }), 2, 'am2 xfer ok')
    })

    it('Mediums beyond the bufmgr arena go to heap buffers, intact, and a second burst reuses them', async () => {
      expectOk(await runFixture('am2/bigmedium.mjs', 2, { config: { ...config, segmentSize: 32 * 1024 * 1024 } }), 2, 'am2 bigmedium ok')
    })
  })
}

describe('am2 over lapi', () => {
  it('the default handler 0 ends the job with a non-zero exit naming the error', async () => {
    const r = await runFixture('am2/fatal.mjs', 2, { timeoutMs: 20_000 })
    expect(r.exitCode).not.toBe(0)
    expect(r.stderr).toMatch(/task 1 failed/)
    expect(r.stderr).toMatch(/EBADHANDLER \(4\) for AM_REQUEST_M .*handler 42.*args \[1, 2, 3\]/)
  })

  it('a handler that throws: the error comes out of AM_Poll, logged, and the requester gets its credit back', async () => {
    const r = await runFixture('am2/throws.mjs', 2, { env: { ...process.env, AMLAPI_LOG_LEVEL: 'error' } })
    expectOk(r, 2, 'am2 throws ok')
    expect(r.stderr).toMatch(/"c":"am2".*"msg":"an AM-2 handler threw"/)
  })

  it('AM_WaitSema sleeps until a message arrives; waitAsync keeps the event loop running', async () => {
    const r = await runFixture('am2/wait.mjs', 2)
    expectOk(r, 2, 'am2 wait ok')
    const m = /waitsema waited (\d+) ms cpu (\d+) ms/.exec(r.stdout)
    expect(m).not.toBeNull()
    // it slept: far less CPU than wall time (the whole process's CPU, both tasks, is counted)
    expect(Number(m![2])).toBeLessThan(Number(m![1]) / 2)
  })

  it('the idiomatic face: Am2.spmd, Endpoint and Token methods, waitAsync, AmError codes', async () => {
    expectOk(await runFixture('am2/idiomatic.mjs', 2), 2, 'am2 idiomatic ok')
  })

  it('regression: a request keeps its arguments when the handlers its poll runs reply with others', async () => {
    const r = await runFixture('amx/scratch-args.mjs', 1, { timeoutMs: 20_000 })
    expect(r.stdout).toContain('OK: handler 3 got 42')
    expect(r.exitCode).toBe(0)
  })

  it('regression: a task that exits right after a barrier does not take held-back packets with it', async () => {
    for (const seed of [5, 6]) {
      const r = await runFixture('amx/exit-after-barrier.mjs', 2, { args: ['20'], config: { chaos: { seed, dup: 0, hold: 0.5 } }, timeoutMs: 20_000 })
      expect(r.exitCode).toBe(0)
    }
  })

  it('regression: the automatic reply to a request from an endpoint freed meanwhile is dropped, not returned', async () => {
    const r = await runFixture('amx/auto-reply-to-freed.mjs', 2, { timeoutMs: 20_000 })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout.match(/auto-reply-to-freed ok/g)?.length).toBe(2)
  })

  it('imports nothing but the public exports of lapi and bufmgr', () => {
    const dir = fileURLToPath(new URL('../../packages/am2/src/', import.meta.url))
    const allowed = new Set(['@amlapi/lapi', '@amlapi/lapi/compat', '@amlapi/bufmgr', 'pino'])
    /** The module specifiers of `src` (comments left out) that are neither siblings, node: nor allowed. */
    const foreign = (src: string): string[] => {
      const code = src.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '')
      const out: string[] = []
      for (const m of code.matchAll(/(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
        const spec = m[1] ?? m[2]!
        if ((spec.startsWith('./') && !spec.slice(2).includes('/')) || spec.startsWith('node:') || allowed.has(spec)) continue
        out.push(spec)
      }
      return out
    }
    const bad: string[] = []
    for (const f of readdirSync(dir).filter((n) => n.endsWith('.ts'))) {
      for (const spec of foreign(readFileSync(dir + f, 'utf8'))) bad.push(`${f}: ${spec}`)
    }
    expect(bad).toEqual([])
    // the same scan does catch deep and relative imports into other packages
    expect(
      foreign(
        "import { Context } from '@amlapi/lapi/dist/context.js'\nimport { x } from '../../lapi/src/am.js'\nconst y = await import('@amlapi/bufmgr/dist/index.js')",
      ),
    ).toEqual(['@amlapi/lapi/dist/context.js', '../../lapi/src/am.js', '@amlapi/bufmgr/dist/index.js'])
  })
})
