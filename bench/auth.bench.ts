import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createApp } from '../apps/cloud/src/app.ts'
import { bearerPrincipal } from '../apps/cloud/src/auth/guard.ts'
import { createTokenVerifier, mintAccessToken } from '../apps/cloud/src/auth/tokens.ts'
import { loadConfig } from '../apps/cloud/src/config.ts'
import type { Benchmark, Figure } from './lib/benchmark.ts'
import { compareWithReference } from './lib/compare.ts'
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
      app.get('/bench/open', { config: { public: true } }, noop)
      // Behind the app's own guard, as every route that is not public.
      app.get('/bench/guarded', noop)
      await app.register(async (scope) => {
        // Public to the app's guard: this scope checks the token itself, with the cache off.
        const verify = createTokenVerifier(tokens, { cacheSize: 0 })
        scope.addHook('onRequest', async (request, reply) => {
          request.principal = await bearerPrincipal(request, reply, verify)
        })
        scope.get('/bench/guarded-uncached', { config: { public: true } }, noop)
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
        const rows = await compareWithReference(
          {
            label,
            figures: { throughput: `${label} req/s`, latency: `${label} p99 latency` },
            ours: { url: `${base}${route}`, headers: authorization },
            reference: open,
            comparedWith: {
              kind: 'peer',
              name: 'the same no-op route without the guard, same app, same Authorization header',
            },
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
