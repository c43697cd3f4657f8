import type { Collector } from '@relay/contracts'
import { describe, expect, it } from 'vitest'
import { accessTokenRemoval, toCollectorBody, toCollectorDraft } from './collector-form'

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
    health: { state: 'stopped', since: '', reason: null, consecutiveFailures: 0 },
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
