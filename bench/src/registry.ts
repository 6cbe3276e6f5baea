/**
 * The named benchmarks, in run order. Adding a benchmark = one module under `benchmarks/` whose
 * default export is a `Benchmark`, plus one line here. Modules load lazily, so one that fails to
 * load (say, a package mid-edit) is reported as an error without stopping the others.
 */
import type { Benchmark } from './types.js'

export interface RegistryEntry {
  name: string
  load(): Promise<{ default: Benchmark }>
}

export const registry: readonly RegistryEntry[] = [
  { name: 'baseline.memcpy', load: () => import('./benchmarks/baseline-memcpy.js') },
  { name: 'baseline.sab-spin', load: () => import('./benchmarks/baseline-sab-spin.js') },
  { name: 'baseline.sab-am', load: () => import('./benchmarks/baseline-sab-am.js') },
  { name: 'baseline.sab-wait', load: () => import('./benchmarks/baseline-sab-wait.js') },
  { name: 'baseline.msgport', load: () => import('./benchmarks/baseline-msgport.js') },
  { name: 'baseline.threads', load: () => import('./benchmarks/baseline-threads.js') },
  { name: 'bufmgr.alloc-free', load: () => import('./benchmarks/bufmgr-alloc-free.js') },
  { name: 'lapi.rma', load: () => import('./benchmarks/lapi-rma.js') },
  { name: 'lapi.am', load: () => import('./benchmarks/lapi-am.js') },
  { name: 'am2', load: () => import('./benchmarks/am2.js') },
  { name: 'net', load: () => import('./benchmarks/net.js') },
  { name: 'net.udp', load: () => import('./benchmarks/net-udp.js') },
  { name: 'pgas', load: () => import('./benchmarks/pgas.js') },
  { name: 'pgas.apps', load: () => import('./benchmarks/pgas-apps.js') },
  { name: 'pgas.scaling', load: () => import('./benchmarks/pgas-scaling.js') },
  { name: 'pgas.scaling.apps', load: () => import('./benchmarks/pgas-scaling-apps.js') },
  { name: 'pgas.scaling.procs', load: () => import('./benchmarks/pgas-scaling-procs.js') },
]
