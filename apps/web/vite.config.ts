import path from 'node:path'
import { fileURLToPath } from 'node:url'
import react from '@vitejs/plugin-react'
import { defineConfig, type ProxyOptions } from 'vite'

const root = path.dirname(fileURLToPath(import.meta.url))

// The relay runs on 127.0.0.1 by default. The Host header is left alone (no changeOrigin), so the
// relay sees the same host as the browser's Origin and its same-origin checks keep working.
const apiProxy: Record<string, ProxyOptions> = {
  '/api': { target: process.env.RELAY_URL ?? 'http://127.0.0.1:8080' },
}

export default defineConfig({
  root,
  plugins: [react()],
  resolve: {
    // Bundle the contracts from source, so the UI needs no build of the package first.
    alias: { '@relay/contracts': path.resolve(root, '../../packages/contracts/src/index.ts') },
  },
  build: {
    outDir: path.resolve(root, process.env.WEB_OUT_DIR ?? 'dist'),
    // Required to clean an outDir outside the project root (tests build into a temp folder).
    emptyOutDir: true,
  },
  server: { proxy: apiProxy },
  preview: { proxy: apiProxy },
})
