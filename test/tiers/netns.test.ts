/**
 * The network-namespace tier (`npm run test:netns`; docs/transports.md, "Testing on a real lossy
 * network"): two processes of a job in two network namespaces joined by a veth pair, each bound
 * to its own address, started with `lapirun --join` as another launcher would, while nftables
 * loses, duplicates and (with an HTB class) reorders their UDP and TCP packets. The conformance
 * programs must still verify; a process cut off by a firewall rule must be declared lost, named.
 *
 * Runs only as root with `ip`, `nft` and `tc` on the PATH (scripts/install-netns-deps.sh installs
 * them from Debian's packages); it installs nothing itself, and says plainly when it skips. The
 * namespaces are made fresh, with addresses from the benchmarking range 198.18.0.0/15, and deleted
 * at the end.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FIXTURES } from '../helpers/job.js'
import { LAPIRUN } from '../helpers/run.js'

const NS = [`amlapi-a-${process.pid}`, `amlapi-b-${process.pid}`]
const DEV = [`amla${process.pid % 100000}`, `amlb${process.pid % 100000}`]
const ADDR = ['198.18.0.1', '198.18.0.2']
const EX = '../../examples/'

function sh(cmd: string, args: string[]): { ok: boolean; out: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 20_000 })
  return { ok: r.status === 0, out: (r.stdout ?? '') + (r.stderr ?? '') }
}

/** Why this tier cannot run here (null: it can). */
function cannot(): string | null {
  if (process.platform !== 'linux') return 'not Linux'
  if (process.getuid?.() !== 0) return 'not root (network namespaces need it)'
  for (const tool of ['ip', 'nft', 'tc'])
    if (!sh('sh', ['-c', `command -v ${tool}`]).ok) return `no '${tool}' on the PATH (bash scripts/install-netns-deps.sh installs it)`
  const probe = `amlapi-probe-${process.pid}`
  if (!sh('ip', ['netns', 'add', probe]).ok) return 'ip netns add fails here'
  sh('ip', ['netns', 'del', probe])
  return null
}
const why = cannot()
if (why !== null) process.stdout.write(`netns tier SKIPPED: ${why}\n`)

/** Runs `ip netns exec NS cmd…`, failing the test setup when it fails. */
function inNs(k: number, ...cmd: string[]): string {
  const r = sh('ip', ['netns', 'exec', NS[k]!, ...cmd])
  if (!r.ok) throw new Error(`in ${NS[k]}: ${cmd.join(' ')}: ${r.out}`)
  return r.out
}

/**
 * Faults on the veth pair (nftables, and an HTB class for the slow lane): each namespace duplicates
 * and reorders the UDP and TCP it sends over it, and loses some of what arrives from the other; or
 * it cuts the UDP it sends. The loss is at the receiver, as a network loses packets: a drop in the
 * sender's output hook fails the send, and where the duplicate of a segment went out first the
 * sender's TCP would count that segment unsent while its peer acknowledges it — an
 * acknowledgement of unsent data, which TCP discards, so the connection stalls for good.
 */
function faults(k: number, rules: 'lossy' | 'clean' | 'cut'): void {
  const other = ADDR[1 - k]!
  sh('ip', ['netns', 'exec', NS[k]!, 'nft', 'delete', 'table', 'inet', 'amlapi'])
  sh('ip', ['netns', 'exec', NS[k]!, 'nft', 'delete', 'table', 'ip', 'amlapidup'])
  if (rules === 'clean') return
  loadRules(
    k,
    rules === 'cut'
      ? 'table inet amlapi {\n chain out {\n  type filter hook output priority 0; policy accept;\n  meta l4proto udp counter drop\n }\n}\n'
      : [
          'table inet amlapi {',
          ' chain out {',
          '  type filter hook output priority 0; policy accept;',
          `  oifname "${DEV[k]}" meta l4proto { udp, tcp } numgen random mod 100 < 25 counter meta priority set 1:20`,
          ' }',
          ' chain in {',
          '  type filter hook input priority 0; policy accept;',
          `  iifname "${DEV[k]}" meta l4proto { udp, tcp } numgen random mod 100 < 5 counter drop`,
          ' }',
          '}',
          'table ip amlapidup {',
          ' chain out {',
          '  type filter hook output priority 0; policy accept;',
          `  oifname "${DEV[k]}" meta l4proto { udp, tcp } numgen random mod 100 < 1 counter dup to ${other}`,
          ' }',
          '}',
          '',
        ].join('\n'),
  )
}

/** Loads nftables rules (`nft -f` of a file written for it, removed after) into namespace k. */
function loadRules(k: number, text: string): void {
  const file = join(tmpdir(), `amlapi-nft-${process.pid}-${k}.nft`)
  writeFileSync(file, text)
  try {
    inNs(k, 'nft', '-f', file)
  } finally {
    rmSync(file, { force: true })
  }
}

interface Proc {
  p: ChildProcess
  out: string
  err: string
  code: Promise<number | null>
}

/** `lapirun --join` as rank `rank` of 2 in its namespace, bound to its address. */
function member(rank: number, env: Record<string, string>, args: string[]): Proc {
  const p = spawn('ip', ['netns', 'exec', NS[rank]!, process.execPath, LAPIRUN, '--join', '--timeout', '45', '--bind', ADDR[rank]!, ...args], {
    env: { ...process.env, AMLAPI_RANK: String(rank), AMLAPI_SIZE: '2', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const r: Proc = { p, out: '', err: '', code: new Promise((resolve) => p.on('close', (c) => resolve(c))) }
  p.stdout!.on('data', (d: Buffer) => {
    r.out += d.toString()
  })
  p.stderr!.on('data', (d: Buffer) => {
    r.err += d.toString()
  })
  // (--timeout 45: a job that hangs ends itself first, saying what each task waited for)
  setTimeout(() => p.kill('SIGKILL'), 60_000).unref()
  return r
}

let port = 47000 + (process.pid % 2000)
function jobEnv(): Record<string, string> {
  return { AMLAPI_RENDEZVOUS: `${ADDR[0]}:${port++}`, AMLAPI_JOB_KEY: randomBytes(32).toString('hex'), AMLAPI_LOG_LEVEL: 'debug' }
}

/** The lines of a process's log a failure message shows: all but the debug ones, except the start's. */
function told(l: string): boolean {
  return (
    !l.startsWith('{"level":20') ||
    /"c":"lapi:join"|welcomed by the rendezvous|sockets bound|tcp: listening|process joined the job|"msg":"the job failed"/.test(l)
  )
}

/** The transport statistics each process logged when it left. */
function leaveStats(err: string): Record<string, number> {
  const line = err.split('\n').find((l) => l.includes('"msg":"process leaves the job"'))
  const s = line === undefined ? {} : ((JSON.parse(line) as { stats: { datagrams?: Record<string, number> } }).stats.datagrams ?? {})
  return s
}

describe.skipIf(why !== null)('two processes in two network namespaces, over a lossy veth pair', () => {
  beforeAll(() => {
    for (const n of NS) expect(sh('ip', ['netns', 'add', n]).ok).toBe(true)
    expect(sh('ip', ['link', 'add', DEV[0]!, 'type', 'veth', 'peer', 'name', DEV[1]!]).ok).toBe(true)
    for (let k = 0; k < 2; k++) {
      expect(sh('ip', ['link', 'set', DEV[k]!, 'netns', NS[k]!]).ok).toBe(true)
      inNs(k, 'ip', 'addr', 'add', `${ADDR[k]}/24`, 'dev', DEV[k]!)
      inNs(k, 'ip', 'link', 'set', DEV[k]!, 'up')
      inNs(k, 'ip', 'link', 'set', 'lo', 'up')
      // the slow lane of the reordering: an HTB class that 25 % of the packets are put in
      inNs(k, 'tc', 'qdisc', 'add', 'dev', DEV[k]!, 'root', 'handle', '1:', 'htb', 'default', '10', 'r2q', '1000')
      inNs(k, 'tc', 'class', 'add', 'dev', DEV[k]!, 'parent', '1:', 'classid', '1:10', 'htb', 'rate', '1gbit')
      inNs(k, 'tc', 'class', 'add', 'dev', DEV[k]!, 'parent', '1:', 'classid', '1:20', 'htb', 'rate', '100mbit')
    }
  })
  afterAll(() => {
    for (const n of NS) sh('ip', ['netns', 'del', n])
  })

  const programs: Array<{ file: string; k: number; args?: string[]; ok: string | RegExp; count: number; segment?: string }> = [
    { file: 'lapi/putget.mjs', k: 2, ok: 'putget ok', count: 4 },
    { file: 'lapi/rmw.mjs', k: 2, ok: 'rmw ok', count: 4 },
    { file: 'lapi/bulk.mjs', k: 1, ok: 'bulk ok', count: 2, segment: '16M' },
    { file: 'am/stress.mjs', k: 2, args: ['1000'], ok: 'am stress ok', count: 4, segment: '8M' },
    { file: 'am2/xfer.mjs', k: 1, ok: 'am2 xfer ok', count: 2, segment: '16M' },
    { file: EX + 'amx/testam.mjs', k: 1, args: ['20', 'P'], ok: /^Worker \d done\.$/m, count: 2 },
    { file: EX + 'amx/testgetput.mjs', k: 2, args: ['50'], ok: /^Proc \d verified\.$/m, count: 4 },
  ]
  for (const transport of ['udp', 'tcp'] as const) {
    for (const prog of programs) {
      it(`${transport}: ${prog.file.replace(EX, 'examples/')} ${(prog.args ?? []).join(' ')} verifies with 5% loss, 1% duplicates, 25% reordering`, async () => {
        faults(0, 'lossy')
        faults(1, 'lossy')
        const env = jobEnv()
        const args = [
          '--tasks-per-proc',
          String(prog.k),
          '--transport',
          transport,
          ...(prog.segment !== undefined ? ['--segment-size', prog.segment] : []),
          FIXTURES + prog.file,
          ...(prog.args ?? []),
        ]
        const ps = [member(1, env, args), member(0, env, args)]
        // (a job still running after 40 s hangs, and will time out at 45 s: the kernel's view of its
        // connections then — bytes a socket holds unread, or not yet sent — goes with the failure)
        let sockets = ''
        const look = setTimeout(() => {
          for (let k = 0; k < 2; k++) sockets += `${NS[k]}:\n${sh('ip', ['netns', 'exec', NS[k]!, 'ss', '-tnmi']).out}\n`
        }, 40_000)
        const codes = await Promise.all(ps.map((p) => p.code))
        clearTimeout(look)
        const out = ps.map((p) => p.out).join('')
        // (on failure: each process's output, then its log but the debug lines, which keep the network's state)
        expect(codes, ps.map((p) => `${p.out}${p.err.split('\n').filter(told).join('\n')}`).join('\n') + sockets).toEqual([0, 0])
        const n =
          typeof prog.ok === 'string'
            ? out.split('\n').filter((l) => l.includes(prog.ok as string)).length
            : out.split('\n').filter((l) => (prog.ok as RegExp).test(l)).length
        expect(n).toBe(prog.count)
        // the processes really talked over the namespaces' addresses; the network lost and reordered packets
        const bound = ps.map((p) => p.err.split('\n').find((l) => l.includes(transport === 'udp' ? 'udp: sockets bound' : 'tcp: listening')) ?? '')
        expect(bound[0]).toContain(`"rank":1`)
        const rules = inNs(0, 'nft', 'list', 'table', 'inet', 'amlapi')
        expect(rules).toMatch(/packets [1-9]\d* bytes \d+ drop/)
        expect(rules).toMatch(/packets [1-9]\d* bytes \d+ meta priority set 1:20/)
        if (transport === 'udp') {
          const s = ps.map((p) => leaveStats(p.err))
          expect(s[0]!['datagramsReceived']! + s[1]!['datagramsReceived']!).toBeGreaterThan(0)
        }
      }, 90_000)
    }
  }

  it('a process that never hears the rendezvous close their connection still exits', async () => {
    faults(0, 'clean')
    faults(1, 'clean')
    const env = jobEnv()
    // (process 1 loses every FIN and reset from the rendezvous's port: its end of that connection stays open)
    const rv = env['AMLAPI_RENDEZVOUS']!.split(':')[1]!
    loadRules(
      1,
      [
        'table inet amlapirv {',
        ' chain in {',
        '  type filter hook input priority 0; policy accept;',
        `  ip saddr ${ADDR[0]} tcp sport ${rv} tcp flags & (fin | rst) != 0 counter drop`,
        ' }',
        '}',
        '',
      ].join('\n'),
    )
    try {
      const args = ['--transport', 'tcp', FIXTURES + 'lapi/putget.mjs']
      const ps = [member(0, env, args), member(1, env, args)]
      expect(await ps[0]!.code).toBe(0)
      const t0 = performance.now()
      expect(await ps[1]!.code).toBe(0)
      expect(performance.now() - t0).toBeLessThan(10_000)
      expect(inNs(1, 'nft', 'list', 'table', 'inet', 'amlapirv')).toMatch(/packets [1-9]\d* bytes \d+ drop/)
    } finally {
      sh('ip', ['netns', 'exec', NS[1]!, 'nft', 'delete', 'table', 'inet', 'amlapirv'])
    }
  }, 60_000)

  it('udp: a process cut off by a firewall rule is declared lost after the peer timeout, its task named', async () => {
    faults(0, 'clean')
    faults(1, 'clean')
    const env = { ...jobEnv(), AMLAPI_PEER_TIMEOUT_MS: '1500' }
    const args = ['--transport', 'udp', FIXTURES + 'lapi/lose.mjs']
    const ps = [member(0, env, args), member(1, env, args)]
    for (let i = 0; i < 400 && !/task 1 pid/.test(ps[1]!.out); i++) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(ps[1]!.out).toMatch(/task 1 pid/)
    faults(1, 'cut')
    const t0 = performance.now()
    expect(await ps[0]!.code).not.toBe(0)
    expect(performance.now() - t0).toBeLessThan(10_000)
    expect(ps[0]!.err).toMatch(/task 1 failed: process 1 \(task 1\) was lost: no datagram from it for 1\.5 s/)
    ps[1]!.p.kill('SIGKILL')
    await ps[1]!.code
    faults(1, 'clean')
  }, 60_000)
})
