// Put/Get in LAPI's C-style face (@amlapi/lapi/compat), as a ported program writes it.
// Run: npx --no -- lapirun -n 4 --label examples/put-get/c-style.mjs
import * as L from '@amlapi/lapi/compat'

function check(rc, what) {
  if (rc !== L.LAPI_SUCCESS) {
    const msg = L.ref('')
    L.LAPI_Msg_string(rc, msg)
    throw new Error(`${what} failed: ${rc} ${msg.value}`)
  }
}

const h = L.ref(0)
check(L.LAPI_Init(h, { protocol: L.LAPI_INTERRUPT_OFF, err_hndlr: (hh, code) => console.error('LAPI error', code) }), 'LAPI_Init')
const hndl = h.value
const me = L.ref(0)
const n = L.ref(0)
check(L.LAPI_Qenv(hndl, L.TASK_ID, me), 'Qenv')
check(L.LAPI_Qenv(hndl, L.NUM_TASKS, n), 'Qenv')
const right = (me.value + 1) % n.value

// a buffer and three counters in my segment; exchange the buffer and the target counter
const buf = L.ref(0)
const tgtC = L.ref(0)
const orgC = L.ref(0)
const cmplC = L.ref(0)
check(L.LAPIX_Malloc(hndl, 256, buf), 'malloc')
for (const c of [tgtC, orgC, cmplC]) {
  check(L.LAPIX_Malloc(hndl, 8, c), 'malloc')
  check(L.LAPI_Setcntr(hndl, c.value, 0), 'Setcntr')
}
const bufs = []
const tgtCs = []
check(L.LAPI_Address_init(hndl, buf.value, bufs), 'Address_init')
check(L.LAPI_Address_init(hndl, tgtC.value, tgtCs), 'Address_init')

// signalled Put: the right neighbour waits on its own counter; I wait until my buffer is reusable
const text = new TextEncoder().encode(`greetings from task ${me.value}`)
check(L.LAPI_Put(hndl, right, text.length, bufs[right], text, tgtCs[right], orgC.value, cmplC.value), 'Put')
check(L.LAPI_Waitcntr(hndl, orgC.value, 1, null), 'Waitcntr org')
check(L.LAPI_Waitcntr(hndl, cmplC.value, 1, null), 'Waitcntr cmpl')
check(L.LAPI_Waitcntr(hndl, tgtC.value, 1, null), 'Waitcntr tgt')
console.log(`task ${me.value} got: ${new TextDecoder().decode(L.LAPIX_View(hndl, buf.value, text.length))}`)

// blocking Get: read the right neighbour's buffer back
check(L.LAPI_Gfence(hndl), 'Gfence')
const back = new Uint8Array(64)
check(L.LAPI_Get(hndl, right, 64, bufs[right], back, 0, orgC.value), 'Get')
check(L.LAPI_Waitcntr(hndl, orgC.value, 1, null), 'Waitcntr get')
console.log(`task ${me.value} read from task ${right}: ${new TextDecoder().decode(back.subarray(0, back.indexOf(0)))}`)

check(L.LAPI_Gfence(hndl), 'Gfence')
check(L.LAPI_Term(hndl), 'Term')
