import type { ColumnType, Generated } from 'kysely'

type CreatedAt = ColumnType<Date, Date | string | undefined, never>
type UpdatedAt = ColumnType<Date, Date | string | undefined, Date | string>

/** The cloud's account directory. `metadata` holds identity-provider metadata such as `giftedLicense`. */
export interface UsersTable {
  id: Generated<string>
  email: string
  name: string
  password_hash: string | null
  metadata: ColumnType<
    Record<string, unknown>,
    Record<string, unknown> | string | undefined,
    Record<string, unknown> | string
  >
  created_at: CreatedAt
  updated_at: UpdatedAt
}

export interface CloudDB {
  users: UsersTable
}
