// A task that reports when LAPI_Init returned (ms since the epoch, with fractions) and leaves:
// what scripts/startup-times.mjs measures a launcher's start against.
import * as L from '@amlapi/lapi/compat'

const h = L.ref(0)
if (L.LAPI_Init(h, { protocol: L.LAPI_INTERRUPT_OFF }) !== 0) process.exit(1)
const at = performance.timeOrigin + performance.now()
const r = L.ref(0)
L.LAPI_Qenv(h.value, L.TASK_ID, r)
console.log(`init ${r.value} ${at.toFixed(3)}`)
L.LAPI_Term(h.value)
