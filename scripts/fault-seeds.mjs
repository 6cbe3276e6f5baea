// The longer fault run (npm run test:faults [-- SEEDS] [FAULTS]): the whole conformance suite over
// udp (its full matrix, AMLAPI_TEST_FULL=1), once per seed, with seeded faults (default
// drop=0.05,dup=0.01,reorder=0.25,corrupt=0.001); every program must verify as it does without
// faults. Prints one line per seed and a total.
import { spawnSync } from 'node:child_process'

const seeds = (process.argv[2] ?? '101,102,103,104,105').split(',').map(Number)
const faults = process.argv[3] ?? 'drop=0.05,dup=0.01,reorder=0.25,corrupt=0.001'
let passed = 0
let failed = 0
for (const seed of seeds) {
  const t0 = Date.now()
  const r = spawnSync('npx', ['vitest', 'run', 'test/conformance.test.ts', '-t', 'udp'], {
    env: { ...process.env, AMLAPI_FAULTS: `${faults},seed=${seed}`, AMLAPI_TEST_FULL: '1' },
    encoding: 'utf8',
    timeout: 30 * 60_000,
  })
  const out = (r.stdout ?? '') + (r.stderr ?? '')
  // eslint-disable-next-line no-control-regex
  // biome-ignore lint/suspicious/noControlCharactersInRegex: strips the terminal's colour sequences (ESC [ … m)
  const plain = out.replace(/\u001b\[[0-9;]*m/g, '')
  const m = /Tests\s+(?:(\d+) failed \| )?(\d+) passed/.exec(plain)
  const f = Number(m?.[1] ?? (r.status === 0 ? 0 : 1))
  const p = Number(m?.[2] ?? 0)
  passed += p
  failed += f
  process.stdout.write(`seed ${seed}: ${p} passed, ${f} failed (${Math.round((Date.now() - t0) / 1000)} s)\n`)
  if (f > 0)
    process.stdout.write(
      plain
        .split('\n')
        .filter((l) => /FAIL|Error/.test(l))
        .slice(0, 20)
        .join('\n') + '\n',
    )
}
process.stdout.write(`faults ${faults}, seeds ${seeds.join(',')}: ${passed} passed, ${failed} failed\n`)
process.exitCode = failed > 0 ? 1 : 0
