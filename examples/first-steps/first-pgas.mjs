// The first PGAS program of docs/getting-started.md: a shared array, a get and a put into a
// neighbour's part, barriers and an all-reduce. Run: npx --no -- lapirun -n 4 first-pgas.mjs
import { Pgas, ReduceOp } from '@amlapi/pgas'

const pg = Pgas.init() // join the job and start the runtime
const me = pg.rank,
  n = pg.size // 0 .. n-1, and n
const right = (me + 1) % n

// collective: 4 numbers per task, in blocks (task t owns elements 4t .. 4t+3), all 0
const a = pg.sharedArray(Float64Array, 4 * n, { kind: 'blocked' })
const mine = a.localView() // my block, a live Float64Array
mine.set([10 * me, 10 * me + 1, 10 * me + 2, 0])
pg.barrier() // every block is filled

const got = new Float64Array(1)
pg.get(a.ptr(4 * right), got) // element 0 of my right neighbour's block
pg.put(a.ptr(4 * right + 3), new Float64Array([100 + me])) // into the last element of its block
pg.barrier() // every put has landed

const sum = new Float64Array([mine.reduce((s, x) => s + x, 0)])
pg.allreduce(sum, sum, ReduceOp.SUM) // every task gets the total of all tasks' sums
console.log(`task ${me} of ${n}: got ${got[0]} from task ${right}; my block is ${mine.join(' ')}; the array adds up to ${sum[0]}`)
pg.finalize()
