// testreadwrite: asynchronous remote word access (the AMX test suite, AM-2 reference section 4).
// Every task allocates a 255-word array in its LAPI segment and all-gathers its Addr. Iteration k:
// 255 writeWord(left neighbour, slot i, k) back to back (more than the network depth with a small
// AMLAPI_NETWORKDEPTH: the requests then wait for flow control), writeSync; barrier; 255 readWord
// from the right neighbour into my read array, readSync; every value must be k; barrier.
// Run: npx --no -- lapirun -n 3 examples/amx/testreadwrite.mjs [iters]
import { AMX_SPMDBarrier } from '@amlapi/am2/compat'
import {
  AM_Safe,
  TEST_STARTUP,
  allGatherAddr,
  fatal,
  finish,
  loadWord,
  myproc,
  numprocs,
  parseCount,
  printGlobalStats,
  readSync,
  readWord,
  segMalloc,
  writeSync,
  writeWord,
} from './apputils.mjs'

const MAX_PROCS = 255

const argv = TEST_STARTUP(0, 1, 'iters')
const iters = parseCount(argv[0])
if (numprocs > MAX_PROCS) fatal(`at most ${MAX_PROCS} tasks`)
if (myproc === 0) console.log(`Running ${iters} iterations of read/write test...`)

const vals = segMalloc(4 * MAX_PROCS)
const readarray = segMalloc(4 * MAX_PROCS)
const pvals = allGatherAddr(vals)

const leftP = myproc === 0 ? numprocs - 1 : myproc - 1
const rightP = myproc === numprocs - 1 ? 0 : myproc + 1
let errs = 0
for (let k = 0; k < iters; k++) {
  // set the left neighbour's array
  for (let i = 0; i < MAX_PROCS; i++) writeWord(leftP, pvals[leftP] + 4 * i, k)
  writeSync()
  AM_Safe(AMX_SPMDBarrier(), 'AMX_SPMDBarrier()')

  // read the right neighbour's array
  for (let i = 0; i < MAX_PROCS; i++) readWord(readarray + 4 * i, rightP, pvals[rightP] + 4 * i)
  readSync()
  for (let i = 0; i < MAX_PROCS; i++) {
    const v = loadWord(readarray + 4 * i)
    if (v !== k) {
      console.log(`ERROR: Proc ${myproc} READ/WRITE TEST FAILED : readarray[${i}] = ${v | 0}   k = ${k}`)
      errs++
      break
    }
  }
  AM_Safe(AMX_SPMDBarrier(), 'AMX_SPMDBarrier()')
}

if (errs === 0) console.log(`Proc ${myproc} verified.`)
printGlobalStats({ writeWord: iters * MAX_PROCS, readWord: iters * MAX_PROCS })
finish(errs)
