// The same Put/Get with the idiomatic face (@amlapi/lapi): Lapi, Counter, async waits.
// Run: npx --no -- lapirun -n 4 --label examples/put-get/idiomatic.mjs
import { Lapi } from '@amlapi/lapi'

const lapi = Lapi.init()
const me = lapi.rank
const right = (me + 1) % lapi.size

const buf = lapi.malloc(256)
const arrived = lapi.counter()
const bufs = lapi.addressInit(buf)
const arrivedAt = lapi.addressInit(arrived)

const text = new TextEncoder().encode(`greetings from task ${me}`)
const sent = lapi.counter()
lapi.put(right, text.length, bufs[right], text, { tgtCntr: arrivedAt[right], orgCntr: sent })
sent.wait(1) // the origin buffer may be reused
await arrived.waitAsync(1) // the left neighbour's Put landed; the event loop kept running
console.log(`task ${me} got: ${new TextDecoder().decode(lapi.view(buf, text.length))}`)

await lapi.gfenceAsync()
const back = new Uint8Array(64)
const got = lapi.counter()
lapi.get(right, 64, bufs[right], back, { orgCntr: got })
got.wait(1)
console.log(`task ${me} read from task ${right}: ${new TextDecoder().decode(back.subarray(0, back.indexOf(0)))}`)

await lapi.gfenceAsync()
lapi.finalize()
