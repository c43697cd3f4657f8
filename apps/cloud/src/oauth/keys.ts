import { randomBytes } from 'node:crypto'
import type { Clock } from '@relay/server-kit'
import {
  createLocalJWKSet,
  exportJWK,
  type FlattenedJWSInput,
  generateKeyPair,
  type JWK,
  type JWSHeaderParameters,
} from 'jose'
import { type Kysely, sql } from 'kysely'
import type { CloudDB } from '../db/schema.js'

export const signingAlgorithm = 'ES256'

/**
 * How long a replaced signing key keeps verifying: longer than anything it signed lives
 * (access tokens 15 min, ID tokens 1 h), with room for clock skew.
 */
export const retiredKeyLifetime = 24 * 60 * 60 * 1000

/** How often an instance looks for keys another instance (or the CLI) rotated in. */
const reloadEvery = 60 * 1000

export type KeySet = {
  /** Private signing keys, the active one first (oidc-provider signs with the first that fits). */
  signing: JWK[]
  /** Public halves of every key that still verifies. */
  public: JWK[]
  /** Secrets that sign oidc-provider's cookies, newest first. */
  cookieSecrets: string[]
  /** Changes whenever a key is added or dropped. */
  version: string
}

/**
 * The signing keys and cookie secrets, kept in the database so every instance shares them.
 * Made at first start; `rotate` adds a new active key while the old one keeps verifying
 * until `retiredKeyLifetime` has passed.
 */
export function createKeyRing({ db, clock }: { db: Kysely<CloudDB>; clock: Clock }) {
  type Loaded = { keys: KeySet; loadedAt: number; verify: ReturnType<typeof createLocalJWKSet> }
  let current: Loaded | undefined
  let loading: Promise<Loaded> | undefined

  async function load(): Promise<Loaded> {
    const now = clock.now()
    await ensureKeys(db, now)
    const rows = await db
      .selectFrom('oauth_keys')
      .selectAll()
      .where((eb) => eb.or([eb('retire_at', 'is', null), eb('retire_at', '>', now)]))
      .orderBy(sql`retire_at is null`, 'desc')
      .orderBy('created_at', 'desc')
      .execute()
    const signing = rows.filter((row) => row.kind === 'signing').map((row) => row.material as JWK)
    const keys: KeySet = {
      signing,
      public: signing.map(publicHalf),
      cookieSecrets: rows.filter((row) => row.kind === 'cookie').map((row) => String(row.material.secret)),
      version: rows.map((row) => row.kid).join(','),
    }
    current = { keys, loadedAt: clock.now().getTime(), verify: createLocalJWKSet({ keys: keys.public }) }
    return current
  }

  function reload(): Promise<Loaded> {
    loading ??= load().finally(() => {
      loading = undefined
    })
    return loading
  }

  /** The loaded key set, read again from the database at most once a minute. */
  function loaded(): Promise<Loaded> {
    if (current && clock.now().getTime() - current.loadedAt < reloadEvery) {
      return Promise.resolve(current)
    }
    return reload()
  }

  return {
    keys: async (): Promise<KeySet> => (await loaded()).keys,

    /**
     * Resolves a token's verification key for jose. A `kid` this instance does not know yet
     * (rotated in elsewhere) triggers a reload, at most every 10 seconds.
     */
    async verificationKey(
      header: JWSHeaderParameters,
      token: FlattenedJWSInput,
    ): ReturnType<ReturnType<typeof createLocalJWKSet>> {
      let state = await loaded()
      const known = state.keys.public.some((key) => key.kid === header.kid)
      if (!known && clock.now().getTime() - state.loadedAt > 10_000) {
        state = await reload()
      }
      return state.verify(header, token)
    },

    /** Makes a new active signing key; the previous one verifies until it retires. */
    async rotate(): Promise<{ kid: string; retiring: string[] }> {
      const now = clock.now()
      const rotated = await db.transaction().execute(async (trx) => {
        await lockKeys(trx)
        const retiring = await trx
          .updateTable('oauth_keys')
          .set({ retire_at: new Date(now.getTime() + retiredKeyLifetime) })
          .where('kind', '=', 'signing')
          .where('retire_at', 'is', null)
          .returning('kid')
          .execute()
        const kid = await insertSigningKey(trx, now)
        await trx.deleteFrom('oauth_keys').where('retire_at', '<=', now).execute()
        return { kid, retiring: retiring.map((row) => row.kid) }
      })
      await reload()
      return rotated
    },
  }
}

export type KeyRing = ReturnType<typeof createKeyRing>

/** Creates the first signing key and cookie secret; instances starting together agree on one. */
async function ensureKeys(db: Kysely<CloudDB>, now: Date): Promise<void> {
  const existing = await db.selectFrom('oauth_keys').select('kind').where('retire_at', 'is', null).execute()
  if (existing.some((row) => row.kind === 'signing') && existing.some((row) => row.kind === 'cookie')) {
    return
  }
  await db.transaction().execute(async (trx) => {
    await lockKeys(trx)
    const kinds = new Set(
      (await trx.selectFrom('oauth_keys').select('kind').where('retire_at', 'is', null).execute()).map(
        (row) => row.kind,
      ),
    )
    if (!kinds.has('signing')) {
      await insertSigningKey(trx, now)
    }
    if (!kinds.has('cookie')) {
      const secret = randomBytes(32).toString('base64url')
      await trx
        .insertInto('oauth_keys')
        .values({
          kid: `cookie-${randomBytes(8).toString('hex')}`,
          kind: 'cookie',
          material: JSON.stringify({ secret }),
          created_at: now,
        })
        .execute()
    }
  })
}

/** Serialises key changes across instances for the rest of the transaction. */
async function lockKeys(trx: Kysely<CloudDB>): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('oauth_keys'))`.execute(trx)
}

async function insertSigningKey(trx: Kysely<CloudDB>, now: Date): Promise<string> {
  const { privateKey } = await generateKeyPair(signingAlgorithm, { extractable: true })
  const kid = randomBytes(12).toString('base64url')
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid, alg: signingAlgorithm, use: 'sig' }
  await trx
    .insertInto('oauth_keys')
    .values({ kid, kind: 'signing', material: JSON.stringify(jwk), created_at: now })
    .execute()
  return kid
}

function publicHalf({ d: _d, ...key }: JWK): JWK {
  return key
}
