import type { Stream } from '@relay/contracts'
import { api } from '../api'
import { HealthBadge } from '../health/HealthBadge'
import { HeartbeatBar, sendActivity } from '../health/HeartbeatBar'
import { rowId } from '../health/item-links'
import { AlertNotes, rowClassOf } from '../health-alerts/AlertMarks'
import { CopyButton } from '../ui/CopyButton'
import common from '../ui/common.module.css'
import { ErrorText } from '../ui/ErrorText'
import { RelativeTime } from '../ui/RelativeTime'
import { ListSection, useEditor } from '../ui/Section'
import { TableHead } from '../ui/TableHead'
import { DeleteButton } from './DeleteButton'
import { useStreams } from './queries'
import styles from './SourcesPage.module.css'
import { StreamForm } from './StreamForm'
import { webSocketUrl } from './stream-form'
import { useLinkedRow } from './use-linked-row'
import { useSourceAction } from './use-source-action'

/** Streams: where junctions send their sensor values. */
export function StreamsSection() {
  const streams = useStreams()
  const editor = useEditor<Stream>()
  const linked = useLinkedRow(streams.data !== undefined)

  return (
    <ListSection
      title="Streams"
      description="Send sensor values to displays and services over HTTP, MQTT, a serial port or WebSocket."
      addLabel="New stream"
      onAdd={editor.isNew ? undefined : editor.openNew}
      form={editor.isOpen && <StreamForm key={editor.key} stream={editor.item} onDone={editor.close} />}
      query={streams}
      what="streams"
      empty="No streams yet. Create one, then send to it from a junction."
    >
      {(list) => (
        <div className={styles.tableWrap}>
          <table className={styles.table}>
            <TableHead
              columns={['Name', 'Type', 'Device', 'Screen ID', 'State', 'Last hour', 'Last sent', 'Last error']}
              withActions
              hiddenOnPhone
            />
            {list.map((stream) => (
              <StreamRows
                key={stream.id}
                stream={stream}
                isLinked={linked === rowId('stream', stream.id)}
                onEdit={() => editor.edit(stream)}
              />
            ))}
          </table>
        </div>
      )}
    </ListSection>
  )
}

/** A stream's row; a WebSocket stream's subscribe address goes on a line of its own below. */
function StreamRows({ stream, isLinked, onEdit }: { stream: Stream; isLinked: boolean; onEdit: () => void }) {
  const remove = useSourceAction(api.deleteStream, {
    failure: `Could not delete ${stream.name}`,
    success: () => `Deleted stream ${stream.name}`,
  })
  const address = stream.type === 'WebSocket' ? webSocketUrl(stream.id) : null
  return (
    <tbody>
      <tr
        id={rowId('stream', stream.id)}
        className={rowClassOf(stream, isLinked && styles.linkedRow)}
        data-testid="stream-row"
        data-silenced={stream.silenced ? true : undefined}
        data-name={stream.name}
        data-health={stream.health.state}
      >
        <td>
          <span className={common.strong}>{stream.name}</span>
          <AlertNotes acknowledged={stream.acknowledged} silenced={stream.silenced} />
        </td>
        <td data-label="Type">{stream.type}</td>
        <td data-label="Device">{stream.deviceName ?? <span className={common.mutedText}>—</span>}</td>
        <td data-label="Screen ID">{stream.screenId ?? <span className={common.mutedText}>—</span>}</td>
        <td data-label="State">
          <HealthBadge health={stream.health} subject="stream" testId="stream-running" />
        </td>
        <td data-label="Last hour">
          <HeartbeatBar item={`stream:${stream.id}`} name={stream.name} activity={sendActivity} />
        </td>
        <td className={common.nowrap} data-testid="stream-last-sent" data-label="Last sent">
          {stream.lastSentTime ? (
            <RelativeTime value={stream.lastSentTime} />
          ) : (
            <span className={common.mutedText}>Never</span>
          )}
        </td>
        <td className={stream.lastError ? styles.bad : undefined} data-label="Last error">
          {stream.lastError ? <ErrorText raw={stream.lastError} /> : <span className={common.mutedText}>—</span>}
        </td>
        <td>
          <div className={styles.rowActions}>
            <button
              type="button"
              className={common.smallButton}
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
          <td colSpan={9}>
            <span className={styles.copyRow}>
              <span className={common.mutedText}>Subscribe at</span>
              <code className={styles.code}>{address}</code>
              <CopyButton value={address} label={`subscribe URL of ${stream.name}`} />
            </span>
          </td>
        </tr>
      )}
    </tbody>
  )
}
