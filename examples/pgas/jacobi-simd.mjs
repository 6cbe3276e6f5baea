// The Jacobi sweep of jacobi.mjs in WebAssembly's SIMD code, working on the task's segment in place
// (`pg.segmentMemory`): two points a step as f64x2 lanes, each lane the same sums in the same order
// as the plain sweep, 0.25 × (((up + down) + left) + right), so the grid is bit for bit the same.
// A module is built for one grid width N (the row offsets are constants of its loads). In text form:
//   (module (import "env" "memory" (memory pages pages shared))
//     (func (export "sweep") (param $src i32) (param $dst i32) (param $rows i32)
//       (local $x i32) (local $q i32) (local $end i32) (local $r i32) (local $k v128)
//       (local.set $k (f64x2.splat (f64.const 0.25)))
//       (block (loop                         ;; each row r: $x at (r, 1) of the row above, $q at (r + 1, 1) of dst
//         (br_if 1 (i32.ge_u (local.get $r) (local.get $rows)))
//         (local.set $x (i32.add (i32.add (local.get $src) (i32.mul (local.get $r) (i32.const 8N))) (i32.const 8)))
//         (local.set $q (i32.add (i32.add (local.get $dst) (i32.mul (local.get $r) (i32.const 8N))) (i32.const 8N + 8)))
//         (local.set $end (i32.add (local.get $x) (i32.const 32 × quads)))
//         (block (loop                       ;; four points a step: two pairs, at byte o = 0 and 16
//           (br_if 1 (i32.ge_u (local.get $x) (local.get $end)))
//           (v128.store offset=o (local.get $q) (f64x2.mul (local.get $k)
//             (f64x2.add (f64x2.add (f64x2.add (v128.load offset=o (local.get $x)) (v128.load offset=o+16N (local.get $x)))
//               (v128.load offset=o+8N-8 (local.get $x))) (v128.load offset=o+8N+8 (local.get $x)))))
//           ... $x += 32, $q += 32 (br 0)))
//         one more pair where (N - 2) / 2 is odd, one f64 point where N - 2 is odd
//         (local.set $r (i32.add (local.get $r) (i32.const 1))) (br 0))))

/**
 * `sweep(src, dst, rows)` over the grids at segment addresses `src` and `dst` (each a halo row,
 * `rows` rows, a halo row, of `n` doubles), or null where there is no segment memory or the engine
 * has no WebAssembly SIMD.
 */
export function simdSweep(memory, n) {
  if (memory === undefined || typeof WebAssembly === 'undefined') return null
  try {
    const pages = memory.buffer.byteLength / 65536
    const instance = new WebAssembly.Instance(new WebAssembly.Module(moduleBytes(n, pages)), { env: { memory } })
    return instance.exports.sweep
  } catch {
    return null
  }
}

function moduleBytes(n, pages) {
  const rowB = 8 * n
  const pairs = (n - 2) >> 1
  const quads = pairs >> 1
  const V = 0xfd
  const get = (i) => [0x20, i],
    set = (i) => [0x21, i],
    i32 = (v) => [0x41, ...sleb(v)]
  const ADD = 0x6a,
    MUL = 0x6c,
    GE_U = 0x4f
  const F64X2_ADD = [V, 0xf0, 0x01],
    F64X2_MUL = [V, 0xf2, 0x01]
  const X = 3,
    Q = 4,
    END = 5,
    R = 6,
    K = 7
  const vload = (o) => [...get(X), V, 0x00, 3, ...leb(o)]
  const fload = (o) => [...get(X), 0x2b, 3, ...leb(o)]
  // dst pair at byte o of $q from the four neighbours' pairs at $x
  const pair = (o) => [
    ...get(Q),
    ...get(K),
    ...vload(o),
    ...vload(o + 2 * rowB),
    ...F64X2_ADD,
    ...vload(o + rowB - 8),
    ...F64X2_ADD,
    ...vload(o + rowB + 8),
    ...F64X2_ADD,
    ...F64X2_MUL,
    V,
    0x0b,
    3,
    ...leb(o),
  ]
  const point = (o) => [
    ...get(Q),
    0x44,
    ...f64(0.25),
    ...fload(o),
    ...fload(o + 2 * rowB),
    0xa0,
    ...fload(o + rowB - 8),
    0xa0,
    ...fload(o + rowB + 8),
    0xa0,
    0xa2,
    0x39,
    3,
    ...leb(o),
  ]
  const code = [
    2,
    4,
    0x7f,
    1,
    0x7b, // locals: $x $q $end $r (i32), $k (v128)
    0x44,
    ...f64(0.25),
    V,
    0x14,
    ...set(K),
    0x02,
    0x40,
    0x03,
    0x40,
    ...get(R),
    ...get(2),
    GE_U,
    0x0d,
    1,
    ...get(0),
    ...get(R),
    ...i32(rowB),
    MUL,
    ADD,
    ...i32(8),
    ADD,
    ...set(X),
    ...get(1),
    ...get(R),
    ...i32(rowB),
    MUL,
    ADD,
    ...i32(rowB + 8),
    ADD,
    ...set(Q),
    ...get(X),
    ...i32(32 * quads),
    ADD,
    ...set(END),
    0x02,
    0x40,
    0x03,
    0x40,
    ...get(X),
    ...get(END),
    GE_U,
    0x0d,
    1,
    ...pair(0),
    ...pair(16),
    ...get(X),
    ...i32(32),
    ADD,
    ...set(X),
    ...get(Q),
    ...i32(32),
    ADD,
    ...set(Q),
    0x0c,
    0,
    0x0b,
    0x0b,
    ...(pairs & 1 ? pair(0) : []),
    ...((n - 2) & 1 ? point(pairs & 1 ? 16 : 0) : []),
    ...get(R),
    ...i32(1),
    ADD,
    ...set(R),
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
    ...section(1, [1, 0x60, 3, 0x7f, 0x7f, 0x7f, 0]), // (i32 i32 i32) → ()
    ...section(2, [1, ...name('env'), ...name('memory'), 0x02, 0x03, ...leb(pages), ...leb(pages)]),
    ...section(3, [1, 0]),
    ...section(7, [1, ...name('sweep'), 0x00, 0]),
    ...section(10, [1, ...leb(code.length), ...code]),
  ])
}

function leb(v) {
  const b = []
  do {
    let x = v & 0x7f
    v >>>= 7
    if (v !== 0) x |= 0x80
    b.push(x)
  } while (v !== 0)
  return b
}
function sleb(v) {
  const b = []
  for (;;) {
    const x = v & 0x7f
    v >>= 7
    if ((v === 0 && (x & 0x40) === 0) || (v === -1 && (x & 0x40) !== 0)) {
      b.push(x)
      return b
    }
    b.push(x | 0x80)
  }
}
function f64(v) {
  return [...new Uint8Array(new Float64Array([v]).buffer)]
}
