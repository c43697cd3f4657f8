import { randomBytes } from 'node:crypto'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { BackupRecord } from '@relay/contracts'
import { defined, tempDir } from '@relay/testkit'
import SQLite from 'better-sqlite3'
import type { InjectOptions } from 'fastify'
import { describe, expect, it } from 'vitest'
import {
  addCollector,
  backUp,
  collectorNames,
  listBackups,
  restoreBackup,
  signedInRelay,
  tempFiles,
  useCloud,
} from '../../test/backups.js'
import { addCloudUser, signInThroughCloud, startLinkedRelay } from '../../test/cloud.js'
import { filesUnder, findLeaks, type Haystack } from '../../test/secret-scan.js'
import { readZipEntries } from '../../test/zip-entries.js'
import type { RelayApp } from '../app.js'
import { seal } from '../secrets/secret-box.js'
import { decryptBackupArchive } from './archive/encryption.js'

const json = { 'content-type': 'application/json' }
const passphrase = 'granite kettle 42 violet orbit'
const encryptionUrl = '/api/cloud-backups/encryption'

/** Every response body the test saw, to prove the passphrase never comes back. */
function recordedReplies() {
  const replies: Haystack[] = []
  return {
    replies,
    async inject(app: RelayApp, options: InjectOptions & { url: string }) {
      const res = await app.inject(options)
      replies.push({ where: `reply to ${options.method ?? 'GET'} ${options.url}`, bytes: res.rawPayload })
      return res
    },
  }
}

describe('encrypted cloud backups against the real cloud', () => {
  const suite = useCloud()

  it('encrypts backups with the relay passphrase, restores them with it or a typed one, and never leaks it', async () => {
    const relay = await signedInRelay(suite.cloud)
    const { app, dataDir } = relay
    const seen = recordedReplies()
    const recorded = { send: (request: InjectOptions & { url: string }) => seen.inject(app, request) }
    const restore = (backupId: string, body: object) => restoreBackup(app, backupId, body, recorded)
    const safetyCopies = () => readdirSync(path.join(dataDir, 'pre-restore')).length

    expect((await seen.inject(app, { url: encryptionUrl })).json()).toEqual({
      success: true,
      enabled: false,
      setAt: null,
    })
    const set = await seen.inject(app, {
      method: 'PUT',
      url: encryptionUrl,
      headers: json,
      payload: JSON.stringify({ passphrase }),
    })
    expect(set.statusCode, set.body).toBe(200)
    expect(set.json()).toEqual({ success: true, enabled: true, setAt: expect.any(String) })
    expect((await seen.inject(app, { url: encryptionUrl })).json()).toEqual(set.json())

    await addCollector(app, 'boiler room')
    const backup = await backUp(app, recorded)
    expect(backup).toMatchObject({ stage: 'done', error: null })
    expect(backup.filename).toMatch(/^relay-backup-\d{8}T\d{6}Z\.encrypted\.zip$/)
    const backupId = defined(backup.backupId)
    const records = (await seen.inject(app, { url: '/api/cloud-backups/list' })).json().backups as BackupRecord[]
    expect(records.find((record) => record.id === backupId)).toMatchObject({
      status: 'completed',
      filename: backup.filename,
    })
    expect(tempFiles(relay)).toEqual([])

    // What the cloud stores is the encrypted archive: a header and ciphertext, no readable backup in it.
    const stored = (await app.inject({ url: `/api/cloud-backups/${backupId}/download` })).rawPayload
    const work = tempDir('relay-encrypted-download-')
    try {
      const outer = path.join(work.path, 'stored.zip')
      writeFileSync(outer, stored)
      expect([...(await readZipEntries(outer)).keys()].sort()).toEqual(['backup.zip.enc', 'encryption.json'])
      const inner = path.join(work.path, 'inner.zip')
      await decryptBackupArchive(outer, inner, passphrase)
      const database = defined((await readZipEntries(inner, { asStored: true })).get('relay.db')).bytes
      for (const at of [0, 0.25, 0.5, 0.75].map((share) => Math.floor(share * (database.length - 64)))) {
        expect(stored.includes(database.subarray(at, at + 64)), `relay.db bytes at ${at}`).toBe(false)
      }
      for (const text of ['relay.db', 'manifest.json', 'SQLite format 3', 'boiler room']) {
        expect(stored.includes(Buffer.from(text)), text).toBe(false)
      }
    } finally {
      work.remove()
    }

    // With the relay's own passphrase, a restore needs nothing more.
    await addCollector(app, 'made after the backup')
    expect(await restore(backupId, {})).toMatchObject({ stage: 'done', error: null })
    expect(await collectorNames(app)).toEqual(['boiler room'])
    // The passphrase belongs to the relay, not to the backup: the restore kept it.
    expect((await seen.inject(app, { url: encryptionUrl })).json()).toEqual(set.json())

    const removed = await seen.inject(app, { method: 'DELETE', url: encryptionUrl })
    expect(removed.json()).toEqual({ success: true, enabled: false, setAt: null })
    await addCollector(app, 'made after the restore')
    const copies = safetyCopies()

    const withoutPassphrase = await restore(backupId, {})
    expect(withoutPassphrase.stage).toBe('failed')
    expect(withoutPassphrase.error).toBe(
      'This backup is encrypted and needs its passphrase: enter the passphrase it was made with',
    )
    const wrong = await restore(backupId, { passphrase: 'granite kettle 42 violet orbiT' })
    expect(wrong.stage).toBe('failed')
    expect(wrong.error).toBe('The passphrase does not open this backup: it was encrypted with a different passphrase')
    // Neither touched the relay: same data, no safety copy taken, no work file left.
    expect(await collectorNames(app)).toEqual(['boiler room', 'made after the restore'])
    expect(safetyCopies()).toBe(copies)
    expect(tempFiles(relay)).toEqual([])

    expect(await restore(backupId, { passphrase })).toMatchObject({ stage: 'done', error: null })
    expect(await collectorNames(app)).toEqual(['boiler room'])
    expect((await seen.inject(app, { url: encryptionUrl })).json()).toEqual(removed.json())

    // Without a passphrase, backups go up as plain archives again.
    const plain = await backUp(app, recorded)
    expect(plain.filename).toMatch(/^relay-backup-\d{8}T\d{6}Z\.zip$/)

    // The passphrase is in no reply, no log line, and nowhere in the relay's data folder in plaintext.
    const logs = { where: 'the relay log', bytes: Buffer.from(relay.logs.join('')) }
    expect(relay.logs.some((line) => line.includes('backup passphrase set'))).toBe(true)
    expect(
      findLeaks([{ kind: 'passphrase', value: passphrase }], [...seen.replies, logs, ...filesUnder(dataDir, 'data')]),
    ).toEqual([])
  })

  it('answers bad input with 400 and leaks nothing of what was sent', async () => {
    const relay = await startLinkedRelay(suite.cloud)
    const seen = recordedReplies()
    const secret = 'a passphrase nobody may see'
    const bad: Array<[string, string, string]> = [
      ['PUT', encryptionUrl, JSON.stringify({ passphrase: 'too short' })],
      ['PUT', encryptionUrl, JSON.stringify({ passphrase: 'x'.repeat(1025) })],
      ['PUT', encryptionUrl, JSON.stringify({ passphrase: 123456789012345 })],
      ['PUT', encryptionUrl, JSON.stringify({ passphrase: [secret] })],
      ['PUT', encryptionUrl, JSON.stringify({})],
      ['PUT', encryptionUrl, JSON.stringify({ passphrase: secret, hint: 'my cat' })],
      ['PUT', encryptionUrl, `{"passphrase": "${secret}",}`],
      ['PUT', encryptionUrl, `{"passphrase": "${secret}`],
      ['POST', '/api/cloud-backups/2b0d8d52-7e4e-4d6e-9b7f-3f1f0f3e9a11/restore', JSON.stringify({ passphrase: 42 })],
      ['POST', '/api/cloud-backups/2b0d8d52-7e4e-4d6e-9b7f-3f1f0f3e9a11/restore', JSON.stringify({ passphrase: '' })],
      [
        'POST',
        '/api/cloud-backups/2b0d8d52-7e4e-4d6e-9b7f-3f1f0f3e9a11/restore',
        JSON.stringify({ passphrase: 'y'.repeat(1025) }),
      ],
    ]
    for (const [method, url, payload] of bad) {
      const res = await seen.inject(relay.app, { method: method as 'PUT' | 'POST', url, headers: json, payload })
      expect(res.statusCode, `${method} ${url} ${payload.slice(0, 60)}`).toBe(400)
      expect(res.json()).toMatchObject({ success: false, code: 'INVALID_REQUEST', error: expect.any(String) })
    }
    const asText = await seen.inject(relay.app, {
      method: 'PUT',
      url: encryptionUrl,
      headers: { 'content-type': 'text/plain' },
      payload: secret,
    })
    expect(asText.statusCode, asText.body).toBe(400)
    expect((await relay.app.inject({ url: encryptionUrl })).json()).toMatchObject({ enabled: false })
    const logs = { where: 'the relay log', bytes: Buffer.from(relay.logs.join('')) }
    expect(relay.logs.length).toBeGreaterThan(0)
    expect(findLeaks([{ kind: 'passphrase', value: secret }], [...seen.replies, logs])).toEqual([])
  })

  it('keeps the passphrase through a restore that brings another key', async () => {
    const user = await addCloudUser(suite.cloud)
    const [other, relay] = [await startLinkedRelay(suite.cloud), await startLinkedRelay(suite.cloud)]
    for (const { url } of [other, relay]) {
      await signInThroughCloud(suite.cloud, url, user.email)
    }
    const settings = await other.app.services.backups.saveSettings({ includeKeys: true })
    expect(settings.includeKeys).toBe(true)
    const withKeys = await backUp(other.app)
    expect(withKeys.stage).toBe('done')

    await relay.app.inject({
      method: 'PUT',
      url: encryptionUrl,
      headers: json,
      payload: JSON.stringify({ passphrase }),
    })
    const keyFile = path.join(relay.dataDir, 'keys', 'secrets.key')
    const keyBefore = readFileSync(keyFile)
    expect((await restoreBackup(relay.app, defined(withKeys.backupId))).stage).toBe('done')
    expect(readFileSync(keyFile).equals(keyBefore)).toBe(false)

    // Sealed again under the key the restore brought: the next backup is encrypted with the same passphrase.
    expect((await relay.app.inject({ url: encryptionUrl })).json()).toMatchObject({ enabled: true })
    const encrypted = await backUp(relay.app)
    expect(encrypted).toMatchObject({ stage: 'done', filename: expect.stringMatching(/\.encrypted\.zip$/) })
    const work = tempDir('relay-encrypted-download-')
    try {
      const stored = path.join(work.path, 'stored.zip')
      writeFileSync(
        stored,
        (await relay.app.inject({ url: `/api/cloud-backups/${encrypted.backupId}/download` })).rawPayload,
      )
      await expect(decryptBackupArchive(stored, path.join(work.path, 'inner.zip'), passphrase)).resolves.toMatchObject({
        formatVersion: 1,
      })
    } finally {
      work.remove()
    }
  })

  it('fails a backup rather than upload it in the clear when the stored passphrase cannot be read', async () => {
    const relay = await signedInRelay(suite.cloud)
    const set = await relay.app.inject({
      method: 'PUT',
      url: encryptionUrl,
      headers: json,
      payload: JSON.stringify({ passphrase }),
    })
    expect(set.statusCode).toBe(200)
    // Sealed under some other key, as after keys replaced by hand: it no longer opens.
    const sqlite = new SQLite(path.join(relay.dataDir, 'relay.db'))
    const stored = JSON.stringify({ sealed: seal(randomBytes(32), passphrase), setAt: new Date().toISOString() })
    sqlite.prepare("update app_settings set value = ? where key = 'backups.encryption'").run(stored)
    sqlite.close()

    const operation = await backUp(relay.app)
    expect(operation).toMatchObject({
      stage: 'failed',
      error: "The backup passphrase stored on this relay cannot be read with the relay's key; set it again",
    })
    expect(await listBackups(relay.app)).toEqual([])
    expect(tempFiles(relay)).toEqual([])
  })
})
