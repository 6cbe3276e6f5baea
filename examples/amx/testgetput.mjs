// testgetput: synchronous remote word access (the AMX test suite, AM-2 reference section 4). Every
// task allocates a 255-word array in its LAPI segment and all-gathers its Addr (the tasks' address
// spaces need not agree). Each iteration: fill my array with 0xFFFFFFFF except my own slot =
// rank; barrier; getWord slot i from every task i and add them up (must be 0+1+...+(P-1));
// barrier; putWord my rank into slot [rank] of every task's array; barrier; check vals[i] == i.
// getWord/putWord are the utility handlers' Request6/Request5 with a reply (apputils.mjs).
// Run: npx --no -- lapirun -n 3 examples/amx/testgetput.mjs [iters]
import { AMX_SPMDBarrier } from '@amlapi/am2/compat'
import {
  AM_Safe,
  TEST_STARTUP,
  allGatherAddr,
  fatal,
  finish,
  getWord,
  loadWord,
  myproc,
  numprocs,
  parseCount,
  printGlobalStats,
  putWord,
  segMalloc,
  storeWord,
} from './apputils.mjs'

const MAX_PROCS = 255

const argv = TEST_STARTUP(0, 1, 'iters')
const iters = parseCount(argv[0])
if (numprocs > MAX_PROCS) fatal(`at most ${MAX_PROCS} tasks`)
if (myproc === 0) console.log(`Running ${iters} iterations of get/put test...`)

// every task's array (its Addr in that task's segment)
const vals = segMalloc(4 * MAX_PROCS)
const pvals = allGatherAddr(vals)

let errs = 0
let gets = 0
let puts = 0
for (let k = 0; k < iters; k++) {
  // set just my val
  for (let i = 0; i < MAX_PROCS; i++) storeWord(vals + 4 * i, 0xffffffff)
  storeWord(vals + 4 * myproc, myproc)
  AM_Safe(AMX_SPMDBarrier(), 'AMX_SPMDBarrier()')

  {
    // gets: each peer's own value, added up
    let sum = 0
    let verify = 0
    for (let i = 0; i < numprocs; i++) {
      sum += getWord(i, pvals[i] + 4 * i)
      gets++
      verify += i
    }
    if (sum !== verify) {
      console.log(`ERROR: Proc ${myproc} GET TEST FAILED : sum = ${sum}   verify = ${verify}`)
      errs++
    }
  }
  AM_Safe(AMX_SPMDBarrier(), 'AMX_SPMDBarrier()')
  for (let i = 0; i < numprocs; i++) {
    putWord(i, pvals[i] + 4 * myproc, myproc)
    puts++
  }
  AM_Safe(AMX_SPMDBarrier(), 'AMX_SPMDBarrier()')
  for (let i = 0; i < numprocs; i++) {
    const v = loadWord(vals + 4 * i)
    if (v !== i) {
      console.log(`ERROR: Proc ${myproc} PUT TEST FAILED : i = ${i}   vals[i] = ${v | 0}`)
      errs++
      break
    }
  }
}

if (errs === 0) console.log(`Proc ${myproc} verified.`)
printGlobalStats({ getWord: gets, putWord: puts })
finish(errs)
