#!/usr/bin/env node
// The second step of `npm run build`: each package's entry points, as `tsc -b` wrote them to
// dist/, bundled into lib/ (what the packages' exports name at run time; the types stay in dist/).
// Every thread of a job loads the packages anew, and Node's ES module loader spends about half a
// millisecond on each file it resolves, reads and links: @amlapi/am2 is 106 files. One file per
// entry, with the code entries share in lib/chunks/ (so each module exists once per thread,
// whichever entry loads it), halves what a task's thread spends loading them. Imports of other
// packages (@amlapi/*, msgpackr, pino, node:*) stay imports. With --clean: removes lib/ only.
import { readFileSync, rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
/**
 * Files that are entries without being exports: the launcher's (bin/lapirun.js), the child
 * process's, and lapi's internals for amlapi's own tests and benchmarks (the root package.json's
 * private import `#lapi-internal`; not published as an export).
 */
const EXTRA = { lapi: ['launch/cli.js', 'launch/child.js', 'internal.js'] }

for (const name of ['bufmgr', 'lapi', 'am2', 'pgas']) {
  const dir = `${ROOT}packages/${name}/`
  const pkg = JSON.parse(readFileSync(dir + 'package.json', 'utf8'))
  const entries = new Set(EXTRA[name] ?? [])
  for (const e of Object.values(pkg.exports)) {
    if (typeof e === 'object') entries.add(e.default.replace(/^\.\/lib\//, ''))
  }
  rmSync(dir + 'lib', { recursive: true, force: true })
  if (process.argv.includes('--clean')) continue
  await build({
    entryPoints: [...entries].map((e) => dir + 'dist/' + e),
    outbase: dir + 'dist',
    outdir: dir + 'lib',
    entryNames: '[dir]/[name]',
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    // (the packages say they have no side effects to their users' bundlers; inside, every module is kept)
    ignoreAnnotations: true,
    sourcemap: 'linked',
    sourcesContent: false,
    logLevel: 'warning',
  })
}
