import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

const source = (pkg: string) => fileURLToPath(new URL(`./packages/${pkg}/src/index.ts`, import.meta.url))

export default defineConfig({
  resolve: {
    // Tests run the workspace packages from source: no build step before `npm test`.
    alias: {
      '@relay/contracts': source('contracts'),
      '@relay/server-kit': source('server-kit'),
      '@relay/testkit': source('testkit'),
    },
  },
  test: {
    projects: [
      { extends: true, test: { name: 'server-kit', root: 'packages/server-kit' } },
      { extends: true, test: { name: 'contracts', root: 'packages/contracts' } },
      // The workspace's import rules (no cycles, no feature reading another's repo), checked over every package.
      { extends: true, test: { name: 'architecture', root: 'packages/testkit' } },
      {
        extends: true,
        test: {
          name: 'cloud',
          root: 'apps/cloud',
          globalSetup: ['test/global-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'relay',
          root: 'apps/relay',
          // Tests that cross into the cloud run the real cloud app on a migrated database copy.
          globalSetup: ['../cloud/test/global-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      // The UI's logic in plain Node, beside the code it tests; no browser and no relay to set up.
      { extends: true, test: { name: 'web', root: 'apps/web', include: ['src/**/*.test.ts'] } },
      {
        extends: true,
        test: {
          name: 'web-e2e',
          root: 'apps/web',
          include: ['e2e/**/*.test.ts'],
          globalSetup: ['e2e/global-setup.ts', '../cloud/test/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
})
