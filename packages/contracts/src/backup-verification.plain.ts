import { endpoint } from './endpoint.js'

/**
 * How often the relay proves its newest backup restorable: downloads it and checks it whole (checksums,
 * manifest, every entry, the database's integrity) without touching the relay. `off` never does.
 */
export const verificationFrequencies = ['off', 'daily', 'weekly', 'monthly'] as const
export type VerificationFrequency = (typeof verificationFrequencies)[number]

export const defaultVerificationFrequency: VerificationFrequency = 'weekly'

export const verificationOutcomes = ['ok', 'failed'] as const
export type VerificationOutcome = (typeof verificationOutcomes)[number]

const prefix = '/api/cloud-backups'

export const backupVerificationUrls = {
  verify: endpoint('POST', `${prefix}/:backupId/verify`),
  overview: endpoint('GET', `${prefix}/verification`),
  saveSettings: endpoint('PUT', `${prefix}/verification`),
}
