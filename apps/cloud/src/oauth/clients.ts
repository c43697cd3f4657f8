import { randomBytes } from 'node:crypto'
import { exportJWK, generateKeyPair, type JWK } from 'jose'
import type { Kysely } from 'kysely'
import type { CloudDB } from '../db/schema.js'

const deviceKeyAlgorithm = 'ES256'

export type DeviceClient = { clientId: string; name: string }

/**
 * Registers a device client for the client-credentials grant. The device authenticates with a
 * key pair (private_key_jwt): the cloud keeps only the public key, so nothing stored here can
 * be used to impersonate the device. The private key is returned once.
 */
export async function registerDeviceClient(
  db: Kysely<CloudDB>,
  name: string,
): Promise<DeviceClient & { privateKey: JWK }> {
  const clientId = `device-${randomBytes(9).toString('base64url')}`
  const { publicKey, privateKey } = await generateKeyPair(deviceKeyAlgorithm, { extractable: true })
  const kid = randomBytes(8).toString('base64url')
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: deviceKeyAlgorithm, use: 'sig' }
  const metadata = {
    client_id: clientId,
    client_name: name,
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'private_key_jwt',
    token_endpoint_auth_signing_alg: deviceKeyAlgorithm,
    jwks: { keys: [publicJwk] },
  }
  await db
    .insertInto('oauth_payloads')
    .values({ model: 'Client', id: clientId, payload: JSON.stringify(metadata) })
    .execute()
  return {
    clientId,
    name,
    privateKey: { ...(await exportJWK(privateKey)), kid, alg: deviceKeyAlgorithm, use: 'sig' },
  }
}

export async function listDeviceClients(db: Kysely<CloudDB>): Promise<DeviceClient[]> {
  const rows = await db
    .selectFrom('oauth_payloads')
    .select(['id', 'payload'])
    .where('model', '=', 'Client')
    .orderBy('id')
    .execute()
  return rows.map((row) => ({
    clientId: row.id,
    name: String(row.payload.client_name ?? row.id),
  }))
}

/** Removes a device client; tokens it already holds stay valid until they expire (15 min). */
export async function removeDeviceClient(db: Kysely<CloudDB>, clientId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('oauth_payloads')
    .where('model', '=', 'Client')
    .where('id', '=', clientId)
    .executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}
