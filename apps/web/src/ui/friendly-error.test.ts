import { describe, expect, it } from 'vitest'
import { explainError } from './friendly-error'

const sentenceOf = (raw: string) => explainError(raw).sentence

describe('explainError', () => {
  it('says nothing is listening for a refused connection, and keeps the raw text as the detail', () => {
    expect(explainError('connect ECONNREFUSED 127.0.0.1:5999')).toEqual({
      sentence: 'Nothing is listening at 127.0.0.1:5999. Is the service running?',
      detail: 'connect ECONNREFUSED 127.0.0.1:5999',
    })
    expect(sentenceOf('Cannot reach http://127.0.0.1:1/data: connect ECONNREFUSED 127.0.0.1:1')).toBe(
      'Nothing is listening at 127.0.0.1:1. Is the service running?',
    )
  })

  it('names the host that could not be found or looked up', () => {
    expect(sentenceOf('Cannot reach http://weather.lan/data: getaddrinfo ENOTFOUND weather.lan')).toBe(
      "The name weather.lan could not be found. Check the address for typos, and that this machine's DNS works.",
    )
    expect(sentenceOf('getaddrinfo EAI_AGAIN broker.example')).toBe(
      "The name broker.example could not be looked up just now. Check this machine's network and DNS.",
    )
  })

  it('tells a timeout, a reset and an unreachable host apart', () => {
    expect(sentenceOf('connect ETIMEDOUT 10.0.0.5:80')).toBe(
      '10.0.0.5:80 did not answer in time. Check the address, and that no firewall is in the way.',
    )
    expect(sentenceOf('The operation was aborted due to timeout')).toBe(
      'The server did not answer in time. Check the address, and that no firewall is in the way.',
    )
    expect(sentenceOf('Cannot reach http://192.168.1.20:8080/data: read ECONNRESET')).toBe(
      'http://192.168.1.20:8080/data closed the connection before answering. It may have restarted, or it speaks another protocol on that port.',
    )
    expect(sentenceOf('connect EHOSTUNREACH 192.168.1.20:8080')).toBe(
      '192.168.1.20:8080 cannot be reached from this machine. Check the address, and that this machine is on that network.',
    )
    expect(sentenceOf('connect ENETUNREACH 10.9.9.9:1883')).toMatch(/^10\.9\.9\.9:1883 cannot be reached/)
  })

  it('explains certificate failures by their cause', () => {
    expect(sentenceOf('Cannot reach https://api.lan/: certificate has expired')).toBe(
      'The certificate of https://api.lan/ has expired, so the connection is not trusted.',
    )
    expect(sentenceOf('Cannot reach https://api.lan/: self-signed certificate')).toMatch(
      /^https:\/\/api\.lan\/ uses a self-signed certificate/,
    )
    expect(sentenceOf("Hostname/IP does not match certificate's altnames: Host: api.lan")).toBe(
      'The certificate of the server is made out to another name than the one in the address.',
    )
    expect(sentenceOf('unable to verify the first certificate')).toBe(
      'The certificate of the server could not be verified, so the connection is not trusted.',
    )
  })

  it('puts HTTP statuses in words, naming the address', () => {
    expect(sentenceOf('http://api.lan/data answered HTTP 401')).toBe(
      'http://api.lan/data asks for credentials (HTTP 401). Check the access token.',
    )
    expect(sentenceOf('http://api.lan/data answered HTTP 403')).toMatch(/refused access \(HTTP 403\)/)
    expect(sentenceOf('http://api.lan/data answered HTTP 404')).toBe(
      'Nothing was found at http://api.lan/data (HTTP 404). Check the path in the address.',
    )
    expect(sentenceOf('http://api.lan/data answered HTTP 503')).toBe(
      "http://api.lan/data failed with an error of its own (HTTP 503). Try again later, or check that service's logs.",
    )
    expect(explainError('http://api.lan/data answered HTTP 418')).toEqual({
      sentence: 'http://api.lan/data answered HTTP 418',
    })
  })

  it('explains a bad port and a failed fetch', () => {
    expect(sentenceOf('RangeError [ERR_SOCKET_BAD_PORT]: Port should be >= 0 and < 65536. Received 70000.')).toBe(
      'The port in the address is not valid: it must be a number from 1 to 65535.',
    )
    expect(sentenceOf('fetch failed')).toBe(
      'The request to the server failed before any answer came. Check the address and the network.',
    )
  })

  it('prefers the cause to the wrapper: a failed fetch that was refused says nothing listens', () => {
    expect(sentenceOf('fetch failed: connect ECONNREFUSED 127.0.0.1:5999')).toBe(
      'Nothing is listening at 127.0.0.1:5999. Is the service running?',
    )
  })

  it('leaves text it does not know as it is, with no detail line', () => {
    expect(explainError('Invalid JSON in the answer')).toEqual({ sentence: 'Invalid JSON in the answer' })
  })
})
