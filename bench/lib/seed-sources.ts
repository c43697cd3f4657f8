import { randomUUID } from 'node:crypto'
import { type CollectorType, collectorSettingsSchemas, DAY } from '@relay/contracts'
import { Value } from 'typebox/value'
import { openDatabase } from '../../apps/relay/src/db/database.ts'
import { loadOrCreateKey, passwordKey, seal } from '../../apps/relay/src/secrets/secret-box.ts'

/** What `seedCollectors` wrote, counted as the collector statistics count them. */
export type CollectorSeedCounts = {
  stored: number
  /** Everything but EventEngine, which every statistic leaves out. */
  counted: number
  locked: number
  failedFetch: number
  neverFetched: number
  withLostSensors: number
}

type Shape = {
  type: CollectorType
  pollRateMs: number
  settings: (i: number) => Record<string, unknown>
  sensors: number
}

// Out of every 20 collectors: 7 Virtual, 5 Host, 6 GenericAPI, 1 MQTT and 1 EventEngine.
const shapes: Shape[] = [
  ...repeat(7, { type: 'Virtual', pollRateMs: 5_000, settings: (i) => ({ sensorCount: 1 + (i % 20) }), sensors: 0 }),
  ...repeat(5, { type: 'Host', pollRateMs: 10_000, settings: () => ({}), sensors: 14 }),
  ...repeat(3, {
    type: 'GenericAPI',
    pollRateMs: 30_000,
    settings: (i) => ({ url: `http://plant-${i % 50}.example.internal/api/v1/readings` }),
    sensors: 23,
  }),
  ...repeat(3, {
    type: 'GenericAPI',
    pollRateMs: 60_000,
    settings: (i) => ({
      url: `https://weather.example.com/stations/${i}`,
      sensors: [
        { path: 'current.temperature', name: 'Temperature', unit: '°C' },
        { path: 'current.humidity', name: 'Humidity', unit: '%' },
        { path: 'current.wind.speed', name: 'Wind', unit: 'm/s' },
      ],
    }),
    sensors: 3,
  }),
  {
    type: 'MQTT',
    pollRateMs: 1_000,
    settings: (i) => ({ brokerUrl: 'mqtt://broker.example.internal:1883', topics: [`site/${i}/+/temperature`] }),
    sensors: 8,
  },
  { type: 'EventEngine', pollRateMs: 60_000, settings: () => ({}), sensors: 0 },
]

function repeat(times: number, shape: Shape): Shape[] {
  return Array.from({ length: times }, () => shape)
}

const fetchErrors = [
  'connect ECONNREFUSED 10.0.4.17:443',
  'The operation was aborted due to timeout',
  'GET answered 502 Bad Gateway',
  'getaddrinfo ENOTFOUND plant-7.example.internal',
]

type State = 'healthy' | 'failed' | 'never' | 'lost' | 'locked'

/**
 * Of every 100 blocks of 20 rows: 3 failed their last fetch, 2 never fetched, 1 lost sensors at its
 * last fetch; GenericAPI rows of 3 more have a password-protected token, locked after a restart.
 */
function stateOf(i: number, type: CollectorType): State {
  const block = Math.floor(i / shapes.length) % 100
  if (block < 3) {
    return 'failed'
  }
  if (block < 5) {
    return 'never'
  }
  if (block === 5) {
    return 'lost'
  }
  if (block < 9 && type === 'GenericAPI') {
    return 'locked'
  }
  return 'healthy'
}

/**
 * Fills the migrated relay database in `dataDir` with `count` collectors created over the last
 * 200 days, in one transaction of prepared inserts. None is started (`active` 0), so the relay's
 * resume at listen starts no poller: Host rows would read this machine and GenericAPI rows would
 * call their URLs. Settings match each type's schema; tokens are sealed as the relay seals them.
 */
export async function seedCollectors(
  dataDir: string,
  { count, now }: { count: number; now: Date },
): Promise<CollectorSeedCounts> {
  const relayKey = loadOrCreateKey(dataDir)
  // One password for every locked row: scrypt costs about 100 ms a derivation.
  const { key: lockedKey, salt } = await passwordKey('bench-password-1')
  const lockedSalt = salt.toString('base64url')
  const database = openDatabase(dataDir)
  try {
    const { sqlite } = database
    const insert = sqlite.prepare(`insert into collectors
      (id, name, collector_type, poll_rate_ms, settings, active, access_token, access_token_salt, last_fetch_time,
       last_fetch_successful, last_fetch_error_message, last_fetch_total_sensors, last_fetch_new_sensors,
       last_fetch_lost_sensors, created_at, updated_at)
      values (@id, @name, @collector_type, @poll_rate_ms, @settings, 0, @access_token, @access_token_salt,
              @last_fetch_time, @last_fetch_successful, @last_fetch_error_message, @last_fetch_total_sensors,
              @last_fetch_new_sensors, @last_fetch_lost_sensors, @created_at, @updated_at)`)
    const counts: CollectorSeedCounts = {
      stored: count,
      counted: 0,
      locked: 0,
      failedFetch: 0,
      neverFetched: 0,
      withLostSensors: 0,
    }
    const at = (msAgo: number) => new Date(now.getTime() - msAgo).toISOString()
    sqlite.transaction(() => {
      for (let i = 0; i < count; i++) {
        const shape = shapes[i % shapes.length] as Shape
        const settings = shape.settings(i)
        const sensors = shape.type === 'Virtual' ? Number(settings.sensorCount) : shape.sensors
        if (!Value.Check(collectorSettingsSchemas[shape.type], settings)) {
          throw new Error(`seed settings of a ${shape.type} collector do not match its schema`)
        }
        const state = stateOf(i, shape.type)
        const lost = state === 'lost' ? Math.min(1 + (i % 3), sensors) : 0
        const token =
          state === 'locked'
            ? { access_token: seal(lockedKey, `token-${i}`), access_token_salt: lockedSalt }
            : shape.type === 'GenericAPI' && i % 2 === 0
              ? { access_token: seal(relayKey, `token-${i}`), access_token_salt: null }
              : { access_token: null, access_token_salt: null }
        const createdAt = at(((count - i) / count) * 200 * DAY)
        insert.run({
          id: randomUUID(),
          name: `${shape.type} ${i + 1}`,
          collector_type: shape.type,
          poll_rate_ms: shape.pollRateMs,
          settings: JSON.stringify(settings),
          ...token,
          // A locked collector last fetched before the restart that locked it.
          last_fetch_time:
            state === 'never' ? null : at(state === 'locked' ? DAY : (i * 7919) % (shape.pollRateMs + 1)),
          last_fetch_successful: state === 'failed' || state === 'never' ? 0 : 1,
          last_fetch_error_message: state === 'failed' ? fetchErrors[i % fetchErrors.length] : null,
          last_fetch_total_sensors: state === 'never' ? 0 : sensors - lost,
          last_fetch_new_sensors: state === 'never' || i % 97 !== 0 ? 0 : 1,
          last_fetch_lost_sensors: lost,
          created_at: createdAt,
          updated_at: createdAt,
        })
        if (shape.type !== 'EventEngine') {
          counts.counted++
          counts.locked += state === 'locked' ? 1 : 0
          counts.failedFetch += state === 'failed' ? 1 : 0
          counts.neverFetched += state === 'never' ? 1 : 0
          counts.withLostSensors += state === 'lost' ? 1 : 0
        }
      }
    })()
    const stored = (sqlite.prepare('select count(*) as n from collectors').get() as { n: number }).n
    if (stored < count) {
      throw new Error(`seeded ${stored} collectors, expected at least ${count}`)
    }
    // Leave the rows in the database file, not in a large WAL the app's reads would have to consult.
    sqlite.pragma('wal_checkpoint(TRUNCATE)')
    return counts
  } finally {
    await database.close()
  }
}

/** How long ago each running stream last sent, as `spreadLastSent` sets it. */
export type StreamSilenceCounts = { healthy: number; slow: number; silent: number }

/**
 * Sets when each stream last sent, relative to `now`: 92 in 100 within the last 30 s (healthy),
 * 5 between 30 s and 5 min (slow, a warning), 3 over 5 min ago (silent, an error).
 */
export async function spreadLastSent(dataDir: string, streamIds: string[], now: Date): Promise<StreamSilenceCounts> {
  const database = openDatabase(dataDir)
  try {
    const update = database.sqlite.prepare('update streams set last_sent_time = ? where id = ?')
    const counts: StreamSilenceCounts = { healthy: 0, slow: 0, silent: 0 }
    database.sqlite.transaction(() => {
      streamIds.forEach((id, i) => {
        const slot = i % 100
        const kind = slot < 92 ? 'healthy' : slot < 97 ? 'slow' : 'silent'
        const silenceMs = { healthy: 1_000 + (i % 29) * 1_000, slow: 45_000 + i * 100, silent: 10 * 60_000 + i * 1_000 }
        update.run(new Date(now.getTime() - silenceMs[kind]).toISOString(), id)
        counts[kind]++
      })
    })()
    return counts
  } finally {
    await database.close()
  }
}
