#!/usr/bin/env node
// Builds what is missing or stale, then runs the cloud and the relay (or one of them) on their
// embedded defaults, prints their URLs, and stops both cleanly on Ctrl-C.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import readline from 'node:readline'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const which = process.argv[2] ?? 'all'
if (!['all', 'cloud', 'relay'].includes(which)) {
  console.error(`usage: node scripts/start.mjs [cloud|relay]`)
  process.exit(2)
}

const env = { ...process.env }
env.LOG_PRETTY ??= process.stdout.isTTY ? 'true' : 'false'
const cloudPort = env.CLOUD_PORT || '8787'
const relayPort = env.RELAY_PORT || '8080'
const cloudHost = env.CLOUD_HOST || '127.0.0.1'
const relayHost = env.RELAY_HOST || '127.0.0.1'
const cloudUrl = env.CLOUD_PUBLIC_URL || `http://${urlHost(cloudHost)}:${cloudPort}`
env.CLOUD_URL ??= cloudUrl
// A first start creates a demo cloud account with a gifted license and prints its password once.
env.CLOUD_DEMO_ACCOUNT ??= 'true'

build()

const services = {
  cloud: { entry: 'apps/cloud/dist/main.js', health: `${cloudUrl}/healthz`, label: 'Cloud' },
  relay: {
    entry: 'apps/relay/dist/main.js',
    health: `http://${urlHost(relayHost)}:${relayPort}/api/health`,
    label: 'Relay',
  },
}
const names = which === 'all' ? ['cloud', 'relay'] : [which]
const children = new Map()
let stopping = false
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => stop(0))
}
process.on('exit', () => {
  for (const child of children.values()) {
    child.kill('SIGKILL')
  }
})

for (const name of names) {
  // Own process group: a terminal's Ctrl-C reaches only this script, which stops each child exactly once.
  const child = spawn(process.execPath, [...nodeFlags(name), services[name].entry], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  for (const stream of [child.stdout, child.stderr]) {
    readline.createInterface({ input: stream }).on('line', (line) => console.log(`[${name}] ${line}`))
  }
  child.on('exit', (code, signal) => {
    children.delete(name)
    if (!stopping) {
      console.error(`[${name}] exited (${signal ?? code}); stopping`)
      stop(code || 1)
    } else if (children.size === 0) {
      process.exit(process.exitCode ?? 0)
    }
  })
  children.set(name, child)
  // The relay talks to the cloud, so start it once the cloud answers.
  if (name === 'cloud' && names.includes('relay')) {
    await waitFor(services.cloud.health)
  }
}

for (const name of names) {
  await waitFor(services[name].health)
}
console.log('')
for (const name of names) {
  const url = services[name].health.replace(/\/(healthz|api\/health)$/, '')
  console.log(`  ${services[name].label.padEnd(6)} ${url}${name === 'relay' ? '   <- open this in a browser' : ''}`)
}
console.log('\n  Press Ctrl-C to stop.\n')

function stop(code) {
  if (stopping) {
    return
  }
  stopping = true
  process.exitCode = code
  if (children.size === 0) {
    process.exit(code)
  }
  for (const child of children.values()) {
    child.kill('SIGTERM')
  }
  setTimeout(() => process.exit(code || 1), 10_000).unref()
}

function build() {
  run('npx', ['tsc', '-b', 'apps/cloud/tsconfig.build.json', 'apps/relay/tsconfig.build.json'], 'compiling servers')
  const webDist = path.join(root, 'apps/web/dist/index.html')
  if (!existsSync(webDist) || newestMtime(path.join(root, 'apps/web/src')) > statSync(webDist).mtimeMs) {
    run('npm', ['run', 'build', '-w', '@relay/web', '--silent'], 'building web UI')
  }
}

function run(command, args, what) {
  console.log(`> ${what}`)
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' })
  if (result.status !== 0) {
    console.error(`${what} failed`)
    process.exit(result.status ?? 1)
  }
}

function newestMtime(dir) {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) {
      newest = Math.max(newest, statSync(path.join(entry.parentPath, entry.name)).mtimeMs)
    }
  }
  return newest
}

async function waitFor(url, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline && !stopping) {
    try {
      const res = await fetch(url)
      if (res.ok) {
        return
      }
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  if (!stopping) {
    console.error(`${url} did not become healthy within ${timeoutMs / 1000} s`)
    stop(1)
  }
}

/**
 * The Node.js flags a service runs with, from its package.json. The relay keeps V8's young generation
 * small: at the default size it stays reserved after startup and holds tens of MB on a user's machine.
 */
function nodeFlags(name) {
  const manifest = JSON.parse(readFileSync(path.join(root, 'apps', name, 'package.json'), 'utf8'))
  return manifest.nodeFlags ?? []
}

function urlHost(host) {
  if (host === '0.0.0.0' || host === '::') {
    return '127.0.0.1'
  }
  return host.includes(':') ? `[${host}]` : host
}
