// The first LAPI program, C-style face (@amlapi/lapi/compat): the same as first-lapi.mjs with
// IBM's LAPI_* names and argument order; calls return a code (0 = LAPI_SUCCESS) and out-values
// come back in refs ({ value }).
// Run: npx --no -- lapirun -n 4 first-lapi-c.mjs    (node first-lapi-c.mjs: a job of one task)
import * as L from '@amlapi/lapi/compat'

function check(rc, what) {
  if (rc !== L.LAPI_SUCCESS) {
    const m = L.ref('')
    L.LAPI_Msg_string(rc, m)
    throw new Error(`${what}: ${m.value}`)
  }
}

const h = L.ref(0)
check(L.LAPI_Init(h, { protocol: L.LAPI_INTERRUPT_OFF }), 'LAPI_Init') // polling mode
const hndl = h.value
const r = L.ref(0)
check(L.LAPI_Qenv(hndl, L.TASK_ID, r), 'LAPI_Qenv')
const me = r.value
check(L.LAPI_Qenv(hndl, L.NUM_TASKS, r), 'LAPI_Qenv')
const n = r.value
const right = (me + 1) % n

function malloc(nbytes) {
  // zero-filled memory of my segment: an Addr
  const a = L.ref(0)
  check(L.LAPIX_Malloc(hndl, nbytes, a), 'LAPIX_Malloc')
  return a.value
}
const inbox = malloc(64)
const arrived = malloc(8) // a counter: a word of my segment, 0
const checkedIn = malloc(8)

const inboxes = [],
  arrivedAt = [],
  checkedInAt = []
check(L.LAPI_Address_init(hndl, inbox, inboxes), 'LAPI_Address_init')
check(L.LAPI_Address_init(hndl, arrived, arrivedAt), 'LAPI_Address_init')
check(L.LAPI_Address_init(hndl, checkedIn, checkedInAt), 'LAPI_Address_init')

const greeting = new TextEncoder().encode(`hello from task ${me}`)
check(L.LAPI_Put(hndl, right, greeting.length, inboxes[right], greeting, arrivedAt[right], 0, 0), 'LAPI_Put')
check(L.LAPI_Rmw(hndl, L.FETCH_AND_ADD, 0, checkedInAt[0], [1], null, 0), 'LAPI_Rmw')

check(L.LAPI_Waitcntr(hndl, arrived, 1, null), 'LAPI_Waitcntr')
const text = new TextDecoder().decode(L.LAPIX_View(hndl, inbox, 64)).replace(/\0+$/, '')
console.log(`task ${me} of ${n}: my inbox says "${text}"`)

check(L.LAPI_Gfence(hndl), 'LAPI_Gfence') // fence + barrier
if (me === 0) {
  const old = L.ref(0)
  check(L.LAPI_Rmw(hndl, L.FETCH_AND_ADD, 0, checkedIn, [0], old, 0), 'LAPI_Rmw')
  console.log(`task 0: ${old.value} of ${n} tasks checked in`)
}
check(L.LAPI_Term(hndl), 'LAPI_Term')
