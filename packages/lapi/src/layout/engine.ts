/**
 * The network engine's shared memory (engine/): the words of the process's network block — its
 * lock, who reads the connections, and the hints the threads that run the engine leave each other
 * (Int32 words of NetShared.stream.words, before the frame path's) — the list of Get answers set
 * aside (NetShared.gets), and the queue of control messages tasks hand the agent
 * (NetShared.control). engine/lock.ts describes the lock protocol over these words.
 */

// <layout engine> written by scripts/gen-layouts.mjs from its table: do not edit by hand
// the process's network block: the first words of NetShared.stream.words (Int32 index); the peers' words follow at PEER_BASE:
//   0       ENG_LOCK
//   1       ENG_OWNER
//   2       ENG_WANT
//   3       ENG_POLLS
//   4       ENG_TXPEND
//   5       ENG_LAST
//   6       ENG_CTRL
//   7       ENG_BLOCKED
//   8       ENG_GIVEBACK
//   9       ENG_LOCK_WAITER
//   10      ENG_FDSLEEP
//   11      ENG_PARKED
//   12…31   (reserved)
/** 0 free, else the id of the holder of the network lock. */
export const ENG_LOCK = 0
/** Who reads the connections: OWNER_AGENT or OWNER_TASKS. */
export const ENG_OWNER = 1
/** 1 when a polling task asked the agent for the connections. */
export const ENG_WANT = 2
/** Polls by tasks (free-running): the agent takes the connections back when it stops moving. */
export const ENG_POLLS = 3
/** 1 when packets wait in a ring toward the network and the thread that put them there did not get the lock. */
export const ENG_TXPEND = 4
/** The holder id of the last thread that held the lock (a thread that finds itself there need not re-read the rings' positions). */
export const ENG_LAST = 5
/** 1 when a control message waits for the agent at the front of a peer's frames. */
export const ENG_CTRL = 6
/** 1 when a frame waits for room in a task's network ring. */
export const ENG_BLOCKED = 7
/** 1 when a task that read the connections stops polling (it goes to sleep): the agent reads them again. */
export const ENG_GIVEBACK = 8
/** 1 while the agent waits on ENG_LOCK for a task to let the lock go (the task wakes it when it does). */
export const ENG_LOCK_WAITER = 9
/** 1 while the process's only task sleeps in the kernel on the connections (`sleepBegin`): the agent leaves them to it. */
export const ENG_FDSLEEP = 10
/** Get answers set aside for room toward their origin (`park`): the agent keeps rounds coming while there are. */
export const ENG_PARKED = 11
/** Words of the network block (PEER_BASE, where the peers' words start, is the same). */
export const ENG_WORDS = 32
// </layout engine>
/** ENG_OWNER: the agent's event loop reads the connections. */
export const OWNER_AGENT = 0
/** ENG_OWNER: the threads that poll read them. */
export const OWNER_TASKS = 1
/** Holder id of the agent in ENG_LOCK (tasks use their task id + 1). */
export const AGENT_ID = 0x7fffffff

// <layout parked-gets> written by scripts/gen-layouts.mjs from its table: do not edit by hand
// the list of Get answers set aside (NetShared.gets, Int32 index): its count, then GQ_SLOTS records of GQ_WORDS words:
//   0       GQ_COUNT
/** The number of records, oldest first from GQ_HEADER. */
export const GQ_COUNT = 0
/** Words before the first record. */
export const GQ_HEADER = 1
// </layout parked-gets>

// <layout parked-get> written by scripts/gen-layouts.mjs from its table: do not edit by hand
// a record of that list (Int32 index from the record's start):
//   0       GR_TASK
//   1       GR_PEER
//   2       GR_SRC
//   3       GR_ADDR
//   4       GR_LEN
//   5       GR_MSG_ID
//   6       GR_FLAGS
//   7       GR_ORG_ADDR
//   8       GR_ORG_CNTR
//   9       GR_TGT_CNTR
//   10      GR_POS
/** The target task's index among the process's tasks. */
export const GR_TASK = 0
/** The origin's process. */
export const GR_PEER = 1
/** The origin task. */
export const GR_SRC = 2
/** The target address. */
export const GR_ADDR = 3
/** The length. */
export const GR_LEN = 4
/** The message id. */
export const GR_MSG_ID = 5
/** The flags (F_NOTIFY). */
export const GR_FLAGS = 6
/** The origin address. */
export const GR_ORG_ADDR = 7
/** The origin counter. */
export const GR_ORG_CNTR = 8
/** The target counter. */
export const GR_TGT_CNTR = 9
/** How far the answer got. */
export const GR_POS = 10
/** Words of a record. */
export const GQ_WORDS = 11
// </layout parked-get>

/** Records the list holds. */
export const GQ_SLOTS = 64

/** A list of Get answers set aside, empty. */
export function createParkedGets(): SharedArrayBuffer {
  return new SharedArrayBuffer(4 * (GQ_HEADER + GQ_SLOTS * GQ_WORDS))
}

// <layout control-queue> written by scripts/gen-layouts.mjs from its table: do not edit by hand
// the queue of control messages tasks hand the agent (NetShared.control): two Int32 words, then records from byte CQ_HEADER:
//   0       CQ_START
//   1       CQ_END
/** The byte offset of the oldest record. */
export const CQ_START = 0
/** The byte offset after the newest record. */
export const CQ_END = 1
/** Bytes before the records. */
export const CQ_HEADER = 8
// </layout control-queue>

// <layout control-record> written by scripts/gen-layouts.mjs from its table: do not edit by hand
// a record of that queue (bytes from its start): the peer, the body's length, then the body:
//   0…3     CQR_PEER
//   4…7     CQR_LEN
/** The peer process the message came from (u32). */
export const CQR_PEER = 0
/** The body's length in bytes (u32). */
export const CQR_LEN = 4
/** Bytes of a record before its body. */
export const CQ_RECORD = 8
// </layout control-record>

/** Receive buffers' worth of control messages the queue holds (`controlQueueBytes`). */
const CQ_BUFFERS = 2

/** Bytes of a control queue for a frame path whose receive buffers are `recvBytes` each. */
export function controlQueueBytes(recvBytes: number): number {
  return CQ_BUFFERS * recvBytes
}

/** A control queue of `bytes` bytes, empty. */
export function createControlQueue(bytes: number): SharedArrayBuffer {
  const b = new SharedArrayBuffer(bytes)
  const w = new Int32Array(b, 0, 2)
  w[CQ_START] = CQ_HEADER
  w[CQ_END] = CQ_HEADER
  return b
}
