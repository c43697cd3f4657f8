import { migrateToLatest } from '@relay/server-kit'
import { seededRandom } from '@relay/testkit'
import { openDatabase } from '../../apps/relay/src/db/database.ts'
import { migrations } from '../../apps/relay/src/db/migrations/index.ts'

export type ReadingsSeed = {
  /** Grow the table until the database file holds at least this many bytes. */
  targetBytes: number
  /** Timestamp of the newest reading. */
  now: Date
}

type Sensor = { id: number; name: string; unit: string; base: number; swing: number; noise: number; decimals: number }

// What a relay's sensors report: a daily swing around a set point with some noise, rounded to the
// sensor's precision, so values repeat often but rarely in long runs.
const kinds = [
  { unit: 'degC', base: 21, swing: 4, noise: 0.05, decimals: 1 },
  { unit: '%RH', base: 45, swing: 10, noise: 0.5, decimals: 0 },
  { unit: 'hPa', base: 1013, swing: 6, noise: 0.1, decimals: 1 },
  { unit: 'kW', base: 12, swing: 8, noise: 0.05, decimals: 2 },
  { unit: 'ppm', base: 600, swing: 250, noise: 5, decimals: 0 },
  { unit: 'V', base: 230, swing: 3, noise: 0.1, decimals: 1 },
  { unit: 'Hz', base: 50, swing: 0.05, noise: 0.005, decimals: 2 },
  { unit: 'l/min', base: 80, swing: 30, noise: 0.5, decimals: 1 },
] as const

const sensorCount = 240
const intervalMs = 10_000
const rowsPerBatch = 50_000

/**
 * A migrated relay database with a `readings` table of sensor history, grown to `targetBytes`:
 * 240 sensors of 8 kinds reporting every 10 s up to `now`; about 1 % of readings are `uncertain`
 * and 0.1 % `bad`. Deterministic (seeded random), so every run packs the same bytes.
 */
export async function seedReadings(dataDir: string, { targetBytes, now }: ReadingsSeed): Promise<{ rows: number }> {
  const database = openDatabase(dataDir)
  try {
    await migrateToLatest(database.db, migrations)
    const { sqlite } = database
    sqlite.exec(`create table readings (
      id integer primary key,
      sensor_id text not null,
      ts text not null,
      value real not null,
      unit text not null,
      quality text not null
    )`)
    const random = seededRandom(42)
    const sensors: Sensor[] = Array.from({ length: sensorCount }, (_, index) => {
      const kind = kinds[index % kinds.length] as (typeof kinds)[number]
      const name = `site-${(index % 4) + 1}/line-${(index % 12) + 1}/${kind.unit.replace(/\W/g, '').toLowerCase()}-${index + 1}`
      return { id: index + 1, name, ...kind, base: kind.base * (0.9 + random() * 0.2) }
    })
    // Rows are ~80 bytes on disk; the size check runs once per batch.
    const insert = sqlite.prepare('insert into readings (sensor_id, ts, value, unit, quality) values (?, ?, ?, ?, ?)')
    const pageSize = Number(sqlite.pragma('page_size', { simple: true }))
    const fileBytes = () => Number(sqlite.pragma('page_count', { simple: true })) * pageSize
    const estimatedRows = Math.ceil(targetBytes / 80)
    const start = now.getTime() - Math.ceil(estimatedRows / sensorCount) * intervalMs
    let rows = 0
    const batch = sqlite.transaction((count: number) => {
      for (let i = 0; i < count; i++, rows++) {
        const sensor = sensors[rows % sensorCount] as Sensor
        const ts = start + Math.floor(rows / sensorCount) * intervalMs + sensor.id * 37
        const day = ((ts % 86_400_000) / 86_400_000) * 2 * Math.PI
        const raw = sensor.base + sensor.swing * Math.sin(day + sensor.id) + (random() - 0.5) * 2 * sensor.noise
        const factor = 10 ** sensor.decimals
        const roll = random()
        const quality = roll < 0.001 ? 'bad' : roll < 0.011 ? 'uncertain' : 'good'
        insert.run(sensor.name, new Date(ts).toISOString(), Math.round(raw * factor) / factor, sensor.unit, quality)
      }
    })
    while (fileBytes() < targetBytes) {
      batch(rowsPerBatch)
    }
    sqlite.pragma('wal_checkpoint(TRUNCATE)')
    return { rows }
  } finally {
    await database.close()
  }
}
