import type { Collector, HealthEvent, Stream } from '@relay/contracts'
import { useState } from 'react'
import { Link } from 'react-router'
import { FilterSelect } from '../notifications/FilterSelect'
import { Badge } from '../ui/Badge'
import common from '../ui/common.module.css'
import { ErrorText } from '../ui/ErrorText'
import { Panel } from '../ui/Panel'
import { RelativeTime } from '../ui/RelativeTime'
import styles from './Health.module.css'
import { healthBadge } from './health-badge'
import { parseHealthItem, sourceLink } from './item-links'
import { useHealthEvents } from './queries'

type Named = Pick<Collector | Stream, 'id' | 'name'>

/** The latest changes of state of collectors and streams, newest first, of all or of one. */
export function HealthEventsPanel(props: { collectors: readonly Named[]; streams: readonly Named[] }) {
  const [item, setItem] = useState('')
  const events = useHealthEvents(item || undefined)
  const names = new Map([
    ...props.collectors.map((collector) => [`collector:${collector.id}`, collector.name] as const),
    ...props.streams.map((stream) => [`stream:${stream.id}`, stream.name] as const),
  ])

  return (
    <Panel
      title="Health changes"
      description="When a collector or stream started, failed, or recovered."
      testId="health-events"
    >
      <div className={common.panelBody}>
        <div className={styles.eventsHeader}>
          <FilterSelect
            label="Show changes of"
            value={item}
            allLabel="Every collector and stream"
            options={[...names].map(([value, name]) => ({
              value,
              label: value.startsWith('collector:') ? `Collector ${name}` : `Stream ${name}`,
            }))}
            onChange={setItem}
          />
        </div>
        <EventList events={events.data?.events} failed={events.isError} names={names} />
      </div>
    </Panel>
  )
}

function EventList(props: {
  events: readonly HealthEvent[] | undefined
  failed: boolean
  names: ReadonlyMap<string, string>
}) {
  if (!props.events) {
    return <p className={common.mutedText}>{props.failed ? 'Could not load the changes.' : 'Loading changes…'}</p>
  }
  if (props.events.length === 0) {
    return <p className={common.mutedText}>No changes yet.</p>
  }
  return (
    <ul className={styles.events}>
      {props.events.map((event) => (
        <EventRow key={event.id} event={event} name={props.names.get(event.item)} />
      ))}
    </ul>
  )
}

function EventRow({ event, name }: { event: HealthEvent; name: string | undefined }) {
  const parsed = parseHealthItem(event.item)
  const subject = parsed?.kind ?? 'collector'
  const from = healthBadge({ state: event.from, since: event.at, reason: null, consecutiveFailures: 0 }, subject)
  const to = healthBadge({ state: event.to, since: event.at, reason: event.reason, consecutiveFailures: 0 }, subject)
  return (
    <li className={styles.event} data-testid="health-event" data-item={event.item} data-to={event.to}>
      <span className={styles.eventChange}>
        {parsed && name ? (
          <Link to={sourceLink(parsed.kind, parsed.id)}>{name}</Link>
        ) : (
          <span className={common.mutedText}>A deleted {subject}</span>
        )}
        <Badge small tone={from.tone} state={event.from}>
          {from.label}
        </Badge>
        <span aria-hidden="true">→</span>
        <span className={common.visuallyHidden}>to</span>
        <Badge small tone={to.tone} state={event.to}>
          {to.label}
        </Badge>
      </span>
      <span className={styles.eventTime}>
        <RelativeTime value={event.at} />
      </span>
      {event.reason && <ErrorText className={styles.eventReason} raw={event.reason} />}
    </li>
  )
}
