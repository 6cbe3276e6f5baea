/**
 * FdPoll (transport/fd-io.ts), the sleep in the kernel on a connection: it ends when the socket has
 * bytes, and after its time (no earlier than its 30 ms) when it has none. That it ends at once when
 * there are bytes is a claim about time: fd-poll.perf.test.ts (`npm run test:perf`).
 */
import net from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import { FdIo, SLEEP_READY, SLEEP_TIMEOUT, sharedMemory } from '@amlapi/lapi/transport'

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
  it('wakes when the socket has bytes, and times out when it has none', async () => {
    const { fd, peer } = await pair()
    const p = io.poller(fd)
    const t = performance.now()
    expect(p.wait(30)).toBe(SLEEP_TIMEOUT)
    expect(performance.now() - t).toBeGreaterThanOrEqual(29)
    peer.write('x')
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(p.wait(2000)).toBe(SLEEP_READY)
    const end = io.end(fd)
    expect(end.read(65536, 16)).toBe(1)
  })
})
