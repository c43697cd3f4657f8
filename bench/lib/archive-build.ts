import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import ts from 'typescript'

const repoRoot = path.resolve(import.meta.dirname, '../..')
const archiveSources = path.join(repoRoot, 'apps/relay/src/backups/archive')

/**
 * The backup archive module and `archive-child.ts` as plain JavaScript in `outDir`, so the bench runs
 * them on plain Node like the relay's dist/ (the tsx loader alone adds some 60 MB of RSS). Type-only
 * syntax is erased file by file, as tsc would emit it; packages resolve through a link to the
 * workspace's node_modules. Returns the paths to run and import.
 */
export function compileArchiveChild(outDir: string): { child: string; module: string } {
  const moduleDir = path.join(outDir, 'archive')
  mkdirSync(moduleDir, { recursive: true })
  const sources = readdirSync(archiveSources)
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
    .map((name) => ({ from: path.join(archiveSources, name), to: path.join(moduleDir, name.replace(/\.ts$/, '.js')) }))
  sources.push({ from: path.join(import.meta.dirname, 'archive-child.ts'), to: path.join(outDir, 'archive-child.js') })
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
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(outDir, 'node_modules'), 'dir')
  return { child: path.join(outDir, 'archive-child.js'), module: path.join(moduleDir, 'index.js') }
}
