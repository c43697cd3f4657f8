import { randomUUID } from 'node:crypto'
import { type AddressInfo, createServer } from 'node:net'
import { requirement } from '@relay/testkit'
import { connectAsync, type MqttClient } from 'mqtt'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createReach } from '../reach.js'
import { mqttCollector, mqttStream } from './mqtt.js'
import type { CollectorDriver, Reading, StreamDriver, StreamPayload } from './types.js'

const brokerUrl = 'mqtt://127.0.0.1:1883'
const mosquitto = requirement('Mosquitto', await brokerProblem(brokerUrl))

async function brokerProblem(url: string): Promise<string | undefined> {
  try {
    const client = await connectAsync(url, { reconnectPeriod: 0, connectTimeout: 2000 })
    await client.endAsync(true)
    return undefined
  } catch (err) {
    return `no MQTT broker at ${url} (${(err as Error).message || (err as { code?: string }).code}); start one with \`mosquitto -d -c /etc/mosquitto/mosquitto.conf\``
  }
}

const pollRateMs = 100
const within = () => AbortSignal.timeout(5000)
const uniqueTopic = () => `relay-test/${randomUUID()}`
const sorted = (readings: Reading[]) => readings.toSorted((a, b) => a.externalId.localeCompare(b.externalId))
const reach = createReach({ allowLinkLocal: false })
/** Names only these tests know: one for the local broker, one that points at the metadata address. */
const named = createReach({
  allowLinkLocal: false,
  resolve: async (hostname) => [{ address: hostname === 'broker.test' ? '127.0.0.1' : '169.254.169.254', family: 4 }],
})

const payload: StreamPayload = {
  junctionId: 'junction-1',
  junctionName: 'Plant',
  deviceName: 'screen',
  screenId: null,
  sentAt: '2025-01-01T00:00:00.000Z',
  sensors: [
    { collectorId: 'c1', id: 'temp', name: 'Temperature', unit: '°C', value: 21.5, lastUpdated: null },
    { collectorId: 'c1', id: 'door', name: 'Door', unit: null, value: true, lastUpdated: null },
  ],
}

const opened: { close(): Promise<void> }[] = []
function track<T extends CollectorDriver | StreamDriver>(driver: T): T {
  opened.push(driver)
  return driver
}

afterEach(async () => {
  await Promise.all(opened.splice(0).map((driver) => driver.close()))
})

describe('MQTT drivers without a broker', () => {
  it('rejects every fetch with the broker address and the reason while the broker is unreachable', async () => {
    const collector = track(mqttCollector({ brokerUrl: 'mqtt://127.0.0.1:1', topics: ['a/b'] }, pollRateMs, reach))
    await expect(collector.fetch(within())).rejects.toThrow(
      /^MQTT broker mqtt:\/\/127\.0\.0\.1:1 is not reachable: .*ECONNREFUSED/,
    )
    await expect(collector.fetch(within())).rejects.toThrow(/^MQTT broker mqtt:\/\/127\.0\.0\.1:1 is not reachable/)
  })

  it('rejects a send while the broker is unreachable, without showing the password', async () => {
    const stream = track(mqttStream({ brokerUrl: 'mqtt://relay:secret@127.0.0.1:1', topic: 'a/b' }, reach))
    const failure = stream.send(payload, within())
    await expect(failure).rejects.toThrow(/^MQTT broker mqtt:\/\/relay:\*\*\*@127\.0\.0\.1:1 is not reachable/)
    await expect(failure).rejects.not.toThrow(/secret/)
  })

  it('logs in with the user name and password of the broker URL', async () => {
    const received: Buffer[] = []
    const server = createServer((socket) => socket.on('data', (chunk) => received.push(chunk)))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = server.address() as AddressInfo
      const collector = track(
        mqttCollector(
          { brokerUrl: `mqtt://relay%20user:p%40ss@127.0.0.1:${port}`, topics: ['a/b'] },
          pollRateMs,
          reach,
        ),
      )
      void collector.fetch(AbortSignal.timeout(200)).catch(() => {})
      await expect.poll(() => Buffer.concat(received).toString('latin1')).toMatch(/MQTT.*relay user.*p@ss/s)
    } finally {
      server.close()
    }
  })

  it('refuses a broker whose name resolves to a link-local address, saying how to allow it', async () => {
    const collector = track(
      mqttCollector({ brokerUrl: 'mqtt://metadata.test:1883', topics: ['a/b'] }, pollRateMs, named),
    )
    await expect(collector.fetch(within())).rejects.toThrow(
      /^MQTT broker mqtt:\/\/metadata\.test:1883 is not reachable: metadata\.test resolves to 169\.254\.169\.254, a link-local address; .*RELAY_ALLOW_LINK_LOCAL=true/,
    )
  })

  it('refuses a broker written as a link-local address in any form', async () => {
    for (const brokerUrl of ['mqtt://0xa9fea9fe:1883', 'mqtt://2852039166', 'mqtts://[::ffff:169.254.169.254]']) {
      const stream = track(mqttStream({ brokerUrl, topic: 'a/b' }, reach))
      await expect(stream.send(payload, within())).rejects.toThrow(/is not reachable: .* is a link-local address/)
    }
  })
})

describe.skipIf(!mosquitto.available)('MQTT drivers against Mosquitto', () => {
  let publisher: MqttClient

  beforeAll(async () => {
    publisher = await connectAsync(brokerUrl)
    return () => publisher.endAsync(true)
  })

  const publish = (topic: string, message: string) => publisher.publishAsync(topic, message, { qos: 1 })

  it('reports the latest value of each topic under a wildcard, JSON objects field by field', async () => {
    const base = uniqueTopic()
    const collector = track(mqttCollector({ brokerUrl, topics: [`${base}/#`] }, pollRateMs, reach))
    expect(await collector.fetch(within())).toEqual([])

    await publish(`${base}/temp`, '20')
    await publish(`${base}/temp`, '21.5')
    await publish(`${base}/door`, 'true')
    await publish(`${base}/label`, 'hall 2')
    await publish(`${base}/quoted`, '"text"')
    await publish(`${base}/status`, '{"battery":80,"ok":false,"gps":{"lat":1.5}}')

    const reading = (externalId: string, value: Reading['value']): Reading => ({
      externalId,
      name: externalId,
      unit: null,
      value,
    })
    await expect
      .poll(async () => sorted(await collector.fetch(within())))
      .toEqual([
        reading(`${base}/door`, true),
        reading(`${base}/label`, 'hall 2'),
        reading(`${base}/quoted`, 'text'),
        reading(`${base}/status/battery`, 80),
        reading(`${base}/status/gps/lat`, 1.5),
        reading(`${base}/status/ok`, false),
        reading(`${base}/temp`, 21.5),
      ])
  })

  it("connects to a broker by a name, through the relay's resolver", async () => {
    const base = uniqueTopic()
    const collector = track(
      mqttCollector({ brokerUrl: 'mqtt://broker.test:1883', topics: [`${base}/#`] }, 60_000, named),
    )
    await collector.fetch(within())
    await publish(`${base}/level`, '7')
    await expect
      .poll(async () => collector.fetch(within()))
      .toEqual([{ externalId: `${base}/level`, name: `${base}/level`, unit: null, value: 7 }])
  })

  it('forgets a topic cleared with an empty message', async () => {
    const base = uniqueTopic()
    const collector = track(mqttCollector({ brokerUrl, topics: [`${base}/#`] }, 60_000, reach))
    await collector.fetch(within())
    const ids = async () => (await collector.fetch(within())).map((reading) => reading.externalId)

    await publish(`${base}/a`, '1')
    await expect.poll(ids).toEqual([`${base}/a`])
    await publish(`${base}/a`, '')

    await expect.poll(ids).toEqual([])
  })

  it('listens to several topics and ignores the others', async () => {
    const base = uniqueTopic()
    const collector = track(mqttCollector({ brokerUrl, topics: [`${base}/a`, `${base}/+/level`] }, pollRateMs, reach))
    await collector.fetch(within())

    await publish(`${base}/a`, '1')
    await publish(`${base}/tank/level`, '2')
    await publish(`${base}/b`, '3')

    await expect
      .poll(async () => sorted(await collector.fetch(within())).map((reading) => reading.externalId))
      .toEqual([`${base}/a`, `${base}/tank/level`])
  })

  it('stops reporting a topic that sent nothing for three poll intervals', async () => {
    const base = uniqueTopic()
    // The collector's own clock: message ages are what the test sets, whatever the machine's load.
    let at = 0
    const collector = track(mqttCollector({ brokerUrl, topics: [`${base}/#`] }, pollRateMs, reach, () => at))
    await collector.fetch(within())
    const heard = async () =>
      Object.fromEntries((await collector.fetch(within())).map((reading) => [reading.externalId, reading.value]))
    const once = `${base}/once`
    const steady = `${base}/steady`

    await publish(once, '1')
    await publish(steady, '1')
    await expect.poll(heard).toEqual({ [once]: 1, [steady]: 1 })
    at = 2 * pollRateMs
    await publish(steady, '2')
    await expect.poll(heard).toEqual({ [once]: 1, [steady]: 2 })

    at = 3 * pollRateMs
    expect(await heard()).toEqual({ [once]: 1, [steady]: 2 })
    at = 3 * pollRateMs + 1
    expect(await heard()).toEqual({ [steady]: 2 })
    at = 5 * pollRateMs
    expect(await heard()).toEqual({ [steady]: 2 })
    at = 5 * pollRateMs + 1
    expect(await heard()).toEqual({})
  })

  it('rejects fetches when the broker refuses the subscription', async () => {
    const collector = track(mqttCollector({ brokerUrl, topics: ['relay-test/#/wrong'] }, pollRateMs, reach))
    await expect(collector.fetch(within())).rejects.toThrow(
      /^MQTT broker mqtt:\/\/127\.0\.0\.1:1883: cannot subscribe to relay-test\/#\/wrong/,
    )
  })

  it('publishes each payload as JSON to its topic', async () => {
    const topic = uniqueTopic()
    const received: unknown[] = []
    const subscriber = await connectAsync(brokerUrl)
    try {
      subscriber.on('message', (_topic, message) => received.push(JSON.parse(message.toString('utf8'))))
      await subscriber.subscribeAsync(topic, { qos: 1 })
      const stream = track(mqttStream({ brokerUrl, topic }, reach))

      await stream.send(payload, within())
      await stream.send({ ...payload, sentAt: '2025-01-01T00:00:01.000Z' }, within())

      await expect.poll(() => received).toEqual([payload, { ...payload, sentAt: '2025-01-01T00:00:01.000Z' }])
    } finally {
      await subscriber.endAsync(true)
    }
  })
})
