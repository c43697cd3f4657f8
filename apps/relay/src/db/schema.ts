import type { NotificationCategory, NotificationType } from '@relay/contracts'
import type { ColumnType, Generated } from 'kysely'

/** Small settings of the relay (auth mode, feature flags, …) as JSON text under a key. */
export interface AppSettingsTable {
  key: string
  value: string
  updated_at: ColumnType<string, string | undefined, string>
}

/** Timestamps are ISO 8601 UTC text with milliseconds, so they sort and compare as strings. */
export interface NotificationsTable {
  seq: Generated<number>
  id: string
  type: NotificationType
  category: NotificationCategory
  title: string | null
  message: string
  duration: number | null
  persistent: 0 | 1
  created_at: string
  is_delivered: 0 | 1
  delivered_at: string | null
  expires_at: string | null
}

export interface RelayDB {
  app_settings: AppSettingsTable
  notifications: NotificationsTable
}
