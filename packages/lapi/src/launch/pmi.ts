/**
 * A PMI-1 client: the "simple" wire protocol that MPICH's Hydra (`mpiexec`) and Slurm's
 * `srun --mpi=pmi2` speak to each process over the socket whose descriptor they put in PMI_FD.
 * `lapirun --join` uses it for the rendezvous (launch/join.ts): process 0 puts the rendezvous's
 * address and the job key into the job's key-value space, a barrier, the others get them. Only the
 * launcher and the job's processes can read that space.
 *
 * Each command is one line of `key=value` words; the launcher answers each in order:
 *
 *   cmd=init pmi_version=1 pmi_subversion=1   →  cmd=response_to_init … rc=0
 *   cmd=get_maxes                             →  cmd=maxes kvsname_max=… keylen_max=… vallen_max=…
 *   cmd=get_my_kvsname                        →  cmd=my_kvsname kvsname=K
 *   cmd=put kvsname=K key=k value=v           →  cmd=put_result rc=0
 *   cmd=barrier_in                            →  cmd=barrier_out
 *   cmd=get kvsname=K key=k                   →  cmd=get_result rc=0 value=v
 *   cmd=finalize                              →  cmd=finalize_ack
 *
 * A value holds no spaces (words are split on them) and at most `vallen_max` bytes.
 */
import { Socket } from 'node:net'

/** A PMI command failed, or the launcher's socket closed or said something else. */
export class PmiError extends Error {}

interface Call {
  expect: string
  resolve: (w: Map<string, string>) => void
  reject: (e: Error) => void
}

/** Parses one line of `key=value` words (a word without `=` is ignored). */
export function parsePmiLine(line: string): Map<string, string> {
  const m = new Map<string, string>()
  for (const w of line.trim().split(/ +/)) {
    const eq = w.indexOf('=')
    if (eq > 0) m.set(w.slice(0, eq), w.slice(eq + 1))
  }
  return m
}

export class Pmi1 {
  private readonly sock: Socket
  private buf = ''
  private readonly calls: Call[] = []
  private closed: Error | null = null
  /** The job's key-value space (after `init`). */
  kvsname = ''
  /** The longest value the launcher takes (after `init`). */
  valueMax = 1024

  /** The client over descriptor `fd` (the launcher's PMI_FD). */
  constructor(fd: number) {
    this.sock = new Socket({ fd, readable: true, writable: true })
    this.sock.setEncoding('utf8')
    this.sock.on('data', (chunk: string) => this.onData(chunk))
    // (a write or read that meets the launcher's end gone is the socket closing, whichever comes first)
    const end = (e?: NodeJS.ErrnoException): void => {
      const gone = e === undefined || e.code === 'EPIPE' || e.code === 'ECONNRESET'
      this.fail(new PmiError(`the launcher's PMI socket ${gone ? 'closed' : `failed: ${e.message}`}`))
    }
    this.sock.on('error', end)
    this.sock.on('close', () => end())
  }

  /** The client of this process's launcher, when its environment has a PMI_FD; null otherwise. */
  static fromEnv(env: NodeJS.ProcessEnv): Pmi1 | null {
    const v = (env['PMI_FD'] ?? '').trim()
    if (v === '') return null
    const fd = Number(v)
    if (!Number.isInteger(fd) || fd < 0) throw new PmiError(`PMI_FD=${v} is not a descriptor`)
    return new Pmi1(fd)
  }

  /** Says hello, learns the value limit and the key-value space. */
  async init(): Promise<void> {
    await this.call('cmd=init pmi_version=1 pmi_subversion=1', 'response_to_init')
    const maxes = await this.call('cmd=get_maxes', 'maxes')
    const vm = Number(maxes.get('vallen_max'))
    if (Number.isInteger(vm) && vm > 0) this.valueMax = vm
    const k = await this.call('cmd=get_my_kvsname', 'my_kvsname')
    this.kvsname = k.get('kvsname') ?? ''
    if (this.kvsname === '') throw new PmiError('the launcher named no key-value space (get_my_kvsname)')
  }

  async put(key: string, value: string): Promise<void> {
    if (/\s/.test(key + value) || value.length > this.valueMax) throw new PmiError(`PMI value for ${key} has spaces or is longer than ${this.valueMax} bytes`)
    await this.call(`cmd=put kvsname=${this.kvsname} key=${key} value=${value}`, 'put_result')
  }

  /** Every process of the job has come here (what each put before is visible to all after). */
  async barrier(): Promise<void> {
    await this.call('cmd=barrier_in', 'barrier_out')
  }

  async get(key: string): Promise<string> {
    const r = await this.call(`cmd=get kvsname=${this.kvsname} key=${key}`, 'get_result')
    const v = r.get('value')
    if (v === undefined) throw new PmiError(`PMI get ${key}: no value`)
    return v
  }

  /** Says goodbye and closes the socket (the launcher then expects this process to exit). */
  async finalize(): Promise<void> {
    try {
      await this.call('cmd=finalize', 'finalize_ack')
    } finally {
      this.close()
    }
  }

  /** Closes the socket without a goodbye. */
  close(): void {
    this.closed ??= new PmiError('PMI closed')
    this.sock.destroy()
  }

  private call(line: string, expect: string): Promise<Map<string, string>> {
    if (this.closed !== null) return Promise.reject(this.closed)
    return new Promise((resolve, reject) => {
      this.calls.push({ expect, resolve, reject })
      this.sock.write(line + '\n')
    })
  }

  private onData(chunk: string): void {
    this.buf += chunk
    for (let nl = this.buf.indexOf('\n'); nl >= 0; nl = this.buf.indexOf('\n')) {
      const line = this.buf.slice(0, nl)
      this.buf = this.buf.slice(nl + 1)
      if (line.trim() === '') continue
      const w = parsePmiLine(line)
      const c = this.calls.shift()
      if (c === undefined) continue
      const rc = w.get('rc')
      if (w.get('cmd') !== c.expect) c.reject(new PmiError(`PMI: expected ${c.expect}, the launcher said: ${line.trim()}`))
      else if (rc !== undefined && rc !== '0') c.reject(new PmiError(`PMI ${c.expect}: rc=${rc}${w.has('msg') ? ` (${w.get('msg')!})` : ''}`))
      else c.resolve(w)
    }
  }

  private fail(e: Error): void {
    if (this.closed === null) this.closed = e
    for (const c of this.calls.splice(0)) c.reject(e)
  }
}
