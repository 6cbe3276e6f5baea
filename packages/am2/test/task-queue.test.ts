/**
 * AMLAPI's task queue: first-READY order, the firewall (the tail is never unlinked), node reuse,
 * growth, and a seeded randomized interleaving of producer and consumer steps, including producer
 * steps in the middle of a consumer's walk (a handler run by AM_Poll that sends). `npm test` takes
 * 20,000 random steps, `npm run test:full` 200,000.
 */
import { describe, expect, it } from 'vitest'
import { TaskQueue } from '../src/task-queue.js'
import { count } from '../../../test/helpers/tier.js'

const STEPS = count(20_000, 200_000)

describe('task queue', () => {
  it('takes the first ready token, not only the head', () => {
    const q = new TaskQueue(4)
    const a = q.push(1, false)
    q.push(2, true)
    q.push(3, false)
    expect(q.take()).toBe(2)
    expect(q.take()).toBe(-1)
    q.markReady(a)
    expect(q.take()).toBe(1)
    expect(q.size).toBe(1)
    expect(q.take()).toBe(-1)
  })

  it('keeps a taken tail as a firewall and unlinks it once something follows', () => {
    const q = new TaskQueue(2)
    q.push(7, true)
    expect(q.take()).toBe(7) // the tail: marked taken, left in the list
    expect(q.size).toBe(0)
    expect(q.take()).toBe(-1)
    q.push(8, true) // appended behind the old tail
    expect(q.take()).toBe(8) // the walk unlinked the old tail on the way
    const capacity = (): number => (q as unknown as { next: Int32Array }).next.length
    const before = capacity()
    for (let i = 0; i < 1000; i++) {
      q.push(i, true)
      expect(q.take()).toBe(i)
    }
    expect(capacity()).toBe(before) // nodes are reused: 1000 messages through a queue of 2 never grew it
  })

  it('grows past its initial capacity and refuses to mark a node twice', () => {
    const q = new TaskQueue(2)
    const nodes: number[] = []
    for (let i = 0; i < 100; i++) nodes.push(q.push(i, false))
    for (let i = 99; i >= 0; i--) q.markReady(nodes[i]!)
    for (let i = 0; i < 100; i++) expect(q.take()).toBe(i)
    expect(() => q.markReady(nodes[0]!)).toThrow(/not pending/)
  })

  it(`matches a reference model over ${STEPS.toLocaleString('en')} seeded random steps, with pushes in the middle of walks`, () => {
    let seed = 20261122
    const rand = (n: number): number => {
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0
      return seed % n
    }
    const q = new TaskQueue(8)
    // the model: tokens in push order, with their readiness
    type Entry = { token: number; ready: boolean; node: number }
    const model: Entry[] = []
    const pending: Entry[] = []
    let nextToken = 0
    const push = (): void => {
      const ready = rand(3) === 0
      const node = q.push(nextToken, ready)
      const e = { token: nextToken++, ready, node }
      model.push(e)
      if (!ready) pending.push(e)
    }
    const markSome = (): void => {
      if (pending.length === 0) return
      const k = rand(pending.length)
      const m = pending[k]!
      pending[k] = pending[pending.length - 1]!
      pending.pop()
      q.markReady(m.node)
      m.ready = true
    }
    q.onVisit = () => {
      if (rand(8) === 0) push()
      if (rand(16) === 0) markSome()
    }
    for (let step = 0; step < STEPS; step++) {
      const r = rand(20)
      if (r < 5) push()
      else if (r < 10) markSome()
      else {
        const firstReadyBefore = model.findIndex((m) => m.ready)
        const got = q.take()
        // a push during the walk lands behind everything the walk could have returned first, so
        // the answer must be the first ready token of the model as it is now, or -1 if none was
        // ready among those the walk had passed
        const i = model.findIndex((m) => m.ready)
        if (got === -1) {
          // a token that was ready before the walk is always found (hooks never remove nodes)
          expect(firstReadyBefore).toBe(-1)
          continue
        }
        // never later than the first token that was ready before the walk started
        if (firstReadyBefore >= 0) expect(model.findIndex((m) => m.token === got)).toBeLessThanOrEqual(firstReadyBefore)
        expect(i).toBeGreaterThanOrEqual(0)
        const first = model[i]!
        if (first.token !== got) {
          // the walk may have passed `first` before a hook marked it ready; then `got` is later
          const j = model.findIndex((m) => m.token === got)
          expect(j).toBeGreaterThan(i)
          expect(model[j]!.ready).toBe(true)
          model.splice(j, 1)
        } else model.splice(i, 1)
      }
      expect(q.size).toBe(model.length)
    }
    // drain: everything comes out exactly once, in order
    q.onVisit = null
    for (const m of model)
      if (!m.ready) {
        q.markReady(m.node)
        m.ready = true
      }
    const rest: number[] = []
    for (let t = q.take(); t !== -1; t = q.take()) rest.push(t)
    expect(rest).toEqual(model.map((m) => m.token))
    expect(q.size).toBe(0)
  })
})
