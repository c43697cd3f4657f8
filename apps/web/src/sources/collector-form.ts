import {
  type Collector,
  type CollectorType,
  type CreateCollectorBody,
  collectorAddress,
  type JsonPathSensor,
  keepsAccessToken,
  sourceLimits,
} from '@relay/contracts'

/** The types a person can create; EventEngine is the relay's own. */
export const editableCollectorTypes = ['GenericAPI', 'MQTT', 'Virtual', 'Host'] as const
export type EditableCollectorType = (typeof editableCollectorTypes)[number]

export const collectorTypeLabels = {
  GenericAPI: 'Generic API',
  MQTT: 'MQTT',
  Virtual: 'Virtual',
  Host: 'Host',
  EventEngine: 'Event engine',
} satisfies Record<CollectorType, string>

/** The type choices of the form, each saying what it reads. */
export const collectorTypeOptions = {
  GenericAPI: 'Generic API (JSON over HTTP)',
  MQTT: 'MQTT (broker topics)',
  Virtual: 'Virtual (generated values)',
  Host: 'Host (this machine)',
} satisfies Record<EditableCollectorType, string>

/** What the form holds while editing: text as typed; numbers in seconds. */
export type CollectorDraft = {
  name: string
  collectorType: EditableCollectorType
  pollRate: string
  url: string
  /** One sensor a line: `path` or `path|name|unit`. */
  sensorPaths: string
  brokerUrl: string
  /** One topic a line. */
  topics: string
  sensorCount: string
  min: string
  max: string
  accessToken: string
  accessTokenPassword: string
}

/** Every field a relay validation error can point at. */
export const collectorFields = [
  'name',
  'collectorType',
  'pollRateMs',
  'settings.url',
  'settings.sensors',
  'settings.brokerUrl',
  'settings.topics',
  'settings.sensorCount',
  'settings.min',
  'settings.max',
  'accessToken',
  'accessTokenPassword',
] as const

export function toCollectorDraft(collector?: Collector): CollectorDraft {
  const settings = collector?.settings ?? {}
  const type = editableCollectorTypes.find((name) => name === collector?.collectorType) ?? 'GenericAPI'
  return {
    name: collector?.name ?? '',
    collectorType: type,
    pollRate: String((collector?.pollRateMs ?? sourceLimits.pollRate.default) / 1000),
    url: text(settings.url),
    sensorPaths: Array.isArray(settings.sensors)
      ? (settings.sensors as JsonPathSensor[]).map(formatSensorPath).join('\n')
      : '',
    brokerUrl: text(settings.brokerUrl),
    topics: Array.isArray(settings.topics) ? settings.topics.map(String).join('\n') : '',
    sensorCount: settings.sensorCount === undefined ? '3' : String(settings.sensorCount),
    min: settings.min === undefined ? '' : String(settings.min),
    max: settings.max === undefined ? '' : String(settings.max),
    accessToken: '',
    accessTokenPassword: '',
  }
}

export type CollectorCheck =
  | { ok: true; body: CreateCollectorBody }
  | { ok: false; errors: Partial<Record<(typeof collectorFields)[number], string>> }

/**
 * The request body for a draft. Only what the browser cannot send at all is checked here (text in
 * a number field); everything else is the relay's to judge, so its rules live in one place.
 */
export function toCollectorBody(draft: CollectorDraft): CollectorCheck {
  const errors: Partial<Record<(typeof collectorFields)[number], string>> = {}
  const pollRate = parseNumber(draft.pollRate)
  if (pollRate === null) {
    errors.pollRateMs = 'Enter a number of seconds'
  }
  const settings = settingsOf(draft, errors)
  if (Object.keys(errors).length > 0) {
    return { ok: false, errors }
  }
  const body: CreateCollectorBody = { name: draft.name.trim(), collectorType: draft.collectorType, settings }
  if (pollRate !== undefined && pollRate !== null) {
    body.pollRateMs = Math.round(pollRate * 1000)
  }
  if (draft.collectorType === 'GenericAPI' && draft.accessToken) {
    body.accessToken = draft.accessToken
    if (draft.accessTokenPassword) {
      body.accessTokenPassword = draft.accessTokenPassword
    }
  }
  return { ok: true, body }
}

/**
 * What to tell the person when saving the draft would remove the collector's saved access token:
 * the relay removes it when the address moves to another origin and no new token comes with it.
 */
export function accessTokenRemoval(collector: Collector | undefined, draft: CollectorDraft): string | undefined {
  const typesToken = draft.collectorType === 'GenericAPI'
  if (!collector?.hasAccessToken || (typesToken && draft.accessToken)) {
    return undefined
  }
  if (keepsAccessToken(collectorAddress(collector.settings), draftAddress(draft))) {
    return undefined
  }
  return typesToken
    ? 'The saved access token will be removed because the address points to another server; enter it again to keep using it.'
    : 'The saved access token will be removed because the collector no longer connects to the server it was saved for.'
}

function draftAddress(draft: CollectorDraft): string | undefined {
  switch (draft.collectorType) {
    case 'GenericAPI':
      return draft.url.trim()
    case 'MQTT':
      return draft.brokerUrl.trim()
    default:
      return undefined
  }
}

function settingsOf(draft: CollectorDraft, errors: Partial<Record<(typeof collectorFields)[number], string>>) {
  switch (draft.collectorType) {
    case 'GenericAPI': {
      const sensors = lines(draft.sensorPaths).map(parseSensorPath)
      if (sensors.some((sensor) => sensor.path === '')) {
        errors['settings.sensors'] = 'Each line needs a path before any |'
      }
      return sensors.length > 0 ? { url: draft.url.trim(), sensors } : { url: draft.url.trim() }
    }
    case 'MQTT':
      return { brokerUrl: draft.brokerUrl.trim(), topics: lines(draft.topics) }
    case 'Virtual': {
      const settings: Record<string, number> = {}
      const count = parseNumber(draft.sensorCount)
      if (count === null || count === undefined || !Number.isInteger(count)) {
        errors['settings.sensorCount'] = 'Enter a whole number'
      } else {
        settings.sensorCount = count
      }
      for (const key of ['min', 'max'] as const) {
        const value = parseNumber(draft[key])
        if (value === null) {
          errors[`settings.${key}`] = 'Enter a number'
        } else if (value !== undefined) {
          settings[key] = value
        }
      }
      return settings
    }
    case 'Host':
      return {}
    default: {
      const unknownType: never = draft.collectorType
      throw new Error(`Unknown collector type ${String(unknownType)}`)
    }
  }
}

/** Undefined when empty, null when not a number. */
function parseNumber(value: string): number | undefined | null {
  const trimmed = value.trim()
  if (trimmed === '') {
    return undefined
  }
  const number = Number(trimmed)
  return Number.isFinite(number) ? number : null
}

function lines(value: string): string[] {
  return value
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
}

export function parseSensorPath(line: string): JsonPathSensor {
  const [path = '', name = '', unit = ''] = line.split('|').map((part) => part.trim())
  return { path, ...(name ? { name } : {}), ...(unit ? { unit } : {}) }
}

function formatSensorPath(sensor: JsonPathSensor): string {
  if (sensor.unit) {
    return `${sensor.path}|${sensor.name ?? ''}|${sensor.unit}`
  }
  return sensor.name ? `${sensor.path}|${sensor.name}` : sensor.path
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : ''
}
