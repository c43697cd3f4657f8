import { endpoint } from './endpoint.js'

/** What a backup, restore or verification is doing now; `done` and `failed` are final. */
export const operationStages = [
  'queued',
  'snapshot',
  'packing',
  'uploading',
  'confirming',
  'downloading',
  'verifying',
  'restoring',
  'done',
  'failed',
] as const
export type OperationStage = (typeof operationStages)[number]

export const operationKinds = ['backup', 'restore', 'verify'] as const
export type OperationKind = (typeof operationKinds)[number]

export const backupTriggers = ['manual', 'scheduled'] as const
export type BackupTrigger = (typeof backupTriggers)[number]

const prefix = '/api/cloud-backups'

/** The relay's cloud-backup endpoints: its own backups and restores, and proxies to the cloud with its token. */
export const relayBackupUrls = {
  status: endpoint('GET', `${prefix}/status`),
  settings: endpoint('POST', `${prefix}/settings`),
  list: endpoint('GET', `${prefix}/list`),
  create: endpoint('POST', `${prefix}/create`),
  operations: endpoint('GET', `${prefix}/operations`),
  operation: endpoint('GET', `${prefix}/operations/:id`),
  download: endpoint('GET', `${prefix}/:backupId/download`),
  restore: endpoint('POST', `${prefix}/:backupId/restore`),
  remove: endpoint('DELETE', `${prefix}/:backupId`),
}
