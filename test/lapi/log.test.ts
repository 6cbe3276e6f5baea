/**
 * Logs (docs/lapi.md, "Logs"): silent unless AMLAPI_LOG_LEVEL, and pino loaded only then, so a
 * silent thread does not pay for it at its start; with a level, JSON lines on stderr.
 */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const HERE = fileURLToPath(new URL('.', import.meta.url))
// (run from this folder, so that @amlapi/lapi resolves as for any program of the project)
const SCRIPT = `
import { createRequire } from 'node:module'
const { logger } = await import('@amlapi/lapi')
const log = logger('test', { n: 1 })
log.debug({ x: 2 }, 'a debug line')
log.child({ m: 3 }).info('an info line')
const loaded = Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('/pino/'))
process.stdout.write(loaded ? 'pino loaded' : 'pino not loaded')
`

function run(level: string | undefined): Promise<{ stdout: string; stderr: string }> {
  const env = { ...process.env }
  delete env.AMLAPI_LOG_LEVEL
  if (level !== undefined) env.AMLAPI_LOG_LEVEL = level
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--input-type=module', '-e', SCRIPT], { cwd: HERE, env, timeout: 20_000 }, (err, stdout, stderr) => {
      if (err !== null) reject(new Error(`${err.message}\n${stderr}`))
      else resolve({ stdout, stderr })
    })
  })
}

describe('logs', () => {
  it('are silent by default, without loading pino', async () => {
    const r = await run(undefined)
    expect(r.stdout).toBe('pino not loaded')
    expect(r.stderr).toBe('')
  })

  it('with AMLAPI_LOG_LEVEL, are pino JSON lines on stderr, from the level up', async () => {
    const r = await run('info')
    expect(r.stdout).toBe('pino loaded')
    const lines = r.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(lines).toEqual([expect.objectContaining({ level: 30, c: 'test', n: 1, m: 3, msg: 'an info line', pid: expect.any(Number) })])
    const d = await run('debug')
    expect(
      d.stderr
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).msg),
    ).toEqual(['a debug line', 'an info line'])
  })
})
