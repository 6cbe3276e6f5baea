/**
 * Logging: one pino root logger per thread, silent unless AMLAPI_LOG_LEVEL says otherwise, writing
 * to stderr (fd 2) synchronously so nothing is lost when a task ends. Components take children.
 */
import { pino, type Logger } from 'pino'

let root: Logger | undefined

/** The root logger of this thread (created on first use). */
export function rootLogger (): Logger {
  if (root === undefined) {
    const level = process.env['AMLAPI_LOG_LEVEL'] ?? 'silent'
    root = pino({ level, base: { pid: process.pid } }, pino.destination({ fd: 2, sync: true }))
  }
  return root
}

/** A child logger for one component (`lapi`, `lapi:job`, `lapirun`, …) with extra bindings. */
export function logger (component: string, bindings: Record<string, unknown> = {}): Logger {
  return rootLogger().child({ c: component, ...bindings })
}
