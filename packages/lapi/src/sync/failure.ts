/**
 * How a task ends itself on an error it cannot go on from (an asynchronous error with no error
 * handler: LAPI's default error handling). Under an agent (lapirun, runJob) the task tells the
 * agent why before its thread exits, and the agent names the reason when it ends the job; a
 * program run with plain `node` writes the reason on stderr itself. Either way the exit is
 * non-zero, and what the task wrote before reaches the job's output (worker stdio is drained on exit).
 */
import { parentPort } from 'node:worker_threads'
import { underAgent } from '../layout/job-spec.js'

/** Key of the failure message a task posts to its agent: `{ [FAILURE_KEY]: reason }`. */
export const FAILURE_KEY = '__amlapi_failure'

/** Ends task `task` (this thread's) with exit code `code` (default 1) after reporting `reason`. */
export function endTask(task: number, reason: string, code = 1): never {
  if (underAgent() && parentPort !== null) parentPort.postMessage({ [FAILURE_KEY]: reason })
  else process.stderr.write(`lapi: task ${task} failed: ${reason}\n`)
  process.exit(code)
}

/** The reason a task posted with `endTask`, from a message its Worker emitted; undefined for any other message. */
export function failureOf(msg: unknown): string | undefined {
  if (msg === null || typeof msg !== 'object') return undefined
  const r = (msg as Record<string, unknown>)[FAILURE_KEY]
  return typeof r === 'string' ? r : undefined
}
