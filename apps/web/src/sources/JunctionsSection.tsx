import type { Collector, Junction, Stream } from '@relay/contracts'
import { api } from '../api'
import { HealthBadge } from '../health/HealthBadge'
import { rowId } from '../health/item-links'
import { AlertNotes, rowClassOf } from '../health-alerts/AlertMarks'
import common from '../ui/common.module.css'
import { ErrorText } from '../ui/ErrorText'
import { ListSection, useEditor } from '../ui/Section'
import { TableHead } from '../ui/TableHead'
import { DeleteButton } from './DeleteButton'
import { JunctionForm } from './JunctionForm'
import { useCollectors, useJunctions, useStreams } from './queries'
import { RunButton } from './RunButton'
import styles from './SourcesPage.module.css'
import { useSourceAction } from './use-source-action'

/** Junctions: which collectors feed which streams; starting one starts them all. */
export function JunctionsSection() {
  const junctions = useJunctions()
  const collectors = useCollectors().data ?? []
  const streams = useStreams().data ?? []
  const editor = useEditor<Junction>()

  return (
    <ListSection
      title="Junctions"
      description="Connect collectors to streams: a running junction sends their sensor values to each target."
      addLabel="New junction"
      onAdd={editor.isNew ? undefined : editor.openNew}
      form={
        editor.isOpen && (
          <JunctionForm
            key={editor.key}
            junction={editor.item}
            collectors={collectors}
            streams={streams}
            onDone={editor.close}
          />
        )
      }
      query={junctions}
      what="junctions"
      empty="No junctions yet. Create one to send collected values to a stream."
    >
      {(list) => (
        <div className={styles.tableWrap}>
          <table className={styles.table}>
            <TableHead columns={['Name', 'Status', 'Auto-start', 'Collectors', 'Targets']} withActions hiddenOnPhone />
            {list.map((junction) => (
              <JunctionRow
                key={junction.id}
                junction={junction}
                collectors={collectors}
                streams={streams}
                onEdit={() => editor.edit(junction)}
              />
            ))}
          </table>
        </div>
      )}
    </ListSection>
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
    <tbody>
      <tr
        id={rowId('junction', junction.id)}
        className={rowClassOf(junction)}
        data-testid="junction-row"
        data-silenced={junction.silenced ? true : undefined}
        data-name={junction.name}
        data-health={junction.health.state}
      >
        <td>
          <span className={common.strong}>{junction.name}</span>
          <AlertNotes acknowledged={junction.acknowledged} silenced={junction.silenced} />
        </td>
        <td data-label="Status">
          <HealthBadge health={junction.health} subject="junction" testId="junction-status" />
          {junction.lastError && junction.health.reason !== junction.lastError && (
            <ErrorText className={`${common.sub} ${styles.bad}`} raw={junction.lastError} />
          )}
        </td>
        <td data-label="Auto-start">{junction.autoStart ? 'Yes' : 'No'}</td>
        <td data-label="Collectors">
          {junction.collectorIds.length === 0 ? (
            <span className={common.mutedText}>None</span>
          ) : (
            <ul className={styles.plainList}>
              {junction.collectorIds.map((id) => (
                <li key={id}>{nameOf(collectors, id)}</li>
              ))}
            </ul>
          )}
        </td>
        <td data-label="Targets">
          {junction.targets.length === 0 ? (
            <span className={common.mutedText}>None</span>
          ) : (
            <ul className={styles.plainList}>
              {junction.targets.map((target) => (
                <li key={target.streamId}>
                  {nameOf(streams, target.streamId)}{' '}
                  <span className={common.mutedText}>· every {target.sendRateMs / 1000} s</span>
                </li>
              ))}
            </ul>
          )}
        </td>
        <td>
          <div className={styles.rowActions}>
            <RunButton id={junction.id} isRunning={isRunning} start={start} stop={stop} />
            <button type="button" className={common.smallButton} onClick={onEdit}>
              Edit
            </button>
            <DeleteButton
              name={junction.name}
              isPending={remove.isPending}
              onDelete={() => remove.mutate(junction.id)}
            />
          </div>
        </td>
      </tr>
    </tbody>
  )
}
