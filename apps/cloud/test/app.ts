import { type CloudConfig, loadConfig } from '../src/config.js'

/** Configuration for an app under test: quiet logs, everything else at its defaults. */
export function testConfig(dataDir: string, env: Record<string, string> = {}): CloudConfig {
  return loadConfig({ CLOUD_DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env })
}
