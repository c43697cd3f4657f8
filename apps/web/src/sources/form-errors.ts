import { ApiError } from '../api'

/** Messages shown on their fields, keyed by the body path with dots (`settings.url`), and those that fit none. */
export type FormErrors = { fields: Record<string, string>; form: string[] }

export const noErrors: FormErrors = { fields: {}, form: [] }

/** Body fields the relay takes in milliseconds and the forms show in seconds. */
const millisecondFields = new Set(['pollRateMs', 'sendRateMs'])

/**
 * Puts the relay's validation details (`body/settings/url`) on the form's fields: the longest
 * known field that the path starts with (`body/targets/0/sendRateMs` lands on `targets`).
 */
export function formErrorsOf(error: Error, fieldNames: readonly string[]): FormErrors {
  if (!(error instanceof ApiError) || error.details.length === 0) {
    return { fields: {}, form: [error.message] }
  }
  const fields: Record<string, string> = {}
  const form: string[] = []
  for (const detail of error.details) {
    const segments = detail.path.replace(/^body\/?/, '').split('/')
    const message = readable(
      detail.message,
      segments.some((segment) => millisecondFields.has(segment)),
    )
    const field = segments
      .map((_, index) => segments.slice(0, segments.length - index).join('.'))
      .find((name) => fieldNames.includes(name))
    if (field && !fields[field]) {
      fields[field] = message
    } else if (!field) {
      form.push(`${detail.path.replace(/^body\/?/, '') || 'Request'}: ${message}`)
    }
  }
  return { fields, form }
}

const rewrites: [RegExp, string][] = [
  [/^must match pattern "\^https\?:\/\/"$/, 'Must start with http:// or https://'],
  [/^must match pattern "\^mqtts\?:\/\/"$/, 'Must start with mqtt:// or mqtts://'],
  [/^must match format "uri"$/, 'Must be a complete URL'],
  [/^must NOT have fewer than 1 characters$/, 'Required'],
  [/^must NOT have fewer than 1 items$/, 'Add at least one'],
]

/** The relay speaks schema ("must match pattern …") and milliseconds; the form speaks plainly, in seconds. */
function readable(message: string, isMilliseconds: boolean): string {
  const rewrite = rewrites.find(([pattern]) => pattern.test(message))
  const text = rewrite
    ? rewrite[1]
    : isMilliseconds
      ? message.replace(
          /([<>]=?)\s*(\d+)/g,
          (_match, operator: string, ms: string) => `${operator} ${Number(ms) / 1000} s`,
        )
      : message
  return text.charAt(0).toUpperCase() + text.slice(1)
}
