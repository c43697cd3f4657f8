import type { Collector, Junction } from '@relay/contracts'
import { describe, expect, it } from 'vitest'
import { ApiError } from '../src/api'
import { accessTokenRemoval, collectorFields, toCollectorBody, toCollectorDraft } from '../src/sources/collector-form'
import { formErrorsOf } from '../src/sources/form-errors'
import { changesOf, toJunctionBody, toJunctionDraft } from '../src/sources/junction-form'
import { toStreamBody, toStreamDraft, webSocketUrl } from '../src/sources/stream-form'

// Pure logic behind the Sources forms; runs in Node beside the browser tests.

/** A collector as the relay answers it: a GenericAPI one that never fetched, with `fields` over it. */
function savedCollector(fields: Partial<Collector>): Collector {
  return {
    id: 'c',
    name: 'API',
    collectorType: 'GenericAPI',
    pollRateMs: 5000,
    settings: {},
    active: false,
    running: false,
    hasAccessToken: false,
    externalAccessToken: false,
    unlocked: true,
    lastFetchTime: null,
    lastFetchSuccessful: false,
    lastFetchErrorMessage: null,
    lastFetchTotalSensors: 0,
    lastFetchNewSensors: 0,
    lastFetchLostSensors: 0,
    createdAt: '',
    updatedAt: '',
    ...fields,
  }
}

describe('collector form', () => {
  it('reads sensor paths one a line, as path or path|name|unit', () => {
    const draft = {
      ...toCollectorDraft(),
      name: ' Weather ',
      url: 'https://example.com/data',
      pollRate: '2.5',
      sensorPaths: 'data.0.temp|Kitchen|°C\n\n  data.1.humidity  \nwind||km/h',
    }
    expect(toCollectorBody(draft)).toEqual({
      ok: true,
      body: {
        name: 'Weather',
        collectorType: 'GenericAPI',
        pollRateMs: 2500,
        settings: {
          url: 'https://example.com/data',
          sensors: [
            { path: 'data.0.temp', name: 'Kitchen', unit: '°C' },
            { path: 'data.1.humidity' },
            { path: 'wind', unit: 'km/h' },
          ],
        },
      },
    })
  })

  it('round-trips a saved collector through the form', () => {
    const draft = toCollectorDraft(
      savedCollector({
        name: 'Broker',
        collectorType: 'MQTT',
        settings: { brokerUrl: 'mqtt://127.0.0.1:1883', topics: ['a/#', 'b/+'] },
      }),
    )
    expect(draft.topics).toBe('a/#\nb/+')
    const check = toCollectorBody(draft)
    expect(check.ok && check.body.settings).toEqual({ brokerUrl: 'mqtt://127.0.0.1:1883', topics: ['a/#', 'b/+'] })
  })

  it('warns before saving an address on another server would remove the saved token', () => {
    const saved = savedCollector({ settings: { url: 'http://192.168.1.20:8080/data' }, hasAccessToken: true })
    const draft = toCollectorDraft(saved)
    expect(accessTokenRemoval(saved, draft)).toBeUndefined()
    expect(accessTokenRemoval(saved, { ...draft, url: 'HTTP://192.168.1.20:8080/other?x=1' })).toBeUndefined()
    for (const url of ['http://192.168.1.21:8080/data', 'https://192.168.1.20:8080/data', 'http://192.168.1.20/data']) {
      expect(accessTokenRemoval(saved, { ...draft, url })).toBe(
        'The saved access token will be removed because the address points to another server; enter it again to keep using it.',
      )
    }
    expect(
      accessTokenRemoval(saved, { ...draft, url: 'http://192.168.1.21/', accessToken: 'new-token' }),
    ).toBeUndefined()
    expect(accessTokenRemoval(saved, { ...draft, collectorType: 'Virtual' })).toBe(
      'The saved access token will be removed because the collector no longer connects to the server it was saved for.',
    )
    expect(accessTokenRemoval({ ...saved, hasAccessToken: false }, { ...draft, url: 'http://x/' })).toBeUndefined()
    expect(accessTokenRemoval(undefined, { ...draft, url: 'http://x/' })).toBeUndefined()
  })

  it('holds back text in number fields and sends the token only with a GenericAPI collector', () => {
    const virtual = { ...toCollectorDraft(), collectorType: 'Virtual' as const, sensorCount: '2.5', min: 'x' }
    expect(toCollectorBody(virtual)).toEqual({
      ok: false,
      errors: { 'settings.sensorCount': 'Enter a whole number', 'settings.min': 'Enter a number' },
    })
    const tokened = { ...virtual, sensorCount: '2', min: '', accessToken: 'secret', accessTokenPassword: 'password1' }
    const check = toCollectorBody(tokened)
    expect(check.ok && check.body).toEqual({
      name: '',
      collectorType: 'Virtual',
      pollRateMs: 5000,
      settings: { sensorCount: 2 },
    })
  })
})

describe('relay validation errors', () => {
  it('puts each detail on the longest field its path names, in plain words and seconds', () => {
    const error = new ApiError('INVALID_REQUEST', 'Invalid', 400, {
      details: [
        { path: 'body/settings/url', message: 'must match pattern "^https?://"' },
        { path: 'body/pollRateMs', message: 'must be >= 1000' },
        { path: 'body/settings/sensors/0/path', message: 'must NOT have fewer than 1 characters' },
        { path: 'body', message: 'must NOT have additional properties' },
      ],
    })
    expect(formErrorsOf(error, collectorFields)).toEqual({
      fields: {
        'settings.url': 'Must start with http:// or https://',
        pollRateMs: 'Must be >= 1 s',
        'settings.sensors': 'Required',
      },
      form: ['Request: Must NOT have additional properties'],
    })
  })

  it('shows any other failure as a message for the whole form', () => {
    expect(formErrorsOf(new ApiError('CONFLICT', 'Stop it first', 409), collectorFields)).toEqual({
      fields: {},
      form: ['Stop it first'],
    })
  })
})

describe('stream and junction forms', () => {
  it('leaves out empty optional fields and checks the baud rate', () => {
    const draft = { ...toStreamDraft(), name: 'Serial', type: 'COM' as const, path: '/dev/ttyUSB0', baudRate: '9600' }
    expect(toStreamBody(draft)).toEqual({
      ok: true,
      body: { name: 'Serial', type: 'COM', settings: { path: '/dev/ttyUSB0', baudRate: 9600 } },
    })
    expect(toStreamBody({ ...draft, baudRate: 'fast' })).toEqual({
      ok: false,
      errors: { 'settings.baudRate': 'Enter a whole number' },
    })
  })

  it('builds the WebSocket subscribe address from the page location', () => {
    expect(webSocketUrl('abc', { protocol: 'https:', host: 'relay.local:8443' })).toBe(
      'wss://relay.local:8443/api/connections/streams/abc/ws',
    )
    expect(webSocketUrl('abc', { protocol: 'http:', host: '127.0.0.1:8080' })).toBe(
      'ws://127.0.0.1:8080/api/connections/streams/abc/ws',
    )
  })

  it('sends only what changed on a junction, so a running one can still be renamed', () => {
    const junction: Junction = {
      id: 'j',
      name: 'Feed',
      status: 'Running',
      autoStart: false,
      collectorIds: ['c1', 'c2'],
      targets: [{ streamId: 's1', sendRateMs: 1000 }],
      lastError: null,
      createdAt: '',
      updatedAt: '',
    }
    const draft = { ...toJunctionDraft(junction), name: 'Lobby feed', collectorIds: ['c2', 'c1'] }
    const check = toJunctionBody(draft)
    expect(check.ok && changesOf(check.body, junction)).toEqual({ name: 'Lobby feed' })

    const faster = toJunctionBody({ ...draft, targets: [{ streamId: 's1', sendRate: '0.25' }] })
    expect(faster.ok && changesOf(faster.body, junction)).toEqual({
      name: 'Lobby feed',
      targets: [{ streamId: 's1', sendRateMs: 250 }],
    })
    expect(toJunctionBody({ ...draft, targets: [{ streamId: 's1', sendRate: '' }] }).ok).toBe(false)
  })
})
