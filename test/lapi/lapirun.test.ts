/** The lapirun launcher as a user runs it: arguments, labels, exit codes, failures, Ctrl-C. */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { resolveConfig } from '@amlapi/lapi'
import { JIT_INLINING, jitFlags } from '#lapi-internal'
import { FIXTURES } from '../helpers/job.js'
import { LAPIRUN, runCommand, runNode as run } from '../helpers/run.js'

const lines = (s: string): Record<string, unknown>[] =>
  s
    .trim()
    .split('\n')
    .filter((l) => l.includes('{'))
    .map((l) => JSON.parse(l.slice(l.indexOf('{'))) as Record<string, unknown>)

describe('lapirun', () => {
  it('starts N tasks, passes the arguments, labels the output, exits 0', async () => {
    const r = await run([LAPIRUN, '-n', '3', '--label', '--segment-size', '1M', FIXTURES + 'lapi/info.mjs', 'a', '--b', 'c d'])
    expect(r.code).toBe(0)
    const got = lines(r.stdout)
    expect(got.map((g) => g['task']).sort()).toEqual([0, 1, 2])
    for (const g of got) expect(g).toMatchObject({ n: 3, argv: ['a', '--b', 'c d'], segmentSize: 1 << 20 })
    for (const l of r.stdout.trim().split('\n')) expect(l).toMatch(/^\[[0-2]\] \{/)
  })

  it('takes the segment size from AMLAPI_SEGMENT_SIZE', async () => {
    const r = await run([LAPIRUN, '-n', '2', FIXTURES + 'lapi/info.mjs'], { env: { AMLAPI_SEGMENT_SIZE: '2M' } })
    expect(r.code).toBe(0)
    for (const g of lines(r.stdout)) expect(g['segmentSize']).toBe(2 << 20)
  })

  it.skipIf(process.platform !== 'linux')('where shared WebAssembly memory is refused, a job runs on plain buffers and warns', async () => {
    // an address-space limit (ulimit -v) makes V8 refuse the 10 GiB reservation of a shared
    // WebAssembly.Memory on Node 20 and 22: inboxes and the control block fall back to plain
    // SharedArrayBuffers, with the warning. Node 24 and 26 (V8 13.6, 14.6) give such a memory within
    // the same limit, so there the job runs page-aligned and says nothing: a probe under the limit
    // says which this Node does
    const ulimit = 'ulimit -v 6000000'
    const probe = await runCommand('sh', [
      '-c',
      `${ulimit} && exec "${process.execPath}" -e "new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true })"`,
    ])
    const refused = probe.code !== 0
    const limited = await runCommand('sh', ['-c', `${ulimit} && exec "${process.execPath}" "${LAPIRUN}" -n 2 "${FIXTURES}lapi/info.mjs"`], {
      env: { AMLAPI_LOG_LEVEL: 'warn' },
    })
    expect(limited.code, limited.stderr).toBe(0)
    expect(
      lines(limited.stdout)
        .map((g) => g['task'])
        .sort(),
    ).toEqual([0, 1])
    if (refused) expect(limited.stderr, `Node ${process.version} refuses a shared WebAssembly.Memory under ${ulimit}`).toContain('not page-aligned')
    else expect(limited.stderr, `Node ${process.version} gives a shared WebAssembly.Memory under ${ulimit}`).not.toContain('not page-aligned')
    // without the limit: page-aligned, no warning
    const plain = await run([LAPIRUN, '-n', '2', FIXTURES + 'lapi/info.mjs'], { env: { AMLAPI_LOG_LEVEL: 'warn' } })
    expect(plain.code).toBe(0)
    expect(plain.stderr).not.toContain('not page-aligned')
  })

  it('a program run with plain node is a job of one task', async () => {
    const r = await run([FIXTURES + 'lapi/info.mjs', 'x'])
    expect(r.code).toBe(0)
    expect(lines(r.stdout)).toEqual([expect.objectContaining({ task: 0, n: 1, argv: ['x'] })])
  })

  it('a failing task ends the job with its name and a non-zero exit', async () => {
    const r = await run([LAPIRUN, '-n', '4', FIXTURES + 'lapi/fail.mjs', 'throw'])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toMatch(/lapirun: task 1 failed: uncaught error: Error: task one blew up/)
    const e = await run([LAPIRUN, '-n', '2', FIXTURES + 'lapi/fail.mjs', 'exit'])
    expect(e.code).toBe(3)
    expect(e.stderr).toContain('task 1 failed: exited with code 3')
  })

  for (const procs of ['1', '2']) {
    it(`a reader that goes away (lapirun … | head -1) leaves the job running to its end, exit 0 (${procs} process${procs === '1' ? '' : 'es'})`, async () => {
      const p = spawn(process.execPath, [LAPIRUN, '-n', '2', '--procs', procs, FIXTURES + 'lapi/chatty.mjs'], { stdio: ['ignore', 'pipe', 'pipe'] })
      let err = ''
      p.stderr.on('data', (d: Buffer) => {
        err += d.toString()
      })
      // (the first line read, the pipe is closed, as head does)
      p.stdout.once('data', () => p.stdout.destroy())
      const kill = setTimeout(() => p.kill('SIGKILL'), 40_000)
      const code = await new Promise<number | null>((resolve) => p.on('close', (c) => resolve(c)))
      clearTimeout(kill)
      expect(code, err).toBe(0)
      expect(err).not.toMatch(/EPIPE|Unhandled/)
      expect(err.match(/chatty done/g)).toHaveLength(2)
    }, 45_000)
  }

  it('Ctrl-C stops a job whose tasks wait forever', async () => {
    // the signal comes once every task has joined (their debug lines say so) and is on its way to its wait
    const joined = (err: string): boolean => err.split('context initialised').length > 3
    const r = await run([LAPIRUN, '-n', '3', FIXTURES + 'lapi/fail.mjs', 'hang'], {
      env: { AMLAPI_LOG_LEVEL: 'debug' },
      interruptWhen: joined,
      deadlineMs: 15_000,
    })
    expect(r.code).toBe(130)
    expect(r.stderr).toContain('lapirun: the job was interrupted')
    // the tasks ended by themselves (their waits were aborted), none had to be terminated
    expect(r.stderr).not.toContain('grace period over')
  })

  it('--transport shm with --procs > 1, --procs beyond -n, an unknown transport and bad --faults are usage errors', async () => {
    const faults = [
      ['drop=2', /drop is a probability from 0 to 1/],
      ['loss=0.1', /unknown key 'loss'/],
      ['seed=x', /needs a number/],
    ] as const
    // (each exits while reading its options: run side by side)
    const [r, p, u, ...f] = await Promise.all([
      run([LAPIRUN, '-n', '4', '--procs', '2', '--transport', 'shm', FIXTURES + 'lapi/info.mjs']),
      run([LAPIRUN, '-n', '2', '--procs', '3', FIXTURES + 'lapi/info.mjs']),
      run([LAPIRUN, '-n', '2', '--procs', '2', '--transport', 'sctp', FIXTURES + 'lapi/info.mjs']),
      ...faults.map(([spec]) => run([LAPIRUN, '-n', '2', '--procs', '2', '--transport', 'udp', '--faults', spec, FIXTURES + 'lapi/info.mjs'])),
    ])
    expect(r!.code).toBe(2)
    expect(r!.stderr).toMatch(/--transport shm joins the tasks of one process only/)
    expect(p!.code).toBe(2)
    expect(p!.stderr).toMatch(/--procs .* must be a whole number from 1 to 2/)
    expect(u!.code).toBe(2)
    expect(u!.stderr).toMatch(/--transport must be shm, tcp or udp, not 'sctp'/)
    for (const [i, [, why]] of faults.entries()) {
      expect(f[i]!.code).toBe(2)
      expect(f[i]!.stderr).toMatch(why)
    }
  })

  it('options that do nothing in the placement are named in a warning, and the job runs', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['-n', '2', '--mac'], /^lapirun: warning: --mac does nothing in a job of one process/m],
      [['-n', '2', '--faults', 'drop=0.1'], /^lapirun: warning: --faults does nothing in a job of one process/m],
      [['-n', '2', '--transport', 'udp'], /^lapirun: warning: --transport udp does nothing in a job of one process/m],
      [
        ['-n', '2', '--procs', '2', '--transport', 'tcp', '--faults', 'drop=0.1,reorder=0.2,corrupt=0.001'],
        /^lapirun: warning: --faults drop, reorder do nothing over tcp/m,
      ],
      [['-n', '2', '--procs', '2', '--transport', 'tcp', '--mac'], /^lapirun: warning: --mac does nothing over tcp/m],
    ]
    // (independent jobs: run side by side)
    const runs = await Promise.all(cases.map(([args]) => run([LAPIRUN, ...args, FIXTURES + 'lapi/info.mjs'])))
    for (const [i, [, want]] of cases.entries()) {
      expect(runs[i]!.code, runs[i]!.stderr).toBe(0)
      expect(runs[i]!.stderr).toMatch(want)
    }
    // (where they act: no warning)
    const u = await run([LAPIRUN, '-n', '2', '--procs', '2', '--transport', 'udp', '--mac', '--faults', 'drop=0.01', FIXTURES + 'lapi/info.mjs'])
    expect(u.code, u.stderr).toBe(0)
    expect(u.stderr).not.toMatch(/warning/)
  })

  it('a job that does not fit in memory fails at start, saying what it needs', async () => {
    const r = await run([LAPIRUN, '-n', '4096', '--segment-size', '1G', FIXTURES + 'lapi/info.mjs'])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(
      /lapirun: a job of 4096 tasks needs [\d.]+ GiB of memory here \(4096 tasks in 1 process; per task: a 1024 MiB segment, .*\), and this host allows [\d.]+ GiB/,
    )
    expect(r.stdout).toBe('')
    const p = await run([LAPIRUN, '-n', '64', '--procs', '4', '--segment-size', '1G', FIXTURES + 'lapi/info.mjs'])
    expect(p.code).toBe(2)
    expect(p.stderr).toMatch(/64 tasks in 4 processes/)
  })

  it('rejects bad arguments with a usage message', async () => {
    // (each exits while reading its options: run side by side)
    const bad = [
      ['-n', '0', 'x.mjs'],
      ['-n', '2'],
      ['--bogus', 'x.mjs'],
      ['--segment-size', 'lots', 'x.mjs'],
      ['--jit', 'fast', 'x.mjs'],
    ]
    for (const r of await Promise.all(bad.map((args) => run([LAPIRUN, ...args])))) {
      expect(r.code).toBe(2)
      expect(r.stderr).toMatch(/lapirun:/)
    }
  })

  it('the test transport setting (AMLAPI_CHAOS): its parts, the first message id and packet count, bad values refused', () => {
    expect(resolveConfig({}, {}).chaos).toBeNull()
    expect(resolveConfig({}, { AMLAPI_CHAOS: 'seed=7,dup=0.1,hold=0.5' }).chaos).toEqual({ seed: 7, dup: 0.1, hold: 0.5 })
    expect(resolveConfig({}, { AMLAPI_CHAOS: 'dup=0,hold=0,firstId=4294967200,firstPacket=-20' }).chaos).toEqual({
      seed: 1,
      dup: 0,
      hold: 0,
      firstId: 4294967200,
      firstPacket: -20,
    })
    for (const bad of ['firstId=-1', 'firstId=4294967296', 'firstId=1.5', 'firstPacket=4294967296', 'firstPacket=-2147483649', 'dup=1', 'bogus=1']) {
      expect(() => resolveConfig({}, { AMLAPI_CHAOS: bad }), bad).toThrow(RangeError)
    }
    expect(() => resolveConfig({ chaos: { seed: 1, dup: 0, hold: 0, firstId: 2 ** 32 } }, {})).toThrow(RangeError)
    expect(() => resolveConfig({ chaos: { seed: 1, dup: 0, hold: 0, firstPacket: 0.5 } }, {})).toThrow(RangeError)
  })

  it("the JIT setting: node's budgets by default, AMLAPI_JIT and --jit, flags given to node left alone", async () => {
    expect(resolveConfig({}, {}).jit).toBe('default')
    expect(resolveConfig({}, { AMLAPI_JIT: 'tuned' }).jit).toBe('tuned')
    expect(resolveConfig({ jit: 'default' }, { AMLAPI_JIT: 'tuned' }).jit).toBe('default')
    expect(() => resolveConfig({}, { AMLAPI_JIT: 'fast' })).toThrow(RangeError)
    const all = Object.entries(JIT_INLINING).map(([k, v]) => `--${k}=${v}`)
    expect(jitFlags([])).toEqual(all)
    // a budget the user gave node (either spelling) is not overridden; the others still are
    expect(jitFlags(['--max_inlined_bytecode_size=2000', '--max-inlined-bytecode-size-absolute', '9000', '--inspect'])).toEqual([
      `--max-inlined-bytecode-size-cumulative=${JIT_INLINING['max-inlined-bytecode-size-cumulative']!}`,
    ])
    // what the job did, from its debug log: the flags it set (none with node's budgets)
    const raised = async (cmd: string[]): Promise<unknown> => {
      const r = await run([...cmd, FIXTURES + 'lapi/info.mjs'], { env: { AMLAPI_LOG_LEVEL: 'debug' } })
      expect(r.code, r.stderr).toBe(0)
      return lines(r.stdout + '\n' + r.stderr).find((l) => l['msg'] === 'V8 inlining budgets raised')?.['flags']
    }
    // (independent jobs: run side by side)
    const [byDefault, none, tuned, oneGiven] = await Promise.all([
      raised([LAPIRUN, '-n', '2', '--jit', 'default']),
      raised([LAPIRUN, '-n', '2']),
      raised([LAPIRUN, '-n', '2', '--jit', 'tuned']),
      raised(['--max-inlined-bytecode-size=600', LAPIRUN, '-n', '2', '--jit', 'tuned']),
    ])
    expect(byDefault).toBeUndefined()
    expect(none).toBeUndefined()
    expect(tuned).toEqual(all)
    expect(oneGiven).toEqual(all.slice(1))
  })

  it('runs the examples in both faces', async () => {
    for (const ex of ['c-style.mjs', 'idiomatic.mjs']) {
      const r = await run([LAPIRUN, '-n', '4', fileURLToPath(new URL('../../examples/put-get/' + ex, import.meta.url))])
      expect(r.code, r.stderr).toBe(0)
      for (let t = 0; t < 4; t++) expect(r.stdout).toContain(`task ${t} got: greetings from task ${(t + 3) % 4}`)
    }
  })
})
