// testreduce: a reduction to task 0 (the AMX test suite, AM-2 reference section 4). Every task
// sends Request1(handler 1, arg = its rank) to task 0; the handler does not reply (am2 sends the
// automatic empty reply), and task 0's own request is a loopback. Task 0 blocks until it has P
// calls, printing "." per wakeup, then "Reduction result: S" and "Result verified!" when
// S == P(P-1)/2.
// Run: npx --no -- lapirun -n 4 examples/amx/testreduce.mjs
import { AM_Request1, AM_SetHandler, AMX_SPMDBarrier } from '@amlapi/am2/compat'
import { AM_PollBlock, AM_Safe, TEST_STARTUP, eb, ep, finish, myproc, numprocs, printGlobalStats } from './apputils.mjs'

const REDUCE_HANDLER = 1

let total = 0
let numcalls = 0

function reduceRequestHandler(token, val) {
  console.log(`reduce_request_handler got: ${val}`)
  total += val
  numcalls++
}

TEST_STARTUP(0, 0, '')
AM_Safe(AM_SetHandler(ep, REDUCE_HANDLER, reduceRequestHandler), 'AM_SetHandler(ep, REDUCE_HANDLER, reduceRequestHandler)')
AM_Safe(AMX_SPMDBarrier(), 'AMX_SPMDBarrier()')

AM_Safe(AM_Request1(ep, 0, REDUCE_HANDLER, myproc), 'AM_Request1(ep, 0, REDUCE_HANDLER, myproc)')

let errs = 0
if (myproc === 0) {
  let dots = ''
  while (numcalls < numprocs) {
    AM_PollBlock(eb)
    dots += '.'
  }
  let correct = 0
  for (let i = 0; i < numprocs; i++) correct += i
  console.log(`${dots}\nReduction result: ${total}`)
  if (total === correct && numcalls === numprocs) {
    console.log('Result verified!')
  } else {
    console.log(`ERROR!!! Result incorrect! total=${total}  correcttotal=${correct}  calls=${numcalls}`)
    errs++
  }
}

AM_Safe(AMX_SPMDBarrier(), 'AMX_SPMDBarrier()')
printGlobalStats({ 'reduce calls handled': numcalls })
finish(errs)
