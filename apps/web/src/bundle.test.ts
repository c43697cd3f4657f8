import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build, type Rolldown } from 'vite'
import { beforeAll, describe, expect, it } from 'vitest'

const webRoot = fileURLToPath(new URL('..', import.meta.url))
/** What the first screen may download, compressed: HTML, JavaScript and CSS of the shell and the dashboard. */
const firstPageBudget = 200 * 1024

type Output = (Rolldown.OutputChunk | Rolldown.OutputAsset)[]

/** The production bundle, built in memory: its chunks still name the modules they hold. */
async function buildBundle(): Promise<Output> {
  // Vitest runs with NODE_ENV=test, which would bundle React's development build.
  const nodeEnv = process.env.NODE_ENV
  process.env.NODE_ENV = 'production'
  try {
    const result = await build({
      configFile: path.join(webRoot, 'vite.config.ts'),
      root: webRoot,
      build: { write: false },
      logLevel: 'silent',
    })
    return (Array.isArray(result) ? result : [result]).flatMap((each) => ('output' in each ? each.output : []))
  } finally {
    process.env.NODE_ENV = nodeEnv
  }
}

let output: Output
let chunks: Rolldown.OutputChunk[]

beforeAll(async () => {
  output = await buildBundle()
  chunks = output.filter((file): file is Rolldown.OutputChunk => file.type === 'chunk')
}, 60_000)

/** A chunk and every chunk it imports statically, with their CSS: what loading it downloads. */
function downloadedWith(chunk: Rolldown.OutputChunk, files = new Set<string>()): Set<string> {
  if (!files.has(chunk.fileName)) {
    files.add(chunk.fileName)
    for (const css of chunk.viteMetadata?.importedCss ?? []) {
      files.add(css)
    }
    for (const imported of chunk.imports) {
      const next = chunks.find((each) => each.fileName === imported)
      if (next) {
        downloadedWith(next, files)
      }
    }
  }
  return files
}

function gzipSize(fileName: string): number {
  const file = output.find((each) => each.fileName === fileName)
  if (!file) {
    throw new Error(`${fileName} is not in the bundle`)
  }
  return gzipSync(file.type === 'chunk' ? file.code : file.source).length
}

const shown = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`

describe('the production bundle', () => {
  it('holds no TypeBox: the UI takes plain values and types from the contracts', () => {
    const modules = chunks.flatMap((chunk) => chunk.moduleIds)
    const contracts = modules.filter((id) => id.includes('/packages/contracts/src/'))

    expect(modules.filter((id) => id.includes('/node_modules/typebox/'))).toEqual([])
    // Every schema carries TypeBox's `~kind` marker, so none may be left in the code either.
    expect(chunks.filter((chunk) => chunk.code.includes('~kind')).map((chunk) => chunk.fileName)).toEqual([])
    expect(contracts.length).toBeGreaterThan(0)
    expect(contracts.map((id) => path.basename(id)).filter((name) => !isPlainContract(name))).toEqual([])
  })

  it('loads the first page (entry and dashboard route) within the budget', () => {
    const entry = chunks.find((chunk) => chunk.isEntry)
    const dashboard = chunks.find((chunk) => chunk.facadeModuleId?.endsWith('/src/dashboard/DashboardPage.tsx'))
    expect(entry).toBeDefined()
    expect(dashboard).toBeDefined()
    if (!entry || !dashboard) {
      return
    }
    const files = downloadedWith(dashboard, downloadedWith(entry, new Set(['index.html'])))
    const total = [...files].reduce((sum, file) => sum + gzipSize(file), 0)

    expect(total, `first page ${shown(total)} gzip: ${[...files].join(', ')}`).toBeLessThan(firstPageBudget)
  })

  it('loads the other pages only when they are visited', () => {
    const entry = chunks.find((chunk) => chunk.isEntry)
    const pages = ['SourcesPage', 'BackupsPage', 'NotificationsPage', 'SystemPage', 'AccountPage']

    expect(entry?.moduleIds.filter((id) => pages.some((page) => id.endsWith(`/${page}.tsx`)))).toEqual([])
    expect(entry?.dynamicImports.length).toBeGreaterThanOrEqual(pages.length)
  })
})

/** The contracts modules that load no TypeBox: see packages/contracts/src/browser.ts. */
function isPlainContract(fileName: string): boolean {
  return /\.plain\.ts$/.test(fileName) || ['browser.ts', 'client.ts', 'endpoint.ts', 'time.ts'].includes(fileName)
}
