/** The environment a run is recorded with: Node, V8, CPU, cores, CPU affinity. No host name. */
import { existsSync, readFileSync } from 'node:fs'
import os from 'node:os'
import { delimiter, join } from 'node:path'
import { jitApplied } from '#lapi-internal'

export interface Environment {
  node: string
  v8: string
  cpuModel: string
  /** Logical CPUs online (`os.cpus().length`). */
  cores: number
  /** `Cpus_allowed_list` of this process, e.g. `0-1`; `unknown` off Linux. */
  cpusAllowed: string
  /** Number of CPUs in `cpusAllowed`. */
  cpusAllowedCount: number
  /** Path of the `taskset` binary, or `null` when there is none. */
  taskset: string | null
  /**
   * `all CPUs (not pinned)` when the process may use every online CPU, otherwise `restricted to <list>`
   * (by `taskset` or a cgroup: the process cannot tell which).
   */
  pinning: string
  os: string
  arch: string
  memoryGiB: number
  date: string
  /** V8's inlining budgets: `raised (<the flags tuneJit set>)` (AMLAPI_JIT=tuned) or `node's` (the default). */
  jit: string
}

/** Parse a Linux CPU list such as `0-3,8,10-11` into CPU numbers. */
export function parseCpuList(list: string): number[] {
  const out: number[] = []
  for (const part of list.split(',')) {
    const t = part.trim()
    if (t === '') continue
    const m = /^(\d+)(?:-(\d+))?$/.exec(t)
    if (!m) continue
    const a = Number(m[1])
    const b = m[2] === undefined ? a : Number(m[2])
    for (let c = a; c <= b; c++) out.push(c)
  }
  return out
}

export function cpusAllowedList(): string {
  try {
    const m = /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync('/proc/self/status', 'utf8'))
    if (m) return m[1]!
  } catch {
    // not Linux
  }
  return 'unknown'
}

export function findTaskset(): string | null {
  if (process.platform !== 'linux') return null
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (dir === '') continue
    const p = join(dir, 'taskset')
    if (existsSync(p)) return p
  }
  return null
}

function osName(): string {
  try {
    const m = /^PRETTY_NAME="?([^"\n]*)"?/m.exec(readFileSync('/etc/os-release', 'utf8'))
    if (m) return `${m[1]}, ${os.type()} ${os.release()}`
  } catch {
    // no os-release
  }
  return `${os.type()} ${os.release()}`
}

export function captureEnvironment(now = new Date()): Environment {
  const cpus = os.cpus()
  const allowed = cpusAllowedList()
  const allowedCount = allowed === 'unknown' ? cpus.length : parseCpuList(allowed).length
  const jit = jitApplied()
  return {
    node: process.version,
    v8: process.versions.v8,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    cpusAllowed: allowed,
    cpusAllowedCount: allowedCount,
    taskset: findTaskset(),
    pinning: allowedCount < cpus.length ? `restricted to CPUs ${allowed}` : 'all CPUs (not pinned)',
    os: osName(),
    arch: process.arch,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    date: now.toISOString(),
    jit: jit.length > 0 ? `raised (${jit.join(' ')})` : "node's",
  }
}

/** Busy and total CPU time of the whole machine so far, in seconds (Linux `/proc/stat`), or null. */
export function machineCpuSeconds(): { busy: number; total: number; steal: number } | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!
    const f = line.trim().split(/\s+/).slice(1).map(Number)
    // user nice system idle iowait irq softirq steal (guest time is already inside user/nice)
    const total = f.slice(0, 8).reduce((a, b) => a + b, 0)
    const idle = (f[3] ?? 0) + (f[4] ?? 0)
    return { busy: (total - idle) / 100, total: total / 100, steal: (f[7] ?? 0) / 100 }
  } catch {
    return null
  }
}

/** How busy the machine was with other work while the benchmarks ran. */
export interface MachineLoad {
  /** 1-minute load average at the start and at the end of the run. */
  loadavgStart: number
  loadavgEnd: number
  /**
   * CPU time used by other processes during the run, as a percentage of all the CPU time the machine
   * had (busy time from /proc/stat minus this process and the processes it started). `null` off Linux.
   * Anything above a few percent means the figures were disturbed. It includes `stealPercent`.
   */
  otherCpuPercent: number | null
  /**
   * Of that, the time the hypervisor ran something else while our vCPUs wanted to run (`steal` in
   * /proc/stat), as a percentage of all the CPU time. `null` off Linux.
   */
  stealPercent: number | null
}

/**
 * CPU seconds of this process's ended children and their descendants (`cutime` + `cstime` of
 * /proc/self/stat: the jobs, peers and applications the benchmarks start); null off Linux.
 */
function childrenCpuSeconds(): number | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8')
    // (the fields after the command, which is in parentheses and may hold spaces)
    const f = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number)
    return ((f[13] ?? 0) + (f[14] ?? 0)) / 100
  } catch {
    return null
  }
}

/**
 * Start measuring; the returned function takes the CPU seconds our 1-core child reported (used
 * where the kernel does not say what the children used).
 */
export function startLoadMeter(): (childCpuSeconds: number) => MachineLoad {
  const loadavgStart = os.loadavg()[0]!
  const m0 = machineCpuSeconds()
  const u0 = process.cpuUsage()
  const c0 = childrenCpuSeconds()
  return (childCpuSeconds) => {
    const m1 = machineCpuSeconds()
    const u = process.cpuUsage(u0)
    const c1 = childrenCpuSeconds()
    let otherCpuPercent: number | null = null
    let stealPercent: number | null = null
    if (m0 && m1 && m1.total > m0.total) {
      const ours = (u.user + u.system) / 1e6 + (c0 !== null && c1 !== null ? c1 - c0 : childCpuSeconds)
      const other = Math.max(0, m1.busy - m0.busy - ours)
      otherCpuPercent = Math.round((1000 * other) / (m1.total - m0.total)) / 10
      stealPercent = Math.round((1000 * (m1.steal - m0.steal)) / (m1.total - m0.total)) / 10
    }
    return { loadavgStart, loadavgEnd: os.loadavg()[0]!, otherCpuPercent, stealPercent }
  }
}
