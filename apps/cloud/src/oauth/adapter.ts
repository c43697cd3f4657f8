import type { Clock } from '@relay/server-kit'
import type { Kysely } from 'kysely'
import type { Adapter, AdapterPayload } from 'oidc-provider'
import type { CloudDB } from '../db/schema.js'

/**
 * oidc-provider's storage on the cloud database: every model (sessions, interactions, grants,
 * codes, refresh tokens, device clients…) is a row of `oauth_payloads`, so any instance can
 * continue what another began. Expired rows read as missing; the cleanup removes them.
 */
export function kyselyAdapter(db: Kysely<CloudDB>): (model: string) => Adapter {
  return (model) => new KyselyAdapter(db, model)
}

class KyselyAdapter implements Adapter {
  private readonly db: Kysely<CloudDB>
  private readonly model: string

  constructor(db: Kysely<CloudDB>, model: string) {
    this.db = db
    this.model = model
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    const row = {
      model: this.model,
      id,
      payload: JSON.stringify(payload),
      // A grant is its own grant: revoking by grant id then removes it with its tokens.
      grant_id: this.model === 'Grant' ? id : (payload.grantId ?? null),
      uid: payload.uid ?? null,
      user_code: payload.userCode ?? null,
      account_id: payload.accountId ?? null,
      expires_at: expiresIn ? new Date(Date.now() + expiresIn * 1000) : null,
    }
    await this.db
      .insertInto('oauth_payloads')
      .values(row)
      .onConflict((oc) => oc.columns(['model', 'id']).doUpdateSet({ ...row, consumed_at: null }))
      .execute()
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    return this.findWhere('id', id)
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.findWhere('uid', uid)
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    return this.findWhere('user_code', userCode)
  }

  async consume(id: string): Promise<void> {
    await this.db
      .updateTable('oauth_payloads')
      .set({ consumed_at: new Date() })
      .where('model', '=', this.model)
      .where('id', '=', id)
      .execute()
  }

  async destroy(id: string): Promise<void> {
    await this.db.deleteFrom('oauth_payloads').where('model', '=', this.model).where('id', '=', id).execute()
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.db.deleteFrom('oauth_payloads').where('grant_id', '=', grantId).execute()
  }

  private async findWhere(column: 'id' | 'uid' | 'user_code', value: string): Promise<AdapterPayload | undefined> {
    const row = await this.db
      .selectFrom('oauth_payloads')
      .select(['payload', 'expires_at', 'consumed_at'])
      .where('model', '=', this.model)
      .where(column, '=', value)
      .executeTakeFirst()
    if (!row || (row.expires_at && row.expires_at.getTime() <= Date.now())) {
      return undefined
    }
    const payload = row.payload as AdapterPayload
    return row.consumed_at ? { ...payload, consumed: Math.floor(row.consumed_at.getTime() / 1000) } : payload
  }
}

/** Removes expired OAuth artifacts (sessions, interactions, codes, grants, refresh tokens). */
export async function pruneExpiredArtifacts(
  db: Kysely<CloudDB>,
  clock: Clock,
  log: { info(obj: object, msg: string): void },
) {
  const result = await db.deleteFrom('oauth_payloads').where('expires_at', '<=', clock.now()).executeTakeFirst()
  const removed = Number(result.numDeletedRows)
  if (removed > 0) {
    log.info({ removed }, 'expired OAuth artifacts removed')
  }
  return removed
}
