/**
 * A worker thread with one request outstanding at a time: `request(msg)` posts a command and resolves
 * with the worker's next reply (`{ error }` replies reject). A crash, an unexpected exit or the time
 * limit rejects too; `terminate()` is safe to call at any time and more than once.
 */
import { Worker, type Transferable } from 'node:worker_threads'

interface Pending {
  resolve(value: unknown): void
  reject(err: Error): void
  timer: NodeJS.Timeout
}

export class Peer {
  readonly worker: Worker
  #pending: Pending | null = null
  #failure: Error | null = null
  #terminated = false
  #early: unknown[] = []

  constructor(url: URL, workerData: unknown, transferList: readonly Transferable[] = []) {
    this.worker = new Worker(url, { workerData, transferList: [...transferList] as Transferable[] })
    this.worker.on('message', (msg: unknown) => {
      const p = this.#pending
      if (!p) {
        this.#early.push(msg)
        return
      }
      this.#pending = null
      clearTimeout(p.timer)
      if (msg !== null && typeof msg === 'object' && 'error' in msg) p.reject(new Error(String(msg.error)))
      else p.resolve(msg)
    })
    this.worker.on('error', (err: Error) => this.#fail(err))
    this.worker.on('exit', (code: number) => {
      if (!this.#terminated) this.#fail(new Error(`worker exited with code ${code}`))
    })
  }

  #fail(err: Error): void {
    this.#failure ??= err
    const p = this.#pending
    if (p) {
      this.#pending = null
      clearTimeout(p.timer)
      p.reject(err)
    }
  }

  /** Post `msg` and wait for the reply, at most `timeoutMs`. */
  request<T>(msg: unknown, timeoutMs: number): Promise<T> {
    if (this.#failure) return Promise.reject(this.#failure)
    if (this.#pending) return Promise.reject(new Error('request already outstanding'))
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending = null
        reject(new Error(`worker did not answer within ${timeoutMs} ms`))
      }, timeoutMs)
      this.#pending = { resolve: resolve as (v: unknown) => void, reject, timer }
      this.worker.postMessage(msg)
    })
  }

  /** Wait for the worker's first message (it posts one when its module has loaded). */
  ready(timeoutMs: number): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (this.#early.length > 0) return resolve(this.#early.shift())
      if (this.#failure) return reject(this.#failure)
      const timer = setTimeout(() => {
        this.#pending = null
        reject(new Error(`worker did not start within ${timeoutMs} ms`))
      }, timeoutMs)
      this.#pending = { resolve, reject, timer }
    })
  }

  async terminate(): Promise<void> {
    if (this.#terminated) return
    this.#terminated = true
    const p = this.#pending
    if (p) {
      this.#pending = null
      clearTimeout(p.timer)
      p.reject(new Error('terminated'))
    }
    await this.worker.terminate()
  }
}
