import { AppError } from '@relay/contracts'
import { BackupArchiveError } from '../archive/index.js'

/** Why a verification failed, as a sentence for the backup's row, and what to do about it. */
export type VerificationFailure = { reason: string; advice: string }

const makeNewBackup = 'Make a new backup now.'
const checkConnection = "Check the relay's internet connection, then choose Verify now on the Cloud backups page."
const tryAgain = 'Choose Verify now on the Cloud backups page to try again; if it fails again, make a new backup.'

/** Errors of a connection that never reached the other end, or broke off. */
const networkCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH'])

export function describeFailure(err: unknown): VerificationFailure {
  const message = err instanceof Error ? err.message : String(err)
  // A damaged archive, manifest or database, or a file that differs from the one the cloud recorded:
  // this backup cannot be restored, whatever is tried again.
  if (err instanceof AppError && err.code === 'CONFLICT' && /newer relay/.test(message)) {
    return { reason: message, advice: 'Then verify it again.' }
  }
  if (err instanceof BackupArchiveError || (err instanceof AppError && err.code === 'CONFLICT')) {
    return { reason: message, advice: makeNewBackup }
  }
  if (err instanceof AppError && err.code === 'UNAVAILABLE') {
    if (/^The object store refused the download \(404\b/.test(message)) {
      return { reason: "The backup's file is missing from the cloud's storage", advice: makeNewBackup }
    }
    return { reason: message, advice: checkConnection }
  }
  const code = (err as { code?: unknown } | undefined)?.code
  if (typeof code === 'string' && networkCodes.has(code)) {
    return { reason: `The cloud's storage could not be reached (${code})`, advice: checkConnection }
  }
  return { reason: message, advice: tryAgain }
}

/** "the backup of 2026-11-20 13:05 UTC", from when it was made or its file name; its id otherwise. */
export function backupName({
  createdAt,
  filename,
  backupId,
}: {
  createdAt?: string
  filename?: string | null
  backupId: string
}): string {
  const stamp = /^relay-backup-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})/.exec(filename ?? '')
  const made = createdAt
    ? `${createdAt.slice(0, 10)} ${createdAt.slice(11, 16)}`
    : stamp
      ? `${stamp[1]}-${stamp[2]}-${stamp[3]} ${stamp[4]}:${stamp[5]}`
      : undefined
  return made ? `the backup of ${made} UTC` : `backup ${filename ?? backupId}`
}

/** The notification's message: which backup, what failed, what to do. */
export function failureMessage(name: string, { reason, advice }: VerificationFailure): string {
  const sentence = /^[A-Z][a-z]/.test(reason) ? reason.charAt(0).toLowerCase() + reason.slice(1) : reason
  return `${name.charAt(0).toUpperCase()}${name.slice(1)} could not be verified: ${sentence}. ${advice}`
}
