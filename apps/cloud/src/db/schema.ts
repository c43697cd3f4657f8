import type { ColumnType, Generated } from 'kysely'

type CreatedAt = ColumnType<Date, Date | string | undefined, never>
type UpdatedAt = ColumnType<Date, Date | string | undefined, Date | string>
type Json<T> = ColumnType<T, T | string, T | string>

/** The cloud's account directory. `metadata` holds identity-provider metadata such as `giftedLicense`. */
export interface UsersTable {
  id: Generated<string>
  email: string
  name: string
  password_hash: string | null
  /** When the owner confirmed the address; null until then (such an account cannot sign in). */
  email_verified_at: ColumnType<Date | null, Date | null | undefined, Date | null>
  metadata: ColumnType<
    Record<string, unknown>,
    Record<string, unknown> | string | undefined,
    Record<string, unknown> | string
  >
  created_at: CreatedAt
  updated_at: UpdatedAt
}

/** oidc-provider's models, one row per stored artifact. */
export interface OAuthPayloadsTable {
  model: string
  id: string
  payload: Json<Record<string, unknown>>
  grant_id: string | null
  uid: string | null
  user_code: string | null
  account_id: string | null
  expires_at: Date | null
  consumed_at: Date | null
}

export interface OAuthKeysTable {
  kid: string
  kind: 'signing' | 'cookie'
  material: Json<Record<string, unknown>>
  created_at: CreatedAt
  retire_at: Date | null
}

export interface SubscriptionsTable {
  id: Generated<string>
  user_id: string
  provider: string
  customer_id: string
  subscription_id: string
  status: string
  current_period_end: Date | null
  /** When the provider's state in this row was current: the creation time of the event that carried it. */
  provider_state_at: ColumnType<Date | null, Date | null | undefined, Date | null>
  created_at: CreatedAt
  updated_at: UpdatedAt
}

/** The Stripe customer paying for an account, linked when its Checkout completes. */
export interface StripeCustomersTable {
  customer_id: string
  user_id: string
  linked_at: Date
}

export interface PaymentEventsTable {
  provider: string
  event_id: string
  type: string
  received_at: CreatedAt
}

export interface BackupSettingsTable {
  user_id: string
  enabled: boolean
  frequency: 'daily' | 'weekly' | 'monthly'
  retention_days: number
  include_keys: boolean
  include_identity: boolean
  include_frame_engine: boolean
  last_backup: Date | null
  updated_at: Date
}

export interface BackendOwnersTable {
  backend_id: string
  user_id: string
  claimed_at: Date
}

/** bigint columns arrive as text from `pg`; the repo turns them into numbers. */
type Bytes = ColumnType<string | number, number, number>

export interface BackupsTable {
  id: string
  user_id: string
  backend_id: string
  filename: string
  s3_key: string
  uncompressed_size: Bytes
  compressed_size: Bytes
  sha256: string | null
  status: 'pending' | 'completed' | 'failed'
  created_at: Date
  expires_at: Date | null
}

/** The last finished run of each periodic job (`backup_cleanup`, `backup_release`). */
export interface CleanupRunsTable {
  job: string
  last_run_at: Date
}

/** The one object store that holds this database's backups (a single row). */
export interface ObjectStoreTable {
  singleton: ColumnType<true, true | undefined, never>
  identity: string
  description: string
  recorded_at: Date
}

/** The account page's browser sessions; `id` is the SHA-256 of the cookie's token. */
export interface AccountSessionsTable {
  id: string
  user_id: string
  created_at: Date
  expires_at: Date
  last_seen_at: Date
}

/** Single-use links mailed to confirm an address, reset a password or change the address; `token_hash` is the SHA-256 of the link's token. */
export interface EmailTokensTable {
  token_hash: string
  purpose: 'verify-email' | 'reset-password' | 'change-email'
  user_id: string
  new_email: string | null
  created_at: Date
  expires_at: Date
  used_at: Date | null
}

export interface CloudDB {
  users: UsersTable
  oauth_payloads: OAuthPayloadsTable
  oauth_keys: OAuthKeysTable
  subscriptions: SubscriptionsTable
  payment_events: PaymentEventsTable
  stripe_customers: StripeCustomersTable
  backup_settings: BackupSettingsTable
  backend_owners: BackendOwnersTable
  backups: BackupsTable
  object_store: ObjectStoreTable
  cleanup_runs: CleanupRunsTable
  email_tokens: EmailTokensTable
  account_sessions: AccountSessionsTable
}
