import type { Collector } from '@relay/contracts'
import { useState } from 'react'
import { api } from '../api'
import { RelativeTime } from '../ui/RelativeTime'
import { CollectorForm } from './CollectorForm'
import { CollectorSensors } from './CollectorSensors'
import { collectorTypeLabels } from './collector-form'
import { DeleteButton } from './DeleteButton'
import { useCollectors } from './queries'
import { ListState, SectionHeader } from './SectionHeader'
import styles from './SourcesPage.module.css'
import { StateBadge } from './StateBadge'
import { UnlockForm } from './UnlockForm'
import { useSourceAction } from './use-source-action'

type CollectorState = 'running' | 'stopped' | 'locked'

const stateBadges = {
  running: { label: 'Running', tone: 'ok' },
  stopped: { label: 'Stopped', tone: 'muted' },
  locked: { label: 'Locked', tone: 'warn' },
} as const satisfies Record<CollectorState, { label: string; tone: string }>

function stateOf(collector: Collector): CollectorState {
  if (collector.externalAccessToken && !collector.unlocked) {
    return 'locked'
  }
  return collector.running ? 'running' : 'stopped'
}

/** Collectors: what they read, whether they run, and how their last fetch went. */
export function CollectorsSection() {
  const collectors = useCollectors()
  const [editing, setEditing] = useState<Collector | 'new' | null>(null)
  const close = () => setEditing(null)

  return (
    <>
      <SectionHeader
        title="Collectors"
        description="Read sensor values from an API, an MQTT broker, this machine, or generated test data."
        actionLabel="New collector"
        onAction={editing === 'new' ? undefined : () => setEditing('new')}
      />
      {editing !== null && (
        <CollectorForm
          key={editing === 'new' ? 'new' : editing.id}
          collector={editing === 'new' ? undefined : editing}
          onDone={close}
        />
      )}
      <ListState query={collectors} what="collectors" empty="No collectors yet. Create one to start reading sensors.">
        {(list) => (
          <div className={styles.tableWrap}>
            <table className={styles.table}>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Type</th>
                  <th scope="col">State</th>
                  <th scope="col">Last fetch</th>
                  <th scope="col">Sensors</th>
                  <th scope="col">
                    <span className={styles.visuallyHidden}>Actions</span>
                  </th>
                </tr>
              </thead>
              {list.map((collector) => (
                <CollectorRows key={collector.id} collector={collector} onEdit={() => setEditing(collector)} />
              ))}
            </table>
          </div>
        )}
      </ListState>
    </>
  )
}

/** One collector's row, and below it its sensors or its unlock form when opened. */
function CollectorRows({ collector, onEdit }: { collector: Collector; onEdit: () => void }) {
  const [open, setOpen] = useState<'sensors' | 'unlock' | null>(null)
  const start = useSourceAction(api.startCollector, { failure: `Could not start ${collector.name}` })
  const stop = useSourceAction(api.stopCollector, { failure: `Could not stop ${collector.name}` })
  const remove = useSourceAction(api.deleteCollector, {
    failure: `Could not delete ${collector.name}`,
    success: () => `Deleted collector ${collector.name}`,
  })
  const state = stateOf(collector)
  const badge = stateBadges[state]
  const toggle = (panel: 'sensors' | 'unlock') => setOpen(open === panel ? null : panel)
  const isInternal = collector.collectorType === 'EventEngine'

  return (
    <tbody>
      <tr data-testid="collector-row" data-name={collector.name}>
        <td>
          <span className={styles.name}>{collector.name}</span>
          <span className={styles.sub}>every {collector.pollRateMs / 1000} s</span>
        </td>
        <td className={styles.nowrap}>{collectorTypeLabels[collector.collectorType]}</td>
        <td data-testid="collector-state">
          <StateBadge label={badge.label} tone={badge.tone} />
          {state === 'running' && !collector.active && <span className={styles.sub}>for a junction</span>}
        </td>
        <td data-testid="collector-last-fetch">
          <LastFetch collector={collector} />
        </td>
        <td className={styles.nowrap}>
          <span className={styles.name}>{collector.lastFetchTotalSensors} total</span>
          <span className={styles.sub}>
            {collector.lastFetchNewSensors} new · {collector.lastFetchLostSensors} lost
          </span>
        </td>
        <td>
          <div className={styles.actions}>
            {state === 'locked' ? (
              <button
                type="button"
                className={styles.smallButton}
                aria-expanded={open === 'unlock'}
                onClick={() => toggle('unlock')}
              >
                Unlock
              </button>
            ) : collector.active ? (
              <button
                type="button"
                className={styles.smallButton}
                disabled={stop.isPending}
                onClick={() => stop.mutate(collector.id)}
              >
                Stop
              </button>
            ) : (
              <button
                type="button"
                className={styles.smallButton}
                disabled={start.isPending}
                onClick={() => start.mutate(collector.id)}
              >
                Start
              </button>
            )}
            <button
              type="button"
              className={styles.smallButton}
              aria-expanded={open === 'sensors'}
              onClick={() => toggle('sensors')}
            >
              Sensors
            </button>
            {!isInternal && (
              <button type="button" className={styles.smallButton} onClick={onEdit}>
                Edit
              </button>
            )}
            {!isInternal && (
              <DeleteButton
                name={collector.name}
                isPending={remove.isPending}
                onDelete={() => remove.mutate(collector.id)}
              />
            )}
          </div>
        </td>
      </tr>
      {open && (
        <tr className={styles.detailRow}>
          <td colSpan={6}>
            {open === 'unlock' ? (
              <UnlockForm collector={collector} onDone={() => setOpen(null)} />
            ) : (
              <CollectorSensors collectorId={collector.id} />
            )}
          </td>
        </tr>
      )}
    </tbody>
  )
}

function LastFetch({ collector }: { collector: Collector }) {
  if (collector.lastFetchTime === null) {
    return <span className={styles.muted}>Never</span>
  }
  return (
    <>
      <RelativeTime value={collector.lastFetchTime} />
      {collector.lastFetchSuccessful ? (
        <span className={`${styles.sub} ${styles.good}`}>Succeeded</span>
      ) : (
        <span className={`${styles.sub} ${styles.bad}`}>{collector.lastFetchErrorMessage ?? 'Failed'}</span>
      )}
    </>
  )
}
