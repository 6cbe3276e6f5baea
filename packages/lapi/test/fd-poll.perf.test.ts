/**
 * FdPoll (transport/fd-io.ts), the sleep in the kernel on a connection, a claim about time (`npm run
 * test:perf`): it ends as soon as the socket has bytes, within 250 ms of a 2 s bound, in one of
 * three tries (test/helpers/perf.ts). (That it ends then, and times out after its time when there
 * are none, is fd-poll.test.ts's, in the README's suite.)
 */
import net from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import { FdIo, SLEEP_READY, sharedMemory } from '@amlapi/lapi/transport'
import { bestOf } from '../../../test/helpers/perf.js'

const PAGES = 4
const mem = sharedMemory(PAGES)
const io = new FdIo(mem, PAGES)
const closers: Array<() => void> = []
afterAll(() => {
  for (const c of closers) c()
})

/** A connected pair on loopback: the client's descriptor (its handle no longer reading) and the server's socket. */
async function pair(): Promise<{ fd: number; peer: net.Socket }> {
  const srv = net.createServer()
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve))
  const accepted = new Promise<net.Socket>((resolve) => srv.once('connection', resolve))
  const c = net.connect((srv.address() as net.AddressInfo).port, '127.0.0.1')
  await new Promise<void>((resolve) => c.once('connect', () => resolve()))
  const peer = await accepted
  const h = (c as unknown as { _handle: { fd: number; readStop: () => void } })._handle
  h.readStop()
  closers.push(() => {
    c.destroy()
    peer.destroy()
    srv.close()
  })
  return { fd: h.fd, peer }
}

describe('FdPoll', () => {
  it('wakes at once when the socket has bytes', async () => {
    await bestOf(3, async () => {
      const { fd, peer } = await pair()
      const p = io.poller(fd)
      peer.write('x')
      await new Promise((resolve) => setTimeout(resolve, 20))
      const t = performance.now()
      expect(p.wait(2000)).toBe(SLEEP_READY)
      expect(performance.now() - t).toBeLessThan(250)
      const end = io.end(fd)
      expect(end.read(65536, 16)).toBe(1)
    })
  })
})
