/**
 * The network engine's shared memory (engine/): the words of the process's network block — its
 * lock, who reads the connections, and the hints the threads that run the engine leave each other
 * (Int32 words of NetShared.stream.words, before the frame path's) — the list of Get answers set
 * aside (NetShared.gets), and the queue of control messages tasks hand the agent
 * (NetShared.control). engine/lock.ts describes the lock protocol over these words.
 */

// ── the process's network block ──
/** 0 free, else the id of the holder of the network lock. */
export const W_LOCK = 0
/** Who reads the connections: OWNER_AGENT or OWNER_TASKS. */
export const W_OWNER = 1
/** 1 when a polling task asked the agent for the connections. */
export const W_WANT = 2
/** Polls by tasks (free-running): the agent takes the connections back when it stops moving. */
export const W_POLLS = 3
/** 1 when packets wait in a ring toward the network and the thread that put them there did not get the lock. */
export const W_TXPEND = 4
/** The holder id of the last thread that held the lock (a thread that finds itself there need not re-read the rings' positions). */
export const W_LAST = 5
/** 1 when a control message waits for the agent at the front of a peer's frames. */
export const W_CTRL = 6
/** 1 when a frame waits for room in a task's network ring. */
export const W_BLOCKED = 7
/** 1 when a task that read the connections stops polling (it goes to sleep): the agent reads them again. */
export const W_GIVEBACK = 8
/** 1 while the agent waits on W_LOCK for a task to let the lock go (the task wakes it when it does; a task's poll leaves the lock to it meanwhile). */
export const W_LOCK_WAITER = 9
/** 1 while the process's only task sleeps in the kernel on the connections (`sleepBegin`): the agent leaves them to it. */
export const W_FDSLEEP = 10
/** Get answers set aside for room toward their origin (`park`): the agent keeps rounds coming while there are. */
export const W_PARKED = 11
/** W_OWNER: the agent's event loop reads the connections. */
export const OWNER_AGENT = 0
/** W_OWNER: the threads that poll read them. */
export const OWNER_TASKS = 1
/** Holder id of the agent in W_LOCK (tasks use their task id + 1). */
export const AGENT_ID = 0x7fffffff

// ── the list of Get answers set aside (engine/target.ts, `park`), Int32 words ──
/** The number of records, oldest first from GQ_HEADER. */
export const GQ_COUNT = 0
/** Words before the first record. */
export const GQ_HEADER = 1
/**
 * Words of a record: the task's index among the process's tasks, the origin's process, the
 * origin task, the target address, the length, the message id, the flags (F_NOTIFY), the origin
 * address, the origin counter, the target counter, and how far the answer got.
 */
export const GQ_WORDS = 11
/** Records the list holds. */
export const GQ_SLOTS = 64

/** A list of Get answers set aside, empty. */
export function createParkedGets (): SharedArrayBuffer {
  return new SharedArrayBuffer(4 * (GQ_HEADER + GQ_SLOTS * GQ_WORDS))
}

// ── the control queue (engine/ingress.ts, `toAgent`): records of [peer u32][length u32][body] ──
/** Int32 word: the byte offset of the oldest record. */
export const CQ_START = 0
/** Int32 word: the byte offset after the newest record. */
export const CQ_END = 1
/** Bytes before the records. */
export const CQ_HEADER = 8
/** Bytes of a record before its body (the peer, the body's length). */
export const CQ_RECORD = 8
/** Receive buffers' worth of control messages the queue holds (`controlQueueBytes`). */
const CQ_BUFFERS = 2

/** Bytes of a control queue for a frame path whose receive buffers are `recvBytes` each. */
export function controlQueueBytes (recvBytes: number): number {
  return CQ_BUFFERS * recvBytes
}

/** A control queue of `bytes` bytes, empty. */
export function createControlQueue (bytes: number): SharedArrayBuffer {
  const b = new SharedArrayBuffer(bytes)
  const w = new Int32Array(b, 0, 2)
  w[CQ_START] = CQ_HEADER; w[CQ_END] = CQ_HEADER
  return b
}
