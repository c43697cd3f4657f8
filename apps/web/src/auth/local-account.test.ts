import { describe, expect, it } from 'vitest'
import { ApiError } from '../api'
import { accountErrorsOf, checkNewAccount } from './local-account'

const good = { username: 'operator', password: 'long enough', confirm: 'long enough' }

describe('first local account form', () => {
  it('accepts a trimmed username and a long enough password typed twice', () => {
    expect(checkNewAccount(good)).toEqual({})
  })

  it('says what the relay would refuse before sending', () => {
    expect(checkNewAccount({ ...good, username: '   ' })).toEqual({ username: 'Enter a username' })
    expect(checkNewAccount({ ...good, username: ' operator' })).toEqual({ username: 'No spaces at the start or end' })
    expect(checkNewAccount({ ...good, username: 'x'.repeat(65) })).toEqual({ username: 'At most 64 characters' })
    expect(checkNewAccount({ ...good, password: 'short', confirm: 'short' })).toEqual({
      password: 'At least 8 characters',
    })
    expect(checkNewAccount({ ...good, confirm: 'long enougH' })).toEqual({ confirm: 'The passwords do not match' })
  })

  it("puts the relay's validation details on their fields, in plain words", () => {
    const error = new ApiError('INVALID_REQUEST', 'body/password must NOT have fewer than 8 characters', 400, {
      details: [
        { path: 'body/password', message: 'must NOT have fewer than 8 characters' },
        { path: 'body/username', message: 'must match pattern "^\\\\S(.*\\\\S)?$"' },
        { path: 'body', message: 'must NOT have additional properties' },
      ],
    })
    expect(accountErrorsOf(error)).toEqual({
      fields: { password: 'At least 8 characters', username: 'No spaces at the start or end' },
      form: ['Must NOT have additional properties'],
    })
  })

  it('shows any other failure above the form', () => {
    const conflict = new ApiError('CONFLICT', 'A local account exists already; sign in with it', 409)
    expect(accountErrorsOf(conflict)).toEqual({ fields: {}, form: ['A local account exists already; sign in with it'] })
  })
})
