import { describe, expect, it } from 'vitest'
import { toStreamBody, toStreamDraft, webSocketUrl } from './stream-form'

describe('stream form', () => {
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
})
