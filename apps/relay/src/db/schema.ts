import type { ColumnType } from 'kysely'

/** Small settings of the relay (auth mode, feature flags, …) as JSON text under a key. */
export interface AppSettingsTable {
  key: string
  value: string
  updated_at: ColumnType<string, string | undefined, string>
}

export interface RelayDB {
  app_settings: AppSettingsTable
}
