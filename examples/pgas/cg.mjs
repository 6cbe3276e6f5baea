// NAS Parallel Benchmarks Conjugate Gradient (CG), classes S, W and A, on @amlapi/pgas.
//
// Benchmark definition: NAS Parallel Benchmarks 3.3/3.4 (NASA Ames), CG kernel: the inverse power
// method on a random sparse symmetric matrix, each of its NITER outer iterations solving A·z = x
// with 25 iterations of conjugate gradient and estimating the smallest eigenvalue as
// zeta = shift + 1 / (x·z). The matrix is the one the makea and sparse of NPB-MPI's cg.f build
// (3.3 and 3.4 alike; generator randlc, seed 314159265, multiplier 5^13; the triples summed per
// row in the order they are made, the diagonal's rcond − shift last, each row's columns in the
// order they first appear), every row bit for bit. (NPB's serial and OpenMP versions add up the
// same elements in another order.) Class parameters and the verification values of zeta are those
// of NPB 3.3's cg.f, MPI version (NPB 3.4's are the same), checked as NPB does: relative error at
// most 1e-10.
//
// Distribution: rows (and the vectors' elements) in blocks of ⌈na / P⌉ per task, the last task's
// block shorter (blocks of no rows where P does not divide na that way). The product A·p needs all
// of p: every task gathers it with all-gather, its own block padded to the common length, which
// puts element j of p at index j of the gathered vector. Dot products are all-reduces. NPB-MPI
// splits the matrix in two dimensions over a power of two of processes; this splits rows only,
// on any number of tasks (up to na), with the same arithmetic per row.
//
// Run: npx lapirun -n <tasks> examples/pgas/cg.mjs [S|W|A] [--js]     (tasks: any number from 1 to na)
// (the product A·p in WebAssembly, or with --js in JavaScript: the same sums, the same bits)
import { Pgas, ReduceOp } from '@amlapi/pgas'

// na, nonzer, niter, shift, and the verification value of zeta (NPB 3.3 cg.f).
const CLASSES = {
  S: { na: 1400, nonzer: 7, niter: 15, shift: 10, zeta: 8.5971775078648 },
  W: { na: 7000, nonzer: 8, niter: 15, shift: 12, zeta: 10.362595087124 },
  A: { na: 14000, nonzer: 11, niter: 15, shift: 20, zeta: 17.130235054029 },
}
const RCOND = 0.1
const CGITMAX = 25
const EPSILON = 1e-10
const SEED = 314159265
const MULTIPLIER = 1220703125

// Bailey's randlc without the final scaling: x·a mod 2^46 by NPB's 2^23 splitting. Every
// intermediate value is an integer below 2^53 and the scalings are powers of two, so plain doubles
// give the exact result; randlc's value is 2^-46 times it.
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

/**
 * NPB's makea and sparse for rows lo .. hi − 1 (0-based) and all columns: the rows' nonzeros as
 * { rowstr, colidx, a } (compressed rows, local row j from rowstr[j] to rowstr[j + 1]).
 *
 * makea makes n sparse vectors v_i (sprnvc: nonzer random values at distinct random places, then
 * vecset: 0.5 at place i) and adds size_i · v_i v_iᵀ for each, size_i = rcond^(i/n); element
 * (row v_i[r], column v_i[c]) is v_i[r] · (size_i · v_i[c]). Every task runs the whole generator
 * (the stream is sequential: sprnvc rejects places) and keeps the triples of its own rows.
 */
function makea(n, nonzer, shift, lo, hi) {
  let tran = SEED
  tran = mulmod46(tran, MULTIPLIER) // NPB's first randlc (its value, zeta, unused)
  let nn1 = 1
  do nn1 *= 2
  while (nn1 < n) // the smallest power of two ≥ n (at least 2)

  // The n sparse vectors: places (0-based) and values, at most nonzer + 1 each.
  const w = nonzer + 1
  const vcol = new Int32Array(n * w)
  const vval = new Float64Array(n * w)
  const vlen = new Int32Array(n)
  const seen = new Uint8Array(n)
  for (let i = 0; i < n; i++) {
    const base = i * w
    let nzv = 0
    // sprnvc: a value, then a place in 1 .. nn1 (icnvrt), kept where it is ≤ n and new.
    while (nzv < nonzer) {
      tran = mulmod46(tran, MULTIPLIER)
      const vecelt = R46 * tran
      tran = mulmod46(tran, MULTIPLIER)
      const vecloc = R46 * tran
      const place = Math.trunc(nn1 * vecloc) // 0-based: NPB's icnvrt + 1, less one
      if (place >= n || seen[place] !== 0) continue
      seen[place] = 1
      vcol[base + nzv] = place
      vval[base + nzv] = vecelt
      nzv++
    }
    for (let k = 0; k < nzv; k++) seen[vcol[base + k]] = 0
    // vecset: element i is 0.5, set in place or appended.
    let set = false
    for (let k = 0; k < nzv; k++)
      if (vcol[base + k] === i) {
        vval[base + k] = 0.5
        set = true
      }
    if (!set) {
      vcol[base + nzv] = i
      vval[base + nzv] = 0.5
      nzv++
    }
    vlen[i] = nzv
  }

  // Triples per local row: each vector gives its nzv columns to each of its places that is a local
  // row; the diagonal's rcond − shift one more.
  const nrows = hi - lo
  const rowstr = new Int32Array(nrows + 1)
  for (let i = 0; i < n; i++) {
    for (let k = i * w, e = k + vlen[i]; k < e; k++) {
      const r = vcol[k]
      if (r >= lo && r < hi) rowstr[r - lo + 1] += vlen[i]
    }
  }
  for (let j = 0; j < nrows; j++) rowstr[j + 1] += rowstr[j] + 1
  const nnza = rowstr[nrows]

  // The triples bucketed by row, each row's in the order makea makes them (vector i, then its
  // column place, then its row place), the diagonal last.
  const a = new Float64Array(nnza)
  const colidx = new Int32Array(nnza)
  const next = rowstr.slice(0, nrows)
  const ratio = RCOND ** (1 / n)
  let size = 1
  for (let i = 0; i < n; i++) {
    const base = i * w
    const len = vlen[i]
    for (let c = 0; c < len; c++) {
      const jcol = vcol[base + c]
      const scale = size * vval[base + c]
      for (let r = 0; r < len; r++) {
        const irow = vcol[base + r]
        if (irow < lo || irow >= hi) continue
        const k = next[irow - lo]++
        a[k] = vval[base + r] * scale
        colidx[k] = jcol
      }
    }
    size *= ratio
  }
  for (let j = 0; j < nrows; j++) {
    const k = next[j]++
    a[k] = RCOND - shift
    colidx[k] = lo + j
  }

  // sparse: sum each row's duplicates in a dense accumulator, columns in the order they first
  // become nonzero, exact zeros dropped; the rows compacted in place.
  const x = new Float64Array(n)
  const mark = new Uint8Array(n)
  const nzloc = new Int32Array(n)
  let nza = 0
  let start = 0
  for (let j = 0; j < nrows; j++) {
    const end = rowstr[j + 1]
    let nzrow = 0
    for (let k = start; k < end; k++) {
      const i = colidx[k]
      x[i] = x[i] + a[k]
      if (mark[i] === 0 && x[i] !== 0) {
        mark[i] = 1
        nzloc[nzrow++] = i
      }
    }
    for (let k = 0; k < nzrow; k++) {
      const i = nzloc[k]
      mark[i] = 0
      const xi = x[i]
      x[i] = 0
      if (xi !== 0) {
        a[nza] = xi
        colidx[nza] = i
        nza++
      }
    }
    start = end
    rowstr[j + 1] = nza
  }
  return { rowstr, colidx: colidx.slice(0, nza), a: a.slice(0, nza) }
}

// The hot loops, as small functions of their arrays (what V8 optimises best), each summing in
// NPB's order.

/** out[j] = (row j of A) · v, for the nrows local rows. */
function matvec(rowstr, colidx, a, v, out, nrows) {
  for (let j = 0; j < nrows; j++) {
    let sum = 0
    for (let k = rowstr[j], e = rowstr[j + 1]; k < e; k++) sum += a[k] * v[colidx[k]]
    out[j] = sum
  }
}

// The same product in WebAssembly (scalar f64 code: each row summed in the same order, so the
// same bits; no bounds checks, 1.5–2 × the JavaScript loop's speed). In text form:
//   (module (import "env" "memory" (memory pages))
//     (func (export "matvec") (param $rowstr i32) (param $colidx i32) (param $a i32) (param $v i32)
//         (param $out i32) (param $nrows i32) (local $j i32) (local $k i32) (local $e i32) (local $sum f64)
//       (block (loop                         ;; each row j
//         (br_if 1 (i32.ge_u (local.get $j) (local.get $nrows)))
//         (local.set $k (i32.load (local.tee $e (i32.add (local.get $rowstr) (i32.shl (local.get $j) (i32.const 2))))))
//         (local.set $e (i32.load offset=4 (local.get $e)))
//         (local.set $sum (f64.const 0))
//         (block (loop                       ;; each nonzero k of the row
//           (br_if 1 (i32.ge_u (local.get $k) (local.get $e)))
//           (local.set $sum (f64.add (local.get $sum) (f64.mul
//             (f64.load (i32.add (local.get $a) (i32.shl (local.get $k) (i32.const 3))))
//             (f64.load (i32.add (local.get $v) (i32.shl (i32.load (i32.add (local.get $colidx)
//               (i32.shl (local.get $k) (i32.const 2)))) (i32.const 3)))))))
//           (local.set $k (i32.add (local.get $k) (i32.const 1))) (br 0)))
//         (f64.store (i32.add (local.get $out) (i32.shl (local.get $j) (i32.const 3))) (local.get $sum))
//         (local.set $j (i32.add (local.get $j) (i32.const 1))) (br 0))))
function matvecModule(pages) {
  const leb = (v) => {
    const b = []
    do {
      let x = v & 0x7f
      v >>>= 7
      if (v !== 0) x |= 0x80
      b.push(x)
    } while (v !== 0)
    return b
  }
  const get = (i) => [0x20, i]
  const set = (i) => [0x21, i]
  const tee = (i) => [0x22, i]
  const i32 = (v) => [0x41, v] // (small non-negative constants only)
  const ADD = 0x6a
  const SHL = 0x74
  const GE_U = 0x4f
  const LOAD = [0x28, 2]
  const F64_LOAD = [0x2b, 3, 0]
  const ROWSTR = 0
  const COLIDX = 1
  const A = 2
  const V = 3
  const OUT = 4
  const NROWS = 5
  const J = 6
  const K = 7
  const E = 8
  const SUM = 9
  const code = [
    2,
    3,
    0x7f,
    1,
    0x7c, // locals: $j $k $e (i32), $sum (f64)
    0x02,
    0x40,
    0x03,
    0x40,
    ...get(J),
    ...get(NROWS),
    GE_U,
    0x0d,
    1,
    ...get(ROWSTR),
    ...get(J),
    ...i32(2),
    SHL,
    ADD,
    ...tee(E),
    ...LOAD,
    0,
    ...set(K),
    ...get(E),
    ...LOAD,
    4,
    ...set(E),
    0x44,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    ...set(SUM),
    0x02,
    0x40,
    0x03,
    0x40,
    ...get(K),
    ...get(E),
    GE_U,
    0x0d,
    1,
    ...get(SUM),
    ...get(A),
    ...get(K),
    ...i32(3),
    SHL,
    ADD,
    ...F64_LOAD,
    ...get(V),
    ...get(COLIDX),
    ...get(K),
    ...i32(2),
    SHL,
    ADD,
    ...LOAD,
    0,
    ...i32(3),
    SHL,
    ADD,
    ...F64_LOAD,
    0xa2,
    0xa0,
    ...set(SUM), // f64.mul, f64.add
    ...get(K),
    ...i32(1),
    ADD,
    ...set(K),
    0x0c,
    0,
    0x0b,
    0x0b,
    ...get(OUT),
    ...get(J),
    ...i32(3),
    SHL,
    ADD,
    ...get(SUM),
    0x39,
    3,
    0,
    ...get(J),
    ...i32(1),
    ADD,
    ...set(J),
    0x0c,
    0,
    0x0b,
    0x0b,
    0x0b,
  ]
  const name = (s) => [s.length, ...Array.from(s, (c) => c.charCodeAt(0))]
  const section = (id, body) => [id, ...leb(body.length), ...body]
  return new Uint8Array([
    0x00,
    0x61,
    0x73,
    0x6d,
    1,
    0,
    0,
    0,
    ...section(1, [1, 0x60, 6, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0]), // (i32 × 6) → ()
    ...section(2, [1, ...name('env'), ...name('memory'), 0x02, 0x00, ...leb(pages)]),
    ...section(3, [1, 0]),
    ...section(7, [1, ...name('matvec'), 0x00, 0]),
    ...section(10, [1, ...leb(code.length), ...code]),
  ])
}

/**
 * The product out = A·v of the local rows: `v` (vlen elements, where the all-gather puts p) and
 * `out` (nrows) are where `run()` reads and writes. In WebAssembly on a memory of its own holding
 * the rows, v and out, or with `js` (or where WebAssembly fails) in JavaScript, v then `makeV()`.
 */
function product(rowstr, colidx, a, nrows, vlen, makeV, js) {
  const nnz = a.length
  if (!js) {
    try {
      // [a (f64) | v (f64) | out (f64) | rowstr (i32) | colidx (i32)]
      const aAt = 0
      const vAt = 8 * nnz
      const outAt = vAt + 8 * vlen
      const rowAt = outAt + 8 * Math.max(1, nrows)
      const colAt = rowAt + 4 * (nrows + 1)
      const pages = Math.ceil((colAt + 4 * nnz) / 65536) || 1
      const memory = new WebAssembly.Memory({ initial: pages })
      const mv = new WebAssembly.Instance(new WebAssembly.Module(matvecModule(pages)), { env: { memory } }).exports.matvec
      new Float64Array(memory.buffer, aAt, nnz).set(a)
      new Int32Array(memory.buffer, rowAt, nrows + 1).set(rowstr)
      new Int32Array(memory.buffer, colAt, nnz).set(colidx)
      return {
        kind: 'WebAssembly',
        v: new Float64Array(memory.buffer, vAt, vlen),
        out: new Float64Array(memory.buffer, outAt, Math.max(1, nrows)),
        run: () => mv(rowAt, colAt, aAt, vAt, outAt, nrows),
      }
    } catch {}
  }
  const v = makeV()
  const out = new Float64Array(Math.max(1, nrows))
  return { kind: 'JavaScript', v, out, run: () => matvec(rowstr, colidx, a, v, out, nrows) }
}

function dot(u, v, n) {
  let sum = 0
  for (let j = 0; j < n; j++) sum += u[j] * v[j]
  return sum
}
/** z += alpha·p and r −= alpha·q, then r·r. */
function update(z, r, p, q, alpha, n) {
  for (let j = 0; j < n; j++) {
    z[j] = z[j] + alpha * p[j]
    r[j] = r[j] - alpha * q[j]
  }
  let sum = 0
  for (let j = 0; j < n; j++) sum += r[j] * r[j]
  return sum
}
/** p = r + beta·p. */
function direction(p, r, beta, n) {
  for (let j = 0; j < n; j++) p[j] = r[j] + beta * p[j]
}

function main() {
  const pg = Pgas.init()
  const me = pg.rank
  const P = pg.size
  const args = process.argv.slice(2)
  const js = args.includes('--js')
  const named = args.find((s) => !s.startsWith('--'))
  const cls = (named ?? 'S').toUpperCase()
  const C = Object.hasOwn(CLASSES, cls) ? CLASSES[cls] : undefined
  if (C === undefined || P > C.na) {
    if (me === 0) {
      console.error(C === undefined ? `CG: unknown class '${named}' (this example has S, W and A)` : `CG: at most ${C.na} tasks for class ${cls}, not ${P}`)
    }
    process.exitCode = 2
    pg.finalize()
    return
  }
  const { na, nonzer, niter, shift } = C

  // This task's rows: a block of B = ⌈na / P⌉ (the last ones shorter or empty).
  const B = Math.ceil(na / P)
  const lo = Math.min(na, me * B)
  const hi = Math.min(na, lo + B)
  const nrows = hi - lo

  /** A Float64Array of `n` in this task's segment where it fits (co-located tasks then take from it in place), else of the heap. */
  const segmentFloat64 = (n) => {
    try {
      const v = pg.localView(pg.alloc(8 * n), 8 * n)
      if (v.byteOffset % 8 === 0) return new Float64Array(v.buffer, v.byteOffset, n)
    } catch {}
    return new Float64Array(n)
  }

  const t0 = performance.now()
  const { rowstr, colidx, a } = makea(na, nonzer, shift, lo, hi)
  const setup = (performance.now() - t0) / 1000

  // Vectors over the local rows, p and z padded to B (the all-gather's common block) and sent from
  // the segment; the product's input (all of p, or z: element j at index j) and output q.
  const x = new Float64Array(B)
  const r = new Float64Array(B)
  const p = segmentFloat64(B)
  const z = segmentFloat64(B)
  const mv = product(rowstr, colidx, a, nrows, B * P, () => segmentFloat64(B * P), js)
  const full = mv.v
  const q = mv.out
  const red1 = new Float64Array(1)
  const red2 = new Float64Array(2)
  const allSum = (v) => {
    red1[0] = v
    pg.allreduce(red1, red1, ReduceOp.SUM)
    return red1[0]
  }

  /** NPB's conj_grad: 25 CG iterations towards A·z = x; returns ||x − A·z||. */
  function conjGrad() {
    q.fill(0)
    z.fill(0)
    r.set(x)
    p.set(r)
    let rho = allSum(dot(r, r, nrows))
    for (let cgit = 0; cgit < CGITMAX; cgit++) {
      pg.allgather(p, full)
      mv.run() // q = A·p
      const d = allSum(dot(p, q, nrows))
      const alpha = rho / d
      const rho0 = rho
      rho = allSum(update(z, r, p, q, alpha, nrows))
      direction(p, r, rho / rho0, nrows)
    }
    // The residual, computed: ||x − A·z|| (A·z in q, where NPB has it in r).
    pg.allgather(z, full)
    mv.run()
    let sum = 0
    for (let j = 0; j < nrows; j++) {
      const d = x[j] - q[j]
      sum += d * d
    }
    return Math.sqrt(allSum(sum))
  }

  /** One outer iteration: conj_grad, zeta = shift + 1/(x·z), x = z / ||z||. */
  function power() {
    const rnorm = conjGrad()
    red2[0] = dot(x, z, nrows)
    red2[1] = dot(z, z, nrows)
    pg.allreduce(red2, red2, ReduceOp.SUM)
    const norm = 1 / Math.sqrt(red2[1])
    for (let j = 0; j < nrows; j++) x[j] = norm * z[j]
    return { rnorm, zeta: shift + 1 / red2[0] }
  }

  if (me === 0) {
    console.log('\n NAS Parallel Benchmarks (NPB 3.3 definition) -- CG Benchmark on @amlapi/pgas\n')
    console.log(` Size: ${String(na).padStart(10)}`)
    console.log(` Iterations: ${String(niter).padStart(5)}`)
    console.log(` Number of tasks: ${String(P).padStart(5)}`)
    console.log(` Number of nonzeroes per row: ${String(nonzer).padStart(8)}`)
    console.log(` Eigenvalue shift: ${shift.toExponential(3)}`)
    console.log(` Initialization time: ${setup.toFixed(3)} seconds`)
    console.log(` Matrix-vector product: ${mv.kind}`)
  }

  // One untimed iteration (warms the code and the memory), then x back to ones.
  x.fill(1, 0, nrows)
  power()
  x.fill(1, 0, nrows)

  pg.barrier()
  const start = performance.now()
  let zeta = 0
  for (let it = 1; it <= niter; it++) {
    const res = power()
    zeta = res.zeta
    if (me === 0) {
      if (it === 1) console.log('\n   iteration           ||r||                 zeta')
      console.log(`    ${String(it).padStart(5)}       ${res.rnorm.toExponential(13).padStart(20)}${zeta.toFixed(13).padStart(20)}`)
    }
  }
  pg.barrier()
  const elapsed = new Float64Array([(performance.now() - start) / 1000])
  pg.allreduce(elapsed, elapsed, ReduceOp.MAX)

  // NPB's check, on every task (each holds the same zeta, or near it): relative error ≤ 1e-10.
  const err = Math.abs(zeta - C.zeta) / C.zeta
  const passed = new Int32Array([err <= EPSILON ? 1 : 0])
  pg.allreduce(passed, passed, ReduceOp.SUM)
  const ok = passed[0] === P
  if (me === 0) {
    const time = elapsed[0]
    // NPB's operation count for CG (floating-point operations of the timed iterations).
    const mops = (2 * niter * na * (3 + nonzer * (nonzer + 1) + 25 * (5 + nonzer * (nonzer + 1)) + 3)) / time / 1e6
    const line = (name, value) => console.log(` ${name.padEnd(16)}= ${String(value).padStart(24)}`)
    console.log('\n CG Benchmark Completed')
    line('Class', cls)
    line('Size', na)
    line('Iterations', niter)
    line('Tasks', P)
    line('Time in seconds', time.toFixed(2))
    line('Mop/s total', mops.toFixed(2))
    line('Zeta', zeta.toExponential(13))
    line('Error', err.toExponential(3))
    line('Verification', ok ? 'SUCCESSFUL' : 'UNSUCCESSFUL')
    console.log(ok ? `CG class ${cls} verified` : `CG class ${cls} verification FAILED: zeta ${zeta} (NPB: ${C.zeta}), ${passed[0]} of ${P} tasks within 1e-10`)
  }
  if (!ok) process.exitCode = 1
  pg.finalize()
}

main()
