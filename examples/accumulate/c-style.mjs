// The accumulate example of the LAPI documentation ("An example of LAPI active message function"):
// D[0..N-1] += S[0..N-1] at the target, by an active message. The header handler `accumulate`
// gets a put_add_hdr_t { target_addr, length } in the user header, returns a buffer for the data
// and names `complete_accumulate` as completion handler, which adds the vectors after all the data
// has arrived. Every task accumulates into task 0. Run: npx --no -- lapirun -n 4 examples/accumulate/c-style.mjs [N]
import * as L from '@amlapi/lapi/compat'

const N = Number(process.argv[2] ?? 10000) // doubles; several packets of data
function check(rc, what) {
  if (rc !== L.LAPI_SUCCESS) {
    const m = L.ref('')
    L.LAPI_Msg_string(rc, m)
    throw new Error(`${what}: ${m.value}`)
  }
}

const h = L.ref(0)
check(L.LAPI_Init(h, { protocol: L.LAPI_INTERRUPT_OFF }), 'LAPI_Init')
const hndl = h.value
const r = L.ref(0)
L.LAPI_Qenv(hndl, L.TASK_ID, r)
const me = r.value
L.LAPI_Qenv(hndl, L.NUM_TASKS, r)
const numTasks = r.value
const malloc = (n) => {
  const a = L.ref(0)
  check(L.LAPIX_Malloc(hndl, n, a), 'LAPIX_Malloc')
  return a.value
}

// put_add_hdr_t: { target_addr: Addr (8 bytes), length: uint (4) + 4 bytes padding } = 16 bytes
const PUT_ADD_HDR_SZ = 16
const D = malloc(8 * N) // the target vector (on every task; task 0's is used)
const target_cntr = malloc(8)
const origin_cntr = malloc(8),
  completion_cntr = malloc(8)

function complete_accumulate(hndl, user_info) {
  const { target_addr, length, buf } = user_info
  const d = new Float64Array(L.LAPIX_View(hndl, target_addr, 8 * length).buffer, target_addr, length)
  const s = new Float64Array(L.LAPIX_View(hndl, buf, 8 * length).buffer, buf, length)
  for (let i = 0; i < length; i++) d[i] += s[i]
  L.LAPIX_Free(hndl, buf)
}

function accumulate(hndl, uhdr, uhdr_len, msg_len, completion_handler, user_info) {
  const dv = new DataView(uhdr.buffer, uhdr.byteOffset, uhdr_len)
  const target_addr = Number(dv.getBigUint64(0, true))
  const length = dv.getUint32(8, true)
  const buf = L.ref(0)
  if (L.LAPIX_Malloc(hndl, msg_len.msg_len, buf) !== L.LAPI_SUCCESS) throw new Error('no room for the data')
  user_info.value = { target_addr, length, buf: buf.value }
  completion_handler.value = complete_accumulate
  return buf.value // LAPI writes the udata here
}

const accumulate_addr = []
check(L.LAPI_Address_init(hndl, accumulate, accumulate_addr), 'Address_init')
const D_addr = []
check(L.LAPI_Address_init(hndl, D, D_addr), 'Address_init')
const cntr_addr = []
check(L.LAPI_Address_init(hndl, target_cntr, cntr_addr), 'Address_init')
check(L.LAPI_Gfence(hndl), 'Gfence')

// S: the origin vector, S[i] = me + i
const S = malloc(8 * N)
const sv = new Float64Array(L.LAPIX_View(hndl, S, 8 * N).buffer, S, N)
for (let i = 0; i < N; i++) sv[i] = me + i
const uhdr = new Uint8Array(PUT_ADD_HDR_SZ)
const udv = new DataView(uhdr.buffer)
udv.setBigUint64(0, BigInt(D_addr[0]), true)
udv.setUint32(8, N, true)
const target_process = 0
check(
  L.LAPI_Amsend(hndl, target_process, accumulate_addr[target_process], uhdr, PUT_ADD_HDR_SZ, S, 8 * N, cntr_addr[target_process], origin_cntr, completion_cntr),
  'LAPI_Amsend',
)
check(L.LAPI_Waitcntr(hndl, origin_cntr, 1, null), 'Waitcntr') // S may be reused
check(L.LAPI_Waitcntr(hndl, completion_cntr, 1, null), 'Waitcntr') // complete_accumulate ran at the target
if (me === 0) {
  check(L.LAPI_Waitcntr(hndl, target_cntr, numTasks, null), 'Waitcntr')
  const d = new Float64Array(L.LAPIX_View(hndl, D, 8 * N).buffer, D, N)
  const base = (numTasks * (numTasks - 1)) / 2
  for (let i = 0; i < N; i++) if (d[i] !== base + numTasks * i) throw new Error(`D[${i}] = ${d[i]}, expected ${base + numTasks * i}`)
  console.log(`accumulate: D = sum of ${numTasks} vectors of ${N} doubles, verified`)
}
check(L.LAPI_Gfence(hndl), 'Gfence')
check(L.LAPI_Term(hndl), 'Term')
