// The first AM-2 program, idiomatic face (@amlapi/am2): every task asks its right neighbour to
// square 1..10 with Short requests; the neighbour's request handler replies with the square, and
// the reply handler adds them up.
// Run: npx --no -- lapirun -n 4 first-am2.mjs       (node first-am2.mjs: a job of one task)
// docs/getting-started.md says what it prints and why.
import { Am2 } from '@amlapi/am2'

const { bundle, endpoint: ep, rank, size } = Am2.spmd() // my bundle and endpoint; task t is at index t
const right = (rank + 1) % size
const SQUARE = 1,
  SQUARED = 2 // handler indices, the same on every task
let served = 0,
  replies = 0,
  sum = 0

ep.setHandler(SQUARE, (token, x) => {
  served++
  token.reply(SQUARED, x * x)
}) // request handler
ep.setHandler(SQUARED, (token, sq) => {
  replies++
  sum += sq
}) // reply handler
Am2.barrier() // every task has its handlers before anyone sends

for (let x = 1; x <= 10; x++) ep.request(right, SQUARE, x)
while (replies < 10) bundle.poll() // handlers run only inside polls (and waits)
Am2.barrier() // runs handlers while it waits: all served

console.log(`task ${rank} of ${size}: task ${right} squared 1..10 for me (sum ${sum}); I served ${served} requests`)
Am2.finalize()
