import { AppError, type BackupEncryptionStatus } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { HeldRows } from '../db/database.js'
import type { RelayDB } from '../db/schema.js'
import { open, seal } from '../secrets/secret-box.js'
import { createAppSettings } from '../settings/service.js'

const settingKey = 'backups.encryption'

/** As stored in app_settings: the passphrase sealed with the relay's secret key; null once removed. */
type StoredPassphrase = { sealed: string; setAt: string }

function isStoredPassphrase(value: unknown): value is StoredPassphrase {
  const stored = value as Partial<StoredPassphrase> | null
  return typeof stored?.sealed === 'string' && typeof stored.setAt === 'string'
}

export type BackupPassphraseDeps = {
  db: Kysely<RelayDB>
  clock: Clock
  /** The relay's secret key; a restore may change it in place. */
  secretKey: Buffer
  log: FastifyBaseLogger
}

/**
 * The passphrase this relay encrypts its backups with. It stays on the relay, sealed under the secret
 * key (AES-256-GCM); it is read only to encrypt or decrypt a backup, and never logged or returned.
 */
export function createBackupPassphrase({ db, clock, secretKey, log }: BackupPassphraseDeps) {
  const settings = createAppSettings({ db, clock })

  async function stored(): Promise<StoredPassphrase | undefined> {
    const value = await settings.find(settingKey)
    return isStoredPassphrase(value) ? value : undefined
  }

  /** The passphrase and when it was set, read together: a backup follows the one in force when it began. */
  async function inForce(): Promise<{ passphrase: string | undefined; setAt: string | null }> {
    const value = await stored()
    if (!value) {
      return { passphrase: undefined, setAt: null }
    }
    try {
      return { passphrase: open(secretKey, value.sealed), setAt: value.setAt }
    } catch (err) {
      throw new AppError(
        'CONFLICT',
        "The backup passphrase stored on this relay cannot be read with the relay's key; set it again",
        { cause: err },
      )
    }
  }

  const statusOf = (value: StoredPassphrase | undefined): BackupEncryptionStatus => ({
    success: true,
    enabled: value !== undefined,
    setAt: value?.setAt ?? null,
  })

  return {
    status: async (): Promise<BackupEncryptionStatus> => statusOf(await stored()),

    async set(passphrase: string): Promise<BackupEncryptionStatus> {
      const value = { sealed: seal(secretKey, passphrase), setAt: clock.now().toISOString() }
      await settings.save(settingKey, value)
      log.info('backup passphrase set: new backups are encrypted')
      return statusOf(value)
    },

    async remove(): Promise<BackupEncryptionStatus> {
      await settings.save(settingKey, null)
      log.info('backup passphrase removed: new backups are not encrypted')
      return statusOf(undefined)
    },

    /** The passphrase in plaintext, or undefined when none is set. */
    async get(): Promise<string | undefined> {
      return (await inForce()).passphrase
    },

    inForce,

    /**
     * The passphrase as it is now, for a restore to keep: it belongs to this relay, not to a backup, so
     * a restore neither brings back an old one nor drops the one in force. Sealed again under whichever
     * key holds when it is put back.
     */
    async hold(): Promise<HeldRows> {
      const value = await stored()
      const keyNow = Buffer.from(secretKey)
      return {
        async putBack(trx) {
          const kept =
            value && !keyNow.equals(secretKey)
              ? { ...value, sealed: seal(secretKey, open(keyNow, value.sealed)) }
              : value
          await createAppSettings({ db: trx, clock }).save(settingKey, kept ?? null)
        },
      }
    },
  }
}

export type BackupPassphrase = ReturnType<typeof createBackupPassphrase>
