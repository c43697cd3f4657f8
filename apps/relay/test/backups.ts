import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { BackupOperation, RelayBackupRecord } from '@relay/contracts'
import { defined, type TestClock } from '@relay/testkit'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, expect } from 'vitest'
import type { TestCloud } from '../../cloud/test/cloud-server.js'
import type { RelayApp } from '../src/app.js'
import { addCloudUser, signInThroughCloud, startCloud, startLinkedRelay } from './cloud.js'

export type LinkedRelay = Awaited<ReturnType<typeof startLinkedRelay>>

const json = { 'content-type': 'application/json' }

/** Sends the request that starts an operation: `app.inject` unless a test records what the relay answers. */
type Send = (request: InjectOptions & { url: string }) => Promise<LightMyRequestResponse>

/** One real cloud for the suite's tests, started before them and closed after. Call it inside a `describe`. */
export function useCloud() {
  let cloud: TestCloud | undefined

  beforeAll(async () => {
    cloud = await startCloud()
  })

  afterAll(async () => {
    await cloud?.close()
  })

  return {
    get cloud() {
      if (cloud === undefined) {
        throw new Error('the cloud starts in beforeAll')
      }
      return cloud
    },
  }
}

/** A relay signed in through the cloud to a new account (licensed unless `licensed: false`), with its backend id. */
export async function signedInRelay(cloud: TestCloud, options: { licensed?: boolean; clock?: TestClock } = {}) {
  const user = await addCloudUser(cloud, { licensed: options.licensed })
  const relay = await startLinkedRelay(cloud, { clock: options.clock })
  await signInThroughCloud(cloud, relay.url, user.email)
  return { ...relay, user, backendId: backendIdOf(relay) }
}

/** The id the relay gives itself in its data folder, and under which the cloud files its backups. */
export function backendIdOf(relay: { dataDir: string }): string {
  return JSON.parse(readFileSync(path.join(relay.dataDir, 'identity.json'), 'utf8')).backendId
}

/** Polls the operation until it is done or failed. */
export async function waitForOperation(app: RelayApp, id: string): Promise<BackupOperation> {
  const deadline = Date.now() + 60_000
  for (;;) {
    const res = await app.inject({ url: `/api/cloud-backups/operations/${id}` })
    expect(res.statusCode).toBe(200)
    const operation = res.json() as BackupOperation
    if (operation.stage === 'done' || operation.stage === 'failed') {
      return operation
    }
    if (Date.now() > deadline) {
      throw new Error(`operation ${id} still ${operation.stage}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** POST …/create, then the operation once it has finished (done or failed). */
export async function backUp(app: RelayApp, { send }: { send?: Send } = {}): Promise<BackupOperation> {
  const request = { method: 'POST', url: '/api/cloud-backups/create' } as const
  const res = await (send ? send(request) : app.inject(request))
  expect(res.statusCode, res.body).toBe(202)
  return waitForOperation(app, res.json().operationId)
}

/**
 * A manual backup started in the service, and the operation once the service is idle: what runs after
 * the backup (pruning, verification) has finished too. `expectDone` fails the test unless it succeeded.
 */
export async function backUpUntilIdle(app: RelayApp, options: { expectDone?: boolean } = {}): Promise<BackupOperation> {
  const { backups } = app.services
  const started = await backups.startBackup('manual')
  await backups.idle()
  const operation = backups.getOperation(started.id)
  if (options.expectDone) {
    expect(operation.stage, operation.error ?? '').toBe('done')
  }
  return operation
}

/** POST …/restore with `body`, then the operation once it has finished (done or failed). */
export async function restoreBackup(
  app: RelayApp,
  backupId: string,
  body: object = {},
  { send }: { send?: Send } = {},
): Promise<BackupOperation> {
  const request = {
    method: 'POST',
    url: `/api/cloud-backups/${backupId}/restore`,
    headers: json,
    payload: JSON.stringify(body),
  } as const
  const res = await (send ? send(request) : app.inject(request))
  expect(res.statusCode, res.body).toBe(202)
  return waitForOperation(app, res.json().operationId)
}

/** The backups the relay lists (this relay's, newest first). */
export async function listBackups(app: RelayApp): Promise<RelayBackupRecord[]> {
  const res = await app.inject({ url: '/api/cloud-backups/list' })
  expect(res.statusCode, res.body).toBe(200)
  return res.json().backups
}

/** The listed backup with this id; the test fails when it is not listed. */
export async function listedBackup(app: RelayApp, backupId: string): Promise<RelayBackupRecord> {
  return defined((await listBackups(app)).find((backup) => backup.id === backupId))
}

/** The file the cloud's embedded store keeps for `s3Key`: found through the sidecar that names each object's key. */
export function storedObjectFile(cloud: TestCloud, s3Key: string): string {
  const folder = path.join(cloud.database.dataDir, 'objects')
  for (const entry of readdirSync(folder, { recursive: true, withFileTypes: true })) {
    const file = path.join(entry.parentPath, entry.name)
    if (entry.isFile() && entry.name.endsWith('.json') && JSON.parse(readFileSync(file, 'utf8')).key === s3Key) {
      return file.slice(0, -'.json'.length)
    }
  }
  throw new Error(`the store keeps no object under ${s3Key}`)
}

/** Somebody changes the stored object: one flipped byte in the middle. */
export function tamperWithStoredObject(cloud: TestCloud, s3Key: string): void {
  const stored = storedObjectFile(cloud, s3Key)
  const bytes = readFileSync(stored)
  const middle = Math.floor(bytes.length / 2)
  bytes.writeUInt8(bytes.readUInt8(middle) ^ 0xff, middle)
  writeFileSync(stored, bytes)
}

/** What is left in the relay's work folder: backups and restores must leave nothing there. */
export function tempFiles(relay: { dataDir: string }): string[] {
  const folder = path.join(relay.dataDir, 'tmp')
  return existsSync(folder) ? readdirSync(folder) : []
}

async function cloudNotifications(app: RelayApp): Promise<{ title: string; message: string }[]> {
  const res = await app.inject({ url: '/api/notifications/history?category=cloud' })
  return res.json().notifications
}

/** The titles of the relay's cloud notifications. */
export async function cloudNotificationTitles(app: RelayApp): Promise<string[]> {
  return (await cloudNotifications(app)).map((notification) => notification.title)
}

/** The messages of the relay's cloud notifications (only those `titled` so, when given). */
export async function cloudNotificationMessages(app: RelayApp, options: { titled?: string } = {}): Promise<string[]> {
  return (await cloudNotifications(app))
    .filter((notification) => options.titled === undefined || notification.title === options.titled)
    .map((notification) => notification.message)
}

/** A virtual collector created through the API: something a backup has to store. */
export async function addCollector(app: RelayApp, name: string) {
  const res = await app.inject({
    method: 'POST',
    url: '/api/collectors',
    headers: json,
    payload: JSON.stringify({ name, collectorType: 'Virtual', pollRateMs: 60_000, settings: { sensorCount: 2 } }),
  })
  expect(res.statusCode, res.body).toBe(201)
  return res.json()
}

/** The names of the relay's collectors, in the order it lists them. */
export async function collectorNames(app: RelayApp): Promise<string[]> {
  return (await app.inject({ url: '/api/collectors' })).json().map((c: { name: string }) => c.name)
}
