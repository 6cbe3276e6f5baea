#!/usr/bin/env node
// Committed shim so that npm can link the bin before the build exists; the launcher itself is built
// from src/launch/cli.ts.
import { main } from '../lib/launch/cli.js'

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code
})
