/**
 * Reads and writes of a connection's descriptor that report "nothing yet" as a number, from any
 * thread (docs/transports.md, "System calls"). Node's `fs.readSync` throws EAGAIN as an error,
 * which costs 4–7 µs here against well under 1 µs for the system call, and an empty read is what
 * a poll mostly does. WASI's `fd_read` and `fd_write` (`node:wasi`, whose instance is given the
 * descriptor as its stdin and stdout) make the same system calls and return the error code. They
 * move bytes of the WebAssembly memory the instance was given: the frame path keeps its receive
 * and send buffers in one shared memory, whose first page holds the I/O vector and the count
 * (used under the network lock only).
 */
import { createRequire } from 'node:module'
import type { WASI } from 'node:wasi'
import { WASM_PAGE, Wasm, type WasmMemory } from './wasm.js'

/** Bytes at the start of the memory for the I/O vector and the count: one page. */
export const IO_SCRATCH_BYTES = WASM_PAGE
/** `read`/`write` result: nothing now (EAGAIN, or a signal interrupted the call). */
export const IO_AGAIN = -1

const WASI_AGAIN = 6
const WASI_INTR = 27
/** Where the I/O vector (buffer, length) and the count of bytes moved lie in the memory. */
const IOV = 0
const COUNT = 8

function leb (n: number): number[] {
  const b: number[] = []
  do { let x = n & 0x7f; n >>>= 7; if (n !== 0) x |= 0x80; b.push(x) } while (n !== 0)
  return b
}
function name (s: string): number[] { return [s.length, ...Array.from(s, (c) => c.charCodeAt(0))] }
function section (id: number, body: number[]): number[] { return [id, ...leb(body.length), ...body] }

/**
 * The module each instance is: it imports a shared memory of `pages` pages ("env" "memory"),
 * exports it as "memory", and exports an empty "_initialize" — what `WASI.initialize` asks of an
 * instance. In text form:
 *   (module (import "env" "memory" (memory pages pages shared))
 *           (export "memory" (memory 0)) (func (export "_initialize")))
 */
function moduleBytes (pages: number): Uint8Array {
  const imports = [1, ...name('env'), ...name('memory'), 0x02, 0x03, ...leb(pages), ...leb(pages)]
  const exports = [2, ...name('memory'), 0x02, 0, ...name('_initialize'), 0x00, 0]
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
    ...section(1, [1, 0x60, 0, 0]), // type 0: [] -> []
    ...section(2, imports),
    ...section(3, [1, 0]), // function 0 has type 0
    ...section(7, exports),
    ...section(10, [1, 2, 0, 0x0b]), // its body: no locals, end
  ])
}

/**
 * Node's WASI class, loaded without its one-time ExperimentalWarning (Node 20 emits it when the
 * module loads): it would reach every job's stderr although the program never asked for WASI, and
 * what it warns of does not concern the two calls made here on descriptors of our own.
 */
let wasiClass: typeof WASI | null = null
function wasiOf (): typeof WASI {
  if (wasiClass !== null) return wasiClass
  const emit = process.emitWarning
  process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]): void {
    const type = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: string } | undefined)?.type
    if (type === 'ExperimentalWarning' && String(warning).includes('WASI')) return
    ;(emit as (...a: unknown[]) => void).call(process, warning, ...rest)
  } as typeof process.emitWarning
  try {
    wasiClass = (createRequire(import.meta.url)('node:wasi') as { WASI: typeof WASI }).WASI
  } finally {
    process.emitWarning = emit
  }
  return wasiClass
}

type WasiCall = (fd: number, iovs: number, iovsLen: number, result: number) => number

/** One descriptor's reads and writes of the memory's bytes. */
export class FdEnd {
  readonly fd: number
  private readonly dv: DataView
  private readonly fdRead: WasiCall
  private readonly fdWrite: WasiCall

  constructor (fd: number, mem: WasmMemory, mod: object) {
    this.fd = fd
    this.dv = new DataView(mem.buffer, 0, IO_SCRATCH_BYTES)
    const wasi = new (wasiOf())({ version: 'preview1', stdin: fd, stdout: fd, stderr: 2 })
    wasi.initialize(new Wasm!.Instance(mod, { env: { memory: mem } }))
    const calls = wasi.wasiImport as Record<string, WasiCall>
    this.fdRead = calls.fd_read!
    this.fdWrite = calls.fd_write!
  }

  /** Reads at most `len` bytes into the memory at `off`: the bytes read (0: end of stream), IO_AGAIN, or -(2 + WASI errno). */
  read (off: number, len: number): number { return this.call(this.fdRead, 0, off, len) }

  /** Writes `len` bytes of the memory from `off`: the bytes written, IO_AGAIN, or -(2 + WASI errno). */
  write (off: number, len: number): number { return this.call(this.fdWrite, 1, off, len) }

  private call (f: WasiCall, wfd: number, off: number, len: number): number {
    const dv = this.dv
    dv.setUint32(IOV, off, true)
    dv.setUint32(IOV + 4, len, true)
    const rc = f(wfd, IOV, 1, COUNT)
    if (rc === 0) return dv.getUint32(COUNT, true)
    return rc === WASI_AGAIN || rc === WASI_INTR ? IO_AGAIN : -2 - rc
  }
}

/** Makes the FdEnds of one thread over memory `mem` of `pages` pages (the constructor and `end` throw where WASI cannot be had). */
export class FdIo {
  private readonly mem: WasmMemory
  private readonly mod: object

  constructor (mem: WasmMemory, pages: number) {
    this.mem = mem
    this.mod = new Wasm!.Module(moduleBytes(pages))
  }

  end (fd: number): FdEnd { return new FdEnd(fd, this.mem, this.mod) }
}
