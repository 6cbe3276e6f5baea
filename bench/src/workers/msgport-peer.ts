/**
 * Worker of the MessagePort baseline (`baseline.msgport`). The two workers talk over one
 * `MessageChannel`; every message is a `Uint8Array` of `size` bytes sent by structured clone
 * (a copy; nothing is transferred).
 *
 * Role `a` gets commands from the main thread, tells `b` the mode over the channel, then times
 * `iterations` round trips (`rtt`) or streams `iterations` messages in windows of `window`
 * messages, each window answered by a small ack from `b` (`bw`). Nothing here blocks: the
 * workers are event driven, and the main thread terminates them if an answer is late.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads'

export interface MsgportWorkerData {
  role: 'a' | 'b'
  port: MessagePort
}

export interface MsgportCommand {
  op: 'rtt' | 'bw'
  size: number
  iterations: number
  window: number
}

interface Mode {
  mode: 'rtt' | 'bw'
  size: number
  iterations: number
  window: number
}

const { role, port } = workerData as MsgportWorkerData
const main = parentPort!

// One message buffer per size, made once. It must be exactly `size` bytes long: structured clone
// copies a view's whole ArrayBuffer, not just the viewed bytes.
const buffers = new Map<number, Uint8Array>()
function bufferOf(size: number, fill: number): Uint8Array {
  let b = buffers.get(size)
  if (!b) {
    b = new Uint8Array(size).fill(fill)
    buffers.set(size, b)
  }
  return b
}

if (role === 'b') {
  let mode: Mode = { mode: 'rtt', size: 0, iterations: 0, window: 1 }
  let reply: Uint8Array = new Uint8Array(0)
  let received = 0
  port.on('message', (msg: unknown) => {
    if (msg instanceof Uint8Array) {
      received++
      if (mode.mode === 'rtt') port.postMessage(reply)
      else if (received % mode.window === 0 || received === mode.iterations) port.postMessage(received)
      return
    }
    mode = msg as Mode
    reply = bufferOf(mode.size, 0x5a)
    received = 0
  })
} else {
  let onReply: (msg: unknown) => void = () => {}
  port.on('message', (msg: unknown) => onReply(msg))
  main.on('message', (cmd: MsgportCommand) => {
    const buf = bufferOf(cmd.size, 0xa5)
    port.postMessage({ mode: cmd.op, size: cmd.size, iterations: cmd.iterations, window: cmd.window } satisfies Mode)
    const t0 = performance.now()
    const finish = (): void => {
      const seconds = (performance.now() - t0) / 1e3
      onReply = () => {}
      main.postMessage({ seconds })
    }
    if (cmd.op === 'rtt') {
      let done = 0
      onReply = () => {
        if (++done < cmd.iterations) port.postMessage(buf)
        else finish()
      }
      port.postMessage(buf)
    } else {
      let sent = 0
      const sendWindow = (): void => {
        const k = Math.min(cmd.window, cmd.iterations - sent)
        for (let i = 0; i < k; i++) port.postMessage(buf)
        sent += k
      }
      onReply = () => {
        if (sent < cmd.iterations) sendWindow()
        else finish()
      }
      sendWindow()
    }
  })
}

main.postMessage({ ready: true })
