// HPC Challenge RandomAccess (GUPS) on @amlapi/pgas.
// Benchmark definition: HPC Challenge RandomAccess, hpcc 1.5 (RandomAccess.h, utility.c,
// MPIRandomAccess.c, verification.c): the x^64+x^2+x+1 stream (POLY 7), HPCC_starts, a table of
// 2^n 64-bit words with Table[i] = i, 4 × TableSize updates Table[a & (TableSize-1)] ^= a, at
// most 1024 pending updates per task, and a verification that allows errors in ≤ 1% of the table.
// Run: npx lapirun -n <tasks> examples/pgas/randomaccess.mjs [logTableSize]   (default 20)
//
// The table is a blocked shared array (TableSize / P words per task, P a power of two). Each task
// generates its slice of the stream as MPI RandomAccess does; updates of its own part are applied
// at once, others go to per-destination buckets (1024 pending in all, the fullest sent when full).
// A bucket for a task of the same process goes into a ring in that task's segment (written
// through shared memory); one for another process goes by a remote procedure call. Either way the
// owner alone XORs into its part, with plain loads and stores: exact, without Atomics' cost.
import { Pgas, ReduceOp, GlobalPtr } from '@amlapi/pgas'

const MAX_PENDING = 1024            // HPCC's MAX_TOTAL_PENDING_UPDATES (look-ahead limit)
const HDR = 64                      // ring header, int32 words: head @0, tail @16, done @32, sender waits @48
const SPIN_MS = 0.05                // how long a sender spins on a full ring before it sleeps
const RPC_UPDATES = 1               // remote function: apply a bucket of (lo, hi) pairs
const RPC_DONE = 2                  // remote function: the sender is done, after `count` updates

const pg = Pgas.init()
const P = pg.size
// A ring from one task to a co-located one holds sent, not yet applied updates (what MPI's
// buffers hold in HPCC): 32768 (256 KiB), fewer with many tasks (at most 4 MiB of rings a task).
// Room to spare lets the tasks run on when one of them is held up (more tasks than cores).
const RING = Math.max(2048, Math.min(32768, 2 ** Math.floor(Math.log2((1 << 19) / Math.max(P, 1)))))
const RING_WORDS = HDR + 2 * RING   // header + (lo, hi) pairs
const me = pg.rank

// ─── the random stream (HPCC_starts with BigInt: only at setup) ───
const M64 = (1n << 64n) - 1n
const PERIOD = 1317624576693539401n
const step64 = (r) => ((r << 1n) & M64) ^ ((r >> 63n) !== 0n ? 7n : 0n)

/** s_n = x^n mod (x^64 + x^2 + x + 1): left-to-right square-and-multiply, as HPCC_starts. */
function starts (n) {
  while (n < 0n) n += PERIOD
  while (n > PERIOD) n -= PERIOD
  if (n === 0n) return 1n
  const m2 = []
  for (let i = 0, t = 1n; i < 64; i++) { m2.push(t); t = step64(step64(t)) }
  let i = 62
  while (i >= 0 && ((n >> BigInt(i)) & 1n) === 0n) i--
  let ran = 2n
  while (i > 0) {
    let t = 0n
    for (let j = 0; j < 64; j++) if (((ran >> BigInt(j)) & 1n) !== 0n) t ^= m2[j]
    ran = t
    i--
    if (((n >> BigInt(i)) & 1n) !== 0n) ran = step64(ran)
  }
  return ran
}

// ─── arguments and sizes ───
function refuse (why) {
  if (me === 0) console.error(`randomaccess: ${why}`)
  process.exitCode = 2
}

const logN = process.argv[2] === undefined ? 20 : Number(process.argv[2])
const logP = Math.log2(P)
if (!Number.isInteger(logN) || logN < 1 || logN > 31) refuse(`logTableSize must be an integer 1..31 (got ${process.argv[2]})`)
else if (!Number.isInteger(logP)) refuse(`the number of tasks must be a power of two (got ${P})`)
else if (logN < logP) refuse(`2^${logN} words cannot be spread over ${P} tasks`)
else run()

function run () {
  const N = 2 ** logN                // TableSize
  const nLocal = N / P               // words per task
  const gStart = me * nLocal         // my first global index
  const mask = N - 1
  const shift = logN - logP          // owner = g >>> shift
  const lmask = nLocal - 1

  // The table and the rings must fit the segment (with room for the runtime's own needs).
  const need = nLocal * 8 + P * RING_WORDS * 4
  const seg = pg.lapi.segmentSize
  const MiB = 1 << 20
  const tooSmall = () => refuse(`2^${logN} words on ${P} task(s) need ${(need / MiB).toFixed(1)} MiB of segment per task; ` +
    `the segment is ${(seg / MiB).toFixed(1)} MiB. Use lapirun --segment-size ${Math.ceil(need / MiB) + 2}M (or AMLAPI_SEGMENT_SIZE).`)
  if (need + MiB > seg) { tooSmall(); return }
  let table, rings
  try {
    table = pg.sharedArray(BigInt64Array, N, { kind: 'blocked' })
    rings = pg.allocAll(P * RING_WORDS * 4)   // on task d, ring s carries updates from task s
  } catch (e) {
    if (e?.code !== undefined) { tooSmall(); return }
    throw e
  }

  // My part as (lo, hi) int32 pairs; Table[i] = i.
  const tv = table.localView()
  const T = new Int32Array(tv.buffer, tv.byteOffset, 2 * nLocal)
  for (let o = 0; o < nLocal; o++) { T[2 * o] = gStart + o; T[2 * o + 1] = 0 }

  // Rings: `inbox` are mine (one per source), `outbox[d]` my ring on co-located task d.
  const i32 = (p, bytes) => { const u = pg.localView(p, bytes); return new Int32Array(u.buffer, u.byteOffset, bytes >> 2) }
  const inbox = i32(rings[me], P * RING_WORDS * 4)
  const outbox = []
  const localPeers = []; const remotePeers = []
  for (let d = 0; d < P; d++) {
    const local = d !== me && pg.isLocal(d)
    outbox.push(local ? i32(new GlobalPtr(d, rings[d].addr + me * RING_WORDS * 4), RING_WORDS * 4) : null)
    if (local) localPeers.push(d)
    else if (d !== me) remotePeers.push(d)
  }
  const ringTail = new Int32Array(P)        // what I wrote into outbox[d]
  const ringHead = new Int32Array(P)        // what I consumed of inbox ring s

  /** Applies the updates that co-located tasks put into my rings. */
  function drain () {
    for (let k = 0; k < localPeers.length; k++) {
      const s = localPeers[k]; const base = s * RING_WORDS
      const tail = Atomics.load(inbox, base + 16)
      let h = ringHead[s]
      if (h === tail) continue
      for (; h !== tail; h = (h + 1) | 0) {
        const w = base + HDR + ((h & (RING - 1)) << 1)
        const lo = inbox[w]; const o = (lo & lmask) << 1
        T[o] ^= lo; T[o + 1] ^= inbox[w + 1]
      }
      ringHead[s] = h
      Atomics.store(inbox, base, h)          // frees the slots for the sender
      if (Atomics.load(inbox, base + 48) !== 0) Atomics.notify(inbox, base, 1)
    }
  }

  // Updates from other processes, and their senders' totals.
  const recvFrom = new Float64Array(P); const expect = new Float64Array(P).fill(-1)
  const scratch = new Int32Array(2 * MAX_PENDING)
  const scratch8 = new Uint8Array(scratch.buffer)
  pg.registerRpc(RPC_UPDATES, (bytes, src) => {
    scratch8.set(bytes)                       // msgpack hands over bytes at any offset: align them
    const n = bytes.length >> 3
    for (let j = 0; j < 2 * n; j += 2) {
      const lo = scratch[j]; const o = (lo & lmask) << 1
      T[o] ^= lo; T[o + 1] ^= scratch[j + 1]
    }
    recvFrom[src] += n
  })
  pg.registerRpc(RPC_DONE, (count, src) => { expect[src] = count })

  const hasRemote = remotePeers.length > 0
  function service () {
    if (localPeers.length > 0) drain()
    if (hasRemote) pg.progress()             // remote procedure calls run here
  }

  // Buckets: MAX_PENDING (lo, hi) slots per destination; `pending` counts them all.
  const bucket = new Int32Array(2 * MAX_PENDING * P)
  const count = new Int32Array(P)
  const sentTo = new Float64Array(P)
  let pending = 0

  /** Sends bucket `d` (a ring when `d` shares my process, else a remote procedure call); returns its size. */
  function send (d) {
    const n = count[d]
    if (n === 0) return 0
    const b = 2 * MAX_PENDING * d
    const R = outbox[d]
    if (R !== null) {
      let tail = ringTail[d]
      if (RING - ((tail - Atomics.load(R, 0)) | 0) < n) waitSpace(R, tail, n)
      for (let j = 0; j < n; j++, tail = (tail + 1) | 0) {
        const w = HDR + ((tail & (RING - 1)) << 1)
        R[w] = bucket[b + 2 * j]; R[w + 1] = bucket[b + 2 * j + 1]
      }
      ringTail[d] = tail
      Atomics.store(R, 16, tail)             // publishes the pairs written before it
    } else {
      pg.rpcNoReply(d, RPC_UPDATES, new Uint8Array(bucket.buffer, 4 * b, 8 * n))
    }
    sentTo[d] += n
    count[d] = 0
    return n
  }

  /**
   * Waits until ring `R` has room for `n` updates, serving mine meanwhile: spins a little (the
   * owner is usually about to drain), then sleeps on the ring's head (a futex wait the owner's
   * drain ends), as with more tasks than cores a spinning sender holds the core the owner needs.
   */
  function waitSpace (R, tail, n) {
    const t = performance.now()
    for (;;) {
      service()
      const h = Atomics.load(R, 0)
      if (RING - ((tail - h) | 0) >= n) return
      if (performance.now() - t < SPIN_MS) continue
      Atomics.store(R, 48, 1)
      Atomics.wait(R, 0, h, 0.5)              // returns at once if the head moved meanwhile
      Atomics.store(R, 48, 0)
    }
  }

  /** Sends the fullest bucket (HPCC: when the look-ahead is exhausted); returns its size. */
  function sendFullest () {
    let best = 0
    for (let t = 1; t < P; t++) if (count[t] > count[best]) best = t
    return send(best)
  }

  // The stream as two int32 halves; one step: shift left, XOR POLY (7) if bit 63 was set.
  // The loops run in chunks: a function called often is compiled whole by V8, which makes
  // faster code than the on-stack replacement one long loop would get.
  let lo = 0; let hi = 0

  /** The next `n` values of my slice: applied here when mine, else bucketed. */
  function updates (n) {
    let l = lo; let h = hi; let pend = pending
    for (let k = 0; k < n; k++) {
      const c = h >> 31
      h = (h << 1) | (l >>> 31)
      l = (l << 1) ^ (c & 7)
      const g = l & mask
      const d = g >>> shift
      if (d === me) {
        const o = (g & lmask) << 1
        T[o] ^= l; T[o + 1] ^= h
      } else {
        const w = 2 * (MAX_PENDING * d + count[d]++)
        bucket[w] = l; bucket[w + 1] = h
        if (++pend === MAX_PENDING) pend -= sendFullest()   // look-ahead exhausted
      }
    }
    lo = l; hi = h; pending = pend
  }

  // ─── the timed update phase ───
  const s0 = starts(4n * BigInt(gStart))
  const nUpd = 4 * nLocal
  const CHUNK = 1024
  pg.barrier()
  const t0 = performance.now()
  lo = Number(s0 & 0xffffffffn) | 0
  hi = Number(s0 >> 32n) | 0
  for (let k = 0; k < nUpd; k += CHUNK) {
    updates(Math.min(CHUNK, nUpd - k))
    service()                                // serve rings and remote calls now and then
  }
  for (let d = 0; d < P; d++) send(d)        // flush
  pending = 0
  for (const d of localPeers) Atomics.store(outbox[d], 32, 1)
  for (const d of remotePeers) pg.rpcNoReply(d, RPC_DONE, sentTo[d])
  pg.syncAll()
  // Serve until every co-located sender said done with an empty ring, and every other sender's
  // updates all arrived (counted: delivery order is not assumed).
  for (;;) {
    let done = true
    for (const s of localPeers) if (Atomics.load(inbox, s * RING_WORDS + 32) === 0) done = false
    service()                                // after the look: a done sender's ring is now empty
    for (const s of remotePeers) if (expect[s] < 0 || recvFrom[s] !== expect[s]) done = false
    if (done) break
    Atomics.wait(inbox, me * RING_WORDS, 0, 0.1)   // sleep 0.1 ms (my ring to myself stays unused)
  }
  pg.barrier()
  const time = new Float64Array([(performance.now() - t0) / 1e3])
  pg.allreduce(time, time, ReduceOp.MAX)

  // ─── verification (untimed): the stream again, XOR is its own inverse ───
  // Every task replays the whole stream and applies the values it owns: the same updates that
  // HPCC's verification routes to it in lockstep, here without messages or races.
  function replay (n) {
    let l = lo; let h = hi
    for (let k = 0; k < n; k++) {
      const c = h >> 31
      h = (h << 1) | (l >>> 31)
      l = (l << 1) ^ (c & 7)
      if (((l & mask) >>> shift) === me) {
        const o = (l & lmask) << 1
        T[o] ^= l; T[o + 1] ^= h
      }
    }
    lo = l; hi = h
  }
  lo = 1; hi = 0
  for (let k = 0; k < 4 * N; k += CHUNK) replay(Math.min(CHUNK, 4 * N - k))
  let bad = 0
  for (let o = 0; o < nLocal; o++) if (T[2 * o] !== gStart + o || T[2 * o + 1] !== 0) bad++
  const errors = new Float64Array([bad])
  pg.allreduce(errors, errors, ReduceOp.SUM)
  const passed = errors[0] <= 0.01 * N

  if (me === 0) {
    console.log(`Main table size   = 2^${logN} = ${N} words`)
    console.log(`Number of updates = ${4 * N}`)
    console.log(`Tasks             = ${P}`)
    console.log(`Real time used    = ${time[0].toFixed(3)} seconds`)
    console.log(`${(1e-9 * 4 * N / time[0]).toFixed(6)} Billion(10^9) Updates per second [GUP/s]`)
    console.log(`Found ${errors[0]} errors in ${N} locations (${passed ? 'passed' : 'failed'}).`)
    console.log(passed ? `RandomAccess 2^${logN} verified` : `RandomAccess 2^${logN} verification FAILED`)
  }
  if (!passed) process.exitCode = 1
  pg.freeAll(rings)                          // (a barrier first)
  table.free()
  pg.finalize()
}
