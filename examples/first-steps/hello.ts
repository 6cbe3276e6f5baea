// The TypeScript program of docs/getting-started.md: run it with `npx --no -- lapirun -n 4 hello.ts`
// where Node strips types (22.18 and later), or compile it with tsc first.
import { Pgas, ReduceOp } from '@amlapi/pgas'

const pg: Pgas = Pgas.init()
const ids = new Float64Array([pg.rank])
pg.allreduce(ids, ids, ReduceOp.SUM) // every task gets 0 + 1 + … + (size - 1)
const line: string = `hello from task ${pg.rank} of ${pg.size}; the task ids add up to ${ids[0]}`
console.log(line)
pg.finalize()
