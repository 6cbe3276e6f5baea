/**
 * The three PGAS applications of examples/pgas (lib/app-run.ts), run whole with lapirun: NPB IS
 * (Mop/s), HPC Challenge RandomAccess (GUP/s) and the Jacobi stencil (ms per iteration), on 1, 2
 * and 4 tasks of one process (shared memory) and on 2 processes over tcp and udp. Each run must
 * print its verification line; the size of a point is its number of tasks (or processes).
 *
 * The goals hold the applications against native figures measured on the reference machine kind
 * (2 vCPUs; Open MPI 4.1 over shared memory, 2 ranks): NPB IS class A 307 Mop/s (1 rank 138),
 * RandomAccess 2^22 0.039 GUP/s, Jacobi 4096 × 4096 12.2 ms an iteration. Jacobi runs twice:
 * with its sweep in WebAssembly's SIMD code (the program's default) and in plain JavaScript.
 * The distributed hash table (dht.mjs) runs both ways, by remote procedure calls and by remote
 * atomics with gets; its figure is lookups per second, all tasks together (C + MPI one-sided,
 * native/dht-mpi.c, is the comparison in docs/pgas.md; no goal holds it).
 * NPB CG (cg.mjs, Mop/s) is compared with its C + MPI counterpart (native/cg-mpi.c) in
 * docs/pgas.md; no goal holds it either.
 */
import { appSession, cg, dht, gups, is, jacobi, over, shm, type AppRun } from '../lib/app-run.js'
import type { Benchmark, BenchContext, Session } from '../types.js'

const RUNS: Readonly<Record<string, AppRun>> = {
  'pgas.apps.is': is(shm, 'A'),
  'pgas.apps.is-tcp': is(over('tcp'), 'W'),
  'pgas.apps.is-udp': is(over('udp'), 'W'),
  'pgas.apps.cg': cg(shm, 'A'),
  'pgas.apps.cg-tcp': cg(over('tcp'), 'W'),
  'pgas.apps.cg-udp': cg(over('udp'), 'W'),
  'pgas.apps.gups': gups(shm, 22),
  'pgas.apps.gups-tcp': gups(over('tcp'), 20),
  'pgas.apps.gups-udp': gups(over('udp'), 20),
  'pgas.apps.jacobi': jacobi(shm),
  'pgas.apps.jacobi-js': jacobi(shm, true),
  'pgas.apps.dht': dht(shm, 20, 'rpc'),
  'pgas.apps.dht-atomic': dht(shm, 20, 'atomic'),
  'pgas.apps.dht-tcp': dht(over('tcp'), 18, 'rpc'),
  'pgas.apps.dht-udp': dht(over('udp'), 18, 'rpc'),
  'pgas.apps.dht-atomic-tcp': dht(over('tcp'), 14, 'atomic'),
}

const TASKS = [1, 2, 4] as const

const bench: Benchmark = {
  name: 'pgas.apps',
  description: 'the examples/pgas applications run whole with lapirun: NPB IS, NPB CG, HPC Challenge RandomAccess, a Jacobi stencil and a distributed hash table on 1, 2, 4 tasks of one process and on 2 processes over tcp and udp',
  placements: ['all'],
  series: [
    {
      id: 'pgas.apps.is', title: 'NPB IS class A (quick: S), tasks of one process', kind: 'rate', unit: 'ops/s', group: 'pgas-apps-is',
      groupTitle: 'NPB Integer Sort: keys ranked per second (Mop/s × 10^6)', xLabel: 'tasks (processes)', sizes: TASKS, sizeUnit: 'tasks', wholeRuns: true,
    },
    { id: 'pgas.apps.is-tcp', title: 'NPB IS class W (quick: S), processes over tcp', kind: 'rate', unit: 'ops/s', group: 'pgas-apps-is', sizes: [2], sizeUnit: 'tasks', wholeRuns: true },
    { id: 'pgas.apps.is-udp', title: 'NPB IS class W (quick: S), processes over udp', kind: 'rate', unit: 'ops/s', group: 'pgas-apps-is', sizes: [2], sizeUnit: 'tasks', wholeRuns: true },
    {
      id: 'pgas.apps.cg', title: 'NPB CG class A (quick: S), tasks of one process', kind: 'rate', unit: 'ops/s', group: 'pgas-apps-cg',
      groupTitle: 'NPB Conjugate Gradient: floating-point operations per second (Mop/s × 10^6)', xLabel: 'tasks (processes)', sizes: TASKS, sizeUnit: 'tasks', wholeRuns: true,
    },
    { id: 'pgas.apps.cg-tcp', title: 'NPB CG class W (quick: S), processes over tcp', kind: 'rate', unit: 'ops/s', group: 'pgas-apps-cg', sizes: [2], sizeUnit: 'tasks', wholeRuns: true },
    { id: 'pgas.apps.cg-udp', title: 'NPB CG class W (quick: S), processes over udp', kind: 'rate', unit: 'ops/s', group: 'pgas-apps-cg', sizes: [2], sizeUnit: 'tasks', wholeRuns: true },
    {
      id: 'pgas.apps.gups', title: 'RandomAccess 2^22 (quick: 2^16), tasks of one process', kind: 'rate', unit: 'ops/s', group: 'pgas-apps-gups',
      groupTitle: 'HPC Challenge RandomAccess: table updates per second (GUP/s × 10^9)', xLabel: 'tasks (processes)', sizes: TASKS, sizeUnit: 'tasks', wholeRuns: true,
    },
    { id: 'pgas.apps.gups-tcp', title: 'RandomAccess 2^20 (quick: 2^14), processes over tcp', kind: 'rate', unit: 'ops/s', group: 'pgas-apps-gups', sizes: [2], sizeUnit: 'tasks', wholeRuns: true },
    { id: 'pgas.apps.gups-udp', title: 'RandomAccess 2^20 (quick: 2^14), processes over udp', kind: 'rate', unit: 'ops/s', group: 'pgas-apps-gups', sizes: [2], sizeUnit: 'tasks', wholeRuns: true },
    {
      id: 'pgas.apps.jacobi', title: 'Jacobi 4096 × 4096, 100 iterations (quick: 256, 20), tasks of one process', kind: 'latency', unit: 'us', group: 'pgas-apps-jacobi',
      groupTitle: 'Jacobi stencil: µs per iteration', xLabel: 'tasks', sizes: [1, 2], sizeUnit: 'tasks', wholeRuns: true,
    },
    { id: 'pgas.apps.jacobi-js', title: 'the same, the sweep in JavaScript (--js)', kind: 'latency', unit: 'us', group: 'pgas-apps-jacobi', sizes: [1, 2], sizeUnit: 'tasks', wholeRuns: true },
    {
      id: 'pgas.apps.dht', title: 'DHT 2^20 keys a task (quick: 2^14), remote procedure calls, tasks of one process', kind: 'rate', unit: 'ops/s', group: 'pgas-apps-dht',
      groupTitle: 'Distributed hash table: lookups per second, all tasks together', xLabel: 'tasks (processes)', sizes: TASKS, sizeUnit: 'tasks', wholeRuns: true,
    },
    { id: 'pgas.apps.dht-atomic', title: 'DHT 2^20 keys a task (quick: 2^14), remote atomics and gets, tasks of one process', kind: 'rate', unit: 'ops/s', group: 'pgas-apps-dht', sizes: TASKS, sizeUnit: 'tasks', wholeRuns: true },
    { id: 'pgas.apps.dht-tcp', title: 'DHT 2^18 keys a task (quick: 2^12), remote procedure calls, processes over tcp', kind: 'rate', unit: 'ops/s', group: 'pgas-apps-dht', sizes: [2], sizeUnit: 'tasks', wholeRuns: true },
    { id: 'pgas.apps.dht-udp', title: 'DHT 2^18 keys a task (quick: 2^12), remote procedure calls, processes over udp', kind: 'rate', unit: 'ops/s', group: 'pgas-apps-dht', sizes: [2], sizeUnit: 'tasks', wholeRuns: true },
    { id: 'pgas.apps.dht-atomic-tcp', title: 'DHT 2^14 keys a task (quick: 2^8), remote atomics and gets, processes over tcp', kind: 'rate', unit: 'ops/s', group: 'pgas-apps-dht', sizes: [2], sizeUnit: 'tasks', wholeRuns: true },
  ],
  goals: [
    { name: 'NPB IS class A, 2 tasks ≥ 0.5 × MPI (307 Mop/s)', series: 'pgas.apps.is', size: 2, op: '>=', target: 153.5e6 },
    { name: 'NPB IS class A faster on 2 tasks than on 1', series: 'pgas.apps.is', size: 2, baseline: 'pgas.apps.is', baselineSize: 1, op: '>=', target: 1, pair: false },
    { name: 'RandomAccess 2^22, 2 tasks ≥ MPI (0.039 GUP/s)', series: 'pgas.apps.gups', size: 2, op: '>=', target: 0.039e9 },
    { name: 'Jacobi 4096 × 4096, 2 tasks ≤ 1.5 × MPI (12.2 ms an iteration)', series: 'pgas.apps.jacobi', size: 2, op: '<=', target: 18_300 },
  ],
  open: (ctx: BenchContext): Session => appSession(ctx, RUNS),
}

export default bench
