import { sourceLimits, urlHost } from '@relay/contracts'
import { type IClientOptions, MqttClient } from 'mqtt'
import type { Reach } from '../reach.js'
import type { CollectorDriver, Reading, SensorValue, StreamDriver } from './types.js'
import { untilAborted } from './until-aborted.js'

/** A topic that sent nothing for this many poll intervals is no longer reported (lost). */
const freshIntervals = 3
const maxTopics = sourceLimits.sensorsPerCollector

const clientOptions: IClientOptions = {
  reconnectPeriod: 2000,
  connectTimeout: 10_000,
  // Subscriptions are made on every connect, so the client must not replay them as well.
  resubscribe: false,
  queueQoSZero: false,
}

/**
 * Subscribes to `topics` (wildcards allowed) and keeps the latest message of each concrete topic.
 * A fetch reports the topics heard from within the last three poll intervals, so a topic that stops
 * publishing is lost; it throws while the broker is not connected. `now` is a monotonic clock in ms.
 */
export function mqttCollector(
  settings: Record<string, unknown>,
  pollRateMs: number,
  reach: Reach,
  now: () => number = () => performance.now(),
): CollectorDriver {
  const topics = Array.isArray(settings.topics) ? settings.topics.map(String) : []
  const latest = new Map<string, { receivedAt: number; readings: Reading[] }>()
  const maxAge = freshIntervals * pollRateMs

  const forgetStale = (at: number) => {
    for (const [topic, entry] of latest) {
      if (at - entry.receivedAt > maxAge) {
        latest.delete(topic)
      }
    }
  }

  const connection = createMqttConnection(String(settings.brokerUrl), reach, {
    async onConnect(client) {
      const granted = await client.subscribeAsync(topics, { qos: 0 }).catch((err: unknown) => {
        throw new Error(`cannot subscribe to ${topics.join(', ')}: ${describe(err)}`)
      })
      // MQTT 3.1.1 brokers refuse a single topic with the granted QoS 0x80.
      const refused = granted.filter((grant) => grant.qos > 2).map((grant) => grant.topic)
      if (refused.length > 0) {
        throw new Error(`subscription to ${refused.join(', ')} was refused`)
      }
    },
    onMessage(topic, payload) {
      const receivedAt = now()
      if (!latest.has(topic) && latest.size >= maxTopics) {
        forgetStale(receivedAt)
        if (latest.size >= maxTopics) {
          return
        }
      }
      latest.delete(topic)
      // An empty message is how MQTT clears a retained value: the topic no longer reports anything.
      if (payload.length > 0) {
        latest.set(topic, { receivedAt, readings: readingsOf(topic, payload) })
      }
    },
  })

  return {
    async fetch(signal) {
      await connection.ready(signal)
      forgetStale(now())
      return [...latest.values()].flatMap((entry) => entry.readings).slice(0, sourceLimits.sensorsPerCollector)
    },
    close: () => connection.close(),
  }
}

/** Publishes each payload as JSON to `topic` with QoS 1: a send succeeds once the broker has it. */
export function mqttStream(settings: Record<string, unknown>, reach: Reach): StreamDriver {
  const topic = String(settings.topic)
  const connection = createMqttConnection(String(settings.brokerUrl), reach, {})
  return {
    async send(payload, signal) {
      const client = await connection.ready(signal)
      await untilAborted(
        client.publishAsync(topic, JSON.stringify(payload), { qos: 1 }),
        signal,
        () => new Error(`MQTT broker ${connection.url} did not acknowledge the message in time`),
      )
    },
    close: () => connection.close(),
  }
}

/**
 * The sensors of one message: its JSON value when it parses as a scalar, one sensor per scalar
 * field (`topic/field/…`) for a JSON object or array, else the raw text.
 */
function readingsOf(topic: string, payload: Buffer): Reading[] {
  const text = payload.toString('utf8')
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return [reading(topic, text)]
  }
  if (parsed === null || typeof parsed !== 'object') {
    return [reading(topic, parsed as SensorValue)]
  }
  const readings: Reading[] = []
  const walk = (node: unknown, path: string) => {
    if (readings.length >= sourceLimits.sensorsPerCollector) {
      return
    }
    if (node !== null && typeof node === 'object') {
      for (const [key, child] of Object.entries(node)) {
        walk(child, `${path}/${key}`)
      }
    } else {
      readings.push(reading(path, node as SensorValue))
    }
  }
  walk(parsed, topic)
  return readings
}

function reading(externalId: string, value: SensorValue): Reading {
  return { externalId, name: externalId, unit: null, value }
}

type ConnectionHooks = {
  /** Runs after every (re)connect; the connection is ready once it resolves. */
  onConnect?: (client: MqttClient) => Promise<void>
  onMessage?: (topic: string, payload: Buffer) => void
}

/**
 * One MQTT client opened on first use that reconnects by itself. `ready` waits for a connection
 * attempt in progress and throws at once while the broker is known to be down.
 */
function createMqttConnection(brokerUrl: string, reach: Reach, { onConnect, onMessage }: ConnectionHooks) {
  const url = withoutPassword(brokerUrl)
  let client: MqttClient | undefined
  let state: 'connecting' | 'ready' | 'down' = 'connecting'
  /** Why the last attempt failed: the broker could not be reached, or it refused what `onConnect` asked. */
  let problem: { text: string; refused: boolean } | undefined
  const listeners = new Set<() => void>()

  const settle = (next: 'ready' | 'down') => {
    state = next
    for (const listener of listeners) {
      listener()
    }
    listeners.clear()
  }

  const open = (): MqttClient => {
    state = 'connecting'
    problem = undefined
    const opened = openClient(brokerUrl, reach)
    opened.on('connect', () => {
      problem = undefined
      const setup = onConnect ? onConnect(opened) : Promise.resolve()
      void setup.then(
        () => settle('ready'),
        (err: unknown) => {
          problem = { text: describe(err), refused: opened.connected }
          settle('down')
        },
      )
    })
    opened.on('reconnect', () => {
      state = 'connecting'
    })
    opened.on('error', (err) => {
      problem = { text: describe(err), refused: false }
    })
    opened.on('close', () => {
      problem ??= { text: state === 'ready' ? 'connection lost' : 'connection failed', refused: false }
      settle('down')
    })
    if (onMessage) {
      opened.on('message', onMessage)
    }
    return opened
  }

  const nextChange = (signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      const done = () => {
        listeners.delete(done)
        signal.removeEventListener('abort', done)
        resolve()
      }
      listeners.add(done)
      signal.addEventListener('abort', done, { once: true })
      if (signal.aborted) {
        done()
      }
    })

  return {
    url,
    async ready(signal: AbortSignal): Promise<MqttClient> {
      if (!client) {
        try {
          client = open()
        } catch (err) {
          throw new Error(`MQTT broker ${url} cannot be used: ${describe(err)}`)
        }
      }
      if (state === 'connecting') {
        await nextChange(signal)
      }
      if (state !== 'ready') {
        throw new Error(
          problem?.refused
            ? `MQTT broker ${url}: ${problem.text}`
            : `MQTT broker ${url} is not reachable: ${problem?.text ?? 'no answer yet'}`,
        )
      }
      return client
    },
    async close() {
      const closing = client
      client = undefined
      settle('down')
      await closing?.endAsync(true)
    },
  }
}

/**
 * An MQTT client whose every (re)connect goes through `reach`: mqtt.js's own connect() opens
 * plain TCP sockets without a resolver hook, so the URL is read here and the socket made by reach.
 */
function openClient(brokerUrl: string, reach: Reach): MqttClient {
  const url = new URL(brokerUrl)
  const secure = url.protocol === 'mqtts:'
  const host = urlHost(brokerUrl) ?? url.hostname
  const port = Number(url.port) || (secure ? 8883 : 1883)
  return new MqttClient(() => reach.connect({ host, port, tls: secure }), {
    ...clientOptions,
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
  })
}

/** Error text for a person: Node reports a refused dual-stack connect as an AggregateError without a message. */
function describe(err: unknown): string {
  if (err instanceof AggregateError && !err.message) {
    return err.errors.map(describe).join('; ') || String((err as { code?: unknown }).code ?? 'connection failed')
  }
  return err instanceof Error ? err.message || err.name : String(err)
}

function withoutPassword(brokerUrl: string): string {
  try {
    const parsed = new URL(brokerUrl)
    if (parsed.password) {
      parsed.password = '***'
    }
    return parsed.toString().replace(/\/$/, '')
  } catch {
    return brokerUrl
  }
}
