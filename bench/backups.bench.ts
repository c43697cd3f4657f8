import { createHash, randomBytes } from 'node:crypto'
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import type { UploadGrant } from '@relay/contracts'
import { createApp } from '../apps/cloud/src/app.ts'
import { mintAccessToken } from '../apps/cloud/src/auth/tokens.ts'
import { loadConfig } from '../apps/cloud/src/config.ts'
import { freePort } from '../packages/testkit/src/http-browser.ts'
import { type Benchmark, type BenchSettings, bareRoute, type Figure } from './lib/benchmark.ts'
import { compareWithReference, range } from './lib/compare.ts'
import { startMemorySampler } from './lib/memory.ts'
import { createBareRoutes, listenLocal } from './lib/servers.ts'
import { median } from './lib/throughput.ts'

const uploadBytes = 5 * 1024 * 1024
const unlimited = { capacity: 1_000_000, refillEvery: 1000 }

/**
 * The backup service as relays use it, on the embedded defaults (PGlite, the embedded object
 * store): status polling with a cached license, and whole backup round trips.
 */
export const benchmark: Benchmark = {
  name: 'backups',
  async run(settings) {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'cloud-bench-backups-'))
    const bareDir = mkdtempSync(path.join(os.tmpdir(), 'cloud-bench-bare-put-'))
    const bare = createBareRoutes()
    // Presigned URLs and the issuer name the public URL, so the port is chosen before the app starts.
    const port = await freePort()
    const app = await createApp(
      loadConfig({ CLOUD_DATA_DIR: dataDir, LOG_LEVEL: 'silent', CLOUD_PORT: String(port) }),
      {
        rateLimitPolicies: { dashboard: unlimited, backup: unlimited },
      },
    )
    try {
      await app.listen({ port, host: '127.0.0.1' })
      const base = `http://127.0.0.1:${port}`
      const user = await app.services.directory.create({ email: 'bench@example.com', password: 'bench password' })
      await app.services.licenses.setGifted(user.id, true)
      const { token } = await mintAccessToken(app.services.tokens, {
        subject: user.id,
        type: 'user',
        lifetimeSeconds: 3600,
      })
      const auth = { authorization: `Bearer ${token}` }

      const figures: Figure[] = []
      const bareUrl = `${await listenLocal(bare)}/bare`
      const status = await compareWithReference(
        {
          label: 'backup status (cached license)',
          figures: { throughput: 'backup status req/s (cached license)', latency: 'backup status p99 latency' },
          ours: { url: `${base}/cloud-backups/status`, headers: auth },
          reference: bareUrl,
          comparedWith: bareRoute,
        },
        settings,
      )
      figures.push(
        ...status.map((row) => ({ ...row, notes: `${row.notes}; one user polling on 10 connections, PGlite` })),
      )
      figures.push(await roundTrips(base, auth, bareDir, settings))
      return figures
    } finally {
      await app.close()
      await bare.close()
      rmSync(dataDir, { recursive: true, force: true })
      rmSync(bareDir, { recursive: true, force: true })
    }
  },
}

/** request-upload + 5 MB PUT + complete-upload, one after another, beside a bare 5 MB PUT to disk (the ceiling). */
async function roundTrips(
  base: string,
  auth: Record<string, string>,
  bareDir: string,
  settings: BenchSettings,
): Promise<Figure> {
  const body = randomBytes(uploadBytes)
  const sha256 = createHash('sha256').update(body).digest('hex')
  const json = { ...auth, 'content-type': 'application/json' }
  let files = 0
  const barePut = createServer((req, res) => {
    pipeline(req, createWriteStream(path.join(bareDir, `f${files++}`))).then(
      () => res.end(),
      () => res.writeHead(500).end(),
    )
  })
  await new Promise<void>((resolve) => barePut.listen(0, '127.0.0.1', resolve))
  const barePutUrl = `http://127.0.0.1:${(barePut.address() as { port: number }).port}/`

  const ours = async () => {
    const grant = (await (
      await fetch(`${base}/cloud-backups/request-upload`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({
          filename: 'bench.zip',
          backendId: 'bench',
          uncompressedSize: uploadBytes,
          compressedSize: uploadBytes,
          sha256,
        }),
      })
    ).json()) as UploadGrant
    const put = await fetch(grant.uploadUrl, { method: 'PUT', headers: grant.uploadHeaders, body })
    const done = await fetch(`${base}/cloud-backups/complete-upload`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ backupId: grant.backupId, actualCompressedSize: uploadBytes }),
    })
    if (put.status !== 200 || done.status !== 200) {
      throw new Error(`round trip failed: PUT ${put.status}, complete ${done.status}`)
    }
    return grant.backupId
  }
  const cleanUp = (backupId: string) => fetch(`${base}/cloud-backups/${backupId}`, { method: 'DELETE', headers: auth })
  const bare = async () => {
    const put = await fetch(barePutUrl, { method: 'PUT', body })
    if (put.status !== 200) {
      throw new Error(`bare PUT failed: ${put.status}`)
    }
  }

  const sampler = startMemorySampler()
  const rates = { ours: [] as number[], ceiling: [] as number[] }
  try {
    for (let round = 0; round < 3; round++) {
      for (const side of round % 2 ? (['ours', 'ceiling'] as const) : (['ceiling', 'ours'] as const)) {
        let count = 0
        let busy = 0
        const end = performance.now() + settings.durationSeconds * 1000
        while (performance.now() < end) {
          const started = performance.now()
          if (side === 'ours') {
            const id = await ours()
            busy += performance.now() - started
            await cleanUp(id)
          } else {
            await bare()
            busy += performance.now() - started
          }
          count++
        }
        rates[side].push(count / (busy / 1000))
        console.error(`  backup round trips round ${round + 1}/3 ${side}: ${(count / (busy / 1000)).toFixed(1)}/s`)
      }
    }
  } finally {
    await new Promise((resolve) => barePut.close(resolve))
  }
  return {
    figure: 'backup round trips/s (request-upload + 5 MB PUT + complete-upload)',
    ours: median(rates.ours),
    reference: median(rates.ceiling),
    comparedWith: { kind: 'ceiling', name: 'the same 5 MB PUT alone to a bare Node server streaming it to disk' },
    unit: 'trips/s',
    peakRssMb: sampler.stop(),
    notes:
      'one client, one trip at a time, SHA-256 pinned and verified by the embedded store; deletes between trips ' +
      `not timed; median of 3 alternating rounds (ours ${range(rates.ours)}, ceiling ${range(rates.ceiling)})`,
  }
}
