/**
 * What every part of the AM-2 runtime shares: the payload and segment limits, the states of a
 * token, an endpoint's name and segment types, `AmError` and the argument checks. It imports only
 * constants.ts (with a type of lapi's and bufmgr's AmlapiError), so that any other file may import it.
 */
import { AmlapiError } from '@amlapi/bufmgr'
import type { Addr } from '@amlapi/lapi'
import { AM_MAX_SHORT, amStatusName, type AmStatus } from './constants.js'

/** Largest Medium payload, bytes (AM_MaxMedium). */
export const MAX_MEDIUM = 512 * 1024
/** Largest Long payload, bytes (AM_MaxLong). */
export const MAX_LONG = 4 * 1024 * 1024
/** Largest segment length and offset (AM_MaxSegLength): offsets travel as u32. */
export const MAX_SEG_LENGTH = 0xffffffff
/** Handler nesting (a handler's Request polls, which runs handlers …) beyond which polls only drain the network. */
export const MAX_NEST = 8
/** Words of an outstanding-request record: kind, handler, nargs, nbytes, off, off2, args[16]. */
export const REC = 6 + AM_MAX_SHORT
/** Library slots of LAPI's handler table that am2 uses. */
export const SLOT_MSG = 0
export const SLOT_CTRL = 1

/** An endpoint's name: task id × 65536 + the endpoint's local id (a number all tasks can exchange). */
export type en_t = number
/** An endpoint segment: an Addr in the task's LAPI segment, or a Uint8Array. */
export type AmSeg = Addr | Uint8Array

// token states
export const T_FREE = 0
export const T_QUEUED = 1
export const T_REQUEST = 2 // a request handler is running with it
export const T_REPLY = 3 // a reply handler is running with it
export const T_RETURNED = 4 // handler 0 is running with it
export const T_DONE = 5

/**
 * Thrown by the idiomatic API: an AmlapiError whose `code` is the AM return code's C name
 * (`'AM_ERR_BAD_ARG'`) and `status` its number (2, an {@link AmStatus}).
 */
export class AmError extends AmlapiError {
  /** The AM return code's C name, e.g. `AM_ERR_BAD_ARG`. */
  declare readonly code: string
  /** The AM return code, e.g. 2. */
  declare readonly status: number
  /** `code` is the AM return code; `what` names the call; `detail`, when given, says what was wrong, with the values. */
  constructor(code: number, what: string, detail?: string) {
    const name = amStatusName(code)
    super(name ?? `AM_ERR_${code}`, `${what}: ${name ?? String(code)}${detail !== undefined && detail !== '' ? `: ${detail}` : ''}`, code)
    this.name = 'AmError'
  }
}

/** Throws an AmError for a code other than AM_OK (the idiomatic API's way of failing). */
export function check(rc: number, what: string): void {
  if (rc !== 0) throw new AmError(rc, what)
}

export function isU32(v: unknown): v is number {
  return typeof v === 'number' && v >>> 0 === v
}

/** A valid tag: a bigint in 0 … 2^64 − 1. */
export function tagOk(tag: unknown): tag is bigint {
  return typeof tag === 'bigint' && BigInt.asUintN(64, tag) === tag
}

/** A valid endpoint name: an integer in 0 … 2^32 − 1. */
export function isNameOk(name: unknown): name is number {
  return typeof name === 'number' && Number.isInteger(name) && name >= 0 && name < 65536 * 65536
}
