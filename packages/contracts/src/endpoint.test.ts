import { describe, expect, it } from 'vitest'
import { cloudAuthRoutes } from './auth.js'
import { cloudBackupRoutes } from './backups.js'
import {
  cloudAuthEndpoints,
  cloudBackupEndpoints,
  dashboardEndpoints,
  featureFlagEndpoints,
  healthEndpoints,
  notificationEndpoints,
  relayBackupEndpoints,
  sourceEndpoints,
  unifiedAuthEndpoints,
} from './client.js'
import { dashboardRoutes } from './dashboard.js'
import type { Endpoint, Route, RouteSchema } from './endpoint.js'
import { healthRoutes } from './health.js'
import { featureFlagRoutes, notificationRoutes } from './notifications.js'
import { relayBackupRoutes } from './relay-backups.js'
import { sourceRoutes } from './sources.js'
import { unifiedAuthRoutes } from './unified-auth.js'

type Group = [name: string, routes: Record<string, Route<RouteSchema>>, endpoints: Record<string, Endpoint>]

const groups: Group[] = [
  ['cloud auth', cloudAuthRoutes, cloudAuthEndpoints],
  ['cloud backups', cloudBackupRoutes, cloudBackupEndpoints],
  ['dashboard', dashboardRoutes, dashboardEndpoints],
  ['health', healthRoutes, healthEndpoints],
  ['notifications', notificationRoutes, notificationEndpoints],
  ['feature flags', featureFlagRoutes, featureFlagEndpoints],
  ['relay backups', relayBackupRoutes, relayBackupEndpoints],
  ['sources', sourceRoutes, sourceEndpoints],
  ['unified auth', unifiedAuthRoutes, unifiedAuthEndpoints],
]

/** A body schema that is an error body: `success` is the literal false. */
function isErrorSchema(schema: unknown): boolean {
  const properties = (schema as { properties?: { success?: { const?: unknown } } }).properties
  return properties?.success?.const === false
}

describe.each(groups)('the %s routes', (_name, routes, endpoints) => {
  it('are their endpoints plus schemas: the same names, methods and urls, nothing else', () => {
    expect(Object.keys(routes).sort()).toEqual(Object.keys(endpoints).sort())
    for (const [name, route] of Object.entries(routes)) {
      const endpoint = endpoints[name]
      expect(Object.keys(route).sort()).toEqual(['method', 'schema', 'url'])
      expect({ method: route.method, url: route.url }).toEqual({ method: endpoint?.method, url: endpoint?.url })
    }
  })

  it('declare as data statuses exactly the statuses beyond 2xx that answer with data', () => {
    for (const [name, route] of Object.entries(routes)) {
      const dataStatuses = Object.entries(route.schema.response)
        .filter(([status, schema]) => Number(status) >= 300 && !isErrorSchema(schema))
        .map(([status]) => Number(status))
      expect({ name, dataStatuses: endpoints[name]?.dataStatuses }).toEqual({ name, dataStatuses })
    }
  })
})

it('relay health is the one endpoint whose error status carries data', () => {
  const withData = groups.flatMap(([, , endpoints]) =>
    Object.values(endpoints).filter((endpoint) => endpoint.dataStatuses.length > 0),
  )
  expect(withData).toEqual([healthEndpoints.relay])
  expect(healthEndpoints.relay.dataStatuses).toEqual([503])
})
