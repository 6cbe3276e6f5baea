// The first LAPI program, idiomatic face (@amlapi/lapi): every task Puts a greeting into its right
// neighbour's inbox, signalled by a counter there, and checks in at task 0 with an atomic add.
// Run: npx --no -- lapirun -n 4 first-lapi.mjs      (node first-lapi.mjs: a job of one task)
// docs/getting-started.md says what it prints and why.
import { Lapi } from '@amlapi/lapi'

const lapi = Lapi.init() // join the job (polling mode)
const me = lapi.rank // 0 .. n-1
const n = lapi.size
const right = (me + 1) % n

// memory of my segment; an Addr is a byte offset into the segment of the task that owns it
const inbox = lapi.malloc(64) // 64 zero-filled bytes
const arrived = lapi.counter() // a counter word, 0
const checkedIn = lapi.malloc(8) // a word for the atomic add (task 0's is used)

// all-gathers (collective): element t is task t's Addr
const inboxes = lapi.addressInit(inbox)
const arrivedAt = lapi.addressInit(arrived) // (a Counter stands for its Addr)
const checkedInAt = lapi.addressInit(checkedIn)

const greeting = new TextEncoder().encode(`hello from task ${me}`)
lapi.put(right, greeting.length, inboxes[right], greeting, { tgtCntr: arrivedAt[right] })
lapi.fetchAdd(0, checkedInAt[0], 1) // atomic at task 0; returns the old value

arrived.wait(1) // my left neighbour's Put has landed
const text = new TextDecoder().decode(lapi.view(inbox, 64)).replace(/\0+$/, '')
console.log(`task ${me} of ${n}: my inbox says "${text}"`)

lapi.gfence() // fence + barrier: every task's Puts and adds are done
if (me === 0) console.log(`task 0: ${lapi.fetchAdd(0, checkedIn, 0)} of ${n} tasks checked in`)
lapi.finalize()
