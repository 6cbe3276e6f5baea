// The README's first example: a ring of Puts in the C-style face, as a LAPI program is written.
// Run: npx --no -- lapirun -n 4 --label ring.mjs
import * as L from '@amlapi/lapi/compat'

const h = L.ref(0)
L.LAPI_Init(h, { protocol: L.LAPI_INTERRUPT_OFF }) // polling mode, as AMLAPI runs
const me = L.ref(0),
  n = L.ref(0)
L.LAPI_Qenv(h.value, L.TASK_ID, me)
L.LAPI_Qenv(h.value, L.NUM_TASKS, n)
const buf = L.ref(0),
  cntr = L.ref(0)
L.LAPIX_Malloc(h.value, 64, buf)
L.LAPIX_Malloc(h.value, 8, cntr) // memory of my segment
const bufs = [],
  cntrs = []
L.LAPI_Address_init(h.value, buf.value, bufs) // all-gather the addresses
L.LAPI_Address_init(h.value, cntr.value, cntrs)
const right = (me.value + 1) % n.value,
  left = (me.value + n.value - 1) % n.value
L.LAPI_Put(h.value, right, 5, bufs[right], new TextEncoder().encode('hello'), cntrs[right], 0, 0)
L.LAPI_Waitcntr(h.value, cntr.value, 1, null) // my left neighbour's Put landed
const got = new TextDecoder().decode(L.LAPIX_View(h.value, buf.value, 5))
console.log(`task ${me.value}: task ${left} put "${got}" into my buffer`)
L.LAPI_Gfence(h.value)
L.LAPI_Term(h.value)
