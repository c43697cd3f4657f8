import { localAuthLimits } from '@relay/contracts'
import { ApiError } from '../api'

export type AccountDraft = { username: string; password: string; confirm: string }
export type AccountField = keyof AccountDraft
export type AccountErrors = { fields: Partial<Record<AccountField, string>>; form: string[] }

export const noAccountErrors: AccountErrors = { fields: {}, form: [] }

/** What the relay would refuse, said before sending; the password is typed twice, so a typo cannot lock anyone out. */
export function checkNewAccount(draft: AccountDraft): AccountErrors['fields'] {
  const fields: AccountErrors['fields'] = {}
  const { username, password, confirm } = draft
  if (username.trim() === '') {
    fields.username = 'Enter a username'
  } else if (username !== username.trim()) {
    fields.username = 'No spaces at the start or end'
  } else if (username.length > localAuthLimits.usernameMaxLength) {
    fields.username = `At most ${localAuthLimits.usernameMaxLength} characters`
  }
  if (password.length < localAuthLimits.passwordMinLength) {
    fields.password = `At least ${localAuthLimits.passwordMinLength} characters`
  } else if (password.length > localAuthLimits.passwordMaxLength) {
    fields.password = `At most ${localAuthLimits.passwordMaxLength} characters`
  }
  if (!fields.password && confirm !== password) {
    fields.confirm = 'The passwords do not match'
  }
  return fields
}

/** The relay's validation details (`body/username`) on their fields; anything else above the buttons. */
export function accountErrorsOf(error: Error): AccountErrors {
  if (!(error instanceof ApiError) || error.details.length === 0) {
    return { fields: {}, form: [error.message] }
  }
  const fields: AccountErrors['fields'] = {}
  const form: string[] = []
  for (const detail of error.details) {
    const field = detail.path.replace(/^body\/?/, '')
    if ((field === 'username' || field === 'password') && !fields[field]) {
      fields[field] = readable(detail.message)
    } else {
      form.push(readable(detail.message))
    }
  }
  return { fields, form }
}

const rewrites: [RegExp, (match: RegExpMatchArray) => string][] = [
  [/^must NOT have fewer than (\d+) characters$/, (match) => `At least ${match[1]} characters`],
  [/^must NOT have more than (\d+) characters$/, (match) => `At most ${match[1]} characters`],
  [/^must match pattern /, () => 'No spaces at the start or end'],
]

function readable(message: string): string {
  for (const [pattern, rewrite] of rewrites) {
    const match = message.match(pattern)
    if (match) {
      return rewrite(match)
    }
  }
  return message.charAt(0).toUpperCase() + message.slice(1)
}
