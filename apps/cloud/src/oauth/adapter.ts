import type { Kysely } from 'kysely'
import type { Adapter, AdapterPayload } from 'oidc-provider'
import type { CloudDB } from '../db/schema.js'

/**
 * oidc-provider's storage on the cloud database: every model (sessions, interactions, grants,
 * codes, refresh tokens, device clients…) is a row of `oauth_payloads`, so any instance can
 * continue what another began. Expired rows read as missing; the cleanup removes them.
 */
export function kyselyAdapter(db: Kysely<CloudDB>) {
  return class KyselyAdapter implements Adapter {
    private readonly model: string

    constructor(model: string) {
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
      await db
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
      await db
        .updateTable('oauth_payloads')
        .set({ consumed_at: new Date() })
        .where('model', '=', this.model)
        .where('id', '=', id)
        .execute()
    }

    async destroy(id: string): Promise<void> {
      await db.deleteFrom('oauth_payloads').where('model', '=', this.model).where('id', '=', id).execute()
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await db.deleteFrom('oauth_payloads').where('grant_id', '=', grantId).execute()
    }

    private async findWhere(column: 'id' | 'uid' | 'user_code', value: string): Promise<AdapterPayload | undefined> {
      const row = await db
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
}

/** Removes expired OAuth artifacts; returns how many. */
export async function removeExpiredPayloads(db: Kysely<CloudDB>, now: Date): Promise<number> {
  const result = await db.deleteFrom('oauth_payloads').where('expires_at', '<=', now).executeTakeFirst()
  return Number(result.numDeletedRows)
}
