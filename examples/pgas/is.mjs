// NAS Parallel Benchmarks Integer Sort (IS), classes S, W and A, on @amlapi/pgas.
//
// Benchmark definition: NAS Parallel Benchmarks 3.4 (NASA Ames), IS kernel, in the structure of
// its MPI version: every task generates its share of the keys from its own skip-ahead seed, and
// each iteration counts keys per bucket, sums the counts over tasks, redistributes the keys so
// that each task holds a contiguous range of buckets, and ranks its keys by counting. Class
// parameters, the generator (randlc, seed 314159265, multiplier 5^13), the test indices and
// their reference ranks (partial verification) are those of NPB 3.4's is.c (MPI and OpenMP
// versions; NPB 3.3 has the same values), so a correct run reproduces NPB's verification.
// One liberty, with the same ranks: keys are grouped by destination task after the bucket sum,
// where NPB-MPI groups them by bucket before it (fewer output streams, a faster scatter).
//
// Run: npx lapirun -n <tasks> examples/pgas/is.mjs [S|W|A]     (tasks: a power of two up to 1024, NPB-MPI's MAX_PROCS)
import { Pgas, ReduceOp } from '@amlapi/pgas'

// keysLog2, maxKeyLog2, bucketsLog2, the test keys' global indices and their ranks at iteration 0,
// and how the expected rank of test key i moves with iteration it.
const CLASSES = {
  S: {
    keysLog2: 16,
    maxKeyLog2: 11,
    bucketsLog2: 9,
    testIndex: [48427, 17148, 23627, 62548, 4431],
    testRank: [0, 18, 346, 64917, 65463],
    delta: (i, it) => (i <= 2 ? it : -it),
  },
  W: {
    keysLog2: 20,
    maxKeyLog2: 16,
    bucketsLog2: 10,
    testIndex: [357773, 934767, 875723, 898999, 404505],
    testRank: [1249, 11698, 1039987, 1043896, 1048018],
    delta: (i, it) => (i < 2 ? it - 2 : -it),
  },
  A: {
    keysLog2: 23,
    maxKeyLog2: 19,
    bucketsLog2: 10,
    testIndex: [2112377, 662041, 5336171, 3642833, 4250760],
    testRank: [104, 17523, 123928, 8288932, 8388264],
    delta: (i, it) => (i <= 2 ? it - 1 : -(it - 1)),
  },
}
const MAX_ITERATIONS = 10
const TEST_ARRAY_SIZE = 5
const SEED = 314159265
const MULTIPLIER = 1220703125

// Bailey's randlc without the final scaling: x·a mod 2^46. Every intermediate value is an integer
// below 2^53 and the scalings are powers of two, so plain doubles give the exact result.
const R23 = 2 ** -23
const T23 = 2 ** 23
const R46 = 2 ** -46
const T46 = 2 ** 46
function mulmod46(x, a) {
  const a1 = Math.trunc(R23 * a)
  const a2 = a - T23 * a1
  const x1 = Math.trunc(R23 * x)
  const x2 = x - T23 * x1
  const t1 = a1 * x2 + a2 * x1
  const z = t1 - T23 * Math.trunc(R23 * t1)
  const t3 = T23 * z + a2 * x2
  return t3 - T46 * Math.trunc(R46 * t3)
}

// NPB-MPI's find_my_seed: the generator's state after 4·numKeys·rank steps, s·(a^(4·numKeys))^rank.
function findMySeed(rank, log2StepsPerTask, s, a) {
  let an = a
  for (let i = 0; i < log2StepsPerTask; i++) an = mulmod46(an, an)
  let t1 = s
  for (let kk = rank, t2 = an; kk > 0; kk >>= 1, t2 = mulmod46(t2, t2)) if (kk & 1) t1 = mulmod46(t1, t2)
  return t1
}

// create_seq: each key is (MAX_KEY/4)·(sum of four successive uniform numbers), truncated.
function createSeq(keys, seed, maxKey) {
  const k = maxKey / 4
  let x = seed
  for (let i = 0; i < keys.length; i++) {
    x = mulmod46(x, MULTIPLIER)
    let r = R46 * x
    x = mulmod46(x, MULTIPLIER)
    r += R46 * x
    x = mulmod46(x, MULTIPLIER)
    r += R46 * x
    x = mulmod46(x, MULTIPLIER)
    r += R46 * x
    keys[i] = Math.trunc(k * r)
  }
}

// The hot loops, as small functions of their arrays (what V8 optimises best).

// Bucket histogram (bucket = key >> shift) in four interleaved tables, one per lane i % 4: with a
// single table, keys of the same bucket close together chain their increments through memory.
// keys.length is a multiple of 4; the lanes' counts also place the keys (scatter).
function histogram(keys, shift, hist4, out, nb) {
  hist4.fill(0)
  for (let i = 0; i < keys.length; i += 4) {
    hist4[(keys[i] >> shift) << 2]++
    hist4[((keys[i + 1] >> shift) << 2) | 1]++
    hist4[((keys[i + 2] >> shift) << 2) | 2]++
    hist4[((keys[i + 3] >> shift) << 2) | 3]++
  }
  for (let b = 0; b < nb; b++) out[b] = hist4[4 * b] + hist4[4 * b + 1] + hist4[4 * b + 2] + hist4[4 * b + 3]
}

// Counting-sort scatter by destination: key i goes to the next free place of lane i % 4 of its
// bucket's task (dest: 4·task for each bucket; ptr: next place of each (task, lane) run). Four
// lanes keep consecutive keys' pointer updates independent, and few runs stay in cache.
function scatter(keys, shift, dest, ptr, out) {
  for (let i = 0; i < keys.length; i += 4) {
    const k0 = keys[i]
    const k1 = keys[i + 1]
    const k2 = keys[i + 2]
    const k3 = keys[i + 3]
    out[ptr[dest[k0 >> shift]]++] = k0
    out[ptr[dest[k1 >> shift] + 1]++] = k1
    out[ptr[dest[k2 >> shift] + 2]++] = k2
    out[ptr[dest[k3 >> shift] + 3]++] = k3
  }
}

// counts[v] += number of the first n keys equal to v.
function countKeys(keys, n, counts) {
  let i = 0
  for (; i + 3 < n; i += 4) {
    counts[keys[i]]++
    counts[keys[i + 1]]++
    counts[keys[i + 2]]++
    counts[keys[i + 3]]++
  }
  for (; i < n; i++) counts[keys[i]]++
}

function main() {
  const pg = Pgas.init()
  const me = pg.rank
  const P = pg.size
  const cls = (process.argv[2] ?? 'S').toUpperCase()
  const C = Object.hasOwn(CLASSES, cls) ? CLASSES[cls] : undefined
  if (C === undefined || P > 1024 || (P & (P - 1)) !== 0) {
    if (me === 0) {
      console.error(
        C === undefined
          ? `IS: unknown class '${process.argv[2]}' (this example has S, W and A)`
          : `IS: the number of tasks must be a power of two up to 1024, not ${P}`,
      )
    }
    process.exitCode = 2
    pg.finalize()
    return
  }

  /** An Int32Array of `n` in this task's segment where it fits (co-located tasks then take from it in place), else of the heap. */
  const segmentInt32 = (n) => {
    try {
      const v = pg.localView(pg.alloc(4 * n), 4 * n)
      return new Int32Array(v.buffer, v.byteOffset, n)
    } catch {
      return new Int32Array(n)
    }
  }
  const TOTAL_KEYS = 2 ** C.keysLog2
  const MAX_KEY = 2 ** C.maxKeyLog2
  const NB = 2 ** C.bucketsLog2
  const SHIFT = C.maxKeyLog2 - C.bucketsLog2
  const numKeys = TOTAL_KEYS / P // keys generated by (and first held by) each task
  const log2P = Math.log2(P)

  // Buffers, allocated once and reused by every iteration.
  const keys = new Int32Array(numKeys) // this task's keys, global indices me·numKeys ..
  const sendBuf = segmentInt32(numKeys) // the same keys grouped by destination task (in the segment: sent by reference)
  let recvBuf = new Int32Array(numKeys + (numKeys >> 1)) // keys of this task's bucket range (grows if needed)
  const bucketSize = new Int32Array(NB + TEST_ARRAY_SIZE) // local counts, then the test-key values
  const bucketTotals = new Int32Array(NB + TEST_ARRAY_SIZE)
  const hist4 = new Int32Array(4 * NB) // per-lane bucket counts
  const destOf = new Int32Array(NB) // 4 · the task each bucket goes to
  const laneCount = new Int32Array(4 * P)
  const lanePtr = new Int32Array(4 * P)
  const firstBucket = new Int32Array(P)
  const lastBucket = new Int32Array(P)
  const sendCounts = new Int32Array(P)
  const sendDispls = new Int32Array(P)
  const recvCounts = new Int32Array(P)
  const recvDispls = new Int32Array(P)
  const counts = new Int32Array(MAX_KEY) // cumulative counts, used over [minKey, maxKey]
  let received = 0
  let minKey = 0
  let maxKey = -1
  let passed = 0

  createSeq(keys, findMySeed(me, C.keysLog2 + 2 - log2P, SEED, MULTIPLIER), MAX_KEY)

  function rank(it) {
    // NPB's per-iteration change to two keys, both at the front of task 0's part.
    if (me === 0) {
      keys[it] = it
      keys[it + MAX_ITERATIONS] = MAX_KEY - it
    }

    // Test-key values ride along with the bucket counts: the owner writes them, the sum hands them to all.
    bucketSize.fill(0)
    for (let i = 0; i < TEST_ARRAY_SIZE; i++) {
      const idx = C.testIndex[i]
      if (Math.floor(idx / numKeys) === me) bucketSize[NB + i] = keys[idx % numKeys]
    }

    // Local bucket histogram, summed over tasks.
    histogram(keys, SHIFT, hist4, bucketSize, NB)
    pg.allreduce(bucketSize, bucketTotals, ReduceOp.SUM)

    // Buckets go to tasks in order: task j's range ends where the running total reaches (j+1)·numKeys.
    for (let b = 0, j = 0, acc = 0, first = 0; b < NB; b++) {
      acc += bucketTotals[b]
      if (j < P && acc >= (j + 1) * numKeys) {
        firstBucket[j] = first
        lastBucket[j] = b
        j++
        first = b + 1
      }
      if (b === NB - 1)
        for (; j < P; j++) {
          firstBucket[j] = NB
          lastBucket[j] = NB - 1
        } // left without buckets
    }
    // The keys grouped by destination task (from the per-lane bucket counts), ready to go out.
    laneCount.fill(0)
    for (let j = 0; j < P; j++) {
      for (let b = firstBucket[j]; b <= lastBucket[j]; b++) {
        destOf[b] = 4 * j
        for (let l = 0; l < 4; l++) laneCount[4 * j + l] += hist4[4 * b + l]
      }
    }
    for (let j = 0, s = 0; j < P; j++) {
      sendDispls[j] = s
      for (let l = 0; l < 4; l++) {
        lanePtr[4 * j + l] = s
        s += laneCount[4 * j + l]
      }
      sendCounts[j] = s - sendDispls[j]
    }
    scatter(keys, SHIFT, destOf, lanePtr, sendBuf)

    // Redistribution: counts first, then the keys themselves.
    pg.alltoall(sendCounts, recvCounts)
    received = 0
    for (let j = 0; j < P; j++) {
      recvDispls[j] = received
      received += recvCounts[j]
    }
    if (received > recvBuf.length) recvBuf = new Int32Array(received + (received >> 3))
    pg.alltoallv(sendBuf, sendCounts, sendDispls, recvBuf, recvCounts, recvDispls)

    // Local ranking over this task's key range: counts, then inclusive prefix sums.
    minKey = firstBucket[me] << SHIFT
    maxKey = ((lastBucket[me] + 1) << SHIFT) - 1
    let below = 0 // keys of the tasks before (lower buckets)
    for (let b = 0; b < firstBucket[me] && b < NB; b++) below += bucketTotals[b]
    if (minKey <= maxKey) counts.fill(0, minKey, maxKey + 1)
    countKeys(recvBuf, received, counts)
    for (let v = minKey + 1; v <= maxKey; v++) counts[v] += counts[v - 1]

    // Partial verification, by the task whose range holds the test key.
    for (let i = 0; i < TEST_ARRAY_SIZE; i++) {
      const k = bucketTotals[NB + i]
      if (k <= 0 || k > TOTAL_KEYS - 1 || k < minKey || k > maxKey) continue
      const keyRank = (k - 1 >= minKey ? counts[k - 1] : 0) + below
      if (keyRank === C.testRank[i] + C.delta(i, it)) passed++
      else console.log(`Failed partial verification: iteration ${it}, test key ${i} (rank ${keyRank}, task ${me})`)
    }
  }

  rank(1) // the untimed "free" iteration
  passed = 0

  pg.barrier()
  const t0 = performance.now()
  for (let it = 1; it <= MAX_ITERATIONS; it++) rank(it)
  pg.barrier()
  const elapsed = new Float64Array([(performance.now() - t0) / 1000])
  pg.allreduce(elapsed, elapsed, ReduceOp.MAX)

  // Full verification (untimed): place the local keys by their counts, check the local order, then
  // the boundary with the nearest task before that holds keys.
  const sorted = new Int32Array(received)
  for (let i = 0; i < received; i++) {
    const v = recvBuf[i]
    sorted[--counts[v]] = v
  }
  let outOfSort = 0
  for (let i = 1; i < received; i++) if (sorted[i - 1] > sorted[i]) outOfSort++
  const ends = new Int32Array(3 * P)
  pg.allgather(new Int32Array([received, received > 0 ? sorted[0] : 0, received > 0 ? sorted[received - 1] : 0]), ends)
  if (received > 0) {
    let j = me - 1
    while (j >= 0 && ends[3 * j] === 0) j--
    if (j >= 0 && ends[3 * j + 2] > sorted[0]) outOfSort++
  }
  let held = 0
  for (let j = 0; j < P; j++) held += ends[3 * j]
  if (held !== TOTAL_KEYS) console.log(`Full_verify: ${held} keys held, not ${TOTAL_KEYS} (task ${me})`)
  else if (outOfSort !== 0) console.log(`Full_verify: number of keys out of sort: ${outOfSort} (task ${me})`)
  else passed++

  // Every partial check counts once, and every task's full verification once.
  const total = new Int32Array([passed])
  pg.allreduce(total, total, ReduceOp.SUM)
  const expected = TEST_ARRAY_SIZE * MAX_ITERATIONS + P
  const ok = total[0] === expected
  if (me === 0) {
    const time = elapsed[0]
    const mops = (MAX_ITERATIONS * TOTAL_KEYS) / time / 1e6
    const line = (name, value) => console.log(` ${name.padEnd(16)}= ${String(value).padStart(24)}`)
    console.log('\n IS Benchmark Completed')
    line('Class', cls)
    line('Size', TOTAL_KEYS)
    line('Iterations', MAX_ITERATIONS)
    line('Tasks', P)
    line('Time in seconds', time.toFixed(2))
    line('Mop/s total', mops.toFixed(2))
    line('Verification', ok ? 'SUCCESSFUL' : 'UNSUCCESSFUL')
    console.log(ok ? `IS class ${cls} verified` : `IS class ${cls} verification FAILED: ${total[0]} checks passed, ${expected} expected`)
  }
  if (!ok) process.exitCode = 1
  pg.finalize()
}

main()
