import type { CloudAuthSchemas } from './auth.js'
import { cloudAuthUrls } from './auth.plain.js'
import type { BackupEncryptionSchemas } from './backup-encryption.js'
import { backupEncryptionUrls } from './backup-encryption.plain.js'
import type { BackupRetentionSchemas } from './backup-retention.js'
import { backupRetentionUrls } from './backup-retention.plain.js'
import type { BackupVerificationSchemas } from './backup-verification.js'
import { backupVerificationUrls } from './backup-verification.plain.js'
import type { CloudBackupSchemas } from './backups.js'
import { cloudBackupUrls } from './backups.plain.js'
import type { DashboardSchemas } from './dashboard.js'
import { dashboardUrls } from './dashboard.plain.js'
import { typedBy } from './endpoint.js'
import type { ErrorBody } from './errors.js'
import type { HealthSchemas } from './health.js'
import { healthUrls } from './health.plain.js'
import type { HealthAlertSchemas } from './health-alerts.js'
import { healthAlertUrls } from './health-alerts.plain.js'
import type { HealthHistorySchemas } from './health-history.js'
import { healthHistoryUrls } from './health-history.plain.js'
import type { FeatureFlagSchemas, NotificationSchemas } from './notifications.js'
import { featureFlagUrls, notificationUrls } from './notifications.plain.js'
import type { RelayBackupSchemas } from './relay-backups.js'
import { relayBackupUrls } from './relay-backups.plain.js'
import type { SourceSchemas } from './sources.js'
import { sourceUrls } from './sources.plain.js'
import type { UnifiedAuthSchemas } from './unified-auth.js'
import { unifiedAuthUrls } from './unified-auth.plain.js'

/**
 * What clients of the servers call: every endpoint typed by its route's schemas, which are imported as
 * types only, so this module loads no TypeBox. The servers' routes pair the same endpoints with the same
 * schemas by name (`routesOf`), so a client's types follow any change to a route.
 */

export const cloudAuthEndpoints = typedBy<CloudAuthSchemas>()(cloudAuthUrls)
export const cloudBackupEndpoints = typedBy<CloudBackupSchemas>()(cloudBackupUrls)
export const backupEncryptionEndpoints = typedBy<BackupEncryptionSchemas>()(backupEncryptionUrls)
export const backupRetentionEndpoints = typedBy<BackupRetentionSchemas>()(backupRetentionUrls)
export const backupVerificationEndpoints = typedBy<BackupVerificationSchemas>()(backupVerificationUrls)
export const dashboardEndpoints = typedBy<DashboardSchemas>()(dashboardUrls)
export const healthEndpoints = typedBy<HealthSchemas>()(healthUrls)
export const healthAlertEndpoints = typedBy<HealthAlertSchemas>()(healthAlertUrls)
export const healthHistoryEndpoints = typedBy<HealthHistorySchemas>()(healthHistoryUrls)
export const notificationEndpoints = typedBy<NotificationSchemas>()(notificationUrls)
export const featureFlagEndpoints = typedBy<FeatureFlagSchemas>()(featureFlagUrls)
export const relayBackupEndpoints = typedBy<RelayBackupSchemas>()(relayBackupUrls)
export const sourceEndpoints = typedBy<SourceSchemas>()(sourceUrls)
export const unifiedAuthEndpoints = typedBy<UnifiedAuthSchemas>()(unifiedAuthUrls)

/** Whether a reply is the error body every endpoint answers a refusal with. */
export function isErrorBody(value: unknown): value is ErrorBody {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { success?: unknown }).success === false &&
    typeof (value as { error?: unknown }).error === 'string' &&
    typeof (value as { code?: unknown }).code === 'string'
  )
}
