import {
  type AcknowledgedMark,
  type HealthArea,
  healthAlertLimits,
  type Silence,
  type SilencedMark,
} from '@relay/contracts'
import { ApiError } from '../api'

/** What an acknowledgement or a silence is about: one item (`collector:<id>`), or a whole area. */
export type AlertTarget = { item: string } | { area: HealthArea }

const itemAreas = { collector: 'Collectors', stream: 'Streams', junction: 'Junctions' } as const

/** The area an item belongs to (`collector:…` is one of the Collectors); undefined for an unknown kind. */
export function areaOfItem(item: string): HealthArea | undefined {
  const kind = item.slice(0, item.indexOf(':'))
  return Object.hasOwn(itemAreas, kind) ? itemAreas[kind as keyof typeof itemAreas] : undefined
}

/** The silence that quiets an item: its own first, else its area's; undefined when none is in force. */
export function silenceCovering(silences: readonly Silence[], item: string): Silence | undefined {
  const area = areaOfItem(item)
  return (
    silences.find((silence) => 'item' in silence.target && silence.target.item === item) ??
    silences.find((silence) => 'area' in silence.target && silence.target.area === area)
  )
}

/** The silence of a whole area, when one is in force. */
export function areaSilence(silences: readonly Silence[], area: HealthArea): Silence | undefined {
  return silences.find((silence) => 'area' in silence.target && silence.target.area === area)
}

/** A preset's length in words: 5 → "5 minutes", 60 → "1 hour", 1440 → "1 day". */
export function durationLabel(minutes: number): string {
  const units = [
    { size: 24 * 60, word: 'day' },
    { size: 60, word: 'hour' },
    { size: 1, word: 'minute' },
  ]
  const unit = units.find(({ size }) => minutes % size === 0) ?? { size: 1, word: 'minute' }
  const count = minutes / unit.size
  return `${count} ${unit.word}${count === 1 ? '' : 's'}`
}

/** Why a note or reason cannot be sent, as a sentence; undefined when it can. */
export function textProblem(text: string, what: 'note' | 'reason'): string | undefined {
  const max = what === 'note' ? healthAlertLimits.noteMaxLength : healthAlertLimits.reasonMaxLength
  const length = text.trim().length
  if (length <= max) {
    return undefined
  }
  return `The ${what} is ${length} characters long; keep it to ${max} or fewer.`
}

/** The optional text as the relay takes it: left out when blank. */
export function optionalText(text: string): string | undefined {
  const trimmed = text.trim()
  return trimmed === '' ? undefined : trimmed
}

/** A refusal from the relay as a sentence the user can act on. */
export function alertFailure(error: Error, action: 'acknowledge' | 'silence' | 'undo' | 'end'): string {
  if (error instanceof ApiError) {
    if (error.status === 409 && action === 'acknowledge') {
      return 'This warning has cleared since the page was loaded, so there is nothing left to acknowledge.'
    }
    if (error.status === 404) {
      return action === 'end' || action === 'undo'
        ? 'It had already ended; the page now shows the current state.'
        : 'This item no longer exists. It may have been deleted.'
    }
    if (error.status === 0) {
      return 'The relay could not be reached. Check the connection and try again.'
    }
  }
  const message = error.message.trim()
  return /[.!?]$/.test(message) ? message : `${message}.`
}

const clock = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' })
const dayAndClock = new Intl.DateTimeFormat(undefined, {
  weekday: 'short',
  day: 'numeric',
  month: 'short',
  hour: '2-digit',
  minute: '2-digit',
})

/** A mark's time: the clock alone today, with the day otherwise. */
export function markTime(value: string, now: Date = new Date()): string {
  const date = new Date(value)
  return date.toDateString() === now.toDateString() ? clock.format(date) : dayAndClock.format(date)
}

/** "Acknowledged 14:05 — restarting the broker"; the note left out when there is none. */
export function acknowledgedText(mark: AcknowledgedMark, time: (value: string) => string = markTime): string {
  return withText(`Acknowledged ${time(mark.at)}`, mark.note)
}

/** "Silenced until 15:05 — maintenance window"; the reason left out when there is none. */
export function silencedText(mark: SilencedMark, time: (value: string) => string = markTime): string {
  return withText(`Silenced until ${time(mark.until)}`, mark.reason)
}

function withText(lead: string, text: string | null): string {
  return text ? `${lead} — ${text}` : lead
}
