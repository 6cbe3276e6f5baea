/**
 * The other process of the raw Node `net` baselines (benchmarks/net.ts), started with
 * `node net-peer.js PORT MODE`: it connects to the benchmark's main thread and
 *
 *   echo   answers each message on the event loop ('data' → write), as a Node user writes it;
 *   poll   answers each message polling the socket synchronously (fs.readSync on its descriptor,
 *          EAGAIN meaning nothing yet; fs.writeSync to answer), not yielding to the event loop
 *          until it has had no message for IDLE_MS (then it waits there for the next run's first);
 *   sink   counts the bytes of a stream and answers one byte for every `count` received (the
 *          main thread says `count` in an 8-byte header before each run).
 *
 * Messages of the ping-pongs are `size` bytes; the peer answers once it has a whole one.
 */
import { readSync, writeSync } from 'node:fs'
import { connect } from 'node:net'

/** A polling peer that has had no message for this long goes back to its event loop, ms. */
const IDLE_MS = 2

const port = Number(process.argv[2])
const mode = process.argv[3]
const size = Number(process.argv[4] ?? 16)
const sock = connect({ host: '127.0.0.1', port })
sock.setNoDelay(true)
sock.on('error', () => process.exit(0))
sock.on('close', () => process.exit(0))

sock.once('connect', () => {
  if (mode === 'echo') {
    let have = 0
    sock.on('data', (c: Buffer) => {
      have += c.length
      while (have >= size) {
        have -= size
        sock.write(c.subarray(0, size))
      }
    })
  } else if (mode === 'poll') {
    // (between runs it sleeps in the event loop: a peer that spun on for the whole benchmark
    // would take a CPU from the series measured after it)
    // (`reading` is net's own flag for the handle's state: kept true, so the stream never starts it twice)
    const h = (sock as unknown as { _handle: { fd: number; reading: boolean; readStart(): number; readStop(): number } })._handle
    const buf = Buffer.alloc(1 << 16)
    let have = 0
    const spin = (): void => {
      h.readStop()
      h.reading = false
      let last = performance.now()
      for (;;) {
        let n: number
        try {
          n = readSync(h.fd, buf, 0, buf.length, null)
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') process.exit(0)
          if (performance.now() - last > IDLE_MS) break
          continue
        }
        if (n === 0) process.exit(0)
        last = performance.now()
        have += n
        while (have >= size) {
          have -= size
          writeSync(h.fd, buf, 0, size)
        }
      }
      sock.once('data', (c: Buffer) => {
        have += c.length
        while (have >= size) {
          have -= size
          writeSync(h.fd, c, 0, size)
        }
        spin()
      })
      h.reading = true
      h.readStart()
    }
    // (after net's own start of reading, which follows the 'connect' event)
    setImmediate(spin)
  } else {
    // sink: [count u64] then count bytes; one byte back at the end of each run
    let want = -1
    let header = Buffer.alloc(0)
    sock.on('data', (c: Buffer) => {
      let at = 0
      while (at < c.length) {
        if (want < 0) {
          const need = 8 - header.length
          header = Buffer.concat([header, c.subarray(at, at + need)])
          at += Math.min(need, c.length - at)
          if (header.length === 8) {
            want = Number(header.readBigUInt64LE(0))
            header = Buffer.alloc(0)
          }
          continue
        }
        const take = Math.min(want, c.length - at)
        want -= take
        at += take
        if (want === 0) {
          want = -1
          sock.write(Buffer.from([1]))
        }
      }
    })
  }
})
