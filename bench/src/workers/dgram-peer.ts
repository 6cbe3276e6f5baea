/**
 * The other process of the raw Node `dgram` baselines (benchmarks/net-udp.ts), started with
 * `node dgram-peer.js PORT MODE`: it binds a UDP socket on loopback, connects it to the
 * benchmark's socket at PORT, says hello (one datagram), and then
 *
 *   echo   answers each datagram on the event loop ('message' → send), as a Node user writes it;
 *   poll   answers each datagram polling its socket synchronously (fs.readSync on the descriptor,
 *          EAGAIN meaning nothing yet; fs.writeSync to answer), not yielding to the event loop
 *          until it has had none for IDLE_MS;
 *   sink   counts datagrams on the event loop; a datagram whose first byte is 0xff ends a run and
 *          is answered with the count (u32) since the last one.
 */
import { createSocket } from 'node:dgram'
import { readSync, writeSync } from 'node:fs'

const IDLE_MS = 2

const port = Number(process.argv[2])
const mode = process.argv[3]
const sock = createSocket('udp4')
sock.on('error', () => process.exit(0))

interface Handle {
  fd: number
  recvStart(): number
  recvStop(): number
}
function handleOf(): Handle {
  const sym = Object.getOwnPropertySymbols(sock).find((x) => x.description === 'state symbol')!
  return (sock as unknown as Record<symbol, { handle: Handle }>)[sym].handle
}

sock.bind(0, '127.0.0.1', () => {
  sock.connect(port, '127.0.0.1', () => {
    sock.send(Buffer.from('hello'))
    if (mode === 'echo') {
      sock.on('message', (m) => sock.send(m))
    } else if (mode === 'poll') {
      const h = handleOf()
      const buf = Buffer.alloc(1 << 16)
      const spin = (): void => {
        h.recvStop()
        let last = performance.now()
        const lim = Error.stackTraceLimit
        Error.stackTraceLimit = 0
        for (;;) {
          let n: number
          try {
            n = readSync(h.fd, buf, 0, buf.length, null)
          } catch (e) {
            if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') process.exit(0)
            if (performance.now() - last > IDLE_MS) break
            continue
          }
          last = performance.now()
          writeSync(h.fd, buf, 0, n)
        }
        Error.stackTraceLimit = lim
        h.recvStart()
        sock.once('message', (m) => {
          writeSync(h.fd, m)
          spin()
        })
      }
      sock.removeAllListeners('message')
      spin()
    } else {
      let count = 0
      const reply = Buffer.alloc(4)
      sock.on('message', (m) => {
        if (m[0] !== 0xff) {
          count++
          return
        }
        reply.writeUInt32LE(count, 0)
        count = 0
        sock.send(reply)
      })
    }
  })
})
