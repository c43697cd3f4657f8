import { createApp } from '../../apps/cloud/src/app.ts'
import { mintAccessToken } from '../../apps/cloud/src/auth/tokens.ts'
import { loadConfig } from '../../apps/cloud/src/config.ts'
import { freePort } from '../../packages/testkit/src/http-browser.ts'

const unlimited = { capacity: 1_000_000, refillEvery: 1000 }
/** The password of every user `newUser` makes. */
export const benchPassword = 'bench password'

export type BenchCloud = {
  /** `http://127.0.0.1:<port>`: the API and the embedded object store under `/s3`. */
  base: string
  /** A new licensed (gifted) user and a one-hour access token of theirs. */
  newUser(email: string): Promise<{ token: string }>
  close(): Promise<void>
}

/**
 * The cloud app on its embedded defaults (PGlite and the embedded object store in `dataDir`), listening
 * on 127.0.0.1 with the backup rate limits lifted, as `backups.bench.ts` starts it.
 */
export async function startCloud(dataDir: string): Promise<BenchCloud> {
  // Presigned URLs and the issuer name the public URL, so the port is chosen before the app starts.
  const port = await freePort()
  const app = await createApp(loadConfig({ CLOUD_DATA_DIR: dataDir, LOG_LEVEL: 'silent', CLOUD_PORT: String(port) }), {
    rateLimitPolicies: { dashboard: unlimited, backup: unlimited },
  })
  try {
    await app.listen({ port, host: '127.0.0.1' })
  } catch (err) {
    await app.close()
    throw err
  }
  return {
    base: `http://127.0.0.1:${port}`,
    async newUser(email) {
      const user = await app.services.directory.create({ email, password: benchPassword })
      await app.services.licenses.setGifted(user.id, true)
      const { token } = await mintAccessToken(app.services.tokens, {
        subject: user.id,
        type: 'user',
        lifetimeSeconds: 3600,
      })
      return { token }
    },
    close: () => app.close(),
  }
}
