// Jacobi heat diffusion on an N × N grid: the top edge held at 1.0, the other edges at 0, every
// interior point replaced each iteration by the mean of its four neighbours. Rows are split in
// blocks over the tasks; each task keeps its rows and two halo rows in its segment, in two grids
// (read one, write the other). The halo exchange is one-sided: a task puts its first and last
// rows into its neighbours' halo rows with putSignal, which moves a counter there when the row has
// landed, and waits on its own counters for the rows it needs. No barrier per iteration.
//
//   lapirun -n P [--segment-size BYTES] examples/pgas/jacobi.mjs [N] [iterations] [--check] [--js]
//
// The sweep runs in WebAssembly's SIMD code on the segment in place (jacobi-simd.mjs) where the
// segment is a WebAssembly memory (its size a whole number of 64 KiB pages) and the engine has
// SIMD; else, or with --js, in plain JavaScript. Both give the same grid, bit for bit.
//
// Prints the time per iteration and a hash of the final grid (FNV-1a over its bytes, row by row),
// which is the same for every number of tasks: the arithmetic is the same. With --check (the
// default for N ≤ 512) task 0 also recomputes the grid alone and compares it bit for bit.
import { Pgas } from '@amlapi/pgas'
import { simdSweep } from './jacobi-simd.mjs'

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'))
const N = Number(args[0] ?? 256)
const ITERS = Number(args[1] ?? 100)
const pg = Pgas.init()
const me = pg.rank,
  P = pg.size
const check = process.argv.includes('--check') || (N <= 512 && !process.argv.includes('--no-check'))
if (!Number.isInteger(N) || N < 3 || !Number.isInteger(ITERS) || ITERS < 0 || P > N - 2) {
  if (me === 0) console.error(`jacobi: N (${N}) must be ≥ 3 and ≥ tasks + 2, iterations (${ITERS}) ≥ 0`)
  process.exit(2)
}

// interior rows 1 .. N-2 in blocks: this task owns rows [lo, hi)
const inner = N - 2
const lo = 1 + Math.floor((me * inner) / P),
  hi = 1 + Math.floor(((me + 1) * inner) / P)
const rows = hi - lo
const rowBytes = N * 8
// each grid: halo row, the owned rows, halo row (local row r = global row lo - 1 + r)
const gridBytes = (rows + 2) * rowBytes
const need = 2 * gridBytes + 64 * 1024
if (need > pg.lapi.segmentSize) {
  if (me === 0) console.error(`jacobi: each task needs ${Math.ceil(need / 2 ** 20)} MiB of segment; run with --segment-size ${Math.ceil(need / 2 ** 20) + 1}M`)
  process.exit(2)
}
const G = [pg.allocAll(gridBytes), pg.allocAll(gridBytes)]
const grid = G.map((g) => {
  const v = pg.localView(g[me], gridBytes)
  return new Float64Array(v.buffer, v.byteOffset, gridBytes / 8)
})
const up = me > 0 ? me - 1 : -1,
  down = me < P - 1 ? me + 1 : -1
// signals from above (my top halo came) and from below (my bottom halo came)
const fromUp = pg.newSignalCounter(),
  fromDown = pg.newSignalCounter()

/** The boundary values of global row i (fixed for the first and last rows and the side columns). */
function initRow(g, r, i) {
  const row = g.subarray(r * N, (r + 1) * N)
  row.fill(0)
  if (i === 0) row.fill(1)
}
for (const g of grid) for (let r = 0; r < rows + 2; r++) initRow(g, r, lo - 1 + r)

/** One sweep over local rows 1..rows of `src` into `dst` (the side columns stay), in JavaScript. */
function sweep(src, dst, nrows) {
  const end = N - 1
  for (let r = 1; r <= nrows; r++) {
    const o = r * N
    const up = o - N
    const dn = o + N
    // (each row's values are carried along, four points a step: fewer loads and bounds checks,
    // the same sums in the same order)
    let left = src[o]
    let centre = src[o + 1]
    let j = 1
    for (; j + 3 < end; j += 4) {
      const c1 = src[o + j + 1],
        c2 = src[o + j + 2],
        c3 = src[o + j + 3],
        c4 = src[o + j + 4]
      dst[o + j] = 0.25 * (src[up + j] + src[dn + j] + left + c1)
      dst[o + j + 1] = 0.25 * (src[up + j + 1] + src[dn + j + 1] + centre + c2)
      dst[o + j + 2] = 0.25 * (src[up + j + 2] + src[dn + j + 2] + c1 + c3)
      dst[o + j + 3] = 0.25 * (src[up + j + 3] + src[dn + j + 3] + c2 + c4)
      left = c3
      centre = c4
    }
    for (; j < end; j++) {
      const right = src[o + j + 1]
      dst[o + j] = 0.25 * (src[up + j] + src[dn + j] + left + right)
      left = centre
      centre = right
    }
  }
}

// the same sweep in WebAssembly, on the grids' segment addresses (null: the JavaScript one)
const simd = process.argv.includes('--js') ? null : simdSweep(pg.segmentMemory, N)
const at = G.map((g) => g[me].addr)

pg.barrier()
const t0 = performance.now()
let cur = 0
for (let it = 0; it < ITERS; it++) {
  const g = grid[cur]
  const hs = []
  // my first row into the upper neighbour's bottom halo (its local row rows'+1), my last into the lower one's top halo (row 0)
  if (up >= 0) {
    const upRows = 1 + Math.floor((me * inner) / P) - (1 + Math.floor(((me - 1) * inner) / P))
    hs.push(pg.putSignal(G[cur][up].add((upRows + 1) * rowBytes), g.subarray(N, 2 * N), fromDown))
  }
  if (down >= 0) hs.push(pg.putSignal(G[cur][down], g.subarray(rows * N, (rows + 1) * N), fromUp))
  if (up >= 0) fromUp.wait(1)
  if (down >= 0) fromDown.wait(1)
  if (simd !== null) simd(at[cur], at[1 - cur], rows)
  else sweep(g, grid[1 - cur], rows)
  pg.waitAll(hs)
  cur = 1 - cur
}
const t1 = performance.now()
const tmax = new Float64Array([t1 - t0])
pg.allreduce(tmax, tmax, 2 /* MAX */)

// the final grid's rows, gathered at task 0 in order, hashed (and checked)
const mine = grid[cur].slice(N, (rows + 1) * N)
const counts = new Int32Array(P),
  mineCount = new Int32Array([mine.length])
pg.allgather(mineCount, counts)
const full = me === 0 ? new Float64Array(N * N) : null
const displs = Array.from(counts, (_, t) => counts.slice(0, t).reduce((a, b) => a + b, N))
if (me === 0) {
  full.set(grid[cur].subarray(0, N), 0) // row 0 (fixed)
  full.set(mine, N)
  for (let t = 1; t < P; t++) {
    const part = full.subarray(displs[t], displs[t] + counts[t])
    pg.get(G[cur][t].add(rowBytes), part)
  }
  full.fill(0, (N - 1) * N) // row N-1 (fixed)
}
pg.barrier()
let ok = true
if (me === 0) {
  const hash = fnv(new Uint8Array(full.buffer))
  if (check) {
    const a = new Float64Array(N * N),
      b = new Float64Array(N * N)
    a.fill(1, 0, N)
    b.fill(1, 0, N)
    let s = a,
      d = b
    for (let it = 0; it < ITERS; it++) {
      sweep(s, d, N - 2)
      const x = s
      s = d
      d = x
    }
    for (let i = 0; i < N * N; i++)
      if (!Object.is(s[i], full[i])) {
        ok = false
        console.log(`jacobi: point ${Math.floor(i / N)},${i % N}: ${full[i]} != ${s[i]} (one task)`)
        break
      }
  }
  const ms = tmax[0] / Math.max(1, ITERS)
  console.log(`Jacobi ${N} x ${N}, ${ITERS} iterations, ${P} tasks: ${ms.toFixed(3)} ms per iteration (${(tmax[0] / 1000).toFixed(3)} s)`)
  console.log(`grid hash ${hash.toString(16).padStart(8, '0')}`)
  console.log(`sweep: ${simd !== null ? 'WebAssembly SIMD, on the segment in place' : 'JavaScript'}`)
  if (check) console.log(ok ? `Jacobi ${N} verified (bit for bit against one task)` : `Jacobi ${N} verification FAILED`)
}
const okAll = new Int32Array([ok ? 1 : 0])
pg.bcast(okAll, 0)
if (okAll[0] !== 1) process.exitCode = 1
pg.finalize()

/** FNV-1a, 32 bits, over `b`. */
function fnv(b) {
  let h = 0x811c9dc5
  for (let i = 0; i < b.length; i++) {
    h ^= b[i]
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h
}
