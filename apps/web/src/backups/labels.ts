import type { BackupFrequency, BackupOperation, BackupStatus, OperationKind, OperationStage } from '@relay/contracts'

export const frequencyLabels = {
  daily: 'Daily',
  weekly: 'Weekly',
  monthly: 'Monthly',
} as const satisfies Record<BackupFrequency, string>

export const frequencyHints = {
  daily: 'every 24 hours',
  weekly: 'every 7 days',
  monthly: 'every 30 days',
} as const satisfies Record<BackupFrequency, string>

export type Component = 'includeKeys' | 'includeIdentity' | 'includeFrameEngine'
export const components = ['includeKeys', 'includeIdentity', 'includeFrameEngine'] as const satisfies Component[]

export const componentLabels = {
  includeKeys: 'Encryption keys',
  includeIdentity: 'Relay identity',
  includeFrameEngine: 'Frame engine data',
} as const satisfies Record<Component, string>

export const stageLabels = {
  queued: 'Waiting to start',
  snapshot: 'Copying the database',
  packing: 'Packing the archive',
  uploading: 'Uploading to Relay Cloud',
  confirming: 'Confirming with Relay Cloud',
  downloading: 'Downloading from Relay Cloud',
  verifying: 'Checking the archive',
  restoring: 'Replacing the database',
  done: 'Done',
  failed: 'Failed',
} as const satisfies Record<OperationStage, string>

/** The steps each kind goes through, in order; `done` and `failed` end both. */
export const kindStages = {
  backup: ['queued', 'snapshot', 'packing', 'uploading', 'confirming'],
  restore: ['queued', 'downloading', 'verifying', 'restoring'],
  verify: ['queued', 'downloading', 'verifying'],
} as const satisfies Record<OperationKind, readonly OperationStage[]>

export function isFinished(operation: Pick<BackupOperation, 'stage'>): boolean {
  return operation.stage === 'done' || operation.stage === 'failed'
}

export type Tone = 'ok' | 'warn' | 'danger' | 'muted'

export const backupStatusBadges = {
  completed: { label: 'Completed', tone: 'ok' },
  pending: { label: 'Pending', tone: 'warn' },
  failed: { label: 'Failed', tone: 'danger' },
} as const satisfies Record<BackupStatus, { label: string; tone: Tone }>
