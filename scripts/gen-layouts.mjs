#!/usr/bin/env node
// Writes the word offsets of the shared-memory blocks (lapi's control block, rings and data paths,
// the packet headers that live in ring slots, AM-2's message headers) from the table below into
// their files under packages/, between the marks `// <layout NAME>` and `// </layout NAME>`. Each
// block is defined once here: its fields in order with their sizes, from which this script
// computes every offset, checks that no two fields overlap and that all fit in the block, and
// writes a plain `export const` per field (a literal, so the per-message paths read a constant)
// and a picture of the block for the file's comment.
//
//   node scripts/gen-layouts.mjs            (npm run gen:layouts) rewrites the marked sections that differ
//   node scripts/gen-layouts.mjs --check    writes nothing; exits 1 naming each section that differs
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const SRC = fileURLToPath(new URL('../packages/', import.meta.url))

/**
 * One row per block. `unit`: what an offset counts (`int32` or `float64` elements of the block's
 * typed array, or `byte`s). `size`: the constant that names the block's length in units (or, with
 * `sizeBytes`, its length in bytes). `fields`: in order; each takes `n` units (default 1) from the
 * next free one, or from `at`; `reserved` takes room and names nothing; `n: 'rest'` runs to the end.
 */
export const BLOCKS = [
  {
    name: 'control',
    file: 'lapi/src/layout/control.ts',
    title: "the control block's job words, at its start (Int32 index)",
    unit: 'int32',
    size: { name: 'TASK_BASE', n: 16, doc: "Where the task lines start: the job words' length." },
    fields: [
      { name: 'CTL_ABORT', doc: '0 = running; 1 = the job is being torn down (a task failed).' },
      { name: 'CTL_ABORT_TASK', doc: 'The task that caused the abort, or -1.' },
      { name: 'CTL_BAR_COUNT', doc: 'Tasks arrived at the current barrier.' },
      { name: 'CTL_BAR_GEN', doc: 'Barrier generation: bumped (and notified) when the last task arrives.' },
      { name: 'CTL_AGENT_BELL', doc: "The agent's doorbell: bumped and notified (while CTL_AGENT_SLEEPING) by a task that left it network work." },
      { name: 'CTL_AGENT_SLEEPING', doc: '1 while the agent waits for its doorbell.' },
      { name: 'CTL_BAR_LOCAL', doc: 'The barrier generation whose local arrivals are complete and handed to the agent (jobs of several processes).' },
      { name: 'CTL_AGENT_QUIET', doc: '1 while the agent sleeps having found nothing to do for the doorbell value in CTL_AGENT_QUIET_BELL (`agentQuiet`).' },
      { name: 'CTL_AGENT_QUIET_BELL', doc: 'The doorbell value the agent found nothing to do for.' },
      { reserved: 7 },
    ],
  },
  {
    name: 'task',
    file: 'lapi/src/layout/control.ts',
    title: "a task's line: 16 words (one 64-byte line) per task t at TASK_BASE + TASK_WORDS·t",
    unit: 'int32',
    size: { name: 'TASK_WORDS', n: 16, doc: "Words of a task's line." },
    fields: [
      { name: 'TASK_DOORBELL', doc: "Bumped and notified by whoever puts work in t's inbox or changes one of t's counters from outside." },
      {
        name: 'TASK_SLEEPING',
        doc: '1 while t is (about to be) in Atomics.wait on its doorbell; ≥ 2 for an async waiter; REMOTE for a task of another process.',
      },
      { name: 'TASK_STATE', doc: 'TaskState.' },
      { name: 'TASK_WAIT_CALL', doc: 'The blocking call t last went to sleep in (WaitCall | wait kind << 16), stored before TASK_SLEEPING.' },
      { reserved: 1 },
      { name: 'TASK_WAIT_WORD', doc: "The counter t's sleeping thread waits for: its word index in t's segment (0 = anything); stored before TASK_SLEEPING." },
      { name: 'TASK_WAIT_VAL', doc: 'The value that counter must reach.' },
      { name: 'TASK_EXIT_GEN', doc: "For a remote task that ended: its process's barrier generation then (a barrier it passed is not one it left)." },
      { reserved: 8 },
    ],
  },
  {
    name: 'watch',
    file: 'lapi/src/layout/control.ts',
    title: "a task's watch line: 16 words per task t at TASK_BASE + TASK_WORDS·(N + t), written by t alone, read by reports",
    unit: 'int32',
    size: { name: 'WATCH_WORDS', n: 16, doc: "Words of a task's watch line." },
    fields: [
      { name: 'WATCH_CALL', doc: 'The blocking call t is in (WaitCall + 1 | wait kind << 16), 0 when none.' },
      { name: 'WATCH_WORD', doc: 'What that wait waits for, as TASK_WAIT_WORD …' },
      { name: 'WATCH_VAL', doc: '… and TASK_WAIT_VAL.' },
      { reserved: 13 },
    ],
  },
  {
    name: 'net-state',
    file: 'lapi/src/layout/job-spec.ts',
    title: "a task's network state (JobSpec.netState, Int32 index), in a job of N tasks",
    unit: 'int32',
    fields: [
      { name: 'NS_DIRTY', doc: '1 when LANDED_FROM moved since the agent last looked (written by the task, cleared by the agent).' },
      { name: 'NS_DROPPED', doc: "Packets for this task its agent dropped as malformed or misaddressed (added to the dispatcher's count)." },
      { reserved: 14 },
      {
        name: 'NS_LANDED_AT',
        n: 'rest',
        doc: 'Three tables of N words: per task, messages this task sent it that landed there (the agent adds what acks say); LANDED_FROM (`netLandedFrom`); ACKED_FROM (`netAckedFrom`).',
      },
    ],
  },
  {
    name: 'ring',
    file: 'lapi/src/layout/ring.ts',
    title: "a ring's header (Int32 index from the ring's start); the slots follow it",
    unit: 'int32',
    size: { name: 'RING_HEADER_BYTES', n: 64, sizeBytes: true, doc: "Bytes of a ring's header: HEAD and TAIL each start a 128-byte block." },
    fields: [
      { name: 'RING_HEAD', doc: "Packets published (free-running; the producer's own record)." },
      { reserved: 31 },
      { name: 'RING_TAIL', doc: 'Packets consumed (free-running; written by the consumer).' },
      { name: 'RING_LANDED', doc: "Messages from this ring's sender whose data has landed (written by the consumer; the sender's fence)." },
      { reserved: 30 },
    ],
  },
  {
    name: 'engine',
    file: 'lapi/src/layout/engine.ts',
    title: "the process's network block: the first words of NetShared.stream.words (Int32 index); the peers' words follow at PEER_BASE",
    unit: 'int32',
    size: { name: 'ENG_WORDS', n: 32, doc: "Words of the network block (PEER_BASE, where the peers' words start, is the same)." },
    fields: [
      { name: 'ENG_LOCK', doc: '0 free, else the id of the holder of the network lock.' },
      { name: 'ENG_OWNER', doc: 'Who reads the connections: OWNER_AGENT or OWNER_TASKS.' },
      { name: 'ENG_WANT', doc: '1 when a polling task asked the agent for the connections.' },
      { name: 'ENG_POLLS', doc: 'Polls by tasks (free-running): the agent takes the connections back when it stops moving.' },
      { name: 'ENG_TXPEND', doc: '1 when packets wait in a ring toward the network and the thread that put them there did not get the lock.' },
      {
        name: 'ENG_LAST',
        doc: "The holder id of the last thread that held the lock (a thread that finds itself there need not re-read the rings' positions).",
      },
      { name: 'ENG_CTRL', doc: "1 when a control message waits for the agent at the front of a peer's frames." },
      { name: 'ENG_BLOCKED', doc: "1 when a frame waits for room in a task's network ring." },
      { name: 'ENG_GIVEBACK', doc: '1 when a task that read the connections stops polling (it goes to sleep): the agent reads them again.' },
      { name: 'ENG_LOCK_WAITER', doc: '1 while the agent waits on ENG_LOCK for a task to let the lock go (the task wakes it when it does).' },
      { name: 'ENG_FDSLEEP', doc: "1 while the process's only task sleeps in the kernel on the connections (`sleepBegin`): the agent leaves them to it." },
      { name: 'ENG_PARKED', doc: 'Get answers set aside for room toward their origin (`park`): the agent keeps rounds coming while there are.' },
      { reserved: 20 },
    ],
  },
  {
    name: 'parked-gets',
    file: 'lapi/src/layout/engine.ts',
    title: 'the list of Get answers set aside (NetShared.gets, Int32 index): its count, then GQ_SLOTS records of GQ_WORDS words',
    unit: 'int32',
    size: { name: 'GQ_HEADER', n: 1, doc: 'Words before the first record.' },
    fields: [{ name: 'GQ_COUNT', doc: 'The number of records, oldest first from GQ_HEADER.' }],
  },
  {
    name: 'parked-get',
    file: 'lapi/src/layout/engine.ts',
    title: "a record of that list (Int32 index from the record's start)",
    unit: 'int32',
    size: { name: 'GQ_WORDS', n: 11, doc: 'Words of a record.' },
    fields: [
      { name: 'GR_TASK', doc: "The target task's index among the process's tasks." },
      { name: 'GR_PEER', doc: "The origin's process." },
      { name: 'GR_SRC', doc: 'The origin task.' },
      { name: 'GR_ADDR', doc: 'The target address.' },
      { name: 'GR_LEN', doc: 'The length.' },
      { name: 'GR_MSG_ID', doc: 'The message id.' },
      { name: 'GR_FLAGS', doc: 'The flags (F_NOTIFY).' },
      { name: 'GR_ORG_ADDR', doc: 'The origin address.' },
      { name: 'GR_ORG_CNTR', doc: 'The origin counter.' },
      { name: 'GR_TGT_CNTR', doc: 'The target counter.' },
      { name: 'GR_POS', doc: 'How far the answer got.' },
    ],
  },
  {
    name: 'control-queue',
    file: 'lapi/src/layout/engine.ts',
    title: 'the queue of control messages tasks hand the agent (NetShared.control): two Int32 words, then records from byte CQ_HEADER',
    unit: 'int32',
    size: { name: 'CQ_HEADER', n: 2, sizeBytes: true, doc: 'Bytes before the records.' },
    fields: [
      { name: 'CQ_START', doc: 'The byte offset of the oldest record.' },
      { name: 'CQ_END', doc: 'The byte offset after the newest record.' },
    ],
  },
  {
    name: 'control-record',
    file: 'lapi/src/layout/engine.ts',
    title: "a record of that queue (bytes from its start): the peer, the body's length, then the body",
    unit: 'byte',
    size: { name: 'CQ_RECORD', n: 8, doc: 'Bytes of a record before its body.' },
    fields: [
      { name: 'CQR_PEER', n: 4, doc: 'The peer process the message came from (u32).' },
      { name: 'CQR_LEN', n: 4, doc: "The body's length in bytes (u32)." },
    ],
  },
  {
    name: 'stream-peer',
    file: 'lapi/src/layout/stream.ts',
    title: "a peer's words in a stream data path: PEER_WORDS words per peer p at PEER_BASE + PEER_WORDS·p (Int32 index)",
    unit: 'int32',
    size: { name: 'PEER_WORDS', n: 8, doc: 'Words per peer.' },
    fields: [
      { name: 'SP_FD', doc: "The connection's descriptor (-1: none)." },
      { name: 'SP_FLAGS', doc: 'PEER_EOF | PEER_BYE | PEER_ERROR | PEER_MALFORMED.' },
      { name: 'SP_ERRNO', doc: "Of PEER_ERROR: Node's errno, or 1000 + WASI's." },
      { name: 'SP_RX_START', doc: "The unparsed bytes in the peer's receive buffer: from …" },
      { name: 'SP_RX_END', doc: '… to.' },
      { name: 'SP_TX_START', doc: 'The unwritten bytes in its send buffer: from …' },
      { name: 'SP_TX_END', doc: '… to.' },
      { reserved: 1 },
    ],
  },
  {
    name: 'stream-stats',
    file: 'lapi/src/layout/stream.ts',
    title: "a stream data path's statistics (Float64 index; written under the network lock)",
    unit: 'float64',
    size: { name: 'STREAM_STATS', n: 8, doc: 'Float64 words of the statistics.' },
    fields: [
      { name: 'S_FRAMES_SENT' },
      { name: 'S_FRAMES_RECEIVED' },
      { name: 'S_BYTES_SENT' },
      { name: 'S_BYTES_RECEIVED' },
      { name: 'S_FRAMES_DROPPED' },
      { name: 'S_WRITES' },
      { name: 'S_READS' },
      { name: 'S_EMPTY_READS' },
    ],
  },
  {
    name: 'short-packet',
    file: 'lapi/src/transport/packet.ts',
    title: "the header of a SHORT packet (T_AM_SHORT) from its slot's body (Int32 index); a BARE packet (T_AM_BARE) has its first BARE_HEADER_WORDS",
    unit: 'int32',
    size: { name: 'SHORT_HEADER_WORDS', n: 7, doc: "Words of a SHORT packet's header: its user header (then data) follows." },
    fields: [
      { name: 'SW_KIND', doc: 'PACKET_VERSION | type << 8 (flags 0): never 0, which tells it from a packet of the common format.' },
      { name: 'SW_SRC', doc: 'The source task.' },
      { name: 'SW_LENS', doc: 'User header and data bytes | user header bytes << 16.' },
      { name: 'SW_MSG_ID', doc: 'The message id (per sender).' },
      { name: 'SW_HANDLER', doc: "The header handler's index." },
      { name: 'BARE_HEADER_WORDS', n: 0, doc: "Words of a BARE packet's header (it has no counters): its user header follows." },
      { name: 'SW_TGT_CNTR', doc: "The target counter (a word index in the target's segment, 0 = none)." },
      { name: 'SW_CMPL_CNTR', doc: 'The completion counter (likewise).' },
    ],
  },
  {
    name: 'am2-header',
    file: 'am2/src/wire.ts',
    title: 'the full header by words (Int32 index; the byte offsets O_* above name the same fields)',
    unit: 'int32',
    size: { name: 'HDR_WORDS', n: 8, doc: 'Words of the full header: the arguments follow.' },
    fields: [
      { name: 'HW_KIND', doc: 'O_KIND | O_HANDLER << 8 | O_NARGS << 16 | O_STATUS << 24.' },
      { name: 'HW_ENDPOINTS', doc: 'O_DST | O_SRC << 16.' },
      { name: 'HW_TAG_LO', doc: 'O_TAG_LO.' },
      { name: 'HW_TAG_HI', doc: 'O_TAG_HI.' },
      { name: 'HW_NBYTES', doc: 'O_NBYTES.' },
      { name: 'HW_SLOT', doc: 'O_SLOT.' },
      { name: 'HW_OFF', doc: 'O_OFF.' },
      { name: 'HW_OFF2', doc: 'O_OFF2.' },
    ],
  },
  {
    name: 'am2-compact',
    file: 'am2/src/wire.ts',
    title: "the compact header by words (Int32 index): its arguments follow, then a Medium's count or a Long's count and offset",
    unit: 'int32',
    size: { name: 'COMPACT_WORDS', n: 5, doc: 'Words of the compact header before its arguments.' },
    fields: [
      { name: 'CW_KIND', doc: 'kind | K_COMPACT | handler << 8 | arguments << 16.' },
      { name: 'CW_ENDPOINTS', doc: 'Receiving endpoint | sending endpoint << 16.' },
      { name: 'CW_TAG_LO', doc: "The tag's low half." },
      { name: 'CW_TAG_HI', doc: 'Its high half.' },
      { name: 'CW_SLOT', doc: 'The request instance (as O_SLOT).' },
    ],
  },
]

/** Offsets of a block's fields, checked: every field inside the block, none overlapping another. */
export function lay(block) {
  const out = []
  let next = 0
  for (const f of block.fields) {
    const at = f.at ?? next
    const n = f.reserved ?? (f.n === 'rest' ? null : (f.n ?? 1))
    if (at < next) throw new Error(`layout ${block.name}: ${f.name ?? 'reserved room'} at ${at} overlaps the field before it (which ends at ${next})`)
    if (n !== null && (!Number.isInteger(n) || n < (f.name !== undefined && f.n === 0 ? 0 : 1)))
      throw new Error(`layout ${block.name}: ${f.name ?? 'reserved room'} has size ${n}`)
    if (f.name !== undefined && out.some((o) => o.name === f.name)) throw new Error(`layout ${block.name}: ${f.name} twice`)
    out.push({ ...f, at, n })
    next = n === null ? Infinity : at + n
  }
  if (block.size !== undefined && next !== Infinity && next > block.size.n) {
    throw new Error(`layout ${block.name}: fields take ${next} ${block.unit} units, more than ${block.size.name} (${block.size.n})`)
  }
  if (block.size !== undefined && next === Infinity) throw new Error(`layout ${block.name}: a field of the rest of an unsized block only`)
  return out
}

const BYTES = { int32: 4, float64: 8, byte: 1 }

/** The marked section of a block: its picture and its constants. */
export function section(block) {
  const fields = lay(block)
  const lines = [`// <layout ${block.name}> written by scripts/gen-layouts.mjs from its table: do not edit by hand`]
  lines.push(`// ${block.title}:`)
  for (const f of fields) {
    const span = f.n === null ? `${f.at}…` : f.n <= 1 ? `${f.at}` : `${f.at}…${f.at + f.n - 1}`
    lines.push(`//   ${span.padEnd(7)} ${f.name ?? '(reserved)'}`)
  }
  for (const f of fields) {
    if (f.name === undefined) continue
    if (f.doc !== undefined) lines.push(`/** ${f.doc} */`)
    lines.push(`export const ${f.name} = ${f.at}`)
  }
  if (block.size !== undefined) {
    lines.push(`/** ${block.size.doc} */`)
    lines.push(`export const ${block.size.name} = ${block.size.sizeBytes === true ? block.size.n * BYTES[block.unit] : block.size.n}`)
  }
  lines.push(`// </layout ${block.name}>`)
  return lines.join('\n')
}

function rewrite(text, block, file) {
  const open = text.indexOf(`// <layout ${block.name}>`)
  const closeMark = `// </layout ${block.name}>`
  const close = text.indexOf(closeMark)
  if (open < 0 || close < open) throw new Error(`${file}: no marks // <layout ${block.name}> … ${closeMark}`)
  return text.slice(0, open) + section(block) + text.slice(close + closeMark.length)
}

function main() {
  const check = process.argv.includes('--check')
  const unknown = process.argv.slice(2).filter((a) => a !== '--check')
  if (unknown.length > 0) {
    process.stderr.write(`gen-layouts: unknown argument '${unknown[0]}' (only --check)\n`)
    return 2
  }
  const size = (name) => BLOCKS.find((b) => b.name === name).size.n
  if (size('engine') !== 32) throw new Error("gen-layouts: the engine's words must end where the peers' words start (PEER_BASE, 32)")
  let differ = 0
  const files = new Map()
  for (const b of BLOCKS) {
    const path = SRC + b.file
    const before = files.get(path) ?? readFileSync(path, 'utf8')
    files.set(path, rewrite(before, b, b.file))
  }
  for (const [path, text] of files) {
    if (readFileSync(path, 'utf8') === text) continue
    differ++
    const name = 'packages/' + path.slice(SRC.length)
    if (check) process.stderr.write(`gen-layouts: ${name} is not what scripts/gen-layouts.mjs writes (run npm run gen:layouts)\n`)
    else writeFileSync(path, text)
  }
  return check && differ > 0 ? 1 : 0
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = main()
