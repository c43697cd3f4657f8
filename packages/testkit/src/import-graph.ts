import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'

/** Source file → the source files it imports by relative path (type-only imports included). */
export type ImportGraph = Map<string, string[]>

const specifiers = [
  // import … from '…', export … from '…', import type … from '…'
  /\b(?:import|export)\s[^'";]*?\sfrom\s*['"]([^'"]+)['"]/g,
  // import '…' (side effects only)
  /^\s*import\s*['"]([^'"]+)['"]/gm,
  // import('…'), import type X = typeof import('…')
  /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
]

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name))
}

/** The file a relative specifier names: `./x.js` is written for `./x.ts`, a folder means its index. */
function resolveSource(from: string, specifier: string, known: Set<string>): string | undefined {
  const base = path.resolve(path.dirname(from), specifier)
  const stem = base.replace(/\.(m?js|jsx|ts|tsx)$/, '')
  return [`${stem}.ts`, `${stem}.tsx`, base, path.join(base, 'index.ts')].find((file) => known.has(file))
}

/** Reads every TypeScript file under `folders` and the relative imports between them. */
export function readImportGraph(folders: readonly string[]): ImportGraph {
  const files = folders.flatMap(sourceFiles)
  const known = new Set(files)
  const graph: ImportGraph = new Map()
  for (const file of files) {
    const text = readFileSync(file, 'utf8')
    const targets = new Set<string>()
    for (const pattern of specifiers) {
      for (const [, specifier] of text.matchAll(pattern)) {
        const target = specifier?.startsWith('.') ? resolveSource(file, specifier, known) : undefined
        if (target) {
          targets.add(target)
        }
      }
    }
    graph.set(file, [...targets].sort())
  }
  return graph
}

/** Every group of files that import each other, directly or around a loop (Tarjan's strongly connected components). */
export function findImportCycles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>()
  const lowest = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const cycles: string[][] = []

  const visit = (file: string) => {
    index.set(file, index.size)
    lowest.set(file, index.size - 1)
    stack.push(file)
    onStack.add(file)
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target)
        lowest.set(file, Math.min(lowest.get(file) ?? 0, lowest.get(target) ?? 0))
      } else if (onStack.has(target)) {
        lowest.set(file, Math.min(lowest.get(file) ?? 0, index.get(target) ?? 0))
      }
    }
    if (lowest.get(file) === index.get(file)) {
      const group: string[] = []
      let member: string | undefined
      do {
        member = stack.pop()
        if (member !== undefined) {
          onStack.delete(member)
          group.push(member)
        }
      } while (member !== undefined && member !== file)
      if (group.length > 1 || graph.get(file)?.includes(file)) {
        cycles.push(group.sort())
      }
    }
  }
  for (const file of graph.keys()) {
    if (!index.has(file)) {
      visit(file)
    }
  }
  return cycles
}

/**
 * The feature folder a file belongs to: the first folder under the nearest `src/`
 * (`apps/relay/src/auth/routes.ts` → `apps/relay/src/auth`); files directly in `src/` belong to none.
 */
export function featureOf(file: string): string | undefined {
  const parts = file.split(path.sep)
  const src = parts.lastIndexOf('src')
  return src >= 0 && parts.length > src + 2 ? parts.slice(0, src + 2).join(path.sep) : undefined
}
