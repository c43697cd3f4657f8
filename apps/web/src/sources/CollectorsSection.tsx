import type { Collector } from '@relay/contracts'
import { useState } from 'react'
import { useSearchParams } from 'react-router'
import { api } from '../api'
import { HealthBadge } from '../health/HealthBadge'
import { HeartbeatBar, pollActivity } from '../health/HeartbeatBar'
import { rowId } from '../health/item-links'
import { AlertNotes, rowClassOf } from '../health-alerts/AlertMarks'
import { Badge } from '../ui/Badge'
import common from '../ui/common.module.css'
import { ErrorText } from '../ui/ErrorText'
import { RelativeTime } from '../ui/RelativeTime'
import { ListSection, useEditor } from '../ui/Section'
import { TableHead } from '../ui/TableHead'
import { CollectorForm } from './CollectorForm'
import { CollectorSensors } from './CollectorSensors'
import { collectorTypeLabels } from './collector-form'
import { DeleteButton } from './DeleteButton'
import { useCollectors } from './queries'
import { RunButton } from './RunButton'
import styles from './SourcesPage.module.css'
import { UnlockForm } from './UnlockForm'
import { useLinkedRow } from './use-linked-row'
import { useSourceAction } from './use-source-action'

/** Its token waits for the password after a restart, so it cannot poll whatever its health says. */
const isLocked = (collector: Collector) => collector.externalAccessToken && !collector.unlocked

/** Collectors: what they read, how healthy they are, their last hour, and how their last fetch went. */
export function CollectorsSection() {
  const collectors = useCollectors()
  const [searchParams] = useSearchParams()
  const editor = useEditor<Collector>(searchParams.get('new') === 'collector')
  const linked = useLinkedRow(collectors.data !== undefined)

  return (
    <ListSection
      title="Collectors"
      description="Read sensor values from an API, an MQTT broker, this machine, or generated test data."
      addLabel="New collector"
      onAdd={editor.isNew ? undefined : editor.openNew}
      form={editor.isOpen && <CollectorForm key={editor.key} collector={editor.item} onDone={editor.close} />}
      query={collectors}
      what="collectors"
      empty="No collectors yet. Create one to start reading sensors."
    >
      {(list) => (
        <div className={styles.tableWrap}>
          <table className={styles.table}>
            <TableHead
              columns={['Name', 'Type', 'State', 'Last hour', 'Last fetch', 'Sensors']}
              withActions
              hiddenOnPhone
            />
            {list.map((collector) => (
              <CollectorRows
                key={collector.id}
                collector={collector}
                isLinked={linked === rowId('collector', collector.id)}
                onEdit={() => editor.edit(collector)}
              />
            ))}
          </table>
        </div>
      )}
    </ListSection>
  )
}

type RowProps = { collector: Collector; isLinked: boolean; onEdit: () => void }

/** One collector's row, and below it its sensors or its unlock form when opened. */
function CollectorRows({ collector, isLinked, onEdit }: RowProps) {
  const [open, setOpen] = useState<'sensors' | 'unlock' | null>(null)
  const start = useSourceAction(api.startCollector, { failure: `Could not start ${collector.name}` })
  const stop = useSourceAction(api.stopCollector, { failure: `Could not stop ${collector.name}` })
  const remove = useSourceAction(api.deleteCollector, {
    failure: `Could not delete ${collector.name}`,
    success: () => `Deleted collector ${collector.name}`,
  })
  const locked = isLocked(collector)
  const toggle = (panel: 'sensors' | 'unlock') => setOpen(open === panel ? null : panel)
  const isInternal = collector.collectorType === 'EventEngine'

  return (
    <tbody>
      <tr
        id={rowId('collector', collector.id)}
        className={rowClassOf(collector, isLinked && styles.linkedRow)}
        data-testid="collector-row"
        data-silenced={collector.silenced ? true : undefined}
        data-name={collector.name}
        data-health={collector.health.state}
      >
        <td>
          <span className={common.strong}>{collector.name}</span>
          <AlertNotes acknowledged={collector.acknowledged} silenced={collector.silenced} />
          <span className={common.sub}>every {collector.pollRateMs / 1000} s</span>
        </td>
        <td className={common.nowrap} data-label="Type">
          {collectorTypeLabels[collector.collectorType]}
        </td>
        <td data-testid="collector-state" data-label="State">
          {locked ? (
            <Badge small tone="warn" state="locked">
              Locked
            </Badge>
          ) : (
            <HealthBadge health={collector.health} subject="collector" />
          )}
          {collector.running && !collector.active && <span className={common.sub}>for a junction</span>}
        </td>
        <td data-label="Last hour">
          <HeartbeatBar item={`collector:${collector.id}`} name={collector.name} activity={pollActivity} />
        </td>
        <td data-testid="collector-last-fetch" data-label="Last fetch">
          <LastFetch collector={collector} />
        </td>
        <td className={common.nowrap} data-label="Sensors">
          <span className={common.strong}>{collector.lastFetchTotalSensors} total</span>
          <span className={common.sub}>
            {collector.lastFetchNewSensors} new · {collector.lastFetchLostSensors} lost
          </span>
        </td>
        <td>
          <div className={styles.rowActions}>
            {locked ? (
              <button
                type="button"
                className={styles.toggleButton}
                aria-expanded={open === 'unlock'}
                onClick={() => toggle('unlock')}
              >
                Unlock
              </button>
            ) : (
              <RunButton id={collector.id} isRunning={collector.active} start={start} stop={stop} />
            )}
            <button
              type="button"
              className={styles.toggleButton}
              aria-expanded={open === 'sensors'}
              onClick={() => toggle('sensors')}
            >
              Sensors
            </button>
            {!isInternal && (
              <button type="button" className={common.smallButton} onClick={onEdit}>
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
          <td colSpan={7}>
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
    return <span className={common.mutedText}>Never</span>
  }
  return (
    <>
      <RelativeTime value={collector.lastFetchTime} />
      {collector.lastFetchSuccessful ? (
        <span className={`${common.sub} ${styles.good}`}>Succeeded</span>
      ) : (
        <ErrorText className={`${common.sub} ${styles.bad}`} raw={collector.lastFetchErrorMessage ?? 'Failed'} />
      )}
    </>
  )
}
