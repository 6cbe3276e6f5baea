// The first AM-2 program, C-style face (@amlapi/am2/compat): the same as first-am2.mjs with the
// AM_* / AMX_* names of AM-2 and AMUDP; calls return an AM code (0 = AM_OK).
// Run: npx --no -- lapirun -n 4 first-am2-c.mjs     (node first-am2-c.mjs: a job of one task)
import * as A from '@amlapi/am2/compat'

function check(rc, what) {
  if (rc !== A.AM_OK) throw new Error(`${what} returned AM code ${rc}`)
}

const eb = A.ref(null),
  ep = A.ref(null)
check(A.AMX_SPMDStartup(eb, ep), 'AMX_SPMDStartup') // my bundle and endpoint; task t is at index t
const rank = A.AMX_SPMDMyProc(),
  procs = A.AMX_SPMDNumProcs()
const right = (rank + 1) % procs
const SQUARE = 1,
  SQUARED = 2
let served = 0,
  replies = 0,
  sum = 0

check(
  A.AM_SetHandler(ep.value, SQUARE, (token, x) => {
    // request handler
    served++
    check(A.AM_Reply1(token, SQUARED, x * x), 'AM_Reply1')
  }),
  'AM_SetHandler',
)
check(
  A.AM_SetHandler(ep.value, SQUARED, (token, sq) => {
    replies++
    sum += sq
  }),
  'AM_SetHandler',
) // reply handler
check(A.AMX_SPMDBarrier(), 'AMX_SPMDBarrier')

for (let x = 1; x <= 10; x++) check(A.AM_Request1(ep.value, right, SQUARE, x), 'AM_Request1')
while (replies < 10) check(A.AM_Poll(eb.value), 'AM_Poll')
check(A.AMX_SPMDBarrier(), 'AMX_SPMDBarrier')

console.log(`task ${rank} of ${procs}: task ${right} squared 1..10 for me (sum ${sum}); I served ${served} requests`)
check(A.AM_Terminate(), 'AM_Terminate')
