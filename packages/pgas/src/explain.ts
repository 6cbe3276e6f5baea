/**
 * What was wrong with a call's arguments, in words that name the values: the text of the
 * `PgasError` the idiomatic face throws. Everything here runs on the failure branch only, after a
 * call returned its status: the calls themselves build no string and allocate nothing.
 */
import { AtomicKind as K, AtomicOp, KIND_BYTES, hasNf, hasOp } from './atomics-word.js'
import type { Core } from './core.js'
import { PgasError, PgasStatus as S } from './status.js'

/** A value as a message shows it: a BigInt with its `n`, a string quoted. */
export function show(v: unknown): string {
  if (typeof v === 'bigint') return `${v}n`
  if (typeof v === 'string') return JSON.stringify(v)
  if (typeof v === 'function') return 'a function'
  if (v === null || v === undefined || typeof v !== 'object') return String(v)
  return Array.isArray(v) ? 'an array' : 'an object'
}

/** Why `task` is no task of a job of `size` (`who`: "task", "home task", "rank" …, `of`: "this job has tasks"). */
export function taskWhy(task: unknown, size: number, who = 'task', of = 'this job has tasks'): string {
  if (typeof task === 'bigint') return `${who} ${task}n is a BigInt, but a ${who} is a number: pass ${Number(task)}`
  if (typeof task === 'number' && Number.isInteger(task)) return `${who} ${task} is out of range: ${of} 0 to ${size - 1}`
  return `${who} ${show(task)} is not a whole number: ${of} 0 to ${size - 1}`
}

/** Why an access of `len` bytes at `addr` of task `task` has status `rc` (Core.checkRange's codes). */
export function rangeWhy(core: Core, rc: number, what: string, task: unknown, addr: unknown, len: unknown): string | undefined {
  switch (rc) {
    case S.ERR_NOT_INIT:
      return 'the runtime was finalized'
    case S.ERR_BAD_TASK:
      return taskWhy(task, core.size)
    case S.ERR_BAD_ARG:
      if (typeof addr === 'bigint') return `address ${addr}n is a BigInt, but an address is a number: pass ${Number(addr)}`
      if (typeof addr !== 'number' || !Number.isInteger(addr)) return `address ${show(addr)} is not a whole number of bytes`
      if (typeof len === 'bigint') return `length ${len}n is a BigInt, but a length is a number`
      return `length ${show(len)} is not a number of bytes (a whole number, 0 or more)`
    case S.ERR_OUT_OF_SEGMENT:
      if (typeof addr === 'number' && addr < 0)
        return `${what} at address ${addr}: an address is 0 or more (task ${show(task)}'s segment has ${core.segmentSize} bytes)`
      return `${what} of ${show(len)} bytes at address ${show(addr)} runs past the end of task ${show(task)}'s segment (${core.segmentSize} bytes)`
    case S.ERR_NULL_PTR:
      return `${what} of ${show(len)} bytes at address 0: a null pointer (task ${show(task)})`
    case S.ERR_NOMEM:
      return `no room in this task's segment (${core.segmentSize} bytes) for the staging copy of ${show(len)} bytes`
    default:
      return undefined
  }
}

/** The PgasError of an access of `len` bytes at `addr` of task `task` refused with `rc`. */
export function rangeError(core: Core, rc: number, what: string, task: unknown, addr: unknown, len: unknown): PgasError {
  return new PgasError(rc, what, rangeWhy(core, rc, what, task, addr, len))
}

const KIND_NAMES = ['8-bit integer', '16-bit integer', '32-bit integer', '64-bit integer', 'float32', 'float64']

/** The PgasError of an atomic of kind `kind` refused with `rc`. */
export function atomicError(
  core: Core,
  rc: number,
  what: string,
  kind: number,
  op: unknown,
  task: unknown,
  addr: unknown,
  a: unknown,
  b: unknown,
  nf: boolean,
): PgasError {
  const bytes = KIND_BYTES[kind]!
  let why: string | undefined
  if (rc === S.ERR_BAD_ARG && typeof op === 'number' && !(nf ? hasNf(kind, op) : hasOp(kind, op))) {
    why = `op ${op} is not an operation ${what} has (AtomicOp: ADD, AND, OR, XOR, MIN, MAX, SWAP, CAS, LOAD, STORE; the floats: no AND, OR, XOR; the non-fetching forms: no SWAP, CAS, LOAD)`
  } else if (rc === S.ERR_BAD_ARG && typeof op !== 'number') {
    why = `op ${show(op)} is not an AtomicOp`
  } else if (rc === S.ERR_BAD_ARG) {
    const bad = op !== AtomicOp.LOAD && !operandOk(kind, a) ? a : b
    if (kind === K.I64) {
      why =
        typeof bad === 'number' && Number.isInteger(bad)
          ? `operand ${bad} is a number: ${what} works on a 64-bit integer and takes BigInts (pass ${bad}n)`
          : `operand ${show(bad)} is not a BigInt: ${what} works on a 64-bit integer`
    } else if (typeof bad === 'bigint') {
      why = `operand ${bad}n is a BigInt: ${what} works on a ${KIND_NAMES[kind]} and takes numbers (atomic64 takes BigInts)`
    } else {
      why = `operand ${show(bad)} is not ${kind >= K.F32 ? 'a number' : 'an integer'}: ${what} works on a ${KIND_NAMES[kind]}`
    }
  } else if (rc === S.ERR_ALIGN) {
    why = `address ${show(addr)} is not ${bytes}-byte aligned: ${what} works on a ${KIND_NAMES[kind]}`
  } else if (rc === S.ERR_NULL_PTR) {
    why = `the ${KIND_NAMES[kind]} at address ${show(addr)} is in the null word (addresses 0 to 3) of task ${show(task)}`
  } else {
    why = rangeWhy(core, rc, `${what} on a ${bytes}-byte word`, task, addr, bytes)
  }
  return new PgasError(rc, what, why)
}

function operandOk(kind: number, v: unknown): boolean {
  if (kind === K.I64) return typeof v === 'bigint'
  if (kind >= K.F32) return typeof v === 'number'
  return typeof v === 'number' && Number.isInteger(v)
}

/** Why index `i` of a shared array of `length` elements is refused (`end`: one past the end is allowed). */
export function indexWhy(i: unknown, length: number, end: boolean): string {
  const range = `0 to ${end ? length : length - 1}`
  if (typeof i === 'bigint') return `index ${i}n is a BigInt, but an index is a number (${range}): pass ${Number(i)}`
  if (typeof i === 'number' && Number.isInteger(i)) return `index ${i} is out of range for a shared array of length ${length} (${range})`
  return `index ${show(i)} is not a whole number: a shared array of length ${length} has indices ${range}`
}

/** Why the value `v` cannot be stored in an element of a `type` array (a BigInt in a number array, or the reverse). */
export function elementWhy(v: unknown, typeName: string): string {
  const big = typeName.startsWith('Big')
  if (big)
    return `value ${show(v)} is ${typeof v === 'number' ? 'a number' : 'not a BigInt'}: a ${typeName}'s elements are BigInts${typeof v === 'number' && Number.isInteger(v) ? ` (pass ${v}n)` : ''}`
  return `value ${show(v)} is ${typeof v === 'bigint' ? 'a BigInt' : 'not a number'}: a ${typeName}'s elements are numbers`
}

/** Why the collective `what` refused its arguments: the root named when it is outside the group. */
export function collError(rc: number, what: string, root: unknown, size: number): PgasError {
  const badRoot = root !== undefined && !(typeof root === 'number' && Number.isInteger(root) && root >= 0 && root < size)
  return new PgasError(rc, what, rc === S.ERR_BAD_ARG && badRoot ? taskWhy(root, size, 'root', 'the roots are ranks') : undefined)
}

/** The PgasError of an indexed put or get (`lens[k]` bytes at `addrs[k]` of `task`): the first piece refused, named. */
export function indexedError(core: Core, rc: number, what: string, task: unknown, addrs: ArrayLike<number>, lens: readonly number[]): PgasError {
  if (lens.length !== addrs.length) return new PgasError(rc, what, `${addrs.length} addresses for ${lens.length} buffers: one address per buffer`)
  for (let k = 0; k < lens.length; k++) {
    const r = core.checkRange(task as number, addrs[k]!, lens[k]!)
    if (r !== 0) return new PgasError(rc, what, `piece ${k}: ${rangeWhy(core, r, what, task, addrs[k], lens[k]) ?? ''}`)
  }
  return new PgasError(rc, what)
}
