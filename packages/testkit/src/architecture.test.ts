import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { featureOf, findImportCycles, readImportGraph } from './import-graph.js'
import { tempDir } from './temp.js'

const root = fileURLToPath(new URL('../../../', import.meta.url))
const sourceFolders = ['apps', 'packages'].flatMap((group) =>
  readdirSync(path.join(root, group))
    .map((name) => path.join(root, group, name, 'src'))
    .filter((folder) => existsSync(folder)),
)
const graph = readImportGraph(sourceFolders)
const shown = (file: string) => path.relative(root, file)

describe('the workspace source', () => {
  it('is read whole', () => {
    expect(sourceFolders.map(shown)).toEqual(expect.arrayContaining(['apps/cloud/src', 'apps/relay/src']))
    expect(graph.size).toBeGreaterThan(200)
  })

  it('has no import cycles, type imports included', () => {
    expect(findImportCycles(graph).map((cycle) => cycle.map(shown))).toEqual([])
  })

  it("never imports another feature's repo: features talk through services", () => {
    const crossings = [...graph].flatMap(([file, targets]) =>
      targets
        .filter((target) => path.basename(target) === 'repo.ts' && featureOf(target) !== featureOf(file))
        .map((target) => `${shown(file)} -> ${shown(target)}`),
    )
    expect(crossings).toEqual([])
  })
})

describe('the import checks', () => {
  it('see type imports, re-exports and imports over several lines, and find the cycle they make', () => {
    const folder = tempDir()
    try {
      const src = path.join(folder.path, 'src')
      const files = {
        'x/a.ts': "import type { B } from './b.js'\nexport type A = B\n",
        'x/b.ts': "import {\n  type C,\n} from '../y/c.js'\nexport type B = C\n",
        'y/c.ts': "export type { A as C } from '../x/a.js'\n",
        'y/d.ts': "import '../x/a.js'\nimport { readFileSync } from 'node:fs'\n",
      }
      for (const [name, text] of Object.entries(files)) {
        mkdirSync(path.dirname(path.join(src, name)), { recursive: true })
        writeFileSync(path.join(src, name), text)
      }
      const fixture = readImportGraph([src])
      expect(fixture.get(path.join(src, 'y/d.ts'))).toEqual([path.join(src, 'x/a.ts')])
      expect(findImportCycles(fixture)).toEqual([['x/a.ts', 'x/b.ts', 'y/c.ts'].map((name) => path.join(src, name))])
    } finally {
      folder.remove()
    }
  })

  it('name the feature of a file by its first folder under src', () => {
    expect(featureOf(path.join('apps', 'relay', 'src', 'auth', 'routes.ts'))).toBe(
      path.join('apps', 'relay', 'src', 'auth'),
    )
    expect(featureOf(path.join('apps', 'relay', 'src', 'app.ts'))).toBeUndefined()
  })
})
