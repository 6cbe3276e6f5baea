/**
 * A process `lapirun --procs` (launch/processes.ts) started as `child.js PROGRAM-URL [args…]`: reads
 * AMLAPI_RANK, AMLAPI_SIZE, AMLAPI_RENDEZVOUS (host:port) and AMLAPI_JOB_KEY (hex; then taken out
 * of the environment, so that the tasks and what they spawn do not inherit it) and runs its part
 * of the job (launch/member.ts); the settings come from the rendezvous and the environment, the
 * program from the launcher that started it.
 */
import { parseKey } from '../transport/auth.js'
import { describeError } from '../base/errors.js'
import { runMember } from './member.js'

function env(name: string): string {
  const v = process.env[name]
  if (v === undefined || v === '') throw new Error(`${name} is not set`)
  return v
}

// (lapirun, the launcher, answers SIGUSR1 with the job's report: here it does nothing, rather than
// start Node's inspector)
process.on('SIGUSR1', () => {})

try {
  const key = parseKey(env('AMLAPI_JOB_KEY'))
  delete process.env['AMLAPI_JOB_KEY']
  const [program, ...args] = process.argv.slice(2)
  if (program === undefined) throw new Error('no program given')
  process.exitCode = await runMember({
    program: new URL(program),
    args,
    rank: Number(env('AMLAPI_RANK')),
    size: Number(env('AMLAPI_SIZE')),
    rendezvous: env('AMLAPI_RENDEZVOUS'),
    key,
    env: process.env,
    join: false,
  })
} catch (e) {
  process.stderr.write(`lapirun: process ${process.env['AMLAPI_RANK'] ?? '?'}: ${describeError(e)}\n`)
  process.exitCode = 1
}
