#!/usr/bin/env node
// The second step of `npm run build`: each package's entry points, as `tsc -b` wrote them to
// dist/, bundled into lib/ (what the packages' exports name at run time; the types stay in dist/).
// Every thread of a job loads the packages anew, and Node's ES module loader spends about half a
// millisecond on each file it resolves, reads and links: @amlapi/am2 is 106 files. One file per
// entry, with the code entries share in lib/chunks/ (so each module exists once per thread,
// whichever entry loads it), halves what a task's thread spends loading them. Imports of other
// packages (@amlapi/*, msgpackr, pino, node:*) stay imports. With --clean: removes lib/ only.
//
// The constants of the shared-memory layouts (scripts/gen-layouts.mjs) are written into the bundle
// as the numbers they name, where they are used: V8 reads a module's constant through its binding
// at every use, which costs a per-message path that writes a header word by word (a microbenchmark
// of four header stores took 1.17 times as long with imported names as with numbers). The sources
// name every offset; the bundle reads like the literals it replaced (`i32[p + 1 /* SW_SRC */]`).
import { readFileSync, rmSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { BLOCKS, lay } from './gen-layouts.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
/**
 * Files that are entries without being exports: the launcher's (bin/lapirun.js), the child
 * process's, and lapi's internals for amlapi's own tests and benchmarks (the root package.json's
 * private import `#lapi-internal`; not published as an export).
 */
const EXTRA = { lapi: ['launch/cli.js', 'launch/child.js', 'internal.js'] }

const BYTES = { int32: 4, float64: 8, byte: 1 }
/** Per built file of a layout (its dist/ path): the constants it defines, name → value. */
const LAYOUTS = new Map()
for (const b of BLOCKS) {
  const file = `${ROOT}packages/${b.file.replace('/src/', '/dist/').replace(/\.ts$/, '.js')}`
  const names = LAYOUTS.get(file) ?? new Map()
  for (const f of lay(b)) if (f.name !== undefined) names.set(f.name, f.at)
  if (b.size !== undefined) names.set(b.size.name, b.size.sizeBytes === true ? b.size.n * BYTES[b.unit] : b.size.n)
  LAYOUTS.set(file, names)
}
/** What is not code to rewrite: comments, strings, and import and export statements with a list of names. */
const SKIP =
  /\/\/[^\n]*|\/\*[\s\S]*?\*\/|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"|`(?:\\[\s\S]|[^`\\])*`|\b(?:import|export)\s*(?:type\s*)?\{[^}]*\}\s*(?:from\s*'[^']*')?/g

/** `text` (a built module at `path`) with the layout constants it imports or defines written as numbers where used. */
export function inlineLayouts(path, text) {
  const values = new Map(LAYOUTS.get(path) ?? [])
  for (const m of text.matchAll(/\bimport\s*\{([^}]*)\}\s*from\s*'(\.[^']*)'/g)) {
    const names = LAYOUTS.get(resolve(dirname(path), m[2]))
    if (names === undefined) continue
    for (const n of m[1].split(',').map((x) => x.trim())) if (names.has(n)) values.set(n, names.get(n))
  }
  if (values.size === 0) return text
  const words = new RegExp(`(?<!export const |\\.)\\b(${[...values.keys()].join('|')})\\b(?!\\s*[:=(])`, 'g')
  let out = ''
  let at = 0
  for (const m of text.matchAll(SKIP)) {
    out += text.slice(at, m.index).replace(words, (n) => `${values.get(n)} /* ${n} */`) + m[0]
    at = m.index + m[0].length
  }
  return out + text.slice(at).replace(words, (n) => `${values.get(n)} /* ${n} */`)
}

const inline = {
  name: 'inline-layouts',
  setup(b) {
    b.onLoad({ filter: /\/dist\/.*\.js$/ }, async (args) => ({
      contents: inlineLayouts(args.path, await readFile(args.path, 'utf8')),
      loader: 'js',
      resolveDir: dirname(args.path),
    }))
  },
}

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
    plugins: [inline],
  })
}
