import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { requirement, tempDir } from '@relay/testkit'
import { ReadlineParser, SerialPort } from 'serialport'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { comStream } from './com-stream.js'
import type { StreamDriver, StreamPayload } from './types.js'

const socat = requirement('socat', socatProblem())

function socatProblem(): string | undefined {
  try {
    execFileSync('socat', ['-V'], { stdio: 'ignore' })
    return undefined
  } catch {
    return 'socat is not installed (apt-get install -y socat)'
  }
}

const within = () => AbortSignal.timeout(5000)

const payload: StreamPayload = {
  junctionId: 'junction-1',
  junctionName: 'Plant',
  deviceName: 'display',
  screenId: '7',
  sentAt: '2025-01-01T00:00:00.000Z',
  sensors: [{ collectorId: 'c1', id: 'temp', name: 'Temperature', unit: '°C', value: 21.5, lastUpdated: null }],
}

describe.skipIf(!socat.available)('COM stream over a pty pair', () => {
  let folder: ReturnType<typeof tempDir>
  let pair: ChildProcess
  let relayEnd: string
  let deviceEnd: string
  let device: SerialPort | undefined
  let stream: StreamDriver | undefined

  beforeEach(async () => {
    folder = tempDir('relay-com-')
    relayEnd = path.join(folder.path, 'relay')
    deviceEnd = path.join(folder.path, 'device')
    pair = spawn('socat', [`pty,raw,echo=0,link=${relayEnd}`, `pty,raw,echo=0,link=${deviceEnd}`], { stdio: 'ignore' })
    await expect.poll(() => existsSync(relayEnd) && existsSync(deviceEnd), { timeout: 5000 }).toBe(true)
  })

  afterEach(async () => {
    await stream?.close()
    stream = undefined
    if (device?.isOpen) {
      const open = device
      await new Promise((resolve) => open.close(resolve))
    }
    device = undefined
    const exited = new Promise((resolve) => pair.once('exit', resolve))
    pair.kill()
    await exited
    folder.remove()
  })

  /** The lines the device at the other end reads, each parsed as JSON. */
  async function listen(): Promise<unknown[]> {
    const lines: unknown[] = []
    const port = new SerialPort({ path: deviceEnd, baudRate: 115200, autoOpen: false })
    await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())))
    port.pipe(new ReadlineParser({ delimiter: '\n' })).on('data', (line: string) => lines.push(JSON.parse(line)))
    device = port
    return lines
  }

  it('writes each payload as one line of JSON', async () => {
    const lines = await listen()
    stream = comStream({ path: relayEnd, baudRate: 115200 })

    await stream.send(payload, within())
    await stream.send({ ...payload, sentAt: '2025-01-01T00:00:01.000Z' }, within())

    await expect.poll(() => lines).toEqual([payload, { ...payload, sentAt: '2025-01-01T00:00:01.000Z' }])
  })

  it('opens the port at 9600 baud when none is set', async () => {
    const lines = await listen()
    stream = comStream({ path: relayEnd })

    await stream.send(payload, within())

    await expect.poll(() => lines).toEqual([payload])
  })

  it('rejects a send to a port that does not exist with the path and the reason', async () => {
    const missing = path.join(folder.path, 'missing')
    stream = comStream({ path: missing })

    await expect(stream.send(payload, within())).rejects.toThrow(`Cannot open serial port ${missing}: `)
    await expect(stream.send(payload, within())).rejects.toThrow(/No such file or directory/)
  })
})
