// A distributed hash table on @amlapi/pgas (the canonical example of UPC++): integer keys and
// values spread over all tasks, each key's owner chosen by a hash of the key. Every task inserts
// its keys, then looks up another task's keys, all tasks at once; two implementations:
//
//   rpc     the owner's part is an ordinary local table that only its owner touches: inserts go
//           to it in batches per owner by `rpcNoReply` (fire and forget; each task then tells every
//           other how many it sent, and serves until it got all), lookups in batches per owner by
//           `rpcNb` (several in flight), the owner's function answering from its part. A task's
//           own keys are inserted and looked up in place.
//   atomic  the table is global memory, open addressing in every task's part: an insert claims a
//           slot by a remote compare-and-swap on its key word (0: empty) and then puts the value
//           beside it; a lookup gets slots from the key's home slot on (several lookups in
//           flight), linear probing within the owner's part. No code runs at the owner.
//
// Run: npx lapirun -n <tasks> examples/pgas/dht.mjs [logKeysPerTask] [rpc|atomic]   (default 16 rpc)
//
// Keys are odd integers from a seeded generator (the global index of an insert, hashed, modulo 4 ×
// the number of inserts: some keys come more than once), each value a hash of its key; even keys
// are never inserted. The same generator is the sequential reference: the check (untimed) looks up
// through the table a sample of every task's keys and keys never inserted, checks every entry of
// each task's own part, and that the entries summed over tasks are the distinct keys, exactly.
//
// The layout and the key stream are those of the C + MPI counterpart, native/dht-mpi.c.
import { GlobalPtr, Pgas, ReduceOp } from '@amlapi/pgas'

const RPC_INSERT = 1 // remote function: insert a batch of (key, value) pairs
const RPC_LOOKUP = 2 // remote function: look up a batch of keys; answers (value, found) each
const RPC_DONE = 3 // remote function: the sender is done, after `count` inserts
const BATCH = 2048 // keys in one remote call
const IN_FLIGHT = 4 // lookup calls in flight (rpc), before the oldest is waited for
const WINDOW = 64 // lookups in flight (atomic)
const GROUP = 4 // slots one get of a lookup reads (atomic)
const SAMPLE = 64 // keys of every task looked up by every task in the check
const SEED = 0x2545f491

const pg = Pgas.init()
const P = pg.size
const me = pg.rank

// ─── hashes and the key stream (32-bit integer arithmetic, as in the C version) ───
/** MurmurHash3's 32-bit finaliser: a bijection on 32-bit words that mixes every bit. */
function mix(h) {
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}
/** The value stored with `key`. */
const valueFor = (key) => mix(key ^ 0x5bd1e995) | 0

function refuse(why) {
  if (me === 0) console.error(`dht: ${why}`)
  process.exitCode = 2
  pg.finalize()
}

const logK = process.argv[2] === undefined ? 16 : Number(process.argv[2])
const impl = process.argv[3] ?? 'rpc'
if (!Number.isInteger(logK) || logK < 0 || logK > 24) refuse(`logKeysPerTask must be an integer 0..24 (got ${process.argv[2]})`)
else if (impl !== 'rpc' && impl !== 'atomic') refuse(`the implementation is rpc or atomic (got ${impl})`)
else if (P * 2 ** logK > 2 ** 28) refuse(`${P} × 2^${logK} keys are more than this example's 2^28`)
else run()

function run() {
  const nPer = 2 ** logK // inserts per task
  const range = 4 * P * nPer // keys are 2·(0 .. range-1) + 1
  const keyAt = (g) => 2 * (mix(g ^ SEED) % range) + 1
  const absentAt = (g) => 2 * (mix(g ^ ~SEED) % range) + 2

  // Each task's part: `slots` slots of (key, value) int32 pairs, twice the keys a task inserts
  // (the load is about 0.44: some keys come more than once).
  const slots = 2 ** (logK + 1)
  const smask = slots - 1
  const owner = (h) => h % P
  const home = (h) => Math.floor(h / P) & smask

  const need = 8 * slots
  const seg = pg.lapi.segmentSize
  const MiB = 1 << 20
  if (need + MiB > seg) {
    refuse(
      `2^${logK} keys per task need ${(need / MiB).toFixed(1)} MiB of segment per task; the segment is ` +
        `${(seg / MiB).toFixed(1)} MiB. Use lapirun --segment-size ${Math.ceil(need / MiB) + 2}M (or AMLAPI_SEGMENT_SIZE).`,
    )
    return
  }
  const parts = pg.allocAll(need) // every task's part, same size
  const base = parts.map((p) => p.addr)
  const v8 = pg.localView(new GlobalPtr(me, base[me]), need)
  const T = new Int32Array(v8.buffer, v8.byteOffset, 2 * slots)
  T.fill(0)

  /** Inserts into my part (rpc: only I write it); 1 if the key is new. */
  function insertLocal(key, value) {
    for (let s = home(mix(key)), n = 0; n < slots; n++, s = (s + 1) & smask) {
      const k = T[2 * s]
      if (k === 0) {
        T[2 * s] = key
        T[2 * s + 1] = value
        return 1
      }
      if (k === key) {
        T[2 * s + 1] = value
        return 0
      }
    }
    throw new Error(`dht: task ${me}'s part is full`)
  }
  /** Looks `key` up in my part: writes its value to vals[i], 1 or 0 to found[i]. */
  function lookupLocal(key, vals, found, i) {
    for (let s = home(mix(key)), n = 0; n < slots; n++, s = (s + 1) & smask) {
      const k = T[2 * s]
      if (k === key) {
        vals[i] = T[2 * s + 1]
        found[i] = 1
        return
      }
      if (k === 0) break
    }
    vals[i] = 0
    found[i] = 0
  }

  // ─── rpc: the functions the owners run ───
  const recvFrom = new Float64Array(P)
  const expect = new Float64Array(P).fill(-1)
  const scratch = new Int32Array(2 * BATCH)
  const scratch8 = new Uint8Array(scratch.buffer)
  pg.registerRpc(RPC_INSERT, (bytes, src) => {
    scratch8.set(bytes) // msgpack hands over bytes at any offset: align them
    const n = bytes.length >> 3
    for (let j = 0; j < 2 * n; j += 2) insertLocal(scratch[j], scratch[j + 1])
    recvFrom[src] += n
  })
  pg.registerRpc(RPC_LOOKUP, (bytes) => {
    scratch8.set(bytes)
    const n = bytes.length >> 2
    const out = new Int32Array(2 * n) // n values, then n found flags
    const vals = out.subarray(0, n)
    const found = out.subarray(n)
    for (let j = 0; j < n; j++) lookupLocal(scratch[j], vals, found, j)
    return new Uint8Array(out.buffer)
  })
  pg.registerRpc(RPC_DONE, (count, src) => {
    expect[src] = count
  })

  // Per-owner buckets of up to BATCH keys (pairs for inserts), with each lookup's index.
  const bucket = new Int32Array(2 * BATCH * P)
  const bucketIdx = new Int32Array(BATCH * P)
  const count = new Int32Array(P)
  const sentTo = new Float64Array(P)

  function sendInserts(d) {
    const n = count[d]
    if (n === 0) return
    count[d] = 0
    pg.rpcNoReply(d, RPC_INSERT, new Uint8Array(bucket.buffer, 8 * BATCH * d, 8 * n))
    sentTo[d] += n
  }

  /** rpc: inserts keys keyAt(g0) .. keyAt(g0 + n - 1), then waits until every task's inserts are in. */
  function insertRpc(g0, n) {
    for (let i = 0; i < n; i++) {
      const key = keyAt(g0 + i)
      const value = valueFor(key)
      const d = owner(mix(key))
      if (d === me) {
        insertLocal(key, value)
        continue
      }
      const w = 2 * (BATCH * d + count[d]++)
      bucket[w] = key
      bucket[w + 1] = value
      if (count[d] === BATCH) sendInserts(d)
      if ((i & (BATCH - 1)) === BATCH - 1) pg.progress() // serve the others' inserts meanwhile
    }
    for (let d = 0; d < P; d++) if (d !== me) sendInserts(d)
    for (let d = 0; d < P; d++) if (d !== me) pg.rpcNoReply(d, RPC_DONE, sentTo[d])
    // Serve until every other task's inserts all arrived (counted: delivery order is not assumed).
    const nap = new Int32Array(new SharedArrayBuffer(4))
    for (let done = false; !done; ) {
      pg.progress()
      done = true
      for (let s = 0; s < P; s++) if (s !== me && (expect[s] < 0 || recvFrom[s] !== expect[s])) done = false
      if (!done) Atomics.wait(nap, 0, 0, 0.05)
    }
  }

  /** rpc: looks every key of `keys` up into vals and found, in batches per owner, IN_FLIGHT at a time. */
  function lookupRpc(keys, vals, found) {
    const calls = [] // [handle, indices] in the order sent
    const finish = () => {
      const [h, idx] = calls.shift()
      const r = pg.rpcWait(h)
      const n = idx.length
      scratch8.set(r.subarray(0, 8 * n))
      for (let j = 0; j < n; j++) {
        vals[idx[j]] = scratch[j]
        found[idx[j]] = scratch[n + j]
      }
    }
    const send = (d) => {
      const n = count[d]
      if (n === 0) return
      count[d] = 0
      const o = BATCH * d
      calls.push([pg.rpcNb(d, RPC_LOOKUP, new Uint8Array(bucket.buffer, 4 * o, 4 * n)), bucketIdx.slice(o, o + n)])
      if (calls.length > IN_FLIGHT) finish()
    }
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]
      const d = owner(mix(key))
      if (d === me) {
        lookupLocal(key, vals, found, i)
        continue
      }
      const j = BATCH * d + count[d]++
      bucket[j] = key
      bucketIdx[j] = i
      if (count[d] === BATCH) send(d)
    }
    for (let d = 0; d < P; d++) if (d !== me) send(d)
    while (calls.length > 0) finish()
  }

  // ─── atomic: slots claimed by compare-and-swap, values put, lookups by gets ───

  /** atomic: inserts keys keyAt(g0) .. keyAt(g0 + n - 1); the values' puts are complete on return. */
  function insertAtomic(g0, n) {
    const vbuf = new Int32Array(n) // each put's source, unchanged until syncAll
    for (let i = 0; i < n; i++) {
      const key = keyAt(g0 + i)
      const h = mix(key)
      const d = owner(h)
      for (let s = home(h), m = 0; ; s = (s + 1) & smask) {
        if (++m > slots) throw new Error(`dht: task ${d}'s part is full`)
        const addr = base[d] + 8 * s
        const old = pg.compareAndSwap(new GlobalPtr(d, addr), 0, key)
        if (old !== 0 && old !== key) continue // another key's slot: probe on
        // (a key inserted twice: the second insert finds it and writes the same value again)
        vbuf[i] = valueFor(key)
        pg.putNbi(new GlobalPtr(d, addr + 4), vbuf.subarray(i, i + 1))
        break
      }
    }
    pg.syncAll()
  }

  const got = new Int32Array(2 * GROUP * WINDOW) // each lookup in flight: GROUP slots
  const got8 = new Uint8Array(got.buffer)
  const views = Array.from({ length: WINDOW }, (_, w) => got8.subarray(8 * GROUP * w, 8 * GROUP * (w + 1)))

  /** The slots of lookup w from slot s on, as many as fit before the end of the part (≤ GROUP). */
  const fetchNb = (w, d, s) => pg.getNb(new GlobalPtr(d, base[d] + 8 * s), slots - s >= GROUP ? views[w] : views[w].subarray(0, 8 * (slots - s)))

  /** atomic: looks every key of `keys` up into vals and found, WINDOW at a time. */
  function lookupAtomic(keys, vals, found) {
    const hs = new Array(WINDOW)
    for (let i0 = 0; i0 < keys.length; i0 += WINDOW) {
      const n = Math.min(WINDOW, keys.length - i0)
      for (let w = 0; w < n; w++) {
        const h = mix(keys[i0 + w])
        hs[w] = fetchNb(w, owner(h), home(h))
      }
      pg.waitAll(n === WINDOW ? hs : hs.slice(0, n))
      for (let w = 0; w < n; w++) {
        const key = keys[i0 + w]
        const h = mix(key)
        const d = owner(h)
        // the group fetched, then (rarely) the next ones, one blocking get at a time
        for (let s = home(h), m = 0; ; ) {
          const k = Math.min(GROUP, slots - s)
          let j = 0
          while (j < k && got[2 * (GROUP * w + j)] !== key && got[2 * (GROUP * w + j)] !== 0) j++
          if (j < k) {
            const hit = got[2 * (GROUP * w + j)] === key
            vals[i0 + w] = hit ? got[2 * (GROUP * w + j) + 1] : 0
            found[i0 + w] = hit ? 1 : 0
            break
          }
          m += k
          s = (s + k) & smask
          if (m >= slots) {
            vals[i0 + w] = 0
            found[i0 + w] = 0
            break
          }
          pg.wait(fetchNb(w, d, s))
        }
      }
    }
  }

  const insert = impl === 'rpc' ? insertRpc : insertAtomic
  const lookup = impl === 'rpc' ? lookupRpc : lookupAtomic

  // ─── the timed phases: every task inserts its keys, then looks up the next task's ───
  const time = new Float64Array(2)
  pg.barrier()
  let t0 = performance.now()
  insert(me * nPer, nPer)
  pg.barrier()
  time[0] = (performance.now() - t0) / 1e3

  const next = (me + 1) % P
  const keys = new Int32Array(nPer)
  for (let i = 0; i < nPer; i++) keys[i] = keyAt(next * nPer + i)
  const vals = new Int32Array(nPer)
  const found = new Uint8Array(nPer)
  pg.barrier()
  t0 = performance.now()
  lookup(keys, vals, found)
  pg.barrier()
  time[1] = (performance.now() - t0) / 1e3
  pg.allreduce(time, time, ReduceOp.MAX)

  // ─── the check (untimed), against the key stream itself ───
  let bad = 0
  const fail = (what) => {
    if (bad++ < 5) console.log(`dht: task ${me}: ${what}`)
  }
  for (let i = 0; i < nPer; i++) {
    if (found[i] !== 1 || vals[i] !== valueFor(keys[i])) fail(`key ${keys[i]} of task ${next}: ${found[i] === 1 ? `value ${vals[i]}` : 'not found'}`)
  }
  // A sample of every task's keys, and as many keys never inserted, looked up through the table.
  const sample = new Int32Array(2 * SAMPLE * P)
  const m = Math.min(SAMPLE, nPer)
  for (let t = 0, j = 0; t < P; t++) {
    for (let k = 0; k < m; k++) sample[j++] = keyAt(t * nPer + (((Math.imul(k, 0x9e3779b1 | 0) + me) >>> 0) % nPer))
    for (let k = 0; k < m; k++) sample[j++] = absentAt(me * SAMPLE * P + t * SAMPLE + k)
  }
  const sk = sample.subarray(0, 2 * m * P)
  const sv = new Int32Array(sk.length)
  const sf = new Uint8Array(sk.length)
  lookup(sk, sv, sf)
  for (let i = 0; i < sk.length; i++) {
    const present = (sk[i] & 1) === 1
    if (present && (sf[i] !== 1 || sv[i] !== valueFor(sk[i]))) fail(`sampled key ${sk[i]}: ${sf[i] === 1 ? `value ${sv[i]}` : 'not found'}`)
    if (!present && sf[i] !== 0) fail(`key ${sk[i]}, never inserted, found`)
  }
  // My part against the whole stream: every key I own is there with its value, and the distinct
  // keys I own are as many as my entries (so there is nothing else).
  const mine = []
  for (let g = 0; g < P * nPer; g++) {
    const key = keyAt(g)
    if (owner(mix(key)) === me) mine.push(key)
  }
  const ref = Int32Array.from(mine).sort()
  let distinct = 0
  const one1 = new Int32Array(1)
  const oneF = new Uint8Array(1)
  for (let i = 0; i < ref.length; i++) {
    if (i > 0 && ref[i] === ref[i - 1]) continue
    distinct++
    lookupLocal(ref[i], one1, oneF, 0)
    if (oneF[0] !== 1 || one1[0] !== valueFor(ref[i])) fail(`own key ${ref[i]} ${oneF[0] === 1 ? `has value ${one1[0]}` : 'is missing'}`)
  }
  let entries = 0
  for (let s = 0; s < slots; s++) if (T[2 * s] !== 0) entries++
  const sums = new Float64Array([entries, distinct, bad, sk.length])
  pg.allreduce(sums, sums, ReduceOp.SUM)
  const ok = sums[2] === 0 && sums[0] === sums[1]

  if (me === 0) {
    const total = P * nPer
    console.log(`DHT: ${impl === 'rpc' ? 'remote procedure calls' : 'remote atomics, puts and gets'}, ${P} task(s)`)
    console.log(`Keys inserted     = ${total} (2^${logK} per task), ${sums[1]} distinct`)
    console.log(`Table             = 2^${logK + 1} slots per task, load ${(sums[0] / (P * slots)).toFixed(3)}`)
    console.log(`Insert time       = ${time[0].toFixed(4)} seconds: ${(total / time[0] / 1e6).toFixed(4)} million inserts per second (total)`)
    console.log(`Lookup time       = ${time[1].toFixed(4)} seconds: ${(total / time[1] / 1e6).toFixed(4)} million lookups per second (total)`)
    console.log(
      `Entries           = ${sums[0]} (${sums[0] === sums[1] ? 'the distinct keys' : `not the ${sums[1]} distinct keys`}); ` +
        `sampled lookups ${sums[3]}; errors ${sums[2]}`,
    )
    console.log(ok ? `DHT 2^${logK} ${impl} verified` : `DHT 2^${logK} ${impl} verification FAILED`)
  }
  if (!ok) process.exitCode = 1
  pg.barrier()
  pg.freeAll(parts)
  pg.finalize()
}
