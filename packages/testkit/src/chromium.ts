import { accessSync, constants } from 'node:fs'
import { type Browser, chromium } from 'playwright-core'

export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/** Flags for a closed network: no background calls home, no sandbox as root. */
export const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
]

export function chromiumProblem(): string | undefined {
  try {
    accessSync(chromiumPath, constants.X_OK)
    return undefined
  } catch {
    return `no Chromium at ${chromiumPath} (apt-get install -y chromium, or set CHROMIUM_PATH)`
  }
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath, args: chromiumArgs, headless: true })
}
