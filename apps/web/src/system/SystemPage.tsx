import type { DatabaseHealth, RelayHealth } from '@relay/contracts'
import { useQuery } from '@tanstack/react-query'
import { useId } from 'react'
import { api } from '../api'
import { CopyButton } from '../ui/CopyButton'
import common from '../ui/common.module.css'
import { Fact } from '../ui/Fact'
import { formatUptime } from './format-uptime'
import styles from './SystemPage.module.css'

const pollMs = 5000

const statusBadges = {
  ok: { label: 'Healthy', className: common.ok },
  degraded: { label: 'Degraded', className: common.warn },
} satisfies Record<RelayHealth['status'], { label: string; className: string | undefined }>

const driverLabels = {
  sqlite: 'SQLite',
  pglite: 'PGlite',
  postgres: 'PostgreSQL',
} satisfies Record<DatabaseHealth['driver'], string>

export function SystemPage() {
  const health = useQuery({
    queryKey: ['health'],
    queryFn: ({ signal }) => api.health(signal),
    refetchInterval: pollMs,
    // Polling is the retry: a failed check shows at once, and the next poll tries again.
    retry: false,
  })
  const updatedAt = new Date(health.dataUpdatedAt)

  return (
    <>
      <title>System · Relay</title>
      <div className={styles.pageHeader}>
        <div className={styles.titleRow}>
          <h1>System</h1>
          {health.data && <StatusBadge status={health.data.status} />}
        </div>
        {health.dataUpdatedAt > 0 && (
          <p className={common.pageHeaderNote} data-testid="system-updated">
            Last updated <time dateTime={updatedAt.toISOString()}>{updatedAt.toLocaleTimeString()}</time>
          </p>
        )}
      </div>

      {health.isPending && (
        <p role="status" className={styles.loading}>
          Checking the relay…
        </p>
      )}
      {health.isError && (
        <div role="alert" className={styles.error} data-testid="system-error">
          <strong>Cannot reach the relay</strong>
          <p>{health.error.message}</p>
          <p className={styles.hint}>
            {health.data ? 'Showing the last known state. ' : ''}Retrying every {pollMs / 1000} s.
          </p>
        </div>
      )}
      {health.data && <HealthDetails health={health.data} isStale={health.isError} />}
    </>
  )
}

function StatusBadge({ status }: { status: RelayHealth['status'] }) {
  const badge = statusBadges[status]
  return (
    <span
      className={`${common.badge} ${styles.statusBadge} ${badge.className}`}
      data-testid="system-status"
      data-status={status}
    >
      {badge.label}
    </span>
  )
}

function HealthDetails({ health, isStale }: { health: RelayHealth; isStale: boolean }) {
  const serviceId = useId()
  const dbId = useId()
  const { db } = health

  return (
    <div className={isStale ? `${styles.cards} ${styles.stale}` : styles.cards}>
      <section className={styles.card} aria-labelledby={serviceId}>
        <h2 id={serviceId}>Service</h2>
        <dl className={styles.facts}>
          <Fact label="Version" testId="system-version">
            {health.version}
          </Fact>
          <Fact label="Backend ID">
            <span className={styles.idRow}>
              <code className={styles.id} data-testid="system-backend-id">
                {health.backendId}
              </code>
              <CopyButton value={health.backendId} label="backend ID" />
            </span>
          </Fact>
          <Fact label="Uptime" testId="system-uptime">
            {formatUptime(health.uptimeSeconds)}
          </Fact>
        </dl>
      </section>

      <section className={styles.card} aria-labelledby={dbId} data-testid="system-db">
        <h2 id={dbId}>Database</h2>
        <dl className={styles.facts}>
          <Fact label="Driver">{driverLabels[db.driver]}</Fact>
          <Fact label="Connection">
            <span className={db.ok ? styles.good : styles.bad}>{db.ok ? 'Connected' : 'Unavailable'}</span>
          </Fact>
          {db.ok && <Fact label="Latency">{formatLatency(db.latencyMs)}</Fact>}
          {db.error && (
            <Fact label="Error" testId="system-db-error">
              <span className={styles.bad}>{db.error}</span>
            </Fact>
          )}
        </dl>
      </section>
    </div>
  )
}

function formatLatency(ms: number): string {
  return `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`
}
