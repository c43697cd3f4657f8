import { readFileSync } from 'node:fs'

/** The `version` of the package.json one folder above `moduleUrl` (an app's src/ or dist/). */
export function packageVersion(moduleUrl: string): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', moduleUrl), 'utf8')) as { version?: string }
  return pkg.version ?? '0.0.0'
}
