import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createApp } from '../apps/cloud/src/app.ts'
import { requireAccessToken } from '../apps/cloud/src/auth/guard.ts'
import { createTokenVerifier, mintAccessToken } from '../apps/cloud/src/auth/tokens.ts'
import { loadConfig } from '../apps/cloud/src/config.ts'
import type { Benchmark, Figure } from './lib/benchmark.ts'
import { compareWithPeer } from './lib/compare.ts'
import { listenLocal } from './lib/servers.ts'

/**
 * The access-token guard's cost: one no-op route behind the guard against the same route
 * without it, in the same cloud app. "Cached" is the usual case (a relay reuses its token for
 * minutes); "signature every request" turns the verified-token cache off, the worst case.
 */
export const benchmark: Benchmark = {
  name: 'auth',
  async run(settings) {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'cloud-bench-auth-'))
    const app = await createApp(loadConfig({ CLOUD_DATA_DIR: dataDir, LOG_LEVEL: 'silent' }))
    try {
      const { tokens } = app.services
      const noop = async () => ({ ok: true })
      app.get('/bench/open', noop)
      await app.register(async (scope) => {
        requireAccessToken(scope, createTokenVerifier(tokens))
        scope.get('/bench/guarded', noop)
      })
      await app.register(async (scope) => {
        requireAccessToken(scope, createTokenVerifier(tokens, { cacheSize: 0 }))
        scope.get('/bench/guarded-uncached', noop)
      })
      const base = await listenLocal(app)
      const user = await app.services.directory.create({ email: 'bench@example.com', password: 'bench password' })
      const { token } = await mintAccessToken(tokens, { subject: user.id, type: 'user' })
      const authorization = { authorization: `Bearer ${token}` }
      const open = { url: `${base}/bench/open`, headers: authorization }
      const figures: Figure[] = []
      for (const [label, route] of [
        ['guarded no-op (verified-token cache)', '/bench/guarded'],
        ['guarded no-op (signature every request)', '/bench/guarded-uncached'],
      ] as const) {
        const rows = await compareWithPeer(
          {
            label,
            figures: { throughput: `${label} req/s`, latency: `${label} p99 latency` },
            ours: { url: `${base}${route}`, headers: authorization },
            peer: open,
            peerName: 'the same no-op route without the guard, same app, same Authorization header',
          },
          settings,
        )
        figures.push(...rows.map((row) => ({ ...row, notes: `${row.notes}; ES256 access token, 15 min` })))
      }
      return figures
    } finally {
      await app.close()
      rmSync(dataDir, { recursive: true, force: true })
    }
  },
}
