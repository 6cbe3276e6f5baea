/**
 * Worker of the SharedArrayBuffer ring baselines (`baseline.sab-spin`, `baseline.sab-wait`).
 *
 * Role `a` initiates and times; role `b` echoes (round trip) or consumes (bandwidth). Every message
 * is copied in by the sender (`Uint8Array.set` into the slot) and copied out by the receiver
 * (`Uint8Array.set` out of the slot into its own buffer). Publication is `Atomics.store` of a
 * sequence number; waiting is a busy loop on `Atomics.load` (`spin`) or `Atomics.wait` with
 * `Atomics.notify` on every store (`wait`). The loops give up at the command's deadline or when the
 * main thread raises the abort word (checked every 256 messages and every 2^18 spins, and after
 * every 20 ms `Atomics.wait` timeout), so a worker always comes back.
 */
import { parentPort, workerData } from 'node:worker_threads'
import {
  ABORT,
  ACK_AB,
  CTL_INTS,
  READY,
  RING_SLOTS,
  SEQ_AB,
  SEQ_BA,
  offsetAB,
  offsetBA,
  slotStride,
  type SabCommand,
  type SabReply,
  type SabWorkerData,
} from '../lib/sab-layout.js'

const data = workerData as SabWorkerData
const port = parentPort!
const ctl = new Int32Array(data.sab, 0, CTL_INTS)
const spin = data.mode === 'spin'
const maxSize = data.maxSize
let deadline = 0
// Private source and destination buffers, made once: a fresh 1 MiB buffer per command would add
// page faults and zeroing to the timed loop.
const srcAll = new Uint8Array(maxSize).fill(data.role === 'a' ? 0xa5 : 0x5a)
const dstAll = new Uint8Array(maxSize)

function check(): void {
  if (Atomics.load(ctl, ABORT) !== 0) throw new Error('aborted by the runner')
  if (Date.now() > deadline) throw new Error('deadline passed')
}

/** Spins since the last check, kept across waits: many short waits add up to a long one. */
let spins = 0

/** Wait until `ctl[idx] >= target`. */
function awaitAtLeast(idx: number, target: number): void {
  if (spin) {
    while (Atomics.load(ctl, idx) < target) {
      if ((++spins & 0x3ffff) === 0) check()
    }
  } else {
    for (;;) {
      const v = Atomics.load(ctl, idx)
      if (v >= target) return
      if (Atomics.wait(ctl, idx, v, 20) === 'timed-out') check()
    }
  }
}

function publish(idx: number, value: number): void {
  Atomics.store(ctl, idx, value)
  if (!spin) Atomics.notify(ctl, idx)
}

function rttA(size: number, iterations: number): void {
  const src = srcAll.subarray(0, size)
  const dst = dstAll.subarray(0, size)
  const out = new Uint8Array(data.sab, offsetAB(), size)
  const inp = new Uint8Array(data.sab, offsetBA(maxSize), size)
  for (let i = 1; i <= iterations; i++) {
    if ((i & 255) === 0) check()
    out.set(src)
    publish(SEQ_AB, i)
    awaitAtLeast(SEQ_BA, i)
    dst.set(inp)
  }
}

function rttB(size: number, iterations: number): void {
  const src = srcAll.subarray(0, size)
  const dst = dstAll.subarray(0, size)
  const inp = new Uint8Array(data.sab, offsetAB(), size)
  const out = new Uint8Array(data.sab, offsetBA(maxSize), size)
  for (let i = 1; i <= iterations; i++) {
    if ((i & 255) === 0) check()
    awaitAtLeast(SEQ_AB, i)
    dst.set(inp)
    out.set(src)
    publish(SEQ_BA, i)
  }
}

function ringSlots(size: number): Uint8Array[] {
  const stride = slotStride(size)
  const slots: Uint8Array[] = []
  for (let k = 0; k < RING_SLOTS; k++) slots.push(new Uint8Array(data.sab, offsetAB() + k * stride, size))
  return slots
}

/** Producer: fill a free slot, publish it; finally wait until the consumer has taken everything. */
function bwA(size: number, iterations: number): void {
  const src = srcAll.subarray(0, size)
  const slots = ringSlots(size)
  for (let i = 0; i < iterations; i++) {
    if ((i & 255) === 255) check()
    if (i >= RING_SLOTS) awaitAtLeast(ACK_AB, i - RING_SLOTS + 1)
    slots[i % RING_SLOTS]!.set(src)
    publish(SEQ_AB, i + 1)
  }
  awaitAtLeast(ACK_AB, iterations)
}

function bwB(size: number, iterations: number): void {
  const dst = dstAll.subarray(0, size)
  const slots = ringSlots(size)
  for (let j = 0; j < iterations; j++) {
    if ((j & 255) === 255) check()
    awaitAtLeast(SEQ_AB, j + 1)
    dst.set(slots[j % RING_SLOTS]!)
    publish(ACK_AB, j + 1)
  }
}

port.on('message', (cmd: SabCommand) => {
  deadline = cmd.deadline
  try {
    if (data.role === 'b') {
      publish(READY, cmd.gen)
      if (cmd.op === 'rtt') rttB(cmd.size, cmd.iterations)
      else bwB(cmd.size, cmd.iterations)
      port.postMessage({ gen: cmd.gen } satisfies SabReply)
    } else {
      awaitAtLeast(READY, cmd.gen)
      const t0 = performance.now()
      if (cmd.op === 'rtt') rttA(cmd.size, cmd.iterations)
      else bwA(cmd.size, cmd.iterations)
      const seconds = (performance.now() - t0) / 1e3
      port.postMessage({ gen: cmd.gen, seconds } satisfies SabReply)
    }
  } catch (err) {
    port.postMessage({ error: `sab-peer ${data.role}: ${(err as Error).message}` })
  }
})

port.postMessage({ ready: true })
