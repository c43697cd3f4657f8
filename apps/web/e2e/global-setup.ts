import { fileURLToPath } from 'node:url'
import { tempDir } from '@relay/testkit'
import { build } from 'vite'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The web UI built from the current sources, for the relay under test to serve. */
    webDist: string
  }
}

/** Builds the UI once per run, so browser tests always see the code under test. */
export default async function setup(project: TestProject) {
  const out = tempDir('relay-web-dist-')
  // Vitest runs with NODE_ENV=test, which would bundle React's development build; the relay serves
  // the production bundle, so test that one.
  const nodeEnv = process.env.NODE_ENV
  process.env.NODE_ENV = 'production'
  await build({
    configFile: fileURLToPath(new URL('../vite.config.ts', import.meta.url)),
    root: fileURLToPath(new URL('..', import.meta.url)),
    build: { outDir: out.path, emptyOutDir: true },
    logLevel: 'warn',
  })
  process.env.NODE_ENV = nodeEnv
  project.provide('webDist', out.path)
  return () => out.remove()
}
