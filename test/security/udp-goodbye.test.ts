/**
 * A departed peer's name at the `udp` transport (docs/transports.md, "UDP"), against the real
 * implementation:
 *
 *   - After a peer's goodbye: frames that come in its name later (a datagram made with its session
 *     value and the next sequence number, as whoever took its port could) are dropped, never
 *     delivered; and it is sent nothing but the acknowledgement its goodbye calls for — no
 *     keepalive, no resend, no new data.
 *
 * Two datagram paths run in this process with the test as the network between them
 * (helpers/datagram-pair.ts); the frames in the departed peer's name are made by hand, as whoever
 * took its port could make them.
 */
import { describe, expect, it } from 'vitest'
import { DG_HEADER_BYTES } from '#lapi-internal'
import { FRAME_CONTROL, FRAME_HEADER_BYTES, FRAME_PACKET, FRAME_VERSION, PEER_BYE, encodeMessage, peerFlags, streamStats } from '@amlapi/lapi/transport'
import { DROP_COUNTERS, frameBody, packetNumber } from './helpers/datagram-pair.js'
import { Summer, delta, exchange, note, openPair, setPn } from './helpers/udp-cases.js'

/** A frame as the stream path writes it (contract.ts): length, version, kind, dst, then `body`. */
function frameBytes(kind: number, dst: number, body: Uint8Array): Buffer {
  const f = Buffer.alloc(FRAME_HEADER_BYTES + body.length)
  f.writeUInt32LE(body.length, 0)
  f[4] = FRAME_VERSION
  f[5] = kind
  f.writeUInt32LE(dst, 8)
  f.set(body, FRAME_HEADER_BYTES)
  return f
}

/**
 * A data datagram in B's name, without MAC: B's datagram `tpl`'s header (its session value and
 * acknowledgements), sequence number `seq`, packet number `pn`, `payload`, the checksum right.
 */
function forgeData(tpl: Buffer, seq: number, pn: number, payload: Uint8Array, summer: Summer): Buffer {
  const d = Buffer.alloc(DG_HEADER_BYTES + payload.length)
  tpl.copy(d, 0, 0, DG_HEADER_BYTES)
  d[1] = 1 // DATA
  d[2] = 0 // no MAC, not held
  d.writeUInt16LE(payload.length, 6)
  d.writeInt32LE(seq, 16)
  setPn(d, pn)
  d.writeUInt32LE(0, 44)
  d.set(payload, DG_HEADER_BYTES)
  summer.fix(d, DG_HEADER_BYTES)
  return d
}

const isData = (d: Buffer): boolean => d[1] === 1
const seqOf = (d: Buffer): number => d.readInt32LE(16)
const describeDg = (d: Buffer): string =>
  `${isData(d) ? 'data' : 'ack'} seq ${seqOf(d)} ack ${d.readInt32LE(20)} pn ${packetNumber(d)}, ${d.readUInt16LE(6)} bytes`

describe("udp: after a peer's goodbye", () => {
  it("control: a datagram made so (B's session value, the next sequence number, a right checksum) delivers its frame while B has not said goodbye", async () => {
    const pair = await openPair(false, 5000)
    await exchange(pair, 12)
    pair.bRuns = false
    const summer = new Summer()
    const last = pair.captured[pair.captured.length - 1]!
    const next = Math.max(...pair.captured.filter(isData).map(seqOf)) + 1
    // (frame 12 is the next A's flow expects: 4 bytes)
    const id = pair.a.inbound.sent++
    const s0 = pair.stats(pair.a)
    pair.attack(forgeData(last, next, pair.pnHeard + 1, frameBytes(FRAME_PACKET, id, frameBody(id)), summer))
    pair.stepA()
    const s1 = pair.stats(pair.a)
    expect([delta(s1, s0, 'datagramsReceived'), delta(s1, s0, 'stale')], 'taken, as news').toEqual([1, 0])
    expect(pair.a.inbound.violations).toEqual([])
    expect(pair.a.inbound.got, 'the made frame delivered').toBe(13)
  })

  it(
    "frames in B's name after its goodbye are dropped, never delivered; A sends B nothing after it but the acknowledgement it calls for: " +
      'no keepalive, resend or new data (watched 1.2 s)',
    async () => {
      /** How long what A sends B is watched after the goodbye: over twice the keepalive interval (500 ms) and the longest resend timeout (500 ms). */
      const WATCH_MS = 1200
      const pair = await openPair(false, 5000)
      await exchange(pair, 12)
      const summer = new Summer()

      // B stops reading; A sends it frames, which stay unacknowledged: what reaches B's socket shows A resending them
      pair.bRuns = false
      const before: Buffer[] = []
      for (let i = 0; i < 3; i++) pair.send(pair.a)
      const resent = (): boolean => {
        const seqs = before.filter(isData).map(seqOf)
        return new Set(seqs).size < seqs.length
      }
      await pair.run(1500, resent, () => {
        before.push(...pair.takeAt(pair.b))
      })
      expect(resent(), `the watch sees A resend to a silent B: ${before.map(describeDg).join('; ')}`).toBe(true)

      // B says goodbye (one datagram, relayed); A's datagrams numbered above pn0 were sent after it took the goodbye
      // (A has no other peer: its packet numbers to B count the datagrams it sent)
      before.push(...pair.takeAt(pair.b))
      const s0 = pair.stats(pair.a)
      const pn0 = s0.datagramsSent
      const f0 = pair.forwarded
      expect(pair.goodbye(pair.b), "B's goodbye queued").toBe(true)
      pair.step()
      expect(pair.forwarded - f0, "B's goodbye: one datagram").toBe(1)
      const bye = pair.captured[pair.captured.length - 1]!
      expect(isData(bye)).toBe(true)
      expect(peerFlags(pair.a.shared, 1) & PEER_BYE, 'A took the goodbye').toBe(PEER_BYE)

      // (b) watched: A asked for more frames to B now and then; B's socket read, A polled, every millisecond or so
      const after: Buffer[] = []
      const t0 = performance.now()
      let asked = 0
      const take = (): void => {
        for (const d of pair.takeAt(pair.b)) if (packetNumber(d) > pn0) after.push(d)
      }
      await pair.run(
        WATCH_MS,
        () => false,
        () => {
          take()
          if (asked < 6 && performance.now() - t0 >= asked * 200) {
            pair.send(pair.a)
            asked++
          }
        },
      )
      take()
      const s1 = pair.stats(pair.a)
      const seen = after.map(describeDg).join('; ')
      note(`after the goodbye: ${after.length} datagrams to B in ${WATCH_MS} ms (${seen}); before it ${before.length}, ${s0.retransmits} resends`)
      expect(after.filter(isData).map(describeDg), 'data (new or resent) after the goodbye').toEqual([])
      expect(after.length, `acknowledgements after the goodbye: the one it calls for (${seen})`).toBe(1)
      expect(after[0]!.readInt32LE(20), 'it acknowledges the goodbye').toBe(seqOf(bye) + 1)
      expect(delta(s1, s0, 'keepalives'), 'keepalives').toBe(0)
      expect(delta(s1, s0, 'retransmits') + delta(s1, s0, 'fastRetransmits'), 'resends').toBe(0)
      expect(delta(s1, s0, 'datagramsSent'), 'datagrams A sent B').toBe(after.length)
      expect(pair.loss(pair.a), 'B is not lost (the peer timeout is 5 s)').toBeNull()

      // (a) a datagram in B's name after its goodbye, made as a squatter on B's port who learned the session value
      // could: the next sequence number, a packet number that is news, a right checksum; a packet and a control frame
      const s2 = pair.stats(pair.a)
      const st2 = streamStats(pair.a.shared)
      const got = pair.a.inbound.got
      const payload = Buffer.concat([frameBytes(FRAME_PACKET, got, frameBody(got)), frameBytes(FRAME_CONTROL, 0, encodeMessage({ t: 'x' }).subarray(4))])
      pair.attack(forgeData(bye, seqOf(bye) + 1, pair.pnHeard + 1, payload, summer))
      pair.stepA()
      const s3 = pair.stats(pair.a)
      const st3 = streamStats(pair.a.shared)
      expect(
        DROP_COUNTERS.filter((k) => delta(s3, s2, k) !== 0),
        'the datagram passed every check',
      ).toEqual([])
      expect([delta(s3, s2, 'datagramsReceived'), delta(s3, s2, 'stale')], 'taken, as news').toEqual([1, 0])
      expect(st3.framesDropped - st2.framesDropped, 'its two frames dropped').toBe(2)
      expect(st3.framesReceived - st2.framesReceived, 'frames passed up').toBe(0)
      expect(pair.a.inbound.got, 'nothing delivered').toBe(got)
      expect(pair.a.inbound.violations).toEqual([])
    },
  )
})
