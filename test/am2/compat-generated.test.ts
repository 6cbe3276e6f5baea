/**
 * The C-style request and reply wrappers (packages/am2/src/compat-*.gen.ts) are what
 * scripts/gen-am2-compat.mjs writes from its table, and its --check tells when they are not.
 */
import { spawnSync } from 'node:child_process'
import { appendFileSync, cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** `node scripts/gen-am2-compat.mjs ...args` in `root`. */
function gen(root: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, ['scripts/gen-am2-compat.mjs', ...args], { cwd: root, encoding: 'utf8' })
}

describe('am2 compat wrappers', () => {
  it('are what scripts/gen-am2-compat.mjs writes (npm run gen:am2 rewrites them)', () => {
    const r = gen(ROOT, '--check')
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
  })

  it('--check exits 1 naming a file edited by hand; the script then rewrites it', () => {
    // (on a copy of the script and am2's sources: the script finds the sources beside itself)
    const dir = mkdtempSync(join(tmpdir(), 'am2-gen-'))
    try {
      cpSync(join(ROOT, 'scripts', 'gen-am2-compat.mjs'), join(dir, 'scripts', 'gen-am2-compat.mjs'))
      cpSync(join(ROOT, 'packages', 'am2', 'src'), join(dir, 'packages', 'am2', 'src'), { recursive: true })
      appendFileSync(join(dir, 'packages', 'am2', 'src', 'compat-reply.gen.ts'), '// edited\n')
      const edited = gen(dir, '--check')
      expect(edited.status).toBe(1)
      expect(edited.stderr).toContain('packages/am2/src/compat-reply.gen.ts')
      expect(edited.stderr).not.toContain('compat-request.gen.ts')
      const written = gen(dir)
      expect(written.status, written.stderr).toBe(0)
      expect(written.stdout).toContain('wrote packages/am2/src/compat-reply.gen.ts')
      expect(gen(dir, '--check').status).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
