import type {
  BackupTrigger,
  CollectorType,
  HealthArea,
  HealthState,
  JunctionStatus,
  NotificationCategory,
  NotificationType,
  OperationKind,
  OperationStage,
  StreamType,
  VerificationOutcome,
} from '@relay/contracts'
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
  /** Set on notifications about a lasting condition: repeats update the open row with this key. */
  dedupe_key: ColumnType<string | null, string | null | undefined, string | null>
  occurrences: Generated<number>
  /** The latest repeat; null until the first one (then created_at is the last time seen). */
  last_seen_at: ColumnType<string | null, string | null | undefined, string | null>
  resolved_at: ColumnType<string | null, string | null | undefined, string | null>
}

export interface CollectorsTable {
  id: string
  name: string
  collector_type: CollectorType
  poll_rate_ms: number
  settings: string
  active: Generated<0 | 1>
  access_token: string | null
  access_token_salt: string | null
  last_fetch_time: string | null
  last_fetch_successful: Generated<0 | 1>
  last_fetch_error_message: string | null
  last_fetch_total_sensors: Generated<number>
  last_fetch_new_sensors: Generated<number>
  last_fetch_lost_sensors: Generated<number>
  created_at: string
  updated_at: string
}

export interface SensorsTable {
  id: string
  collector_id: string
  external_id: string
  name: string
  unit: string | null
  /** JSON text of the value. */
  value: string | null
  last_updated: string | null
  missing: 0 | 1
}

export interface StreamsTable {
  id: string
  name: string
  type: StreamType
  settings: string
  device_name: string | null
  screen_id: string | null
  last_sent_time: string | null
  last_error: string | null
  created_at: string
  updated_at: string
}

export interface JunctionsTable {
  id: string
  name: string
  status: Generated<JunctionStatus>
  auto_start: 0 | 1
  last_error: string | null
  created_at: string
  updated_at: string
}

export interface JunctionCollectorsTable {
  junction_id: string
  collector_id: string
  position: number
}

export interface JunctionTargetsTable {
  junction_id: string
  stream_id: string
  send_rate_ms: number
  position: number
}

export interface LocalUsersTable {
  id: string
  username: string
  password_hash: string
  created_at: string
}

export interface FrontendSessionsTable {
  token_hash: string
  user_kind: 'local' | 'cloud'
  user_id: string
  user_name: string
  user_email: string | null
  created_at: string
  expires_at: string
}

export interface CloudSessionsTable {
  id: Generated<number>
  user_id: string
  backend_id: string
  encrypted_refresh_token: string
  created_at: string
  updated_at: string
}

/** A backup in progress, kept so that one the relay was stopped in is known at the next start. */
export interface UnfinishedOperationsTable {
  id: string
  kind: OperationKind
  trigger: BackupTrigger | null
  stage: OperationStage
  /** The cloud's record, once request-upload made one. */
  backup_id: string | null
  filename: string | null
  started_at: string
  updated_at: string
  /** Set when a start found the row: the failure is reported, the cloud record may still await release. */
  interrupted_at: string | null
}

/** What has a health history: an item (`sensor` empty) or one sensor of a collector item. */
export interface HistorySeriesTable {
  id: Generated<number>
  item: string
  sensor: string
}

/** The polls or sends of one item in one minute (`minute`: whole minutes since 1970). */
export interface HealthMinutesTable {
  series_id: number
  minute: number
  ok_count: number
  fail_count: number
  latency_sum_ms: number
  latency_max_ms: number
  last_error: string | null
}

/** The numeric values one sensor reported in one minute. */
export interface SensorMinutesTable {
  series_id: number
  minute: number
  min_value: number
  max_value: number
  sum_value: number
  value_count: number
  last_value: number
}

export interface HealthTransitionsTable {
  id: Generated<number>
  item: string
  from_state: HealthState
  to_state: HealthState
  at: string
  reason: string | null
}

export interface HealthAcknowledgementsTable {
  item: string
  note: string | null
  at: string
}

export interface HealthSilencesTable {
  id: string
  item: string | null
  area: HealthArea | null
  reason: string | null
  created_at: string
  until: string
}

/** The last verification of one cloud backup. */
export interface BackupVerificationsTable {
  backup_id: string
  /** The last time it was proven whole; null while it never was. */
  verified_at: string | null
  outcome: VerificationOutcome
  error: string | null
  checked_at: string
}

export interface RelayDB {
  app_settings: AppSettingsTable
  notifications: NotificationsTable
  collectors: CollectorsTable
  sensors: SensorsTable
  streams: StreamsTable
  junctions: JunctionsTable
  junction_collectors: JunctionCollectorsTable
  junction_targets: JunctionTargetsTable
  local_users: LocalUsersTable
  frontend_sessions: FrontendSessionsTable
  cloud_sessions: CloudSessionsTable
  unfinished_operations: UnfinishedOperationsTable
  history_series: HistorySeriesTable
  health_minutes: HealthMinutesTable
  sensor_minutes: SensorMinutesTable
  health_transitions: HealthTransitionsTable
  health_acknowledgements: HealthAcknowledgementsTable
  health_silences: HealthSilencesTable
  backup_verifications: BackupVerificationsTable
}
