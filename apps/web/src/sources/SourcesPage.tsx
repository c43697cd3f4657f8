import type { ReactNode } from 'react'
import { Link, useSearchParams } from 'react-router'
import { HealthEventsPanel } from '../health/HealthEventsPanel'
import common from '../ui/common.module.css'
import { CollectorsSection } from './CollectorsSection'
import { JunctionsSection } from './JunctionsSection'
import { useCollectors, useJunctions, useStreams } from './queries'
import styles from './SourcesPage.module.css'
import { StreamsSection } from './StreamsSection'

const tabs = ['collectors', 'junctions', 'streams'] as const
type Tab = (typeof tabs)[number]

const tabLabels = { collectors: 'Collectors', junctions: 'Junctions', streams: 'Streams' } satisfies Record<Tab, string>

const sections = {
  collectors: <CollectorsSection />,
  junctions: <JunctionsSection />,
  streams: <StreamsSection />,
} satisfies Record<Tab, ReactNode>

/**
 * Collectors, junctions and streams, one at a time (the open one is in the URL, `?tab=streams`), and
 * below them the latest changes of their health.
 */
export function SourcesPage() {
  const [searchParams] = useSearchParams()
  const tab = tabs.find((name) => name === searchParams.get('tab')) ?? 'collectors'
  const collectors = useCollectors().data
  const streams = useStreams().data
  const counts = {
    collectors: collectors?.length,
    junctions: useJunctions().data?.length,
    streams: streams?.length,
  } satisfies Record<Tab, number | undefined>

  return (
    <>
      <title>{`${tabLabels[tab]} · Sources · Relay`}</title>
      <h1 className={styles.heading}>Sources</h1>
      <nav className={common.tabs} aria-label="Sources">
        {tabs.map((name) => (
          <Link
            key={name}
            to={{ search: `?tab=${name}` }}
            className={styles.tab}
            aria-current={name === tab ? 'page' : undefined}
            data-testid={`tab-${name}`}
          >
            {tabLabels[name]}
            {counts[name] !== undefined && <span className={styles.tabCount}>{counts[name]}</span>}
          </Link>
        ))}
      </nav>
      <section className={styles.section}>{sections[tab]}</section>
      <div className={styles.events}>
        <HealthEventsPanel collectors={collectors ?? []} streams={streams ?? []} />
      </div>
    </>
  )
}
