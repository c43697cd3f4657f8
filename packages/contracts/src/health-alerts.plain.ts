import { healthAreas } from './dashboard.plain.js'
import { endpoint } from './endpoint.js'
import { DAY, MINUTE } from './time.js'

/**
 * Acknowledging a warning and silencing what raises it. An acknowledgement keeps the item's warnings
 * listed, marked as seen, until the item recovers or starts failing anew; a silence keeps an item, or
 * every item of an area, from raising notifications until it ends.
 */
export const healthAlertLimits = {
  noteMaxLength: 500,
  reasonMaxLength: 500,
  /** A silence lasts from five minutes to seven days. */
  silenceMinutes: { min: 5, max: (7 * DAY) / MINUTE },
} as const

/** The silence lengths a user picks from, in minutes. */
export const silencePresets = [5, 15, 60, 240, 24 * 60, 7 * 24 * 60] as const

const uuid = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}'

/** What can be silenced: `collector:<id>`, `stream:<id>` or `junction:<id>`. */
export const silenceItemPattern = `^(collector|stream|junction):${uuid}$`

/** The areas a silence may cover, as the dashboard names them. */
export const silenceAreas = healthAreas

export const healthAlertUrls = {
  listAcknowledgements: endpoint('GET', '/api/health/acknowledgements'),
  acknowledge: endpoint('POST', '/api/health/acknowledgements'),
  unacknowledge: endpoint('DELETE', '/api/health/acknowledgements/:item'),
  listSilences: endpoint('GET', '/api/health/silences'),
  silence: endpoint('POST', '/api/health/silences'),
  unsilence: endpoint('DELETE', '/api/health/silences/:id'),
}
