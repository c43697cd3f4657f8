import type { SerialPort } from 'serialport'
import type { StreamDriver } from './types.js'
import { untilAborted } from './until-aborted.js'

const defaultBaudRate = 9600

/** Past this many unsent bytes the device is taken as not reading, and sends fail instead of queueing more. */
const maxPendingBytes = 64 * 1024

/** Writes each payload as one line of JSON (`\n`-terminated) to a serial port, opened on first send. */
export function comStream(settings: Record<string, unknown>): StreamDriver {
  const path = String(settings.path)
  const baudRate = typeof settings.baudRate === 'number' ? settings.baudRate : defaultBaudRate
  let opening: Promise<SerialPort> | undefined

  const open = async (): Promise<SerialPort> => {
    // Loaded on first use, so a platform without the native binding only loses COM streams.
    const { SerialPort } = await import('serialport')
    const port = new SerialPort({ path, baudRate, autoOpen: false })
    await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())))
    // A port that closes (a device unplugged) is opened again by the next send.
    port.once('close', () => {
      opening = undefined
    })
    port.on('error', () => {})
    return port
  }

  const portFor = (signal: AbortSignal): Promise<SerialPort> => {
    opening ??= open().catch((err: unknown) => {
      opening = undefined
      throw new Error(`Cannot open serial port ${path}: ${messageOf(err)}`)
    })
    return untilAborted(opening, signal, () => new Error(`Cannot open serial port ${path}: no answer in time`))
  }

  return {
    async send(payload, signal) {
      const port = await portFor(signal)
      if (port.writableLength > maxPendingBytes) {
        throw new Error(`Serial port ${path} is not accepting data`)
      }
      port.write(`${JSON.stringify(payload)}\n`)
      const drained = new Promise<void>((resolve, reject) =>
        port.drain((err) =>
          err ? reject(new Error(`Writing to serial port ${path} failed: ${err.message}`)) : resolve(),
        ),
      )
      await untilAborted(drained, signal, () => new Error(`Serial port ${path} did not take the data in time`))
    },
    async close() {
      const pending = opening
      opening = undefined
      const port = await pending?.catch(() => undefined)
      if (port?.isOpen) {
        await new Promise<void>((resolve) => port.close(() => resolve()))
      }
    },
  }
}

/** The native binding prefixes its messages with `Error: `, which reads twice after our own text. */
function messageOf(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).replace(/^Error: /, '')
}
