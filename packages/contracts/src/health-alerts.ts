import { type Static, type TSchema, Type } from 'typebox'
import { routesOf } from './endpoint.js'
import { ErrorBody } from './errors.js'
import { healthAlertLimits, healthAlertUrls, silenceAreas, silenceItemPattern } from './health-alerts.plain.js'
import { healthItemPattern } from './health-history.plain.js'

const Timestamp = Type.String({ format: 'date-time' })
/** What has warnings to acknowledge: `collector:<id>` or `stream:<id>`, as the health board names them. */
const AcknowledgedItem = Type.String({ pattern: healthItemPattern, maxLength: 60 })
const SilencedItem = Type.String({ pattern: silenceItemPattern, maxLength: 60 })
const Note = Type.String({ maxLength: healthAlertLimits.noteMaxLength })
const Reason = Type.String({ maxLength: healthAlertLimits.reasonMaxLength })
const Text = Type.Union([Type.String(), Type.Null()])

/** Set on a warning, or an item, that somebody has seen: when, and what they noted. */
export const AcknowledgedMark = Type.Object({ at: Timestamp, note: Text })
export type AcknowledgedMark = Static<typeof AcknowledgedMark>

/** Set on a warning, or an item, whose notifications are silenced: until when, and why. */
export const SilencedMark = Type.Object({ until: Timestamp, reason: Text })
export type SilencedMark = Static<typeof SilencedMark>

export const AcknowledgeBody = Type.Object(
  {
    item: AcknowledgedItem,
    note: Type.Optional(Note),
  },
  { additionalProperties: false },
)
export type AcknowledgeBody = Static<typeof AcknowledgeBody>

export const Acknowledgement = Type.Object({ item: Type.String(), at: Timestamp, note: Text })
export type Acknowledgement = Static<typeof Acknowledgement>

export const AcknowledgementParams = Type.Object({ item: AcknowledgedItem })

export const SilenceTarget = Type.Union([
  Type.Object({ item: SilencedItem }, { additionalProperties: false }),
  Type.Object({ area: Type.Enum(silenceAreas) }, { additionalProperties: false }),
])
export type SilenceTarget = Static<typeof SilenceTarget>

export const SilenceBody = Type.Object(
  {
    target: SilenceTarget,
    minutes: Type.Integer({
      minimum: healthAlertLimits.silenceMinutes.min,
      maximum: healthAlertLimits.silenceMinutes.max,
    }),
    reason: Type.Optional(Reason),
  },
  { additionalProperties: false },
)
export type SilenceBody = Static<typeof SilenceBody>

export const Silence = Type.Object({
  id: Type.String(),
  target: SilenceTarget,
  createdAt: Timestamp,
  until: Timestamp,
  reason: Text,
})
export type Silence = Static<typeof Silence>

export const SilenceParams = Type.Object({ id: Type.String({ format: 'uuid' }) })

const ok = Type.Object({ success: Type.Literal(true) })
const errors = { 400: ErrorBody, 404: ErrorBody, 409: ErrorBody } satisfies Record<number, TSchema>

const healthAlertSchemas = {
  listAcknowledgements: { response: { 200: Type.Array(Acknowledgement) } },
  acknowledge: { body: AcknowledgeBody, response: { 200: Acknowledgement, ...errors } },
  unacknowledge: { params: AcknowledgementParams, response: { 200: ok, ...errors } },
  /** The silences in force, ending soonest first. */
  listSilences: { response: { 200: Type.Array(Silence) } },
  silence: { body: SilenceBody, response: { 201: Silence, ...errors } },
  unsilence: { params: SilenceParams, response: { 200: ok, ...errors } },
} as const
export type HealthAlertSchemas = typeof healthAlertSchemas

export const healthAlertRoutes = routesOf(healthAlertUrls, healthAlertSchemas)
