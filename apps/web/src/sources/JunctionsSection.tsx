import type { Collector, Junction, Stream } from '@relay/contracts'
import { useState } from 'react'
import { api } from '../api'
import { DeleteButton } from './DeleteButton'
import { JunctionForm } from './JunctionForm'
import { useCollectors, useJunctions, useStreams } from './queries'
import { ListState, SectionHeader } from './SectionHeader'
import styles from './SourcesPage.module.css'
import { StateBadge } from './StateBadge'
import { useSourceAction } from './use-source-action'

/** Junctions: which collectors feed which streams; starting one starts them all. */
export function JunctionsSection() {
  const junctions = useJunctions()
  const collectors = useCollectors().data ?? []
  const streams = useStreams().data ?? []
  const [editing, setEditing] = useState<Junction | 'new' | null>(null)
  const close = () => setEditing(null)

  return (
    <>
      <SectionHeader
        title="Junctions"
        description="Connect collectors to streams: a running junction sends their sensor values to each target."
        actionLabel="New junction"
        onAction={editing === 'new' ? undefined : () => setEditing('new')}
      />
      {editing !== null && (
        <JunctionForm
          key={editing === 'new' ? 'new' : editing.id}
          junction={editing === 'new' ? undefined : editing}
          collectors={collectors}
          streams={streams}
          onDone={close}
        />
      )}
      <ListState
        query={junctions}
        what="junctions"
        empty="No junctions yet. Create one to send collected values to a stream."
      >
        {(list) => (
          <div className={styles.tableWrap}>
            <table className={styles.table}>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Status</th>
                  <th scope="col">Auto-start</th>
                  <th scope="col">Collectors</th>
                  <th scope="col">Targets</th>
                  <th scope="col">
                    <span className={styles.visuallyHidden}>Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.map((junction) => (
                  <JunctionRow
                    key={junction.id}
                    junction={junction}
                    collectors={collectors}
                    streams={streams}
                    onEdit={() => setEditing(junction)}
                  />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </ListState>
    </>
  )
}

type RowProps = { junction: Junction; collectors: readonly Collector[]; streams: readonly Stream[]; onEdit: () => void }

function JunctionRow({ junction, collectors, streams, onEdit }: RowProps) {
  const start = useSourceAction(api.startJunction, { failure: `Could not start ${junction.name}` })
  const stop = useSourceAction(api.stopJunction, { failure: `Could not stop ${junction.name}` })
  const remove = useSourceAction(api.deleteJunction, {
    failure: `Could not delete ${junction.name}`,
    success: () => `Deleted junction ${junction.name}`,
  })
  const isRunning = junction.status === 'Running'
  const nameOf = (list: readonly { id: string; name: string }[], id: string) =>
    list.find((item) => item.id === id)?.name ?? 'Unknown'

  return (
    <tr data-testid="junction-row" data-name={junction.name}>
      <td>
        <span className={styles.name}>{junction.name}</span>
      </td>
      <td data-testid="junction-status">
        <StateBadge label={junction.status} tone={isRunning ? 'ok' : 'muted'} />
        {junction.lastError && <span className={`${styles.sub} ${styles.bad}`}>{junction.lastError}</span>}
      </td>
      <td>{junction.autoStart ? 'Yes' : 'No'}</td>
      <td>
        {junction.collectorIds.length === 0 ? (
          <span className={styles.muted}>None</span>
        ) : (
          <ul className={styles.plainList}>
            {junction.collectorIds.map((id) => (
              <li key={id}>{nameOf(collectors, id)}</li>
            ))}
          </ul>
        )}
      </td>
      <td>
        {junction.targets.length === 0 ? (
          <span className={styles.muted}>None</span>
        ) : (
          <ul className={styles.plainList}>
            {junction.targets.map((target) => (
              <li key={target.streamId}>
                {nameOf(streams, target.streamId)}{' '}
                <span className={styles.muted}>· every {target.sendRateMs / 1000} s</span>
              </li>
            ))}
          </ul>
        )}
      </td>
      <td>
        <div className={styles.actions}>
          {isRunning ? (
            <button
              type="button"
              className={styles.smallButton}
              disabled={stop.isPending}
              onClick={() => stop.mutate(junction.id)}
            >
              Stop
            </button>
          ) : (
            <button
              type="button"
              className={styles.smallButton}
              disabled={start.isPending}
              onClick={() => start.mutate(junction.id)}
            >
              Start
            </button>
          )}
          <button type="button" className={styles.smallButton} onClick={onEdit}>
            Edit
          </button>
          <DeleteButton name={junction.name} isPending={remove.isPending} onDelete={() => remove.mutate(junction.id)} />
        </div>
      </td>
    </tr>
  )
}
