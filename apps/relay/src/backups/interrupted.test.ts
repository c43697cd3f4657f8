import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { BackupOperation, OperationStage, UploadGrant } from '@relay/contracts'
import { freePort, tempDir, waitFor } from '@relay/testkit'
import SQLite from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import {
  backendIdOf,
  backUpUntilIdle,
  cloudNotificationMessages,
  type LinkedRelay,
  listBackups,
  tempFiles,
} from '../../test/backups.js'
import { addCloudUser, signInThroughCloud } from '../../test/cloud.js'
import { useCloudBehindFaultProxy } from '../../test/cloud-behind-proxy.js'
import type { RelayApp } from '../app.js'

/** A record at the cloud as request-upload leaves it: pending, nothing uploaded yet. */
async function requestUpload(relay: LinkedRelay): Promise<string> {
  const grant = await relay.app.services.cloud.request<UploadGrant>('POST', '/cloud-backups/request-upload', {
    filename: 'relay-backup-20261122T130501Z.zip',
    backendId: backendIdOf(relay),
    uncompressedSize: 4096,
    compressedSize: 1024,
    sha256: 'a'.repeat(64),
  })
  return grant.backupId
}

/** What a relay stopped mid-backup leaves in its database, written while no relay runs on it. */
function leaveUnfinished(dataDir: string, row: { stage: OperationStage; backupId: string | null }): string {
  const id = randomUUID()
  const sqlite = new SQLite(path.join(dataDir, 'relay.db'))
  try {
    sqlite
      .prepare(
        `insert into unfinished_operations (id, kind, trigger, stage, backup_id, filename, started_at, updated_at)
         values (?, 'backup', 'scheduled', ?, ?, 'relay-backup-20261122T130501Z.zip', ?, ?)`,
      )
      .run(id, row.stage, row.backupId, '2026-11-22T13:05:01.000Z', '2026-11-22T13:05:02.000Z')
  } finally {
    sqlite.close()
  }
  return id
}

function unfinishedRows(dataDir: string): { id: string; interrupted_at: string | null }[] {
  const sqlite = new SQLite(path.join(dataDir, 'relay.db'), { readonly: true })
  try {
    return sqlite.prepare('select id, interrupted_at from unfinished_operations').all() as {
      id: string
      interrupted_at: string | null
    }[]
  } finally {
    sqlite.close()
  }
}

function failureNotifications(app: RelayApp): Promise<string[]> {
  return cloudNotificationMessages(app, { titled: 'Backup failed' })
}

async function operationsOf(app: RelayApp): Promise<BackupOperation[]> {
  const res = await app.inject({ url: '/api/cloud-backups/operations' })
  expect(res.statusCode, res.body).toBe(200)
  return res.json().operations
}

describe('a backup the relay was stopped in, found at the next start', () => {
  const net = useCloudBehindFaultProxy()
  const signedInRelay = net.signedInRelay
  const restart = (relay: LinkedRelay) => net.startRelay(relay.dataDir)

  it('records it as failed, notifies once, and releases the pending cloud record', async () => {
    const relay = await signedInRelay()
    const backupId = await requestUpload(relay)
    expect((await listBackups(relay.app)).map((record) => [record.id, record.status])).toEqual([[backupId, 'pending']])
    await relay.app.close()
    const id = leaveUnfinished(relay.dataDir, { stage: 'uploading', backupId })

    const restarted = await restart(relay)
    await restarted.app.services.backups.idle()
    expect(await operationsOf(restarted.app)).toEqual([
      expect.objectContaining({
        id,
        kind: 'backup',
        trigger: 'scheduled',
        stage: 'failed',
        backupId,
        error: 'The backup was interrupted: the relay stopped while uploading it to the cloud',
        startedAt: '2026-11-22T13:05:01.000Z',
        finishedAt: expect.any(String),
      }),
    ])
    expect(await failureNotifications(restarted.app)).toEqual([
      'The backup was interrupted: the relay stopped while uploading it to the cloud',
    ])
    expect(await listBackups(restarted.app)).toEqual([])
    expect(unfinishedRows(restarted.dataDir)).toEqual([])

    // Handled for good: the next start reports nothing again.
    await restarted.app.close()
    const again = await restart(relay)
    await again.app.services.backups.idle()
    expect(await failureNotifications(again.app)).toHaveLength(1)
    expect(await operationsOf(again.app)).toEqual([])
  })

  it('reports one stopped before the cloud had a record, with nothing to release', async () => {
    const relay = await signedInRelay()
    await relay.app.close()
    const id = leaveUnfinished(relay.dataDir, { stage: 'snapshot', backupId: null })
    const restarted = await restart(relay)
    await restarted.app.services.backups.idle()
    expect(await operationsOf(restarted.app)).toEqual([
      expect.objectContaining({
        id,
        stage: 'failed',
        backupId: null,
        error: 'The backup was interrupted: the relay stopped while copying the database',
      }),
    ])
    expect(await failureNotifications(restarted.app)).toHaveLength(1)
    expect(unfinishedRows(restarted.dataDir)).toEqual([])
  })

  it('keeps a backup the cloud had confirmed when the relay stopped before hearing so', async () => {
    const relay = await signedInRelay()
    const operation = await backUpUntilIdle(relay.app, { expectDone: true })
    const backupId = operation.backupId ?? ''
    await relay.app.close()
    leaveUnfinished(relay.dataDir, { stage: 'confirming', backupId })

    const restarted = await restart(relay)
    await restarted.app.services.backups.idle()
    expect((await listBackups(restarted.app)).map((record) => [record.id, record.status])).toEqual([
      [backupId, 'completed'],
    ])
    expect(unfinishedRows(restarted.dataDir)).toEqual([])
  })

  it('a restore brings back neither the row of the backup that made it nor loses a row awaiting release', async () => {
    const relay = await signedInRelay()
    const made = await backUpUntilIdle(relay.app, { expectDone: true })
    // A record awaiting release when the restore runs: it belongs to the present, not to the backup.
    const leftover = await requestUpload(relay)
    await relay.app.close()
    const waiting = leaveUnfinished(relay.dataDir, { stage: 'uploading', backupId: leftover })
    net.proxy.inject((req) => (req.method === 'DELETE' ? 'refuse' : undefined))
    try {
      const restarted = await restart(relay)
      await restarted.app.services.backups.idle()
      const restore = await restarted.app.services.backups.startRestore(made.backupId ?? '')
      await restarted.app.services.backups.idle()
      expect(restarted.app.services.backups.getOperation(restore.id)).toMatchObject({ stage: 'done', error: null })
      expect(unfinishedRows(restarted.dataDir)).toEqual([{ id: waiting, interrupted_at: expect.any(String) }])
      await restarted.app.close()
    } finally {
      net.proxy.inject(() => undefined)
    }
    const again = await restart(relay)
    await again.app.services.backups.idle()
    // The notifications are the backup's (taken before anything failed): the finished backup is not reported.
    expect(await failureNotifications(again.app)).toEqual([])
    expect(await operationsOf(again.app)).toEqual([])
    expect(unfinishedRows(again.dataDir)).toEqual([])
    expect((await listBackups(again.app)).map((record) => record.id)).toEqual([made.backupId])
  })

  it('keeps the record to release while the cloud cannot be reached, and releases it at a later cycle', async () => {
    const relay = await signedInRelay()
    const backupId = await requestUpload(relay)
    await relay.app.close()
    const id = leaveUnfinished(relay.dataDir, { stage: 'uploading', backupId })

    net.proxy.inject((req) => (req.method === 'DELETE' ? 'refuse' : undefined))
    try {
      const restarted = await restart(relay)
      await restarted.app.services.backups.idle()
      expect(await failureNotifications(restarted.app)).toHaveLength(1)
      expect(unfinishedRows(restarted.dataDir)).toEqual([{ id, interrupted_at: expect.any(String) }])
      expect((await listBackups(restarted.app)).map((record) => record.id)).toEqual([backupId])
      // A cycle while the cloud still refuses changes nothing.
      await restarted.app.services.backups.runScheduledCycle()
      expect(unfinishedRows(restarted.dataDir)).toHaveLength(1)

      // Not lost across a restart either, and not reported twice.
      await restarted.app.close()
      const again = await restart(relay)
      await again.app.services.backups.idle()
      expect(await failureNotifications(again.app)).toHaveLength(1)
      expect(unfinishedRows(again.dataDir)).toHaveLength(1)

      net.proxy.inject(() => undefined)
      await again.app.services.backups.runScheduledCycle()
      expect(unfinishedRows(again.dataDir)).toEqual([])
      expect(await listBackups(again.app)).toEqual([])
    } finally {
      net.proxy.inject(() => undefined)
    }
  })

  it('a relay process killed with SIGKILL during an upload: failed, notified, released, no temp file', async () => {
    const user = await addCloudUser(net.cloud)
    const folder = tempDir('relay-killed-')
    const port = await freePort()
    const relayUrl = `http://127.0.0.1:${port}`
    let uploadStalled: () => void = () => {}
    const stalled = new Promise<void>((resolve) => {
      uploadStalled = resolve
    })
    net.proxy.inject((req) => {
      if (req.method === 'PUT' && req.url?.startsWith('/s3/')) {
        uploadStalled()
        return 'stall'
      }
      return undefined
    })
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', 'src/main.ts'], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      env: {
        ...process.env,
        RELAY_PORT: String(port),
        RELAY_DATA_DIR: folder.path,
        CLOUD_URL: net.proxy.url,
        LOG_LEVEL: 'warn',
      },
      stdio: 'ignore',
    })
    const exited = new Promise((resolve) => child.once('exit', resolve))
    try {
      await waitFor(async () => (await fetch(`${relayUrl}/api/health`)).ok, 'the relay answering')
      await signInThroughCloud(net.cloud, relayUrl, user.email, { cloudUrl: net.proxy.url })
      const started = await fetch(`${relayUrl}/api/cloud-backups/create`, { method: 'POST' })
      expect(started.status).toBe(202)
      const { operationId } = (await started.json()) as { operationId: string }
      // The store has the upload and holds it: the relay waits in the middle of sending it.
      await stalled
      const running = (await (
        await fetch(`${relayUrl}/api/cloud-backups/operations/${operationId}`)
      ).json()) as BackupOperation
      expect(running.stage).toBe('uploading')
      const backupId = running.backupId ?? ''
      expect(backupId).not.toBe('')
      child.kill('SIGKILL')
      await exited
      net.proxy.inject(() => undefined)

      const restarted = await net.startRelay(folder.path)
      await restarted.app.services.backups.idle()
      expect(await operationsOf(restarted.app)).toEqual([
        expect.objectContaining({
          id: operationId,
          kind: 'backup',
          trigger: 'manual',
          stage: 'failed',
          backupId,
          error: 'The backup was interrupted: the relay stopped while uploading it to the cloud',
        }),
      ])
      expect(await failureNotifications(restarted.app)).toEqual([
        'The backup was interrupted: the relay stopped while uploading it to the cloud',
      ])
      expect(await listBackups(restarted.app)).toEqual([])
      expect(unfinishedRows(folder.path)).toEqual([])
      expect(tempFiles(restarted)).toEqual([])
      await restarted.app.close()
    } finally {
      net.proxy.inject(() => undefined)
      child.kill('SIGKILL')
      await exited
      folder.remove()
    }
  })
})
