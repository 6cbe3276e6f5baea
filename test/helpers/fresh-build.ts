/**
 * Vitest's global setup: the tests load the packages from their bundles (lib/), which
 * `npm run build` writes after `tsc -b` writes dist/. A bundle older than what tsc wrote last
 * would have the tests run old code; this stops the run with what to do instead.
 */
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const PACKAGES = fileURLToPath(new URL('../../packages/', import.meta.url))

/** The newest modification time of the .js files under `dir`, ms. */
function newest(dir: string): number {
  let t = 0
  for (const f of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (f.endsWith('.js')) t = Math.max(t, statSync(join(dir, f)).mtimeMs)
  }
  return t
}

export default function setup(): void {
  for (const p of readdirSync(PACKAGES)) {
    const dist = join(PACKAGES, p, 'dist')
    const lib = join(PACKAGES, p, 'lib', 'index.js')
    if (!existsSync(dist)) continue
    if (!existsSync(lib) || statSync(lib).mtimeMs < newest(dist)) {
      throw new Error(`packages/${p}/lib is missing or older than its dist/: run \`npm run build\` (tsc -b, then the bundles) first`)
    }
  }
}
