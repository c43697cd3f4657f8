import { randomBytes } from 'node:crypto'
import pg from 'pg'

/** Why real PostgreSQL cannot be used, or undefined when TEST_DATABASE_URL answers. */
export async function postgresProblem(url = process.env.TEST_DATABASE_URL): Promise<string | undefined> {
  if (!url) {
    return 'TEST_DATABASE_URL is not set'
  }
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 })
  try {
    await client.connect()
    await client.query('select 1')
    return undefined
  } catch (err) {
    return `cannot connect to TEST_DATABASE_URL: ${(err as Error).message}`
  } finally {
    await client.end().catch(() => {})
  }
}

/** The same server and credentials as `url`, another database. */
export function databaseUrl(url: string, database: string): string {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

async function withAdmin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

export function uniqueDatabaseName(prefix: string): string {
  return `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`
}

/** Creates an empty database (or a copy of `template`) and returns its URL. */
export async function createDatabase(url: string, name: string, template?: string): Promise<string> {
  await withAdmin(url, (client) =>
    client.query(`create database "${name}"${template ? ` template "${template}"` : ''}`),
  )
  return databaseUrl(url, name)
}

export async function dropDatabase(url: string, name: string): Promise<void> {
  await withAdmin(url, (client) => client.query(`drop database if exists "${name}" with (force)`))
}
