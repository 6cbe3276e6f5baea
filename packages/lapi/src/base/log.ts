/**
 * Logging: one pino root logger per thread, silent unless AMLAPI_LOG_LEVEL says otherwise (trace,
 * debug, info, warn, error), writing JSON lines where the thread's stderr goes. In a task of a
 * job that is the task's own stderr stream, which the agent forwards (with `--label`, each line
 * under the task's prefix) and drains when the task ends, so nothing is lost; in the agent or a
 * plain `node` program it is fd 2, written synchronously. Components (`lapi`, `lapi:job`,
 * `lapirun`, `am2`, …) take child loggers of the root.
 *
 * pino is loaded only when a level is set: loading it costs every thread of a job (each task's
 * worker, each process's agent) about 50 ms of CPU at its start, and a silent logger needs none
 * of it.
 */
import { isMainThread } from 'node:worker_threads'
import type { Logger } from 'pino'
import { lazyLoad } from './lazy.js'

let root: Logger | undefined

const nothing = (): void => {}

/** What a pino logger at level `silent` does: nothing, and its children likewise. */
const SILENT = {
  level: 'silent',
  fatal: nothing,
  error: nothing,
  warn: nothing,
  info: nothing,
  debug: nothing,
  trace: nothing,
  silent: nothing,
  isLevelEnabled: (): boolean => false,
  bindings: (): Record<string, unknown> => ({}),
  flush: nothing,
  child(): Logger {
    return SILENT
  },
} as unknown as Logger

/** The root logger of this thread (created on first use). */
export function rootLogger(): Logger {
  if (root === undefined) {
    const level = process.env['AMLAPI_LOG_LEVEL'] ?? 'silent'
    if (level === 'silent') {
      root = SILENT
    } else {
      const { pino } = lazyLoad<typeof import('pino')>('pino')
      const dest = isMainThread ? pino.destination({ fd: 2, sync: true }) : process.stderr
      root = pino({ level, base: { pid: process.pid } }, dest)
    }
  }
  return root
}

/**
 * A child logger of amlapi's root logger for one component (`lapi`, `am2`, or a library layered
 * on them) with extra bindings, such as `{ task }`.
 */
export function logger(component: string, bindings: Record<string, unknown> = {}): Logger {
  return rootLogger().child({ c: component, ...bindings })
}
