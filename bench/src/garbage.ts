/**
 * Garbage accounting for in-process loops: JS heap bytes allocated per operation and garbage
 * collections, measured with `v8.GCProfiler` (no `--expose-gc` needed).
 *
 * Allocated bytes = (used heap after − used heap before) + Σ over the collections in between of
 * (used heap before that collection − used heap after it). This counts what the loop allocated on
 * the JS heap, whether or not it was collected meanwhile. Off-heap ArrayBuffer backing stores are
 * not counted (their small wrapper objects are).
 */
import v8 from 'node:v8'

interface GcHeapStats {
  usedHeapSize: number
}

export interface GarbageFigures {
  /** JS heap bytes allocated, after subtracting the cost of measuring an empty loop. */
  bytes: number
  /** Garbage collections of any kind that ran during the loop. */
  gcs: number
}

function measureOnce(fn: () => unknown): GarbageFigures {
  const profiler = new v8.GCProfiler()
  profiler.start()
  const before = v8.getHeapStatistics().used_heap_size
  fn()
  const after = v8.getHeapStatistics().used_heap_size
  const data = profiler.stop()
  let collected = 0
  for (const gc of data.statistics) {
    const b = gc.beforeGC.heapStatistics as unknown as GcHeapStats
    const a = gc.afterGC.heapStatistics as unknown as GcHeapStats
    collected += b.usedHeapSize - a.usedHeapSize
  }
  return { bytes: after - before + collected, gcs: data.statistics.length }
}

let overhead: number | undefined

/** Heap bytes allocated and collections run while `fn` runs (synchronously). */
export function measureGarbage(fn: () => unknown): GarbageFigures {
  if (overhead === undefined) {
    let least = Infinity
    for (let i = 0; i < 5; i++) least = Math.min(least, measureOnce(() => 0).bytes)
    overhead = Math.max(0, least)
  }
  const m = measureOnce(fn)
  return { bytes: Math.max(0, m.bytes - overhead), gcs: m.gcs }
}
