/** Inbox rings: full/empty, wrap-around of the free-running counters, and a real two-thread run. */
import { Worker } from 'node:worker_threads'
import { describe, expect, it } from 'vitest'
import {
  NET_RING_SLOTS,
  RING_HEADER_BYTES,
  RingReader,
  RingWriter,
  SLOT_PACKET,
  SLOT_STAMP_BYTES,
  createInbox,
  isPageAligned,
  netRingAt,
  netRingGeometry,
  pageAlignedShared,
  ringGeometry,
} from '@amlapi/lapi/transport'

describe('inbox ring', () => {
  it('rounds slots to a power of two and slot bytes to 64', () => {
    const g = ringGeometry(3, 5, 100)
    expect(g).toMatchObject({ slots: 8, slotBytes: 128, rings: 3 })
    // a packet sits at SLOT_PACKET (after the STAMP), 8-aligned: 56 bytes of packet fit in a line
    expect(ringGeometry(1, 4, 64 - SLOT_PACKET).slotBytes).toBe(64)
    expect(ringGeometry(1, 4, 64 - SLOT_PACKET + 1).slotBytes).toBe(128)
    expect(SLOT_PACKET % 8).toBe(0)
    expect(g.ringBytes).toBe(RING_HEADER_BYTES + 8 * 128)
    // HEAD, TAIL and the first slot each start a 128-byte block
    expect(RING_HEADER_BYTES % 128).toBe(0)
  })

  it('makes inboxes page-aligned (a shared WebAssembly.Memory), with a plain SharedArrayBuffer to fall back on', () => {
    // (alignment itself cannot be seen from JavaScript: what shows is the page rounding of a
    // WebAssembly.Memory's buffer, and that it is shared memory as a SharedArrayBuffer is)
    const g = ringGeometry(2, 32, 64 + 4096)
    const inbox = createInbox(g)
    expect(inbox).toBeInstanceOf(SharedArrayBuffer)
    expect(inbox.byteLength).toBeGreaterThanOrEqual(g.rings * g.ringBytes)
    expect(inbox.byteLength % 65536).toBe(0)
    expect(isPageAligned(inbox)).toBe(true)
    expect(new Int32Array(inbox).every((v) => v === 0)).toBe(true)
    expect(pageAlignedShared(1).byteLength).toBe(65536)
    expect(pageAlignedShared(65537).byteLength).toBe(2 * 65536)
    const asked: number[] = []
    const refused = pageAlignedShared(100_000, (pages) => {
      asked.push(pages)
      throw new RangeError('could not allocate memory')
    })
    expect(asked).toEqual([2])
    expect(refused).toBeInstanceOf(SharedArrayBuffer)
    expect(refused.byteLength).toBe(100_000)
    expect(isPageAligned(refused)).toBe(false)
    expect(isPageAligned(new SharedArrayBuffer(65536))).toBe(false)
  })

  it('puts the network ring, larger, after the rings of the tasks, and keeps it apart from them', () => {
    const g = ringGeometry(2, 4, 64)
    const net = netRingGeometry(g)
    expect(net).toMatchObject({ slots: NET_RING_SLOTS, slotBytes: g.slotBytes, rings: 1 })
    expect(net.ringBytes).toBe(RING_HEADER_BYTES + NET_RING_SLOTS * g.slotBytes)
    // (the ring toward the network: as many slots, each longer by the destination tag's room)
    expect(netRingGeometry(g, 64)).toEqual({
      slots: NET_RING_SLOTS,
      slotBytes: g.slotBytes + 64,
      ringBytes: RING_HEADER_BYTES + NET_RING_SLOTS * (g.slotBytes + 64),
      rings: 1,
    })
    // (never fewer slots than the job's rings have)
    expect(netRingGeometry(ringGeometry(1, 2 * NET_RING_SLOTS, 64)).slots).toBe(2 * NET_RING_SLOTS)
    expect(netRingAt(g)).toBe(2 * g.ringBytes)
    const inbox = createInbox(g, net)
    expect(inbox.byteLength).toBeGreaterThanOrEqual(netRingAt(g) + net.ringBytes)
    const nw = new RingWriter(inbox, net, 0, netRingAt(g))
    const nr = new RingReader(inbox, net, 0, netRingAt(g))
    const w1 = new RingWriter(inbox, g, 1)
    const r1 = new RingReader(inbox, g, 1)
    // the network ring takes all of its slots, past those of a task's ring, and the last ring of
    // the tasks sees none of it
    for (let i = 0; i < NET_RING_SLOTS; i++) {
      const o = nw.reserve()
      expect(o).toBeGreaterThanOrEqual(netRingAt(g))
      nw.dv.setUint32(o, i, true)
      nw.publish()
    }
    expect(nw.reserve()).toBe(-1)
    expect(r1.available()).toBe(0)
    for (let i = 0; i < g.slots; i++) {
      const o = w1.reserve()
      w1.dv.setUint32(o, 1000 + i, true)
      w1.publish()
    }
    expect(nr.available()).toBe(NET_RING_SLOTS)
    for (let i = 0; i < NET_RING_SLOTS; i++) {
      expect(nr.dv.getUint32(nr.front(), true)).toBe(i)
      nr.release(1)
    }
    for (let i = 0; i < g.slots; i++) {
      expect(r1.dv.getUint32(r1.front(), true)).toBe(1000 + i)
      r1.release(1)
    }
    expect(nw.pending()).toBe(0)
    expect(w1.pending()).toBe(0)
  })

  it('counts landed messages with the release of a slot (the fence reads them); a same-thread writer stands in for the stamps', () => {
    const g = ringGeometry(1, 4, 64)
    const inbox = createInbox(g)
    const w = new RingWriter(inbox, g, 0)
    const r = new RingReader(inbox, g, 0)
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 3; i++) {
        const o = w.reserve()
        w.dv.setUint32(o, round * 10 + i, true)
        w.publish()
        w.markSent()
      }
      expect(r.available()).toBe(3)
      expect(w.reserve()).toBeGreaterThanOrEqual(0)
      expect(w.outstanding()).toBe(3 + round)
      // three packets back, two of them with their message complete (the third lands later)
      for (let k = 0; k < 3; k++) {
        expect(r.dv.getUint32(r.front(), true)).toBe(round * 10 + k)
        r.release(k < 2 ? 1 : 0)
        expect(w.outstanding()).toBe(3 + round - (k < 2 ? k + 1 : 2))
      }
      expect(r.available()).toBe(0)
      expect(w.pending()).toBe(0)
      expect(w.outstanding()).toBe(1 + round)
    }
    // paired with its writer, the reader counts from the writer and never reads a STAMP
    r.sameThreadWriter(w)
    new Int32Array(inbox)[(r.front() - SLOT_STAMP_BYTES) >> 2] = 16
    expect(r.available()).toBe(0)
    expect(r.nonEmpty).toBe(false)
    const o = w.reserve()
    w.dv.setUint32(o, 99, true)
    w.publish()
    expect(r.available()).toBe(1)
    expect(r.dv.getUint32(r.front(), true)).toBe(99)
    r.release()
    expect(r.peek()).toBe(-1)
  })

  it('is empty, fills up, refuses when full, and frees slots in order', () => {
    const g = ringGeometry(2, 4, 64)
    const inbox = createInbox(g)
    const w = new RingWriter(inbox, g, 1)
    const r = new RingReader(inbox, g, 1)
    const other = new RingReader(inbox, g, 0)
    expect(r.peek()).toBe(-1)
    const offs: number[] = []
    for (let i = 0; i < 4; i++) {
      const o = w.reserve()
      expect(o).toBeGreaterThanOrEqual(0)
      w.u8[o] = 10 + i
      w.publish()
      offs.push(o)
    }
    expect(w.reserve()).toBe(-1)
    expect(w.pending()).toBe(4)
    expect(other.peek()).toBe(-1)
    for (let i = 0; i < 4; i++) {
      const o = r.peek()
      expect(o).toBe(offs[i])
      expect(r.u8[o]).toBe(10 + i)
      r.release()
      expect(w.reserve()).toBeGreaterThanOrEqual(0)
    }
    expect(r.peek()).toBe(-1)
    expect(r.nonEmpty).toBe(false)
  })

  it("publishes a packet by its slot's STAMP: a stamp of another lap, or a body without one, is not a packet", () => {
    const g = ringGeometry(2, 4, 64)
    const inbox = createInbox(g)
    const i32 = new Int32Array(inbox)
    const w = new RingWriter(inbox, g, 1)
    const r = new RingReader(inbox, g, 1)
    const stampOf = (body: number): number => (body - SLOT_STAMP_BYTES) >> 2
    // a body written but not published: nothing to read, however it looks
    const o = w.reserve()
    w.dv.setUint32(o, 7, true)
    expect(r.nonEmpty).toBe(false)
    expect(r.available()).toBe(0)
    // the STAMP of packet 0 is 1; 1 - 4 (the lap before) or 5 (the lap after) are not it
    i32[stampOf(o)] = 1 - 4
    expect(r.nonEmpty).toBe(false)
    i32[stampOf(o)] = 5
    expect(r.available()).toBe(0)
    i32[stampOf(o)] = 0
    w.publish()
    expect(i32[stampOf(o)]).toBe(1)
    expect(r.peek()).toBe(o)
    // seven more: the second lap's stamps replace the first's, and every packet is read once
    const got: number[] = []
    for (let i = 1; i < 8; i++) {
      if (i === 4) {
        expect(w.reserve()).toBe(-1)
        while (r.available() > 0) {
          got.push(r.dv.getUint32(r.front(), true))
          r.release()
        }
      }
      const b = w.reserve()
      w.dv.setUint32(b, 7 + i, true)
      w.publish()
    }
    while (r.available() > 0) {
      got.push(r.dv.getUint32(r.front(), true))
      r.release()
    }
    expect(got).toEqual([7, 8, 9, 10, 11, 12, 13, 14])
    // a writer made later on the same inbox (a new context) goes on from the count the first kept
    const w2 = new RingWriter(inbox, g, 1)
    expect(w2.published).toBe(8)
    const b = w2.reserve()
    w2.dv.setUint32(b, 99, true)
    w2.publish()
    expect(r.available()).toBe(1)
    expect(r.dv.getUint32(r.front(), true)).toBe(99)
  })

  it('counts every packet stamped in a row, also after a look that found only the first (the drain takes them all)', () => {
    const g = ringGeometry(2, 8, 64)
    const inbox = createInbox(g)
    const w = new RingWriter(inbox, g, 1)
    const r = new RingReader(inbox, g, 1)
    for (let i = 0; i < 3; i++) {
      const o = w.reserve()
      w.dv.setUint32(o, i, true)
      w.publish()
    }
    expect(r.nonEmpty).toBe(true)
    expect(r.available()).toBe(3)
    r.release()
    // two known; a fourth published since is found by the next count
    const o = w.reserve()
    w.dv.setUint32(o, 3, true)
    w.publish()
    expect(r.available()).toBe(3)
    for (let i = 1; i < 4; i++) {
      expect(r.dv.getUint32(r.front(), true)).toBe(i)
      r.release()
    }
    expect(r.available()).toBe(0)
    expect(r.nonEmpty).toBe(false)
  })

  it('holds slots given back (and LANDED) from the producer until publishTail, except on a same-thread ring', () => {
    const g = ringGeometry(2, 4, 64)
    const inbox = createInbox(g)
    const w = new RingWriter(inbox, g, 1)
    const r = new RingReader(inbox, g, 1)
    for (let i = 0; i < 4; i++) {
      w.reserve()
      w.publish()
      w.markSent()
    }
    expect(r.available()).toBe(4)
    r.release(1, 1)
    r.release(1, 1)
    expect(w.pending()).toBe(4)
    expect(w.outstanding()).toBe(4)
    expect(w.reserve()).toBe(-1)
    expect(r.publishTail()).toBe(1)
    expect(r.publishTail()).toBe(0)
    expect(w.pending()).toBe(2)
    expect(w.outstanding()).toBe(2)
    expect(w.reserve()).toBeGreaterThanOrEqual(0)
    // a release without hold publishes what was held before it too
    r.release(1, 1)
    r.release(0)
    expect(w.pending()).toBe(0)
    expect(w.outstanding()).toBe(1)
    // the ring a task sends to itself never holds (its writer may be waiting in the same thread)
    const g1 = ringGeometry(1, 4, 64)
    const self = createInbox(g1)
    const sw = new RingWriter(self, g1, 0)
    const sr = new RingReader(self, g1, 0)
    sr.sameThreadWriter(sw)
    sw.reserve()
    sw.publish()
    expect(sr.available()).toBe(1)
    sr.release(0, 1)
    expect(sw.pending()).toBe(0)
  })

  it('keeps order across many wrap-arounds (single thread, seeded sizes)', () => {
    const g = ringGeometry(1, 8, 64)
    const inbox = createInbox(g)
    const w = new RingWriter(inbox, g, 0)
    const r = new RingReader(inbox, g, 0)
    let seed = 12345
    const rand = (): number => {
      seed = (seed * 1103515245 + 12345) >>> 0
      return seed
    }
    let sent = 0
    let got = 0
    while (got < 100_000) {
      const k = rand() % 9
      for (let i = 0; i < k; i++) {
        const o = w.reserve()
        if (o < 0) break
        w.dv.setUint32(o, sent++, true)
        w.publish()
      }
      const m = rand() % 9
      for (let i = 0; i < m; i++) {
        const o = r.peek()
        if (o < 0) break
        expect(r.dv.getUint32(o, true)).toBe(got++)
        r.release()
      }
    }
  })

  it('carries a sequence between two threads without loss, duplication or reordering', async () => {
    const g = ringGeometry(1, 16, 128)
    const inbox = createInbox(g)
    const COUNT = 50_000
    const src = `
      const { workerData } = require('node:worker_threads')
      import('@amlapi/lapi/transport').then(({ RingWriter }) => {
        const w = new RingWriter(workerData.inbox, workerData.g, 0)
        const deadline = Date.now() + 20000
        for (let i = 0; i < workerData.count; i++) {
          let o
          while ((o = w.reserve()) < 0) { if (Date.now() > deadline) throw new Error('consumer stalled') }
          w.dv.setUint32(o, i, true)
          w.dv.setUint32(o + 60, i ^ 0x5a5a5a5a, true)
          w.publish()
        }
      })`
    const worker = new Worker(src, { eval: true, workerData: { inbox, g, count: COUNT } })
    const failed = new Promise<never>((_, reject) => worker.on('error', reject))
    const r = new RingReader(inbox, g, 0)
    const deadline = Date.now() + 20_000
    let next = 0
    // as the dispatcher takes them: every packet stamped in a row, each released once handled
    const consume = async (): Promise<void> => {
      while (next < COUNT) {
        const n = r.available()
        if (n === 0) {
          if (Date.now() > deadline) throw new Error(`stalled at ${next}`)
          await new Promise((resolve) => setImmediate(resolve))
          continue
        }
        for (let k = 0; k < n; k++) {
          const o = r.front()
          if (r.dv.getUint32(o, true) !== next || r.dv.getUint32(o + 60, true) !== (next ^ 0x5a5a5a5a) >>> 0) throw new Error(`bad packet at ${next}`)
          next++
          r.release()
        }
      }
    }
    try {
      await Promise.race([consume(), failed])
    } finally {
      await worker.terminate()
    }
    expect(next).toBe(COUNT)
  })
})
