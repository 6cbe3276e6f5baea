// The import structure: each package imports only the packages below it, and inside @amlapi/lapi
// each folder imports only its own layer and the layers below (docs/architecture.md, "Layers").
// A static check over the sources: it reads every import (type-only and dynamic ones too).
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** lapi's layers, bottom first: a file may import its own layer and those before it. */
const LAPI_LAYERS: Array<[layer: string, folders: string[]]> = [
  ['base', ['base']],
  ['layout', ['layout']],
  ['transport', ['transport']],
  ['engine', ['engine']],
  ['agent', ['agent']],
  ['task', ['core', 'sync', 'net', 'am', 'rma', 'collectives']],
  ['launch', ['launch']],
  ['api', ['.']],
]

/** What each package may import of the others. */
const PACKAGES: Record<string, string[]> = {
  bufmgr: [],
  lapi: ['@amlapi/bufmgr'],
  am2: ['@amlapi/bufmgr', '@amlapi/lapi', '@amlapi/lapi/compat'],
  pgas: ['@amlapi/bufmgr', '@amlapi/lapi', '@amlapi/lapi/compat', '@amlapi/am2'],
}

function sources(dir: string, out: string[] = []): string[] {
  for (const f of readdirSync(dir)) {
    const p = join(dir, f)
    if (statSync(p).isDirectory()) sources(p, out)
    else if (f.endsWith('.ts')) out.push(p)
  }
  return out
}

/** Every module specifier a file names: static imports and re-exports, type-only or not, and dynamic imports. */
function specifiers(text: string): string[] {
  const out: string[] = []
  const re =
    /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*'([^']+)'|(?:^|\n)\s*import\s*'([^']+)'|\bimport\(\s*'([^']+)'\s*\)|lazyLoad(?:<[^>]*>)?\(\s*'([^']+)'/g
  for (const m of text.matchAll(re)) out.push((m[1] ?? m[2] ?? m[3] ?? m[4])!)
  return out
}

function layerOf(file: string): number {
  const folder = relative(join(ROOT, 'packages/lapi/src'), dirname(file)).split('/')[0] || '.'
  const i = LAPI_LAYERS.findIndex(([, folders]) => folders.includes(folder))
  if (i < 0) throw new Error(`packages/lapi/src/${folder} is in no layer of LAPI_LAYERS: add it to the table and to docs/architecture.md`)
  return i
}

describe('the import structure', () => {
  it('reads type-only, dynamic and lazy imports', () => {
    expect(
      specifiers(
        "import type { A } from './a.js'\nexport { b } from '../b.js'\nconst c = await import('./c.js')\nlazyLoad<typeof import('node:x')>('node:y')\nimport './d.js'",
      ),
    ).toEqual(['./a.js', '../b.js', './c.js', 'node:y', './d.js'])
  })

  it('every lapi folder imports only its own layer and the layers below', () => {
    const back: string[] = []
    for (const file of sources(join(ROOT, 'packages/lapi/src'))) {
      const from = layerOf(file)
      for (const s of specifiers(readFileSync(file, 'utf8'))) {
        if (!s.startsWith('.')) continue
        const to = layerOf(resolve(dirname(file), s))
        if (to > from) back.push(`${relative(ROOT, file)} (${LAPI_LAYERS[from]![0]}) imports ${s} (${LAPI_LAYERS[to]![0]})`)
      }
    }
    expect(back).toEqual([])
  })

  it('each package imports only the packages below it, by their public entries', () => {
    const wrong: string[] = []
    for (const [name, allowed] of Object.entries(PACKAGES)) {
      for (const file of sources(join(ROOT, `packages/${name}/src`))) {
        for (const s of specifiers(readFileSync(file, 'utf8'))) {
          if (s.startsWith('@amlapi/') && !allowed.includes(s)) wrong.push(`${relative(ROOT, file)} imports ${s}`)
        }
      }
    }
    expect(wrong).toEqual([])
  })
})

describe('transports behind the registry', () => {
  const SRC = join(ROOT, 'packages/lapi/src')
  /** Folders of transport/ that hold one transport each (a folder + a line of transport/registry.ts). */
  const KINDS = ['tcp', 'udp']
  /** Files above transport/ that may name a transport's files: the test-only entry (#lapi-internal drives the udp pieces alone). */
  const EXEMPT = ['internal.ts']

  it("no file outside transport/ imports a transport's folder: only the registry and the contract", () => {
    const wrong: string[] = []
    for (const file of sources(SRC)) {
      const rel = relative(SRC, file)
      if (rel.startsWith('transport/') || EXEMPT.includes(rel)) continue
      for (const s of specifiers(readFileSync(file, 'utf8'))) {
        if (!s.startsWith('.')) continue
        const to = relative(SRC, resolve(dirname(file), s))
        if (KINDS.some((k) => to.startsWith(`transport/${k}/`) || to === `transport/${k}.js`)) wrong.push(`${relative(ROOT, file)} imports ${s}`)
      }
    }
    expect(wrong).toEqual([])
  })

  it('the engine, the agent and the launcher name no transport in their code', () => {
    const wrong: string[] = []
    for (const folder of ['engine', 'agent', 'launch']) {
      for (const file of sources(join(SRC, folder))) {
        // (the code lines: comments taken out, a block comment's lines kept empty)
        const code = readFileSync(file, 'utf8')
          .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ''))
          .split('\n')
          .map((l) => l.replace(/(^|\s)\/\/.*$/, ''))
        code.forEach((l, i) => {
          if (/(['"`])(tcp|udp)\1/.test(l)) wrong.push(`${relative(ROOT, file)}:${i + 1}: ${l.trim()}`)
        })
      }
    }
    expect(wrong).toEqual([])
  })
})
