/**
 * The transports a job can use between its processes, by name: each is a folder of transport/ and
 * one line of TRANSPORTS (its `TransportKind`, transport/contract.ts). Nothing above transport/
 * names one: the launcher, the agent and the engine look the kind up here.
 */
import type { TransportKind } from './contract.js'
import { tcp } from './tcp/kind.js'
import { udp } from './udp/kind.js'

const TRANSPORTS: Readonly<Record<string, TransportKind>> = {
  tcp,
  udp,
}

/** The transport of a job of several processes when none is named. */
export const DEFAULT_TRANSPORT = tcp.name

/** The names of the transports, in the registry's order. */
export function transportNames(): string[] {
  return Object.keys(TRANSPORTS)
}

/** Whether `name` names a transport. */
export function isTransport(name: string): boolean {
  return Object.hasOwn(TRANSPORTS, name)
}

/** The names as a sentence's list: "a, b or c". */
export function transportList(names: string[] = transportNames()): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]!}`
}

/** The transport named `name`; throws RangeError naming the known ones otherwise. */
export function transportKind(name: string): TransportKind {
  if (!isTransport(name)) throw new RangeError(`unknown transport ${name}: ${transportList()}`)
  return TRANSPORTS[name]!
}

export type { TransportKind }
