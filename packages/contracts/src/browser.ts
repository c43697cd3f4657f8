/**
 * The browser's entry: the plain modules as values (limits, enums, endpoints), and the schema
 * modules as types only. Nothing here loads TypeBox at run time, and a value of a schema module
 * (a schema, a server route) fails to type-check where this entry is the one resolved.
 */

export type * from './auth.js'
export * from './auth.plain.js'
export type * from './backups.js'
export * from './backups.plain.js'
export * from './client.js'
export type * from './dashboard.js'
export * from './dashboard.plain.js'
export * from './endpoint.js'
export type * from './errors.js'
export * from './errors.plain.js'
export type * from './health.js'
export * from './health.plain.js'
export type * from './health-alerts.js'
export * from './health-alerts.plain.js'
export type * from './health-history.js'
export * from './health-history.plain.js'
export type * from './notifications.js'
export * from './notifications.plain.js'
export type * from './relay-backups.js'
export * from './relay-backups.plain.js'
export type * from './sources.js'
export * from './sources.plain.js'
export * from './time.js'
export type * from './unified-auth.js'
export * from './unified-auth.plain.js'
