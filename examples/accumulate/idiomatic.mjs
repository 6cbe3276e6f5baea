// The accumulate example in the idiomatic face: D += S at task 0 by an active message whose
// completion handler adds the vectors. Run: npx --no -- lapirun -n 4 examples/accumulate/idiomatic.mjs [N]
import { Lapi } from '@amlapi/lapi'

const N = Number(process.argv[2] ?? 10000)
const lapi = Lapi.init()
const me = lapi.rank,
  numTasks = lapi.size
const D = lapi.malloc(8 * N)
const arrived = lapi.counter()
const f64 = (addr, n) => new Float64Array(lapi.view(addr, 8 * n).buffer, addr, n)

/** Header handler: the user header holds { target_addr: u64, length: u32 }. */
function accumulate(hndl, uhdr, uhdrLen, info, completion, userInfo) {
  const dv = new DataView(uhdr.buffer, uhdr.byteOffset, uhdrLen)
  const target = Number(dv.getBigUint64(0, true)),
    length = dv.getUint32(8, true)
  const buf = lapi.malloc(info.msg_len)
  userInfo.value = { target, length, buf }
  completion.value = (h, { target, length, buf }) => {
    const d = f64(target, length),
      s = f64(buf, length)
    for (let i = 0; i < length; i++) d[i] += s[i]
    lapi.free(buf)
  }
  return buf
}

const handler = lapi.addressInit(accumulate)
const dAt = lapi.addressInit(D)
const arrivedAt = lapi.addressInit(arrived.addr)
await lapi.gfenceAsync()

const S = new Float64Array(N).map((_, i) => me + i)
const uhdr = new Uint8Array(16)
new DataView(uhdr.buffer).setBigUint64(0, BigInt(dAt[0]), true)
new DataView(uhdr.buffer).setUint32(8, N, true)
const sent = lapi.counter(),
  done = lapi.counter()
lapi.amsend(0, handler[0], uhdr, new Uint8Array(S.buffer), { tgtCntr: arrivedAt[0], orgCntr: sent.addr, cmplCntr: done.addr })
await sent.waitAsync(1)
await done.waitAsync(1)
if (me === 0) {
  await arrived.waitAsync(numTasks)
  const d = f64(D, N),
    base = (numTasks * (numTasks - 1)) / 2
  for (let i = 0; i < N; i++) if (d[i] !== base + numTasks * i) throw new Error(`D[${i}] = ${d[i]}`)
  console.log(`accumulate: D = sum of ${numTasks} vectors of ${N} doubles, verified`)
}
await lapi.gfenceAsync()
lapi.finalize()
