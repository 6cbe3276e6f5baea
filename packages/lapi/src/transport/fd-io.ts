/**
 * Reads and writes of a connection's descriptor that report "nothing yet" as a number, from any
 * thread (docs/transports.md, "System calls"). Node's `fs.readSync` throws EAGAIN as an error,
 * which costs 4–7 µs here against well under 1 µs for the system call, and an empty read is what
 * a poll mostly does. WASI's `fd_read` and `fd_write` (`node:wasi`, whose instance is given the
 * descriptor as its stdin and stdout) make the same system calls and return the error code. They
 * move bytes of the WebAssembly memory the instance was given: the frame path keeps its receive
 * and send buffers in one shared memory, whose first page holds the I/O vector and the count
 * (used under the network lock only), then the subscriptions and events of the one thread that may
 * sleep on the descriptors (`FdPoll`, outside the lock).
 */
import type { WASI } from 'node:wasi'
import { lazyLoad } from '../base/lazy.js'
import { SLEEP_FAILED, SLEEP_READY, SLEEP_TIMEOUT } from './contract.js'
import { WASM_PAGE, Wasm, type WasmMemory } from '../layout/memory.js'

/** Bytes at the start of the memory for the I/O vector and the count: one page. */
export const IO_SCRATCH_BYTES = WASM_PAGE
/** `read`/`write` result: nothing now (EAGAIN, or a signal interrupted the call). */
export const IO_AGAIN = -1

const WASI_AGAIN = 6
const WASI_INTR = 27
/** Where the I/O vector (buffer, length) and the count of bytes moved lie in the memory. */
const IOV = 0
const COUNT = 16
/** Bytes of the I/O page before which its users (the I/O vectors, the count) lie: a caller's scratch may follow. */
export const IO_RESERVED = 64

function leb(n: number): number[] {
  const b: number[] = []
  do {
    let x = n & 0x7f
    n >>>= 7
    if (n !== 0) x |= 0x80
    b.push(x)
  } while (n !== 0)
  return b
}
function name(s: string): number[] {
  return [s.length, ...Array.from(s, (c) => c.charCodeAt(0))]
}
function section(id: number, body: number[]): number[] {
  return [id, ...leb(body.length), ...body]
}

/**
 * The module each instance is: it imports a shared memory of `pages` pages ("env" "memory"),
 * exports it as "memory", an empty "_initialize" (what `WASI.initialize` asks of an instance), and
 * "sum4", the SIMD part of the datagram checksum (`Sum4`). Four blocks x0..x3 at a time: with their
 * running sums p1 = x0, p2, p3, p4 (each the one before plus the next block), a += p4 and
 * b += 4·a + p1 + p2 + p3 + p4 (a before this round's blocks), what one block at a time gives, in
 * half the time (the chains through a and b take one addition per four blocks); the last 0–3
 * blocks one at a time. In text form:
 *   (module (import "env" "memory" (memory pages pages shared))
 *     (export "memory" (memory 0)) (func (export "_initialize"))
 *     (func (export "sum4") (param $at i32) (param $n i32) (param $st i32)
 *       (local $a v128) (local $b v128) (local $end i32) (local $p1 v128) (local $p2 v128) (local $p3 v128) (local $p4 v128)
 *       (local.set $a (v128.load (local.get $st))) (local.set $b (v128.load offset=16 (local.get $st)))
 *       (local.set $end (i32.add (local.get $at) (i32.and (local.get $n) (i32.const -64))))
 *       (block (loop
 *         (br_if 1 (i32.ge_u (local.get $at) (local.get $end)))
 *         (local.set $p1 (v128.load (local.get $at)))
 *         (local.set $p2 (i32x4.add (local.get $p1) (v128.load offset=16 (local.get $at))))
 *         (local.set $p3 (i32x4.add (local.get $p2) (v128.load offset=32 (local.get $at))))
 *         (local.set $p4 (i32x4.add (local.get $p3) (v128.load offset=48 (local.get $at))))
 *         (local.set $b (i32x4.add (local.get $b) (i32x4.add (i32x4.shl (local.get $a) (i32.const 2))
 *           (i32x4.add (i32x4.add (local.get $p1) (local.get $p2)) (i32x4.add (local.get $p3) (local.get $p4))))))
 *         (local.set $a (i32x4.add (local.get $a) (local.get $p4)))
 *         (local.set $at (i32.add (local.get $at) (i32.const 64)))
 *         (br 0)))
 *       (local.set $end (i32.add (local.get $end) (i32.and (local.get $n) (i32.const 48))))
 *       (block (loop
 *         (br_if 1 (i32.ge_u (local.get $at) (local.get $end)))
 *         (local.set $b (i32x4.add (local.tee $a (i32x4.add (local.get $a) (v128.load (local.get $at)))) (local.get $b)))
 *         (local.set $at (i32.add (local.get $at) (i32.const 16)))
 *         (br 0)))
 *       (v128.store (local.get $st) (local.get $a)) (v128.store offset=16 (local.get $st) (local.get $b))))
 */
function moduleBytes(pages: number): Uint8Array {
  const imports = [1, ...name('env'), ...name('memory'), 0x02, 0x03, ...leb(pages), ...leb(pages)]
  const exports = [3, ...name('memory'), 0x02, 0, ...name('_initialize'), 0x00, 0, ...name('sum4'), 0x00, 1]
  const V = 0xfd
  const ADD = [V, 0xae, 0x01] // i32x4.add
  const load = (off: number): number[] => [0x20, 0, V, 0x00, 0, ...leb(off)] // v128.load offset=off ($at)
  const sum4 = [
    3,
    2,
    0x7b,
    1,
    0x7f,
    4,
    0x7b, // locals: 2 v128 ($a $b: 3, 4), 1 i32 ($end: 5), 4 v128 ($p1..$p4: 6..9)
    0x20,
    2,
    V,
    0x00,
    0,
    0,
    0x21,
    3, // $a = v128.load($st)
    0x20,
    2,
    V,
    0x00,
    0,
    16,
    0x21,
    4, // $b = v128.load offset=16 ($st)
    0x20,
    0,
    0x20,
    1,
    0x41,
    0x40,
    0x71,
    0x6a,
    0x21,
    5, // $end = $at + ($n & -64)
    0x02,
    0x40,
    0x03,
    0x40, // block, loop: four blocks a round
    0x20,
    0,
    0x20,
    5,
    0x4f,
    0x0d,
    1, // br_if 1 ($at >= $end)
    ...load(0),
    0x21,
    6, // $p1 = load($at)
    0x20,
    6,
    ...load(16),
    ...ADD,
    0x21,
    7, // $p2 = $p1 + load($at + 16)
    0x20,
    7,
    ...load(32),
    ...ADD,
    0x21,
    8, // $p3 = $p2 + load($at + 32)
    0x20,
    8,
    ...load(48),
    ...ADD,
    0x21,
    9, // $p4 = $p3 + load($at + 48)
    0x20,
    4,
    0x20,
    3,
    0x41,
    2,
    V,
    0xab,
    0x01, // $b, $a << 2
    0x20,
    6,
    0x20,
    7,
    ...ADD,
    0x20,
    8,
    0x20,
    9,
    ...ADD,
    ...ADD, // ($p1 + $p2) + ($p3 + $p4)
    ...ADD,
    ...ADD,
    0x21,
    4, // $b = $b + (($a << 2) + that)
    0x20,
    3,
    0x20,
    9,
    ...ADD,
    0x21,
    3, // $a = $a + $p4
    0x20,
    0,
    0x41,
    0xc0,
    0x00,
    0x6a,
    0x21,
    0, // $at += 64
    0x0c,
    0,
    0x0b,
    0x0b, // br 0, end loop, end block
    0x20,
    5,
    0x20,
    1,
    0x41,
    0x30,
    0x71,
    0x6a,
    0x21,
    5, // $end += $n & 48
    0x02,
    0x40,
    0x03,
    0x40, // block, loop: the last blocks one at a time
    0x20,
    0,
    0x20,
    5,
    0x4f,
    0x0d,
    1, // br_if 1 ($at >= $end)
    0x20,
    3,
    ...load(0),
    ...ADD,
    0x22,
    3, // $a = $a + load($at) (tee)
    0x20,
    4,
    ...ADD,
    0x21,
    4, // $b = $a + $b
    0x20,
    0,
    0x41,
    16,
    0x6a,
    0x21,
    0, // $at += 16
    0x0c,
    0,
    0x0b,
    0x0b, // br 0, end loop, end block
    0x20,
    2,
    0x20,
    3,
    V,
    0x0b,
    0,
    0, // v128.store($st, $a)
    0x20,
    2,
    0x20,
    4,
    V,
    0x0b,
    0,
    16, // v128.store offset=16 ($st, $b)
    0x0b,
  ]
  return new Uint8Array([
    0x00,
    0x61,
    0x73,
    0x6d,
    1,
    0,
    0,
    0,
    ...section(1, [2, 0x60, 0, 0, 0x60, 3, 0x7f, 0x7f, 0x7f, 0]), // type 0: [] -> [], type 1: [i32 i32 i32] -> []
    ...section(2, imports),
    ...section(3, [2, 0, 1]), // function 0 has type 0, function 1 type 1
    ...section(7, exports),
    ...section(10, [2, 2, 0, 0x0b, ...leb(sum4.length), ...sum4]), // their bodies
  ])
}

/**
 * Node's WASI class, loaded without its one-time ExperimentalWarning (Node 20 emits it when the
 * module loads): it would reach every job's stderr although the program never asked for WASI, and
 * what it warns of does not concern the two calls made here on descriptors of our own.
 */
let wasiClass: typeof WASI | null = null
function wasiOf(): typeof WASI {
  if (wasiClass !== null) return wasiClass
  const emit = process.emitWarning
  process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]): void {
    const type = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: string } | undefined)?.type
    if (type === 'ExperimentalWarning' && String(warning).includes('WASI')) return
    ;(emit as (...a: unknown[]) => void).call(process, warning, ...rest)
  } as typeof process.emitWarning
  try {
    wasiClass = lazyLoad<{ WASI: typeof WASI }>('node:wasi').WASI
  } finally {
    process.emitWarning = emit
  }
  return wasiClass
}

type WasiCall = (fd: number, iovs: number, iovsLen: number, result: number) => number

/** The WASI calls of an instance over memory `mem` whose WASI descriptors 0, 1 and 2 are the given ones. */
function wasiCalls(mem: WasmMemory, mod: object, stdin: number, stdout: number, stderr: number): Record<string, unknown> {
  const wasi = new (wasiOf())({ version: 'preview1', stdin, stdout, stderr })
  wasi.initialize(new Wasm!.Instance(mod, { env: { memory: mem } }))
  return wasi.wasiImport
}

/** One descriptor's reads and writes of the memory's bytes. */
export class FdEnd {
  readonly fd: number
  private readonly dv: DataView
  private readonly fdRead: WasiCall
  private readonly fdWrite: WasiCall

  constructor(fd: number, mem: WasmMemory, mod: object) {
    this.fd = fd
    this.dv = new DataView(mem.buffer, 0, IO_SCRATCH_BYTES)
    const calls = wasiCalls(mem, mod, fd, fd, 2) as Record<string, WasiCall>
    this.fdRead = calls.fd_read!
    this.fdWrite = calls.fd_write!
  }

  /** Reads at most `len` bytes into the memory at `off`: the bytes read (0: end of stream), IO_AGAIN, or -(2 + WASI errno). */
  read(off: number, len: number): number {
    return this.call(this.fdRead, 0, off, len)
  }

  /** Writes `len` bytes of the memory from `off`: the bytes written, IO_AGAIN, or -(2 + WASI errno). */
  write(off: number, len: number): number {
    return this.call(this.fdWrite, 1, off, len)
  }

  /** Writes `len1` bytes of the memory from `off1` then `len2` from `off2` in one call (one datagram): as `write`. */
  write2(off1: number, len1: number, off2: number, len2: number): number {
    return this.call2(this.fdWrite, 1, off1, len1, off2, len2)
  }

  /** Reads one datagram (or bytes) into `len1` bytes at `off1`, the rest into `len2` at `off2`: as `read`. */
  read2(off1: number, len1: number, off2: number, len2: number): number {
    return this.call2(this.fdRead, 0, off1, len1, off2, len2)
  }

  private call2(f: WasiCall, wfd: number, off1: number, len1: number, off2: number, len2: number): number {
    const dv = this.dv
    dv.setUint32(IOV, off1, true)
    dv.setUint32(IOV + 4, len1, true)
    dv.setUint32(IOV + 8, off2, true)
    dv.setUint32(IOV + 12, len2, true)
    const rc = f(wfd, IOV, 2, COUNT)
    if (rc === 0) return dv.getUint32(COUNT, true)
    return rc === WASI_AGAIN || rc === WASI_INTR ? IO_AGAIN : -2 - rc
  }

  private call(f: WasiCall, wfd: number, off: number, len: number): number {
    const dv = this.dv
    dv.setUint32(IOV, off, true)
    dv.setUint32(IOV + 4, len, true)
    const rc = f(wfd, IOV, 1, COUNT)
    if (rc === 0) return dv.getUint32(COUNT, true)
    return rc === WASI_AGAIN || rc === WASI_INTR ? IO_AGAIN : -2 - rc
  }
}

/** Where FdPoll's two subscriptions (48 bytes each: the descriptor, the clock) and events (32 bytes each) lie in the I/O page. */
const POLL_SUBS = 4096
const SUB_BYTES = 48
const POLL_EVENTS = POLL_SUBS + SUB_BYTES * 2
const EVENT_BYTES = 32
const POLL_NEVENTS = POLL_EVENTS + EVENT_BYTES * 2
const WASI_EVENT_FD_READ = 1
const WASI_CLOCK_MONOTONIC = 1

type PollCall = (subs: number, events: number, n: number, nevents: number) => number

/**
 * A sleep in the kernel until one descriptor has bytes to read (or an end) or a time passes:
 * WASI's `poll_oneoff`, which Node's WASI serves with a libuv loop of its own (an epoll set made
 * and closed per call, 12–15 µs here). One descriptor only: given several, Node 20's
 * `poll_oneoff` returns once every one of them is readable or the clock fires, not at the first.
 * Its subscriptions lie at a fixed place of the I/O page, so only one thread of a process may use
 * an FdPoll (the process's only task).
 */
export class FdPoll {
  readonly fd: number
  private readonly dv: DataView
  private readonly poll: PollCall

  constructor(fd: number, mem: WasmMemory, mod: object) {
    this.fd = fd
    this.dv = new DataView(mem.buffer, 0, IO_SCRATCH_BYTES)
    this.poll = (wasiCalls(mem, mod, fd, fd, 2) as Record<string, PollCall>).poll_oneoff!
    const dv = this.dv
    for (let k = POLL_SUBS; k < POLL_NEVENTS + 4; k++) dv.setUint8(k, 0)
    // (userdata 1 for the descriptor, WASI's descriptor 0; then the clock, userdata 0)
    dv.setUint32(POLL_SUBS, 1, true)
    dv.setUint8(POLL_SUBS + 8, WASI_EVENT_FD_READ)
    dv.setUint32(POLL_SUBS + 16, 0, true)
    dv.setUint32(POLL_SUBS + SUB_BYTES + 16, WASI_CLOCK_MONOTONIC, true)
  }

  /** Sleeps until the descriptor has something to read or `ms` pass: SLEEP_READY, SLEEP_TIMEOUT or SLEEP_FAILED. */
  wait(ms: number): number {
    const dv = this.dv
    const clock = POLL_SUBS + SUB_BYTES
    const ns = Math.max(0, Math.floor(ms * 1e6))
    dv.setUint32(clock + 24, ns % 0x100000000, true)
    dv.setUint32(clock + 28, Math.floor(ns / 0x100000000), true)
    if (this.poll(POLL_SUBS, POLL_EVENTS, 2, POLL_NEVENTS) !== 0) return SLEEP_FAILED
    const got = dv.getUint32(POLL_NEVENTS, true)
    let r = SLEEP_TIMEOUT
    for (let k = 0; k < got; k++) {
      const at = POLL_EVENTS + EVENT_BYTES * k
      if (dv.getUint32(at, true) === 0) continue
      if (dv.getUint16(at + 8, true) !== 0) return SLEEP_FAILED
      r = SLEEP_READY
    }
    return r
  }
}

/** Makes the FdEnds of one thread over memory `mem` of `pages` pages (the constructor and `end` throw where WASI cannot be had). */
export class FdIo {
  private readonly mem: WasmMemory
  private readonly mod: object

  constructor(mem: WasmMemory, pages: number) {
    this.mem = mem
    this.mod = new Wasm!.Module(moduleBytes(pages))
  }

  end(fd: number): FdEnd {
    return new FdEnd(fd, this.mem, this.mod)
  }

  /** An FdPoll on `fd` (throws where WASI cannot be had). */
  poller(fd: number): FdPoll {
    return new FdPoll(fd, this.mem, this.mod)
  }

  /** The module's `sum4` over the memory (throws where the engine refuses its SIMD code). */
  sum4(): Sum4 {
    const inst = new Wasm!.Instance(this.mod, { env: { memory: this.mem } })
    return (inst as { exports: { sum4: Sum4 } }).exports.sum4
  }
}

/**
 * Adds the bytes [at, at + (n & ~15)) of the memory to a checksum's state, the eight 32-bit words
 * at `st` (16-byte aligned): for each 16-byte block x, lanes a += x, then b += a (transport/udp/path.ts).
 */
export type Sum4 = (at: number, n: number, st: number) => void
