// The longer fuzz run (npm run test:fuzz [-- MS]): every test file that reads FUZZ_MS, that is
// test/security/fuzz-reader.test.ts, fuzz-listeners.test.ts and the datagram-header fuzz
// test/security/udp-header-fuzz.test.ts, with MS ms per property (default 60000) instead of their
// few seconds, under FUZZ_SEED if set (else the tests' own seed), each property's reach printed.
import { spawnSync } from 'node:child_process'

const ms = Number(process.argv[2] ?? 60_000)
if (!Number.isInteger(ms) || ms <= 0) {
  process.stderr.write(`usage: node scripts/fuzz.mjs [MS per property] (not ${process.argv[2]})\n`)
  process.exit(2)
}
const files = ['test/security/fuzz-reader.test.ts', 'test/security/fuzz-listeners.test.ts', 'test/security/udp-header-fuzz.test.ts']
const t0 = Date.now()
// (about a dozen properties of MS each, and the rest of the three files: a few minutes)
const r = spawnSync('npx', ['vitest', 'run', ...files], {
  env: { ...process.env, FUZZ_MS: String(ms), FUZZ_VERBOSE: process.env.FUZZ_VERBOSE ?? '1' },
  stdio: 'inherit',
  timeout: 15 * ms + 15 * 60_000,
})
const how =
  r.error !== undefined ? r.error.message : r.signal !== null ? `killed by ${r.signal}` : r.status === 0 ? 'passed' : `failed (exit status ${r.status})`
process.stdout.write(`fuzz: ${ms} ms per property, seed ${process.env.FUZZ_SEED ?? 'default'}: ${how} (${Math.round((Date.now() - t0) / 1000)} s)\n`)
process.exitCode = r.status === 0 ? 0 : 1
