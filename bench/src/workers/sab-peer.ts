/**
 * Worker of the SharedArrayBuffer ring baselines (`baseline.sab-spin`, `baseline.sab-wait`) and of
 * the minimal active message (`baseline.sab-am`, mode `am`: round trip only, see `amRttA`).
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
  AM_HEADER_BYTES,
  AM_MAX_PAYLOAD,
  AM_SLOT_BYTES,
  AM_SLOTS,
  TAIL_AB,
  TAIL_BA,
  amRingOffset,
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
const spin = data.mode !== 'wait'
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

// ── The minimal active message (mode 'am') ──────────────────────────────────────────────────
// Each side writes the peer's inbox ring and reads its own. The counts are free-running and kept
// across commands: every command is a whole number of round trips, so both sides stay in step.
const words = new Int32Array(data.sab)
const amOut = amRingOffset(data.role === 'a' ? 0 : 1) >> 2
const amIn = amRingOffset(data.role === 'a' ? 1 : 0) >> 2
/** TAIL of the ring this side writes (the peer gives slots back there), and of the one it reads. */
const tailOut = data.role === 'a' ? TAIL_AB : TAIL_BA
const tailIn = data.role === 'a' ? TAIL_BA : TAIL_AB
const slotWords = AM_SLOT_BYTES >> 2
const payloadWord = AM_HEADER_BYTES >> 2
const srcWords = new Int32Array(srcAll.buffer, 0, Math.min(srcAll.length, AM_MAX_PAYLOAD) >> 2)
const me = data.role === 'a' ? 0 : 1
let amSent = 0
let amSeenTail = 0
let amTaken = 0
/** The counters the messages name (local words: the waiter is the only reader). */
const counters = new Int32Array(2)
/** Per incoming slot, a view of its payload of the current command's size (made before timing). */
let payloadViews: Uint8Array[] = []
const sink = dstAll
/** The handler of every message: copies the payload out, as the ring baseline's receiver does. */
function keepPayload(payload: Uint8Array): void {
  sink.set(payload)
}
const handlers: Array<((payload: Uint8Array) => void) | null> = [null, keepPayload]

function amPrepare(size: number): void {
  if (size > AM_MAX_PAYLOAD || (size & 3) !== 0)
    throw new RangeError(`size ${size}: the minimal active message carries multiples of 4 up to ${AM_MAX_PAYLOAD} B`)
  payloadViews = []
  for (let k = 0; k < AM_SLOTS; k++) payloadViews.push(new Uint8Array(data.sab, (amIn + k * slotWords + payloadWord) * 4, size))
}

/** Sends `size` bytes for handler `handler` and counter `counter`; false when the ring is full. */
function amSend(handler: number, counter: number, size: number): boolean {
  if (((amSent - amSeenTail) | 0) >= AM_SLOTS) {
    amSeenTail = Atomics.load(words, tailOut)
    if (((amSent - amSeenTail) | 0) >= AM_SLOTS) return false
  }
  const w = amOut + (amSent & (AM_SLOTS - 1)) * slotWords
  words[w + 1] = me
  words[w + 2] = size
  words[w + 3] = handler
  words[w + 4] = counter
  for (let i = 0; i < size >> 2; i++) words[w + payloadWord + i] = srcWords[i]!
  amSent = (amSent + 1) | 0
  Atomics.store(words, w, amSent)
  return true
}

/** Takes the next message if it is there: runs its handler, bumps its counter, frees its slot. */
function amPoll(): void {
  const k = amTaken & (AM_SLOTS - 1)
  const w = amIn + k * slotWords
  if (Atomics.load(words, w) !== ((amTaken + 1) | 0)) return
  handlers[words[w + 3]!]!(payloadViews[k]!)
  counters[words[w + 4]!]!++
  amTaken = (amTaken + 1) | 0
  Atomics.store(words, tailIn, amTaken)
}

/** Waits (polling) until counter `c` is at least 1, and takes 1 off it. */
function amWait(c: number): void {
  while (counters[c]! < 1) {
    amPoll()
    if ((++spins & 0x3ffff) === 0) check()
  }
  counters[c]!--
}

/** Active-message ping-pong: A sends, waits for B's answer on its counter. */
function amRttA(size: number, iterations: number): void {
  for (let i = 1; i <= iterations; i++) {
    if ((i & 255) === 0) check()
    while (!amSend(1, 0, size)) amPoll()
    amWait(0)
  }
}

function amRttB(size: number, iterations: number): void {
  for (let i = 1; i <= iterations; i++) {
    if ((i & 255) === 0) check()
    amWait(0)
    while (!amSend(1, 0, size)) amPoll()
  }
}

const am = data.mode === 'am'

port.on('message', (cmd: SabCommand) => {
  deadline = cmd.deadline
  try {
    if (am && cmd.op !== 'rtt') throw new Error('the minimal active message has a round trip only')
    if (am) amPrepare(cmd.size)
    if (data.role === 'b') {
      publish(READY, cmd.gen)
      if (am) amRttB(cmd.size, cmd.iterations)
      else if (cmd.op === 'rtt') rttB(cmd.size, cmd.iterations)
      else bwB(cmd.size, cmd.iterations)
      port.postMessage({ gen: cmd.gen } satisfies SabReply)
    } else {
      awaitAtLeast(READY, cmd.gen)
      const t0 = performance.now()
      if (am) amRttA(cmd.size, cmd.iterations)
      else if (cmd.op === 'rtt') rttA(cmd.size, cmd.iterations)
      else bwA(cmd.size, cmd.iterations)
      const seconds = (performance.now() - t0) / 1e3
      port.postMessage({ gen: cmd.gen, seconds } satisfies SabReply)
    }
  } catch (err) {
    port.postMessage({ error: `sab-peer ${data.role}: ${(err as Error).message}` })
  }
})

port.postMessage({ ready: true })
