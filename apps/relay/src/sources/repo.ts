import type { ExpressionBuilder, Insertable, Kysely, Selectable, Updateable } from 'kysely'
import type { CollectorsTable, JunctionsTable, RelayDB, SensorsTable, StreamsTable } from '../db/schema.js'

type Db = Kysely<RelayDB>
export type CollectorRow = Selectable<CollectorsTable>
export type SensorRow = Selectable<SensorsTable>
export type StreamRow = Selectable<StreamsTable>
export type JunctionRow = Selectable<JunctionsTable>
export type JunctionLinks = { collectorIds: string[]; targets: { streamId: string; sendRateMs: number }[] }

// Collectors

export function listCollectors(db: Db): Promise<CollectorRow[]> {
  return db.selectFrom('collectors').selectAll().orderBy('created_at').orderBy('id').execute()
}

export function findCollector(db: Db, id: string): Promise<CollectorRow | undefined> {
  return db.selectFrom('collectors').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function insertCollector(db: Db, row: Insertable<CollectorsTable>): Promise<void> {
  await db.insertInto('collectors').values(row).execute()
}

export async function updateCollector(db: Db, id: string, changes: Updateable<CollectorsTable>): Promise<void> {
  await db.updateTable('collectors').set(changes).where('id', '=', id).execute()
}

export async function deleteCollector(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('collectors').where('id', '=', id).executeTakeFirst()
  return result.numDeletedRows > 0n
}

/**
 * The health statistics' view of the collectors: every collector that may have something to report,
 * and a count of the rest (fetched fine, no password-protected token, nothing lost, not internal).
 */
export async function findCollectorHealth(db: Db) {
  const plainlyHealthy = (eb: ExpressionBuilder<RelayDB, 'collectors'>) =>
    eb.and([
      eb('last_fetch_time', 'is not', null),
      eb('last_fetch_successful', '=', 1),
      eb('access_token_salt', 'is', null),
      eb('last_fetch_lost_sensors', '=', 0),
    ])
  const counted = await db
    .selectFrom('collectors')
    .select((eb) => [
      eb.fn.countAll<number>().as('count'),
      eb.fn.coalesce(eb.fn.sum<number>('last_fetch_total_sensors'), eb.lit(0)).as('totalSensors'),
      eb.fn.coalesce(eb.fn.sum<number>('last_fetch_new_sensors'), eb.lit(0)).as('newSensors'),
    ])
    .where('collector_type', '!=', 'EventEngine')
    .where(plainlyHealthy)
    .executeTakeFirstOrThrow()
  const listed = await db
    .selectFrom('collectors')
    .select([
      'id',
      'name',
      'collector_type',
      'access_token_salt',
      'last_fetch_time',
      'last_fetch_successful',
      'last_fetch_error_message',
      'last_fetch_total_sensors',
      'last_fetch_new_sensors',
      'last_fetch_lost_sensors',
    ])
    .where('collector_type', '!=', 'EventEngine')
    .where((eb) => eb.not(plainlyHealthy(eb)))
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  return {
    listed,
    healthy: {
      count: Number(counted.count),
      totalSensors: Number(counted.totalSensors),
      newSensors: Number(counted.newSensors),
    },
  }
}

// Sensors

export function listSensors(db: Db, collectorId: string): Promise<SensorRow[]> {
  return db.selectFrom('sensors').selectAll().where('collector_id', '=', collectorId).orderBy('external_id').execute()
}

export function listSensorsOf(db: Db, collectorIds: readonly string[]): Promise<SensorRow[]> {
  if (collectorIds.length === 0) {
    return Promise.resolve([])
  }
  return db
    .selectFrom('sensors')
    .selectAll()
    .where('collector_id', 'in', collectorIds)
    .where('missing', '=', 0)
    .orderBy('collector_id')
    .orderBy('external_id')
    .execute()
}

export async function upsertSensor(db: Db, row: Insertable<SensorsTable>): Promise<void> {
  await db
    .insertInto('sensors')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['collector_id', 'external_id']).doUpdateSet({
        name: row.name,
        unit: row.unit,
        value: row.value,
        last_updated: row.last_updated,
        missing: 0,
      }),
    )
    .execute()
}

export async function markSensorsMissing(db: Db, collectorId: string, externalIds: readonly string[]): Promise<void> {
  if (externalIds.length > 0) {
    await db
      .updateTable('sensors')
      .set({ missing: 1 })
      .where('collector_id', '=', collectorId)
      .where('external_id', 'in', externalIds)
      .execute()
  }
}

// Streams

export function listStreams(db: Db): Promise<StreamRow[]> {
  return db.selectFrom('streams').selectAll().orderBy('created_at').orderBy('id').execute()
}

export function findStream(db: Db, id: string): Promise<StreamRow | undefined> {
  return db.selectFrom('streams').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function insertStream(db: Db, row: Insertable<StreamsTable>): Promise<void> {
  await db.insertInto('streams').values(row).execute()
}

export async function updateStream(db: Db, id: string, changes: Updateable<StreamsTable>): Promise<void> {
  await db.updateTable('streams').set(changes).where('id', '=', id).execute()
}

export async function deleteStream(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('streams').where('id', '=', id).executeTakeFirst()
  return result.numDeletedRows > 0n
}

// Junctions

export function listJunctions(db: Db): Promise<JunctionRow[]> {
  return db.selectFrom('junctions').selectAll().orderBy('created_at').orderBy('id').execute()
}

export function findJunction(db: Db, id: string): Promise<JunctionRow | undefined> {
  return db.selectFrom('junctions').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function insertJunction(db: Db, row: Insertable<JunctionsTable>): Promise<void> {
  await db.insertInto('junctions').values(row).execute()
}

export async function updateJunction(db: Db, id: string, changes: Updateable<JunctionsTable>): Promise<void> {
  await db.updateTable('junctions').set(changes).where('id', '=', id).execute()
}

export async function deleteJunction(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('junctions').where('id', '=', id).executeTakeFirst()
  return result.numDeletedRows > 0n
}

/** The links of each given junction, in their saved order. */
export async function findLinks(db: Db, junctionIds: readonly string[]): Promise<Map<string, JunctionLinks>> {
  const links = new Map(junctionIds.map((id) => [id, { collectorIds: [], targets: [] } as JunctionLinks]))
  if (junctionIds.length === 0) {
    return links
  }
  const collectors = await db
    .selectFrom('junction_collectors')
    .selectAll()
    .where('junction_id', 'in', junctionIds)
    .orderBy('position')
    .execute()
  const targets = await db
    .selectFrom('junction_targets')
    .selectAll()
    .where('junction_id', 'in', junctionIds)
    .orderBy('position')
    .execute()
  for (const row of collectors) {
    links.get(row.junction_id)?.collectorIds.push(row.collector_id)
  }
  for (const row of targets) {
    links.get(row.junction_id)?.targets.push({ streamId: row.stream_id, sendRateMs: row.send_rate_ms })
  }
  return links
}

export async function replaceLinks(db: Db, junctionId: string, links: Partial<JunctionLinks>): Promise<void> {
  if (links.collectorIds) {
    await db.deleteFrom('junction_collectors').where('junction_id', '=', junctionId).execute()
    if (links.collectorIds.length > 0) {
      await db
        .insertInto('junction_collectors')
        .values(
          links.collectorIds.map((collectorId, position) => ({
            junction_id: junctionId,
            collector_id: collectorId,
            position,
          })),
        )
        .execute()
    }
  }
  if (links.targets) {
    await db.deleteFrom('junction_targets').where('junction_id', '=', junctionId).execute()
    if (links.targets.length > 0) {
      await db
        .insertInto('junction_targets')
        .values(
          links.targets.map((target, position) => ({
            junction_id: junctionId,
            stream_id: target.streamId,
            send_rate_ms: target.sendRateMs,
            position,
          })),
        )
        .execute()
    }
  }
}

/** The names of the collectors and streams these links refer to, by id. */
export async function namesOf(db: Db, links: readonly JunctionLinks[]): Promise<Map<string, string>> {
  const collectorIds = [...new Set(links.flatMap((link) => link.collectorIds))]
  const streamIds = [...new Set(links.flatMap((link) => link.targets.map((target) => target.streamId)))]
  const rows = [
    ...(collectorIds.length > 0
      ? await db.selectFrom('collectors').select(['id', 'name']).where('id', 'in', collectorIds).execute()
      : []),
    ...(streamIds.length > 0
      ? await db.selectFrom('streams').select(['id', 'name']).where('id', 'in', streamIds).execute()
      : []),
  ]
  return new Map(rows.map((row) => [row.id, row.name]))
}

/** Ids among `ids` that exist in `table`. */
export async function existingIds(
  db: Db,
  table: 'collectors' | 'streams',
  ids: readonly string[],
): Promise<Set<string>> {
  if (ids.length === 0) {
    return new Set()
  }
  const rows = await db.selectFrom(table).select('id').where('id', 'in', ids).execute()
  return new Set(rows.map((row) => row.id))
}
