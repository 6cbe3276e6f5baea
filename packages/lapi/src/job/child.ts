/**
 * A process `lapirun --procs` (job/processes.ts) started: reads AMLAPI_RANK, AMLAPI_SIZE,
 * AMLAPI_RENDEZVOUS (host:port) and AMLAPI_JOB_KEY (hex) and runs its part of the job
 * (job/member.ts); everything else comes from the rendezvous and the environment.
 */
import { parseKey } from '../transport/auth.js'
import { describeError } from '../errors.js'
import { runMember } from './member.js'

function env (name: string): string {
  const v = process.env[name]
  if (v === undefined || v === '') throw new Error(`${name} is not set`)
  return v
}

try {
  process.exitCode = await runMember({
    rank: Number(env('AMLAPI_RANK')),
    size: Number(env('AMLAPI_SIZE')),
    rendezvous: env('AMLAPI_RENDEZVOUS'),
    key: parseKey(env('AMLAPI_JOB_KEY')),
    env: process.env,
    join: false,
  })
} catch (e) {
  process.stderr.write(`lapirun: process ${process.env['AMLAPI_RANK'] ?? '?'}: ${describeError(e)}\n`)
  process.exitCode = 1
}
