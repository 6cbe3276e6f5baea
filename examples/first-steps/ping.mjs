// The README's AM-2 example: every task but 0 pings task 0 with Short requests, one round trip
// at a time, and says how many replies it got and how long a round trip took.
// Run: npx --no -- lapirun -n 2 ping.mjs [round trips, default 1000]
import * as A from '@amlapi/am2/compat'

const eb = A.ref(null),
  ep = A.ref(null)
A.AMX_SPMDStartup(eb, ep) // one bundle + endpoint per task, task i at index i
const me = A.AMX_SPMDMyProc()
const N = Number(process.argv[2] ?? 1000) // round trips
let replies = 0,
  answered = 0
A.AM_SetHandler(ep.value, 1, (token, x) => {
  answered++
  A.AM_Reply1(token, 2, x + 1)
}) // request handler
A.AM_SetHandler(ep.value, 2, (token, y) => {
  replies++
}) // reply handler
A.AMX_SPMDBarrier()
if (me !== 0) {
  const t0 = performance.now()
  for (let i = 0; i < N; i++) {
    A.AM_Request1(ep.value, 0, 1, i)
    while (replies <= i) A.AM_Poll(eb.value) // the reply handler runs inside AM_Poll
  }
  const us = ((performance.now() - t0) * 1000) / N // ms → µs, per round trip
  console.log(`task ${me}: ${replies} replies from task 0, ${us.toFixed(1)} µs per round trip`)
}
A.AMX_SPMDBarrier() // runs handlers while it waits
if (me === 0) console.log(`task 0: answered ${answered} requests`)
