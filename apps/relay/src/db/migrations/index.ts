import type { Migration } from 'kysely'
import * as appSettings from './0001-app-settings.js'
import * as notifications from './0002-notifications.js'
import * as sources from './0003-sources.js'
import * as auth from './0004-auth.js'
import * as unfinishedOperations from './0005-unfinished-operations.js'
import * as notificationEpisodes from './0006-notification-episodes.js'
import * as healthHistory from './0007-health-history.js'
import * as healthAlerts from './0008-health-alerts.js'
import * as backupVerifications from './0009-backup-verifications.js'

/** Every migration, in order. Listed here (not read from disk) so src and dist run the same set. */
export const migrations: Record<string, Migration> = {
  '0001-app-settings': appSettings,
  '0002-notifications': notifications,
  '0003-sources': sources,
  '0004-auth': auth,
  '0005-unfinished-operations': unfinishedOperations,
  '0006-notification-episodes': notificationEpisodes,
  '0007-health-history': healthHistory,
  '0008-health-alerts': healthAlerts,
  '0009-backup-verifications': backupVerifications,
}
