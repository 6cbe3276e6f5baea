/**
 * `lapirun`: starts a LAPI job on this host.
 *
 *   lapirun -n N [--procs P] [--transport shm|udp|tcp] [--segment-size BYTES] [--spin-us US]
 *           [--spin-max-us US] [--jit tuned|default] [--label] [--timeout SECONDS] [--] program.mjs [args…]
 *
 * Exits 0 when every task finished normally; otherwise prints which task failed and why and exits
 * non-zero (the task's exit code when it had one). Ctrl-C stops every task and exits 130.
 */
import { parseArgs } from 'node:util'
import { parseSize } from '../config.js'
import { runJob } from '../job/run-job.js'
import type { JitMode } from '../job/jit.js'

const USAGE = `usage: lapirun -n N [options] [--] program.mjs [args...]

Runs program.mjs as N LAPI tasks (task ids 0..N-1), one worker thread each.

options:
  -n, --tasks N          number of tasks (default 1)
  --procs P              processes to spread the tasks over (default 1)
  --transport NAME       network transport between processes: shm (default), udp, tcp
  --segment-size BYTES   bytes of each task's segment, e.g. 64M (env AMLAPI_SEGMENT_SIZE)
  --spin-us US           how long waits spin before sleeping, µs (env AMLAPI_SPIN_US)
  --spin-max-us US       longest spin the adaptive budget grows to, µs (env AMLAPI_SPIN_MAX_US)
  --jit MODE             default: V8's inlining budgets as node has them; tuned: raised for
                         the job's process (faster once compiled, longer to compile; env AMLAPI_JIT)
  --label                prefix each output line with [task]
  --timeout SECONDS      end the job as failed after this long
  -h, --help             this text
`

const WITH_VALUE = new Set(['-n', '--tasks', '--np', '--procs', '--transport', '--segment-size', '--spin-us', '--spin-max-us', '--jit', '--timeout'])

/**
 * Splits the command line at the program: lapirun's own options come before it, everything after
 * it belongs to the program (even what looks like an option).
 */
function splitAtProgram (argv: string[]): { own: string[]; rest: string[] } {
  let i = 0
  while (i < argv.length) {
    const a = argv[i]!
    if (a === '--') return { own: argv.slice(0, i), rest: argv.slice(i + 1) }
    if (!a.startsWith('-') || a === '-') break
    i += WITH_VALUE.has(a) ? 2 : 1
  }
  return { own: argv.slice(0, i), rest: argv.slice(i) }
}

/** Runs lapirun with the given arguments; resolves with the exit code. */
export async function main (argv: string[]): Promise<number> {
  const split = splitAtProgram(argv)
  let parsed
  try {
    parsed = parseArgs({
      args: split.own,
      allowPositionals: false,
      strict: true,
      options: {
        tasks: { type: 'string', short: 'n' },
        np: { type: 'string' },
        procs: { type: 'string' },
        transport: { type: 'string' },
        'segment-size': { type: 'string' },
        'spin-us': { type: 'string' },
        'spin-max-us': { type: 'string' },
        jit: { type: 'string' },
        label: { type: 'boolean' },
        timeout: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    })
  } catch (e) {
    process.stderr.write(`lapirun: ${(e as Error).message}\n${USAGE}`)
    return 2
  }
  const { values } = parsed
  if (values.help === true) { process.stdout.write(USAGE); return 0 }
  const [program, ...args] = split.rest
  if (program === undefined) { process.stderr.write(`lapirun: no program given\n${USAGE}`); return 2 }
  const n = Number(values.tasks ?? values.np ?? '1')
  if (!Number.isInteger(n) || n < 1 || n > 4096) { process.stderr.write(`lapirun: -n must be a whole number from 1 to 4096, not ${values.tasks ?? ''}\n`); return 2 }
  const procs = Number(values.procs ?? '1')
  if (!Number.isInteger(procs) || procs < 1 || procs > n) { process.stderr.write(`lapirun: --procs must be a whole number from 1 to N\n`); return 2 }
  const transport = values.transport ?? 'shm'
  if (!['shm', 'udp', 'tcp'].includes(transport)) { process.stderr.write(`lapirun: unknown transport '${transport}' (shm, udp, tcp)\n`); return 2 }
  if (procs > 1 || transport !== 'shm') {
    process.stderr.write(`lapirun: ${procs > 1 ? `--procs ${procs}` : `--transport ${transport}`} needs a network transport between processes, which this build does not have yet; run the tasks in one process (--procs 1, --transport shm)\n`)
    return 2
  }
  const config: { segmentSize?: number; spinUs?: number; spinMaxUs?: number; jit?: JitMode } = {}
  if (values['segment-size'] !== undefined) {
    const s = parseSize(values['segment-size'])
    if (!Number.isFinite(s)) { process.stderr.write(`lapirun: bad --segment-size '${values['segment-size']}'\n`); return 2 }
    config.segmentSize = s
  }
  if (values['spin-us'] !== undefined) config.spinUs = Number(values['spin-us'])
  if (values['spin-max-us'] !== undefined) config.spinMaxUs = Number(values['spin-max-us'])
  if (values.jit !== undefined) {
    if (values.jit !== 'tuned' && values.jit !== 'default') { process.stderr.write(`lapirun: bad --jit '${values.jit}' (tuned or default)\n`); return 2 }
    config.jit = values.jit
  }
  let timeoutMs: number | undefined
  if (values.timeout !== undefined) {
    timeoutMs = Number(values.timeout) * 1000
    if (!(timeoutMs > 0)) { process.stderr.write(`lapirun: bad --timeout '${values.timeout}'\n`); return 2 }
  }

  const ac = new AbortController()
  let interrupted = false
  const onSig = (): void => { interrupted = true; ac.abort() }
  process.once('SIGINT', onSig)
  process.once('SIGTERM', onSig)
  try {
    const r = await runJob({ program, numTasks: n, args, config, label: values.label === true, signal: ac.signal, ...(timeoutMs !== undefined ? { timeoutMs } : {}) })
    return interrupted ? 130 : r.exitCode
  } catch (e) {
    process.stderr.write(`lapirun: ${(e as Error).message}\n`)
    return 2
  } finally {
    process.off('SIGINT', onSig)
    process.off('SIGTERM', onSig)
  }
}
