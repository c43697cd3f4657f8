import type { Stream } from '@relay/contracts'
import { useState } from 'react'
import { api } from '../api'
import { CopyButton } from '../ui/CopyButton'
import { RelativeTime } from '../ui/RelativeTime'
import { DeleteButton } from './DeleteButton'
import { useStreams } from './queries'
import { ListState, SectionHeader } from './SectionHeader'
import styles from './SourcesPage.module.css'
import { StateBadge } from './StateBadge'
import { StreamForm } from './StreamForm'
import { webSocketUrl } from './stream-form'
import { useSourceAction } from './use-source-action'

/** Streams: where junctions send their sensor values. */
export function StreamsSection() {
  const streams = useStreams()
  const [editing, setEditing] = useState<Stream | 'new' | null>(null)
  const close = () => setEditing(null)

  return (
    <>
      <SectionHeader
        title="Streams"
        description="Send sensor values to displays and services over HTTP, MQTT, a serial port or WebSocket."
        actionLabel="New stream"
        onAction={editing === 'new' ? undefined : () => setEditing('new')}
      />
      {editing !== null && (
        <StreamForm
          key={editing === 'new' ? 'new' : editing.id}
          stream={editing === 'new' ? undefined : editing}
          onDone={close}
        />
      )}
      <ListState query={streams} what="streams" empty="No streams yet. Create one, then send to it from a junction.">
        {(list) => (
          <div className={styles.tableWrap}>
            <table className={styles.table}>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Type</th>
                  <th scope="col">Device</th>
                  <th scope="col">Screen ID</th>
                  <th scope="col">Running</th>
                  <th scope="col">Last sent</th>
                  <th scope="col">Last error</th>
                  <th scope="col">
                    <span className={styles.visuallyHidden}>Actions</span>
                  </th>
                </tr>
              </thead>
              {list.map((stream) => (
                <StreamRows key={stream.id} stream={stream} onEdit={() => setEditing(stream)} />
              ))}
            </table>
          </div>
        )}
      </ListState>
    </>
  )
}

/** A stream's row; a WebSocket stream's subscribe address goes on a line of its own below. */
function StreamRows({ stream, onEdit }: { stream: Stream; onEdit: () => void }) {
  const remove = useSourceAction(api.deleteStream, {
    failure: `Could not delete ${stream.name}`,
    success: () => `Deleted stream ${stream.name}`,
  })
  const address = stream.type === 'WebSocket' ? webSocketUrl(stream.id) : null
  return (
    <tbody>
      <tr data-testid="stream-row" data-name={stream.name}>
        <td>
          <span className={styles.name}>{stream.name}</span>
        </td>
        <td>{stream.type}</td>
        <td>{stream.deviceName ?? <span className={styles.muted}>—</span>}</td>
        <td>{stream.screenId ?? <span className={styles.muted}>—</span>}</td>
        <td data-testid="stream-running">
          <StateBadge label={stream.running ? 'Running' : 'Stopped'} tone={stream.running ? 'ok' : 'muted'} />
        </td>
        <td className={styles.nowrap} data-testid="stream-last-sent">
          {stream.lastSentTime ? (
            <RelativeTime value={stream.lastSentTime} />
          ) : (
            <span className={styles.muted}>Never</span>
          )}
        </td>
        <td className={stream.lastError ? styles.bad : undefined}>
          {stream.lastError ?? <span className={styles.muted}>—</span>}
        </td>
        <td>
          <div className={styles.actions}>
            <button
              type="button"
              className={styles.smallButton}
              onClick={onEdit}
              disabled={stream.running}
              title={stream.running ? 'Stop the junctions that send to it first' : undefined}
            >
              Edit
            </button>
            <DeleteButton name={stream.name} isPending={remove.isPending} onDelete={() => remove.mutate(stream.id)} />
          </div>
        </td>
      </tr>
      {address && (
        <tr className={styles.addressRow}>
          <td colSpan={8}>
            <span className={styles.copyRow}>
              <span className={styles.muted}>Subscribe at</span>
              <code className={styles.code}>{address}</code>
              <CopyButton value={address} label={`subscribe URL of ${stream.name}`} />
            </span>
          </td>
        </tr>
      )}
    </tbody>
  )
}
