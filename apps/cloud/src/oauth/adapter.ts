import { createHash } from 'node:crypto'
import type { Clock } from '@relay/server-kit'
import type { Kysely } from 'kysely'
import type { Adapter, AdapterPayload } from 'oidc-provider'
import type { CloudDB } from '../db/schema.js'

/**
 * How an artifact's id and lookup keys are stored: their SHA-256, in hex. The id of a refresh
 * token, an authorization code or a session (the session cookie's value) is the credential
 * itself, so a copy of the database (files, WAL, dumps) must not hold it.
 */
export function hashedId(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex')
}

/** Client ids are public, and the CLI lists and removes device clients by theirs. */
const plainIdModels = new Set(['Client'])

/**
 * Models whose payload is stored as given. A client's is its public metadata. oidc-provider
 * re-saves a device code it found by its user code, so that one needs its id back from the row;
 * the device flow is not enabled, and its codes would live 10 minutes.
 */
const payloadKeptModels = new Set(['Client', 'DeviceCode'])

/** Stands for the interaction's id in its resume address; `{` never appears unescaped in a URL. */
const idMarker = '{id}'

/**
 * oidc-provider's storage on the cloud database: every model (sessions, interactions, grants,
 * codes, refresh tokens, device clients…) is a row of `oauth_payloads`, so any instance can
 * continue what another began. Expired rows read as missing; the cleanup removes them.
 *
 * Ids and the columns they are looked up by (`grant_id`, `uid`, `user_code`) hold hashes, and
 * payload fields that repeat the id are left out and put back on `find`, whose caller knows it.
 */
export function kyselyAdapter(db: Kysely<CloudDB>): (model: string) => Adapter {
  return (model) => new KyselyAdapter(db, model)
}

class KyselyAdapter implements Adapter {
  private readonly db: Kysely<CloudDB>
  private readonly model: string
  private readonly key: (id: string) => string

  constructor(db: Kysely<CloudDB>, model: string) {
    this.db = db
    this.model = model
    this.key = plainIdModels.has(model) ? (id) => id : hashedId
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    // A grant is its own grant: revoking by grant id then removes it with its tokens.
    const grantId = this.model === 'Grant' ? id : payload.grantId
    const row = {
      model: this.model,
      id: this.key(id),
      payload: JSON.stringify(this.conceal(id, payload)),
      grant_id: grantId ? hashedId(grantId) : null,
      uid: payload.uid ? hashedId(payload.uid) : null,
      user_code: payload.userCode ? hashedId(payload.userCode) : null,
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
    // Ids arrive as clients sent them; one PostgreSQL text cannot hold is simply unknown.
    if (id.includes('\u0000')) {
      return undefined
    }
    const payload = await this.findWhere('id', this.key(id))
    return payload && this.reveal(id, payload)
  }

  /**
   * A session found by its uid comes back without its id, which the stored hash cannot give back;
   * oidc-provider only reads such a session (its account and grants), never saves it.
   */
  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.findWhere('uid', hashedId(uid))
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    return this.findWhere('user_code', hashedId(userCode))
  }

  async consume(id: string): Promise<void> {
    await this.db
      .updateTable('oauth_payloads')
      .set({ consumed_at: new Date() })
      .where('model', '=', this.model)
      .where('id', '=', this.key(id))
      .execute()
  }

  async destroy(id: string): Promise<void> {
    await this.db.deleteFrom('oauth_payloads').where('model', '=', this.model).where('id', '=', this.key(id)).execute()
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.db.deleteFrom('oauth_payloads').where('grant_id', '=', hashedId(grantId)).execute()
  }

  /** The payload as stored: without the fields that are, or hold, a bearer value. */
  private conceal(id: string, payload: AdapterPayload): AdapterPayload {
    if (payloadKeptModels.has(this.model)) {
      return payload
    }
    const { jti: _id, ...stored } = payload
    if (this.model === 'Interaction') {
      // `session.cookie` is the session cookie's value; oidc-provider never reads it back.
      if (stored.session) {
        const { cookie: _cookie, ...session } = stored.session
        stored.session = session
      }
      if (stored.returnTo) {
        stored.returnTo = stored.returnTo.replaceAll(id, idMarker)
      }
    }
    return stored
  }

  private reveal(id: string, stored: AdapterPayload): AdapterPayload {
    if (payloadKeptModels.has(this.model)) {
      return stored
    }
    const payload: AdapterPayload = { ...stored, jti: id }
    if (this.model === 'Interaction' && payload.returnTo) {
      payload.returnTo = payload.returnTo.replaceAll(idMarker, id)
    }
    return payload
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
