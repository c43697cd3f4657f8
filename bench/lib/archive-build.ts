import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import ts from 'typescript'

const repoRoot = path.resolve(import.meta.dirname, '../..')
const archiveSources = path.join(repoRoot, 'apps/relay/src/backups/archive')
const transferSource = path.join(repoRoot, 'apps/relay/src/backups/transfer.ts')
const contractsSources = path.join(repoRoot, 'packages/contracts/src')
const workspaceModules = path.join(repoRoot, 'node_modules')

export type CompiledArchiveChild = {
  /** The script to run with plain Node. */
  child: string
  /** The archive module (`createBackupArchive`). */
  module: string
  /** The relay's transfer module (`uploadFile`). */
  transfer: string
}

/**
 * The backup archive module, the relay's transfer module and `archive-child.ts` as plain JavaScript in
 * `outDir`, so the bench runs them on plain Node like the relay's dist/ (the tsx loader alone adds some
 * 60 MB of RSS). Type-only syntax is erased file by file, as tsc would emit it. Packages resolve through
 * links to the workspace's node_modules, except `@relay/contracts`, whose exports point at a dist/ that
 * may not be built: its sources are compiled into `outDir/node_modules` the same way.
 */
export function compileArchiveChild(outDir: string): CompiledArchiveChild {
  const moduleDir = path.join(outDir, 'archive')
  const modulesDir = path.join(outDir, 'node_modules')
  const contractsDir = path.join(modulesDir, '@relay', 'contracts')
  mkdirSync(moduleDir, { recursive: true })
  mkdirSync(contractsDir, { recursive: true })
  const sources = [
    ...sourcesOf(archiveSources, moduleDir),
    ...sourcesOf(contractsSources, contractsDir),
    { from: transferSource, to: path.join(outDir, 'transfer.js') },
    { from: path.join(import.meta.dirname, 'archive-child.ts'), to: path.join(outDir, 'archive-child.js') },
  ]
  for (const { from, to } of sources) {
    const { outputText } = ts.transpileModule(readFileSync(from, 'utf8'), {
      fileName: from,
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        verbatimModuleSyntax: true,
      },
    })
    writeFileSync(to, outputText)
  }
  writeFileSync(path.join(outDir, 'package.json'), '{ "type": "module" }\n')
  writeFileSync(
    path.join(contractsDir, 'package.json'),
    '{ "name": "@relay/contracts", "type": "module", "exports": "./index.js" }\n',
  )
  for (const entry of readdirSync(workspaceModules)) {
    if (entry !== '@relay') {
      symlinkSync(path.join(workspaceModules, entry), path.join(modulesDir, entry))
    }
  }
  return {
    child: path.join(outDir, 'archive-child.js'),
    module: path.join(moduleDir, 'index.js'),
    transfer: path.join(outDir, 'transfer.js'),
  }
}

function sourcesOf(dir: string, outDir: string): { from: string; to: string }[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
    .map((name) => ({ from: path.join(dir, name), to: path.join(outDir, name.replace(/\.ts$/, '.js')) }))
}
