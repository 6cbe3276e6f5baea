/**
 * The shared-memory layouts of packages/lapi/src/layout/ are what scripts/gen-layouts.mjs computes
 * from its table (npm run gen:layouts rewrites them), and the script refuses a table whose fields
 * overlap or do not fit their block.
 */
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const SCRIPT = ROOT + 'scripts/gen-layouts.mjs'

interface Field {
  name?: string
  at?: number
  n?: number | 'rest'
  reserved?: number
}
interface Block {
  name: string
  unit: string
  size?: { name: string; n: number }
  fields: Field[]
}
const gen = (await import(SCRIPT)) as { BLOCKS: Block[]; lay: (b: Block) => Array<Field & { at: number; n: number | null }> }

describe('shared-memory layouts', () => {
  it('are what scripts/gen-layouts.mjs writes', () => {
    const r = spawnSync(process.execPath, [SCRIPT, '--check'], { cwd: ROOT, encoding: 'utf8' })
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
  })

  it('give every field its own words, inside its block', () => {
    for (const b of gen.BLOCKS) {
      const fields = gen.lay(b)
      for (let i = 1; i < fields.length; i++)
        expect(fields[i]!.at, `${b.name}: ${fields[i]!.name ?? 'reserved'}`).toBeGreaterThanOrEqual(fields[i - 1]!.at + (fields[i - 1]!.n ?? Infinity))
    }
  })

  it('refuse overlapping fields, fields past the block, and a name used twice', () => {
    const block = (fields: Field[], size?: number): Block => ({
      name: 'b',
      unit: 'int32',
      ...(size === undefined ? {} : { size: { name: 'B_WORDS', n: size } }),
      fields,
    })
    expect(() =>
      gen.lay(
        block([
          { name: 'A', n: 2 },
          { name: 'B', at: 1 },
        ]),
      ),
    ).toThrow(/B at 1 overlaps/)
    expect(() => gen.lay(block([{ name: 'A', n: 3 }, { name: 'B' }], 3))).toThrow(/more than B_WORDS \(3\)/)
    expect(() => gen.lay(block([{ name: 'A' }, { name: 'A' }]))).toThrow(/A twice/)
    expect(gen.lay(block([{ name: 'A' }, { reserved: 2 }, { name: 'B' }], 4)).map((f) => f.at)).toEqual([0, 1, 3])
  })
})
