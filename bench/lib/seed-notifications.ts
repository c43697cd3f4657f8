import { randomUUID } from 'node:crypto'
import { DAY, type NotificationCategory, type NotificationType } from '@relay/contracts'
import { openDatabase } from '../../apps/relay/src/db/database.ts'
import { kindTitles } from '../../apps/relay/src/notifications/kinds.ts'

export type NotificationSeed = {
  /** Rows stored in all. */
  stored: number
  /** Of those, rows not yet delivered; the rest were delivered shortly after they were made. */
  pending: number
  now: Date
}

type Template = {
  type: NotificationType
  category: NotificationCategory
  title: string | null
  message: (i: number) => string
  duration: number | null
  persistent: boolean
  /** Days from `now` to expiry, or null for none. */
  expiresInDays: number | null
}

// What a relay accumulates: mostly explicit creates (POST /api/notifications, no expiry), some with an
// expiry still ahead, and persistent kinds. Rows of expiring kinds whose expiry has passed are not seeded:
// the relay deletes those on every pending poll and in maintenance.
const templates: Template[] = [
  create('success', 'cloud', 'Backups', (i) => `Backup ${i} uploaded to the cloud (42.7 MB in 12 s)`),
  create('info', 'system', null, (i) => `Device pump-${i % 40} reported its hourly health figures`),
  create('error', 'api', 'Request failed', (i) => `GET /api/sources/${i % 300} failed: upstream timed out after 30 s`),
  create('warning', 'system', 'Disk space', () => 'The data volume is 85% full; old backups will be pruned soon'),
  create('success', 'auth', null, (i) => `User operator-${i % 12} signed in from 192.168.1.${i % 250}`),
  { ...create('info', 'cloud', 'Cloud sync', (i) => `Cloud sync ${i} finished with 0 conflicts`), duration: 5000 },
  {
    ...create('info', 'system', 'Maintenance', () => 'Scheduled maintenance window tonight at 02:00'),
    expiresInDays: 3,
  },
  { ...create('error', 'cloud', 'Backups', (i) => `Backup ${i} failed: quota exceeded`), expiresInDays: 14 },
  persistent('error', 'auth', kindTitles.authenticationFailure, (i) => `Sign-in failed for operator-${i % 12}`),
  persistent(
    'warning',
    'cloud',
    kindTitles.cloudAuthenticationRequired,
    () => 'The relay is no longer signed in to the cloud; sign in again to resume cloud backups',
  ),
]

function create(
  type: NotificationType,
  category: NotificationCategory,
  title: string | null,
  message: (i: number) => string,
): Template {
  return { type, category, title, message, duration: null, persistent: false, expiresInDays: null }
}

function persistent(
  type: NotificationType,
  category: NotificationCategory,
  title: string,
  message: (i: number) => string,
): Template {
  return { type, category, title, message, duration: null, persistent: true, expiresInDays: null }
}

/**
 * Fills the migrated relay database in `dataDir` with `stored` notifications, oldest first, 20 s
 * apart, so the oldest delivery is well inside the 30-day retention that maintenance enforces.
 * Most pending rows are the newest ones (nobody had a tab open lately); a tenth are older rows
 * spread over the table. Inserts in one transaction through the relay's own connection settings.
 */
export async function seedNotifications(dataDir: string, seed: NotificationSeed): Promise<{ lastSeq: number }> {
  const { stored, pending, now } = seed
  const database = openDatabase(dataDir)
  try {
    const { sqlite } = database
    const insert = sqlite.prepare(`insert into notifications
      (id, type, category, title, message, duration, persistent, created_at, is_delivered, delivered_at, expires_at)
      values (@id, @type, @category, @title, @message, @duration, @persistent, @created_at, @is_delivered,
              @delivered_at, @expires_at)`)
    const spread = Math.floor(pending / 10)
    const olderRows = stored - (pending - spread)
    const spreadRows = new Set(Array.from({ length: spread }, (_, k) => Math.floor(((k + 1) * olderRows) / spread) - 1))
    const isPending = (i: number) => i >= olderRows || spreadRows.has(i)
    const spacingMs = 20_000
    sqlite.transaction(() => {
      for (let i = 0; i < stored; i++) {
        const template = templates[i % templates.length] as Template
        const createdAt = now.getTime() - (stored - i) * spacingMs
        const delivered = !isPending(i)
        insert.run({
          id: randomUUID(),
          type: template.type,
          category: template.category,
          title: template.title,
          message: template.message(i),
          duration: template.duration,
          persistent: template.persistent ? 1 : 0,
          created_at: new Date(createdAt).toISOString(),
          is_delivered: delivered ? 1 : 0,
          delivered_at: delivered ? new Date(createdAt + 5_000).toISOString() : null,
          expires_at:
            template.expiresInDays === null
              ? null
              : new Date(now.getTime() + template.expiresInDays * DAY).toISOString(),
        })
      }
    })()
    const counts = sqlite
      .prepare('select count(*) as stored, sum(is_delivered = 0) as pending, max(seq) as lastSeq from notifications')
      .get() as { stored: number; pending: number; lastSeq: number }
    if (counts.stored !== stored || counts.pending !== pending) {
      throw new Error(`seeded ${counts.stored} rows with ${counts.pending} pending, expected ${stored} and ${pending}`)
    }
    // Leave the rows in the database file, not in a large WAL the app's reads would have to consult.
    sqlite.pragma('wal_checkpoint(TRUNCATE)')
    return { lastSeq: counts.lastSeq }
  } finally {
    await database.close()
  }
}
