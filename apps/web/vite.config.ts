import path from 'node:path'
import { fileURLToPath } from 'node:url'
import react from '@vitejs/plugin-react'
import { createLogger, defaultClientConditions, defineConfig, type ProxyOptions } from 'vite'

const root = path.dirname(fileURLToPath(import.meta.url))

// The relay runs on 127.0.0.1 by default. The Host header is left alone (no changeOrigin), so the
// relay sees the same host as the browser's Origin and its same-origin checks keep working.
const apiProxy: Record<string, ProxyOptions> = {
  '/api': { target: process.env.RELAY_URL ?? 'http://127.0.0.1:8080' },
}

// Rules a CSS module takes from ui/ with `composes: x from '…'` reach Vite's url rewriter without their
// file name, and it warns that "a PostCSS plugin did not pass the `from` option". Our styles hold no url(),
// so nothing can be rewritten wrongly: the warning alone is dropped, every other one is kept.
const logger = createLogger()
const warnOnce = logger.warnOnce
logger.warnOnce = (message, options) => {
  if (!message.includes('did not pass the `from` option')) {
    warnOnce(message, options)
  }
}

export default defineConfig({
  root,
  customLogger: logger,
  plugins: [react()],
  resolve: {
    // `browser` picks the contracts' browser entry (types and plain values, no TypeBox); `source` bundles
    // it from source, so the UI needs no build of the package first.
    conditions: [...defaultClientConditions, 'source'],
  },
  build: {
    outDir: path.resolve(root, process.env.WEB_OUT_DIR ?? 'dist'),
    // Required to clean an outDir outside the project root (tests build into a temp folder).
    emptyOutDir: true,
  },
  server: { proxy: apiProxy },
  preview: { proxy: apiProxy },
})
