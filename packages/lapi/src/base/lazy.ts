/**
 * Modules loaded where they are first used, not with the module that uses them (node:crypto,
 * node:v8, node:wasi, pino): every thread of a job loads this package, and most threads never
 * need them.
 */
import { createRequire } from 'node:module'

const load = createRequire(import.meta.url)

/** Module `id` (a Node built-in or a dependency of this package), loaded now if not yet. */
export function lazyLoad<T>(id: string): T {
  return load(id) as T
}
