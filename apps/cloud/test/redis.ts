import { type ChildProcess, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { connect, createServer, type Server, type Socket } from 'node:net'
import { freePort, requirement } from '@relay/testkit'
import { Redis } from 'ioredis'

/** The Redis the tests use: TEST_REDIS_URL, or the local default. */
export const testRedisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

async function redisProblem(): Promise<string | undefined> {
  const redis = connectTestRedis()
  redis.on('error', () => {})
  try {
    await redis.ping()
    return undefined
  } catch (err) {
    return `cannot reach ${testRedisUrl}: ${(err as Error).message}`
  } finally {
    redis.disconnect()
  }
}

/** Whether Redis tests run: skipped with a reason outside CI, a failure in CI. */
export const redisRequirement = requirement('Redis', await redisProblem())

/**
 * A plain client for looking into Redis from a test: it queues commands until connected, so it can be
 * used at once. The app's own connections come from `openRedis`, which never queues.
 */
export function connectTestRedis(url = testRedisUrl): Redis {
  return new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 2_000 })
}

/** A key prefix of its own, so tests sharing one Redis never see each other's keys. */
export function uniqueRedisPrefix(): string {
  return `relay-test:${randomUUID()}:`
}

/** A Redis URL where nothing listens: every connection is refused. */
export async function deadRedisUrl(): Promise<string> {
  return `redis://127.0.0.1:${await freePort()}`
}

export type OwnRedis = {
  url: string
  /** Kills the server at once (SIGKILL), as a crash would. */
  kill(): Promise<void>
  /** Starts a new, empty server on the same port. */
  start(): Promise<void>
  /** Stops the process (SIGSTOP): connections stay open, nothing is answered, until `thaw`. */
  freeze(): void
  thaw(): void
}

/** A redis-server of the test's own on a free port, with nothing saved to disk, to kill and restart. */
export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort()
  const url = `redis://127.0.0.1:${port}`
  let child: ChildProcess | undefined

  async function start() {
    const server = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    )
    child = server
    const exited = new Promise<never>((_, reject) => {
      server.once('exit', (code) => reject(new Error(`redis-server on ${port} exited with ${code}`)))
      server.once('error', reject)
    })
    // Ready once it answers PING.
    const probe = connectTestRedis(url)
    probe.on('error', () => {})
    try {
      for (;;) {
        const answered = await Promise.race([
          probe.ping().then(
            () => true,
            () => false,
          ),
          exited,
        ])
        if (answered) {
          return
        }
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    } finally {
      probe.disconnect()
    }
  }

  async function kill() {
    const server = child
    child = undefined
    if (!server || server.exitCode !== null) {
      return
    }
    const gone = new Promise((resolve) => server.once('exit', resolve))
    server.kill('SIGKILL')
    await gone
  }

  await start()
  return {
    url,
    kill,
    start,
    freeze: () => child?.kill('SIGSTOP'),
    thaw: () => child?.kill('SIGCONT'),
  }
}

export type RedisLink = {
  /** Where to connect instead of Redis itself. */
  url: string
  /** Drops every connection and refuses new ones, while Redis keeps running with its data. */
  cut(): Promise<void>
  /** Accepts connections again, on the same port. */
  restore(): Promise<void>
  close(): Promise<void>
}

/** A TCP relay in front of a Redis, to lose the connection without losing what Redis holds. */
export async function startRedisLink(redisUrl: string): Promise<RedisLink> {
  const target = new URL(redisUrl)
  const port = await freePort()
  const sockets = new Set<Socket>()
  let server: Server | undefined

  async function restore() {
    const listening = createServer((client) => {
      const upstream = connect(Number(target.port), target.hostname)
      for (const socket of [client, upstream]) {
        sockets.add(socket)
        socket.on('close', () => sockets.delete(socket))
        socket.on('error', () => {})
      }
      client.pipe(upstream).pipe(client)
    })
    await new Promise<void>((resolve, reject) => {
      listening.once('error', reject)
      listening.listen(port, '127.0.0.1', () => resolve())
    })
    server = listening
  }

  async function cut() {
    const listening = server
    server = undefined
    for (const socket of sockets) {
      socket.destroy()
    }
    if (listening) {
      await new Promise((resolve) => listening.close(resolve))
    }
  }

  await restore()
  return { url: `redis://127.0.0.1:${port}`, cut, restore, close: cut }
}
