import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createApp as createRelayApp, type RelayApp } from '../apps/relay/src/app.ts'
import { loadConfig as loadRelayConfig } from '../apps/relay/src/config.ts'
import { type Benchmark, bareRoute, type Figure } from './lib/benchmark.ts'
import { compareWithReference } from './lib/compare.ts'
import { seedNotifications } from './lib/seed-notifications.ts'
import { createBareRoutes, listenLocal } from './lib/servers.ts'
import type { RequestSpec } from './lib/throughput.ts'

const stored = 100_000
const pending = 1_000
const pageSize = 50

const createRequest = {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({
    message: 'Backup uploaded to the cloud',
    type: 'success',
    category: 'cloud',
    title: 'Backups',
  }),
} as const satisfies Omit<RequestSpec, 'url'>

/** 100000 → "100 000", as the figure names read. */
function spaced(count: number): string {
  return count.toLocaleString('en-US').replaceAll(',', ' ')
}

/** Checks what each poll answers before measuring it, so a figure never measures an empty or wrong page. */
async function checkSeed(relay: RelayApp, lastSeq: number): Promise<void> {
  const { notifications } = relay.services
  const first = await notifications.pending()
  if (first.notifications.length !== pageSize || !first.hasMore) {
    throw new Error(`first poll answered ${first.notifications.length} rows, hasMore ${first.hasMore}`)
  }
  const steady = await notifications.pending(lastSeq)
  if (steady.notifications.length !== 0 || steady.cursor !== lastSeq) {
    throw new Error(`steady poll answered ${steady.notifications.length} rows and cursor ${steady.cursor}`)
  }
}

async function countStored(relay: RelayApp): Promise<number> {
  return (await relay.services.notifications.history({ limit: 1 })).total
}

function withNote(figures: Figure[], note: string): Figure[] {
  return figures.map((figure) => ({ ...figure, notes: `${figure.notes}; ${note}` }))
}

export const benchmark: Benchmark = {
  name: 'notifications',
  async run(settings) {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'relay-bench-data-'))
    const webDir = mkdtempSync(path.join(os.tmpdir(), 'relay-bench-web-'))
    const bare = createBareRoutes()
    let relay: RelayApp | undefined
    try {
      const config = loadRelayConfig({ RELAY_DATA_DIR: dataDir, LOG_LEVEL: 'silent', RELAY_WEB_DIR: webDir })
      relay = await createRelayApp(config)
      const seedStarted = performance.now()
      // After createApp, which migrated the database; before listen, whose maintenance run must find nothing to remove.
      const { lastSeq } = await seedNotifications(dataDir, { stored, pending, now: new Date() })
      console.error(`  seeded ${spaced(stored)} notifications in ${Math.round(performance.now() - seedStarted)} ms`)
      const base = `${await listenLocal(relay)}/api/notifications`
      const bareUrl = `${await listenLocal(bare)}/bare`
      await checkSeed(relay, lastSeq)
      const storedNote = `${spaced(await countStored(relay))} stored`

      const figures: Figure[] = []
      const firstPoll = `first poll: ${pageSize} of ${spaced(pending)} pending, ${spaced(stored)} stored`
      figures.push(
        ...withNote(
          await compareWithReference(
            {
              label: 'pending first poll',
              figures: {
                throughput: `notifications pending req/s (${firstPoll})`,
                latency: `notifications pending p99 latency (${firstPoll})`,
              },
              ours: `${base}/pending`,
              reference: bareUrl,
              comparedWith: bareRoute,
            },
            settings,
          ),
          `${storedNote}; each reply ${pageSize} rows, hasMore`,
        ),
      )
      const steadyPoll = `steady poll: since=cursor, ${spaced(stored)} stored`
      figures.push(
        ...withNote(
          await compareWithReference(
            {
              label: 'pending steady poll',
              figures: {
                throughput: `notifications pending req/s (${steadyPoll})`,
                latency: `notifications pending p99 latency (${steadyPoll})`,
              },
              ours: `${base}/pending?since=${lastSeq}`,
              reference: bareUrl,
              comparedWith: bareRoute,
            },
            settings,
          ),
          `${storedNote}; since=${lastSeq}, each reply 0 rows`,
        ),
      )
      // Creates come last: they grow the table the polls above were measured against.
      const creates = await compareWithReference(
        {
          label: 'create',
          figures: { throughput: 'notifications creates/s', latency: 'notifications create p99 latency' },
          ours: { url: base, ...createRequest },
          reference: { url: bareUrl, ...createRequest },
          comparedWith: { kind: 'ceiling', name: 'bare Fastify POST route parsing the same JSON body, answering 201' },
        },
        settings,
      )
      const grownNote = `stored grew from ${spaced(stored)} to ${spaced(await countStored(relay))}, warm-ups included`
      figures.push(...withNote(creates, grownNote))
      return figures
    } finally {
      await relay?.close()
      await bare.close()
      rmSync(dataDir, { recursive: true, force: true })
      rmSync(webDir, { recursive: true, force: true })
    }
  },
}
