#!/usr/bin/env node
// Writes the C-style AM-2 request and reply wrappers of @amlapi/am2/compat (AM_Request0..16,
// AM_RequestI, AM_RequestXfer, AM_RequestXferAsync, AM_Reply, AM_ReplyI, AM_ReplyXfer, AM_GetXfer)
// from the table below into packages/am2/src/compat-*.gen.ts, which compat.ts re-exports. Each
// wrapper converts its arguments into the runtime's scratch array (no allocation per call; an
// argument that is no number, such as a BigInt, fails its int32 conversion: AM_ERR_BAD_ARG) and
// calls the one implementation.
//
//   node scripts/gen-am2-compat.mjs            (npm run gen:am2) writes the files that differ
//   node scripts/gen-am2-compat.mjs --check    writes nothing; exits 1 naming each file that differs
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const SRC = fileURLToPath(new URL('../packages/am2/src/', import.meta.url))
/** The most arguments a Short message carries (AM_MaxShort). */
const MAX_ARGS = 16
/** The longest line written. */
const WIDTH = 120

/**
 * One row per family. `doc`: the JSDoc after "<name>{M}: ", `{M}` standing for the argument count;
 * `params`: those before a0..a(M-1); `call`: what the wrapper returns, `{M}` again the count.
 */
const FAMILIES = [
  {
    name: 'AM_Request',
    doc: 'a Short request with {M} argument(s) to translation `dest_index`.',
    params: 'ep: ep_t, dest_index: number, handler: number',
    call: 'r.request(ep, dest_index, CAT_SHORT, handler, {M}, s, null, 0, 0, 0, false)',
  },
  {
    name: 'AM_RequestI',
    doc: 'a Medium request; the first `nbytes` of `src` are copied before it returns.',
    params: 'ep: ep_t, dest_index: number, handler: number, src: AmSeg, nbytes: number',
    call: 'r.request(ep, dest_index, CAT_MEDIUM, handler, {M}, s, src, nbytes, 0, 0, false)',
  },
  {
    name: 'AM_RequestXfer',
    doc: "a Long request into the peer's segment at `dest_offset`.",
    params: 'ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number',
    call: 'r.request(ep, dest_index, CAT_LONG, handler, {M}, s, src, nbytes, dest_offset, 0, false)',
  },
  {
    name: 'AM_RequestXferAsync',
    doc: 'AM_RequestXfer{M}, or AM_ERR_IN_USE when it would have to wait for flow control.',
    params: 'ep: ep_t, dest_index: number, dest_offset: number, handler: number, src: AmSeg, nbytes: number',
    call: 'r.request(ep, dest_index, CAT_LONG, handler, {M}, s, src, nbytes, dest_offset, 0, true)',
  },
  {
    name: 'AM_Reply',
    doc: 'a Short reply from a request handler (at most once).',
    params: 'token: Token, handler: number',
    call: 'r.reply(token, CAT_SHORT, handler, {M}, s, null, 0, 0)',
  },
  {
    name: 'AM_ReplyI',
    doc: 'a Medium reply; `src` is copied before it returns.',
    params: 'token: Token, handler: number, src: AmSeg, nbytes: number',
    call: 'r.reply(token, CAT_MEDIUM, handler, {M}, s, src, nbytes, 0)',
  },
  {
    name: 'AM_ReplyXfer',
    doc: "a Long reply into the requester's segment at `dest_offset`.",
    params: 'token: Token, dest_offset: number, handler: number, src: AmSeg, nbytes: number',
    call: 'r.reply(token, CAT_LONG, handler, {M}, s, src, nbytes, dest_offset)',
  },
  {
    name: 'AM_GetXfer',
    doc: "`nbytes` of the peer's segment at `source_offset` into this segment at `dest_offset`; then `handler` " + 'runs here as a Long reply handler.',
    params: 'ep: ep_t, dest_index: number, source_offset: number, handler: number, dest_offset: number, nbytes: number',
    call: 'r.request(ep, dest_index, CAT_LONG, handler, {M}, s, null, nbytes, dest_offset, source_offset, false, true)',
  },
]

/** The files written (each about 500 lines at most): what each holds, and its families. */
const FILES = [
  { file: 'compat-request.gen.ts', what: 'the Short and Medium requests', families: ['AM_Request', 'AM_RequestI'] },
  { file: 'compat-xfer.gen.ts', what: 'the Long requests', families: ['AM_RequestXfer', 'AM_RequestXferAsync'] },
  { file: 'compat-reply.gen.ts', what: 'the Short and Medium replies', families: ['AM_Reply', 'AM_ReplyI'] },
  { file: 'compat-long.gen.ts', what: 'the Long replies and gets', families: ['AM_ReplyXfer', 'AM_GetXfer'] },
]

/** What a generated file may import: module, whether types only, names (those its code uses are kept). */
const IMPORTS = [
  ['./compat.js', true, ['ep_t']],
  ['./constants.js', false, ['AmStatus']],
  ['./objects.js', true, ['Token']],
  ['./runtime.js', false, ['currentRuntime as runtime']],
  ['./types.js', true, ['AmSeg']],
  ['./wire.js', false, ['CAT_LONG', 'CAT_MEDIUM', 'CAT_SHORT']],
]

/** `items` joined by spaces into lines of at most WIDTH characters, each starting with `indent`. */
function pack(items, indent) {
  const lines = []
  let line = ''
  for (const item of items) {
    if (line !== '' && indent.length + line.length + 1 + item.length > WIDTH) {
      lines.push(indent + line)
      line = ''
    }
    line = line === '' ? item : line + ' ' + item
  }
  if (line !== '') lines.push(indent + line)
  return lines
}

/** The JSDoc `text`: on one line when it fits, else wrapped at spaces. */
function jsdoc(text) {
  if (text.length + 7 <= WIDTH) return [`/** ${text} */`]
  return ['/**', ...pack(text.split(' '), ' * '), ' */']
}

/** The wrapper of `family` for `m` arguments. */
function wrapper(family, m) {
  const name = family.name + m
  const fixed = family.params.split(', ')
  const args = Array.from({ length: m }, (_, i) => `a${i}: number`)
  const params = [...fixed, ...args]
  const out = jsdoc(`${name}: ${family.doc.replaceAll('{M}', String(m))}`)
  const head = `export function ${name} (${params.join(', ')}): number {`
  if (head.length <= WIDTH) out.push(head)
  else {
    // the parameters on one line when they fit, else the fixed ones, then the arguments
    const one = `  ${params.join(', ')},`
    const lines =
      one.length <= WIDTH
        ? [one]
        : [fixed, args].flatMap((ps) =>
            pack(
              ps.map((p) => p + ','),
              '  ',
            ),
          )
    out.push(`export function ${name} (`, ...lines, '): number {')
  }
  out.push('  const r = runtime(); if (r === null) return NOT_INIT', '  const s = r.scratchArgs')
  if (m > 0) {
    const sets = Array.from({ length: m }, (_, i) => `s[${i}] = a${i} | 0;`)
    const one = `  try { ${sets.join(' ').slice(0, -1)} } catch { return BAD_ARG }`
    // (no semicolon ends a line)
    if (one.length <= WIDTH) out.push(one)
    else out.push('  try {', ...pack(sets, '    ').map((l) => l.slice(0, -1)), '  } catch { return BAD_ARG }')
  }
  out.push(`  return ${family.call.replace('{M}', String(m))}`, '}')
  return out
}

/** The text of generated file `spec`. */
function render(spec) {
  const code = ['', 'const NOT_INIT = AmStatus.ERR_NOT_INIT', 'const BAD_ARG = AmStatus.ERR_BAD_ARG']
  for (const name of spec.families) {
    const family = FAMILIES.find((f) => f.name === name)
    if (family === undefined) throw new Error(`no family ${name}`)
    code.push('', `// ── ${name}0..${MAX_ARGS} ──`)
    for (let m = 0; m <= MAX_ARGS; m++) code.push(...wrapper(family, m))
  }
  const body = code.join('\n')
  const imports = []
  for (const [from, typeOnly, names] of IMPORTS) {
    const some = names.filter((n) => new RegExp(`\\b${n.split(' ').pop()}\\b`).test(body))
    if (some.length > 0) imports.push(`import ${typeOnly ? 'type ' : ''}{ ${some.join(', ')} } from '${from}'`)
  }
  const families = spec.families.map((f) => `${f}0..${MAX_ARGS}`).join(' and ')
  const lines = [
    '// Generated by scripts/gen-am2-compat.mjs (npm run gen:am2) from its table: do not edit by hand.',
    ...pack(`The C-style AM-2 wrappers of ${families}, ${spec.what},`.split(' '), '// '),
    "// which compat.ts re-exports. Each fills the runtime's scratch argument array and calls the runtime.",
    ...imports,
    body,
  ]
  const text = lines.join('\n') + '\n'
  const long = text.split('\n').find((l) => l.length > WIDTH)
  if (long !== undefined) throw new Error(`${spec.file}: a line over ${WIDTH} characters: ${long}`)
  return text
}

const check = process.argv.includes('--check')
const unknown = process.argv.slice(2).filter((a) => a !== '--check')
if (unknown.length > 0) {
  process.stderr.write(`gen-am2-compat: unknown argument '${unknown[0]}' (only --check)\n`)
  process.exit(2)
}
let failed = false
for (const spec of FILES) {
  const path = SRC + spec.file
  const want = render(spec)
  const have = existsSync(path) ? readFileSync(path, 'utf8') : null
  if (have === want) continue
  if (check) {
    process.stderr.write(`gen-am2-compat: packages/am2/src/${spec.file} differs from what the script writes ` + '(npm run gen:am2 rewrites it)\n')
    failed = true
  } else {
    writeFileSync(path, want)
    process.stdout.write(`gen-am2-compat: wrote packages/am2/src/${spec.file}\n`)
  }
}
// (compat.ts is hand-written: it must re-export every generated file)
const compat = readFileSync(SRC + 'compat.ts', 'utf8')
for (const spec of FILES) {
  const line = `export * from './${spec.file.replace(/\.ts$/, '.js')}'`
  if (!compat.split('\n').includes(line)) {
    process.stderr.write(`gen-am2-compat: packages/am2/src/compat.ts lacks the line: ${line}\n`)
    failed = true
  }
}
process.exit(failed ? 1 : 0)
