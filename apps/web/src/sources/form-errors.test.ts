import { describe, expect, it } from 'vitest'
import { ApiError } from '../api'
import { collectorFields } from './collector-form'
import { formErrorsOf } from './form-errors'

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
