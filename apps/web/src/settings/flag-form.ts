import {
  type FeatureFlagName,
  type FeatureFlags,
  type FeatureFlagsUpdate,
  featureFlagDefaults,
  featureFlagRanges,
} from '@relay/contracts'

type FlagsOfType<V> = { [K in FeatureFlagName]: FeatureFlags[K] extends V ? K : never }[FeatureFlagName]
export type BooleanFlag = FlagsOfType<boolean>
export type NumberFlag = FlagsOfType<number>

/** Durations are stored in milliseconds and edited in seconds; counts are edited as they are. */
export type Unit = 'seconds' | 'count'

export const numberUnits = {
  notifications_polling_interval: 'seconds',
  notifications_max_concurrent: 'count',
  notifications_duration_success: 'seconds',
  notifications_duration_error: 'seconds',
} satisfies Record<NumberFlag, Unit>

/** What the form holds while editing: booleans as they are, numbers as the text typed, in the field's unit. */
export type Draft = { [K in FeatureFlagName]: FeatureFlags[K] extends boolean ? boolean : string }

const flagNames = Object.keys(featureFlagDefaults) as FeatureFlagName[]

function isNumberFlag(flag: FeatureFlagName): flag is NumberFlag {
  return flag in numberUnits
}

export function toDraft(flags: FeatureFlags): Draft {
  const draft: Record<string, boolean | string> = {}
  for (const flag of flagNames) {
    draft[flag] = isNumberFlag(flag) ? formatNumber(flag, flags[flag]) : (flags[flag] as boolean)
  }
  return draft as Draft
}

export function formatNumber(flag: NumberFlag, value: number): string {
  return numberUnits[flag] === 'seconds' ? String(value / 1000) : String(value)
}

/** The typed text as the relay stores it, or undefined when it is not a number at all. */
export function parseNumber(flag: NumberFlag, text: string): number | undefined {
  const trimmed = text.trim()
  if (trimmed === '' || !Number.isFinite(Number(trimmed))) {
    return undefined
  }
  const value = Number(trimmed)
  return numberUnits[flag] === 'seconds' ? Math.round(value * 1000) : value
}

/** The inclusive range the contract allows, in the field's unit. */
export function rangeOf(flag: NumberFlag): { min: number; max: number } {
  const { min, max } = featureFlagRanges[flag]
  const scale = numberUnits[flag] === 'seconds' ? 1000 : 1
  return { min: min / scale, max: max / scale }
}

export type DraftCheck = {
  /** Only the flags that differ from what the relay holds. */
  update: FeatureFlagsUpdate
  /** Fields whose text is not a number; these never reach the relay. */
  errors: Partial<Record<FeatureFlagName, string>>
}

export function diffDraft(draft: Draft, saved: FeatureFlags): DraftCheck {
  const update: Record<string, boolean | number> = {}
  const errors: DraftCheck['errors'] = {}
  for (const flag of flagNames) {
    if (isNumberFlag(flag)) {
      const value = parseNumber(flag, draft[flag])
      if (value === undefined) {
        errors[flag] = 'Enter a number'
      } else if (value !== saved[flag]) {
        update[flag] = value
      }
    } else if (draft[flag] !== saved[flag]) {
      update[flag] = draft[flag]
    }
  }
  return { update: update as FeatureFlagsUpdate, errors }
}

/**
 * Puts the relay's validation details on their fields. A detail's path names the flag
 * (`body/notifications_max_concurrent`); one that names none belongs to the whole form.
 */
export function fieldErrors(details: readonly { path: string; message: string }[]): {
  fields: Partial<Record<FeatureFlagName, string>>
  form: string[]
} {
  const fields: Partial<Record<FeatureFlagName, string>> = {}
  const form: string[] = []
  for (const detail of details) {
    const flag = flagNames.find((name) => detail.path.split('/').includes(name))
    if (flag) {
      fields[flag] = isNumberFlag(flag) ? inFieldUnit(flag, detail.message) : detail.message
    } else {
      form.push(detail.message)
    }
  }
  return { fields, form }
}

/** The relay speaks milliseconds ("must be >= 1000"); a field edited in seconds shows "must be >= 1 s". */
function inFieldUnit(flag: NumberFlag, message: string): string {
  if (numberUnits[flag] !== 'seconds') {
    return message
  }
  return message.replace(
    /([<>]=?)\s*(\d+)/g,
    (_match, operator: string, ms: string) => `${operator} ${Number(ms) / 1000} s`,
  )
}
